// An agent's runs (newest first) and one run in full: input, output, steps, sources, usage.
import { useEffect, useState } from 'preact/hooks';
import { get, type Agent, type Run, type RunListItem } from '../api.js';
import { describeError, Empty, ErrorNotice, href, JsonText, Loading, PageTitle, StatusBadge, Time, usePagedList } from '../ui.js';

const tokensOf = (run: Run | RunListItem) => (run.usage ? run.usage.promptTokens + run.usage.completionTokens : undefined);

export function RunsPage({ agentId }: { agentId: string }) {
  const [agent, setAgent] = useState<Agent>();
  const [error, setError] = useState<string>();
  const { items: runs, next, load } = usePagedList<RunListItem>(`/agents/${encodeURIComponent(agentId)}/runs`, 25, setError);
  useEffect(() => {
    get<Agent>(`/agents/${encodeURIComponent(agentId)}`).then(setAgent, (failure) => setError(describeError(failure)));
  }, [agentId]);

  return (
    <section>
      <p class="crumbs">
        <a href={href('/agents')}>Agents</a> › <a href={href(`/agents/${agentId}`)}>{agent?.name ?? 'Agent'}</a>
      </p>
      <PageTitle>{agent ? `Runs of ${agent.name}` : 'Runs'}</PageTitle>
      <ErrorNotice error={error} />
      {!runs ? (
        !error && <Loading />
      ) : runs.length === 0 ? (
        <Empty>
          No runs yet. <a href={href(`/agents/${agentId}/chat`)}>Chat with the agent</a>: every message is a run.
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Status</th>
                <th scope="col">Input</th>
                <th scope="col">Time</th>
                <th scope="col">Tokens</th>
                <th scope="col">Steps</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((run) => (
                <tr key={run.id}>
                  <td data-label="Started">
                    <a href={href(`/runs/${run.id}`)}>
                      <Time value={run.startedAt} />
                    </a>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={run.status} />
                  </td>
                  <td data-label="Input" class="clip">
                    {run.input}
                  </td>
                  <td data-label="Time">{run.ms === null ? '—' : `${(run.ms / 1000).toFixed(2)} s`}</td>
                  <td data-label="Tokens">{tokensOf(run) ?? '—'}</td>
                  <td data-label="Steps">{run.steps.length}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <button type="button" onClick={() => load(next)}>
          Show older runs
        </button>
      )}
    </section>
  );
}

export function RunPage({ id }: { id: string }) {
  const [run, setRun] = useState<Run>();
  const [agent, setAgent] = useState<Agent>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    (async () => {
      try {
        const loaded = await get<Run>(`/runs/${encodeURIComponent(id)}`);
        setRun(loaded);
        // For the breadcrumb only: without the agent's name it says "Agent".
        setAgent(await get<Agent>(`/agents/${encodeURIComponent(loaded.agentId)}`).catch(() => undefined));
      } catch (failure) {
        setError(describeError(failure));
      }
    })();
  }, [id]);

  if (error) return <ErrorNotice error={error} />;
  if (!run) return <Loading />;
  return (
    <section>
      <p class="crumbs">
        <a href={href('/agents')}>Agents</a> › <a href={href(`/agents/${run.agentId}`)}>{agent?.name ?? 'Agent'}</a> ›{' '}
        <a href={href(`/agents/${run.agentId}/runs`)}>Runs</a>
      </p>
      <PageTitle>Run</PageTitle>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={run.status} />
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
      <h2>Input</h2>
      <p class="text">{run.input}</p>
      <h2>Output</h2>
      {run.output ? <p class="text">{run.output}</p> : <p class="muted">No output.</p>}
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
      {run.steps.length === 0 ? (
        <p class="muted">No tool was called.</p>
      ) : (
        <ol class="steps">
          {run.steps.map((step, index) => (
            <li key={index} class="step">
              <h3>
                {step.tool}
                {step.function && step.function !== step.tool ? ` (${step.function})` : ''}
                {step.ms !== undefined ? ` · ${step.ms} ms` : ''}
              </h3>
              <p>Input</p>
              <JsonText value={step.input} />
              {step.error !== undefined ? (
                <>
                  <p>Error</p>
                  <JsonText value={step.error} />
                </>
              ) : (
                <>
                  <p>Result</p>
                  <JsonText value={step.output} />
                </>
              )}
            </li>
          ))}
        </ol>
      )}
      <h2>Sources</h2>
      {run.sources.length === 0 ? (
        <p class="muted">No document passages were used.</p>
      ) : (
        <ol>
          {run.sources.map((source) => (
            <li key={source.chunkId}>
              <a href={href(`/documents/${source.documentId}`)}>{source.documentName}</a>{' '}
              <span class="muted">(chunk {source.position + 1})</span>
              <blockquote>{source.snippet}</blockquote>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
