// Parts of the run page: the tool steps (of a finished run's record, or as its events arrive), the
// sources (the chat's turns show them too) and the tool calls that wait for the user's approval,
// answered with Approve or Deny (and a reason).
import { useState } from 'preact/hooks';
import { call, type PendingAction, type Run, type RunAccepted, type Source } from '../api.js';
import { describeError, ErrorNotice, href, JsonText, TextField } from '../ui.js';

export interface StepLine {
  tool: string;
  function?: string;
  input: unknown;
  output?: unknown;
  error?: unknown;
  ms?: number;
}

/** The tool steps; `live` marks a step without its result as still running. */
export function StepList({ steps, live }: { steps: StepLine[]; live: boolean }) {
  if (steps.length === 0) return <p class="muted">{live ? 'No tool called yet.' : 'No tool was called.'}</p>;
  return (
    <ol class="steps">
      {steps.map((step, index) => (
        <li key={index} class="step">
          <h3>
            {step.tool}
            {step.function && step.function !== step.tool ? ` (${step.function})` : ''}
            {step.ms !== undefined ? ` · ${step.ms} ms` : ''}
            {live && step.output === undefined && step.error === undefined ? ' · running…' : ''}
          </h3>
          <p>Input</p>
          <JsonText value={step.input} />
          {step.error !== undefined ? (
            <>
              <p>Error</p>
              <JsonText value={step.error} />
            </>
          ) : (
            step.output !== undefined && (
              <>
                <p>Result</p>
                <JsonText value={step.output} />
              </>
            )
          )}
        </li>
      ))}
    </ol>
  );
}

/** The document passages an answer drew on, each with a link to its document. */
export function SourceList({ sources }: { sources: Source[] }) {
  return (
    <ol>
      {sources.map((source) => (
        <li key={source.chunkId}>
          <a href={href(`/documents/${source.documentId}`)}>{source.documentName}</a>{' '}
          <span class="muted">(chunk {source.position + 1})</span>
          <blockquote>{source.snippet}</blockquote>
        </li>
      ))}
    </ol>
  );
}

interface Decision {
  approve?: boolean;
  reason: string;
}

/**
 * The calls a `requires_action` run waits on: each shown with its tool, function and arguments, to
 * approve or deny (a denial may say why; the model is told). The service takes the answers to all
 * of them at once; `onAnswered` gets its reply (the run goes on in the background).
 */
export function WaitingCalls({
  run,
  onAnswered,
}: {
  run: Run;
  onAnswered: (reply: RunAccepted | { runId: string; status: string }) => void;
}) {
  const [decisions, setDecisions] = useState<Record<string, Decision>>({});
  const [error, setError] = useState<string>();
  const [sending, setSending] = useState(false);
  const decide = (id: string, change: Partial<Decision>) =>
    setDecisions((all) => ({ ...all, [id]: { ...(all[id] ?? { reason: '' }), ...change } }));
  const complete = run.actions.every((action) => decisions[action.id]?.approve !== undefined);

  async function submit(event: Event) {
    event.preventDefault();
    if (!complete || sending) return;
    setSending(true);
    setError(undefined);
    try {
      const actions = run.actions.map(({ id }) => {
        const { approve, reason } = decisions[id];
        return approve || !reason.trim() ? { id, approve: !!approve } : { id, approve: false, reason: reason.trim() };
      });
      onAnswered(await call<{ runId: string; status: string }>('POST', `/runs/${encodeURIComponent(run.id)}/actions`, { actions }));
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setSending(false);
    }
  }

  return (
    <form class="waiting-calls" onSubmit={submit} aria-labelledby="waiting-title">
      <h2 id="waiting-title">Waiting for your approval</h2>
      <p class="hint">The agent asked to call {run.actions.length === 1 ? 'this tool' : 'these tools'}; nothing runs until you answer.</p>
      <ErrorNotice error={error} />
      {run.actions.map((action) => (
        <WaitingCall key={action.id} action={action} decision={decisions[action.id]} onChange={(change) => decide(action.id, change)} />
      ))}
      <p class="actions">
        <button type="submit" class="primary" disabled={!complete || sending}>
          {run.actions.length === 1 ? 'Send the answer' : 'Send the answers'}
        </button>
      </p>
    </form>
  );
}

function WaitingCall({
  action,
  decision,
  onChange,
}: {
  action: PendingAction;
  decision?: Decision;
  onChange: (change: Partial<Decision>) => void;
}) {
  const name = `approve-${action.id}`;
  return (
    <fieldset class="waiting-call" data-action={action.id}>
      <legend>
        <strong>{action.tool}</strong> <span class="muted">calls</span> <code>{action.function}</code>
      </legend>
      {action.runId && (
        <p class="hint">
          Asked by a nested agent's <a href={href(`/runs/${action.runId}`)}>run</a>, which waits with this one.
        </p>
      )}
      <p>Arguments</p>
      <JsonText value={action.input} />
      <div class="choices">
        <label>
          <input type="radio" name={name} checked={decision?.approve === true} onChange={() => onChange({ approve: true })} /> Approve
        </label>
        <label>
          <input type="radio" name={name} checked={decision?.approve === false} onChange={() => onChange({ approve: false })} /> Deny
        </label>
      </div>
      {decision?.approve === false && (
        <TextField
          label="Reason (told to the model)"
          name={`reason-${action.id}`}
          value={decision.reason}
          onInput={(reason) => onChange({ reason })}
        />
      )}
    </fieldset>
  );
}
