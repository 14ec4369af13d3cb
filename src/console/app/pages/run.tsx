// One run in full: input, output, steps, sources, usage. A run under way is followed live through
// its event log — the answer grows as its tokens arrive, and a page opened (or reloaded) mid-run
// replays the log and goes on from there. A queued, running or waiting run can be cancelled; a run
// waiting for approval shows its tool calls to approve or deny.
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, get, UNDER_WAY, type Agent, type Run } from '../api.js';
import { followRun } from '../follow.js';
import { NO_PROGRESS, withEvent, type RunProgress } from '../run-progress.js';
import { describeError, ErrorNotice, href, Loading, PageTitle, StatusBadge, Time } from '../ui.js';
import { SourceList, StepList, WaitingCalls } from './run-parts.js';

/** How often a queued run's record is read again, to show when it starts. */
const QUEUED_POLL_MS = 1000;

export function RunPage({ id }: { id: string }) {
  const [run, setRun] = useState<Run>();
  const [agent, setAgent] = useState<Agent>();
  const [error, setError] = useState<string>();
  const [progress, setProgress] = useState<RunProgress>(NO_PROGRESS);
  /** Bumped to follow the log (again): on opening a run under way, and once its waiting calls are answered. */
  const [round, setRound] = useState(0);
  const [cancelling, setCancelling] = useState(false);
  /** The number of the last event shown: a later round goes on after it. */
  const last = useRef(0);

  const reload = async () => {
    const loaded = await get<Run>(`/runs/${encodeURIComponent(id)}`);
    setRun(loaded);
    return loaded;
  };

  useEffect(() => {
    (async () => {
      try {
        const loaded = await reload();
        if (UNDER_WAY.includes(loaded.status)) setRound(1);
        // For the breadcrumb only: without the agent's name it says "Agent".
        setAgent(await get<Agent>(`/agents/${encodeURIComponent(loaded.agentId)}`).catch(() => undefined));
      } catch (failure) {
        setError(describeError(failure));
      }
    })();
  }, [id]);

  useEffect(() => {
    if (round === 0) return;
    const controller = new AbortController();
    (async () => {
      const { last: seen } = await followRun(
        id,
        (name, data) => setProgress((shown) => withEvent(shown, name, data)),
        controller.signal,
        last.current,
      );
      last.current = seen;
      await reload();
    })().catch((failure) => {
      if ((failure as Error).name !== 'AbortError') setError(describeError(failure));
    });
    return () => controller.abort();
  }, [round]);

  // A queued run's log says nothing when it starts (a model may be slow to answer): its record does.
  const queued = run?.status === 'queued';
  useEffect(() => {
    if (!queued) return;
    const timer = setInterval(() => {
      get<Run>(`/runs/${encodeURIComponent(id)}`).then(
        (loaded) => setRun((shown) => (shown?.status === 'queued' ? loaded : shown)),
        () => undefined,
      );
    }, QUEUED_POLL_MS);
    return () => clearInterval(timer);
  }, [queued]);

  async function cancel() {
    setCancelling(true);
    try {
      setRun(await call<Run>('POST', `/runs/${encodeURIComponent(id)}/cancel`));
    } catch (failure) {
      setError(describeError(failure));
      await reload().catch(() => undefined);
    } finally {
      setCancelling(false);
    }
  }

  if (!run) return error ? <ErrorNotice error={error} /> : <Loading />;
  const underWay = UNDER_WAY.includes(run.status);
  // Under way, the answer and steps are the log's so far; once ended, the record's.
  const output = underWay ? progress.answer : (run.output ?? '');
  return (
    <section>
      <p class="crumbs">
        <a href={href('/agents')}>Agents</a> › <a href={href(`/agents/${run.agentId}`)}>{agent?.name ?? 'Agent'}</a> ›{' '}
        <a href={href(`/agents/${run.agentId}/runs`)}>Runs</a>
      </p>
      <PageTitle>Run</PageTitle>
      <ErrorNotice error={error} />
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={run.status} />
          {run.status === 'queued' && <span class="muted"> waiting for one of your run slots</span>}
          {run.background && <span class="muted"> · in the background</span>}
        </dd>
        <dt>Started</dt>
        <dd>
          <Time value={run.startedAt} />
        </dd>
        <dt>Finished</dt>
        <dd>
          <Time value={run.finishedAt} />
        </dd>
        <dt>Time</dt>
        <dd>{run.ms === null ? '—' : `${run.ms} ms`}</dd>
        <dt>Model</dt>
        <dd>{run.model ?? '—'}</dd>
        <dt>Tokens</dt>
        <dd>{run.usage ? `${run.usage.promptTokens} in, ${run.usage.completionTokens} out` : 'not reported'}</dd>
        {run.sessionId && (
          <>
            <dt>Session</dt>
            <dd>
              <a href={href(`/agents/${run.agentId}/chat?session=${encodeURIComponent(run.sessionId)}`)}>Open the conversation</a>
            </dd>
          </>
        )}
        {run.parentRunId && (
          <>
            <dt>Called by</dt>
            <dd>
              <a href={href(`/runs/${run.parentRunId}`)}>the parent run</a>
            </dd>
          </>
        )}
      </dl>
      {underWay && (
        <p class="actions">
          <button type="button" class="danger" onClick={cancel} disabled={cancelling}>
            Cancel run
          </button>
        </p>
      )}
      {run.status === 'requires_action' && run.actions.length > 0 && (
        <WaitingCalls
          key={run.actions.map((action) => action.id).join()}
          run={run}
          onAnswered={(reply) => {
            setRun({ ...run, status: reply.status as Run['status'], actions: [] });
            setRound((n) => n + 1);
          }}
        />
      )}
      <h2>Input</h2>
      <p class="text">{run.input}</p>
      <h2>Output</h2>
      <div class="run-output" aria-live="polite" aria-busy={run.status === 'running' ? 'true' : 'false'} data-status={run.status}>
        {output ? <p class="text">{output}</p> : <p class="muted">{underWay ? 'No output yet.' : 'No output.'}</p>}
      </div>
      {run.error && (
        <p class="notice error" role="alert">
          {run.error}
        </p>
      )}
      {run.warnings.length > 0 && (
        <>
          <h2>Warnings</h2>
          <ul>
            {run.warnings.map((warning) => (
              <li key={warning}>{warning}</li>
            ))}
          </ul>
        </>
      )}
      <h2>Steps</h2>
      <StepList steps={underWay ? progress.steps : run.steps} live={underWay} />
      <h2>Sources</h2>
      <Sources run={run} progress={progress} underWay={underWay} />
    </section>
  );
}

function Sources({ run, progress, underWay }: { run: Run; progress: RunProgress; underWay: boolean }) {
  const sources = underWay ? progress.sources : run.sources;
  if (sources.length === 0) return <p class="muted">No document passages were used.</p>;
  return <SourceList sources={sources} />;
}
