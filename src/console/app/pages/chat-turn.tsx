// One turn of the chat: the user's message, the tool steps, the answer as it streams (Markdown),
// the sources, and how it ended — with a link to its run, at once for a run in the background.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ChatMessage } from '../api.js';
import { Markdown } from '../markdown.js';
import type { RunProgress } from '../run-progress.js';
import { href, JsonText } from '../ui.js';
import { SourceList } from './run-parts.js';

export interface Turn extends RunProgress {
  key: number;
  input: string;
  /** `queued` and `waiting` (for tool approval) are a background run's. */
  state: 'streaming' | 'queued' | 'waiting' | 'done' | 'failed' | 'stopped';
  error?: string;
  runId?: string;
  /** Started with "run in background": it goes on without the page; Stop cancels it. */
  background?: boolean;
}

let turnKeys = 0;
export const nextTurnKey = () => ++turnKeys;

/** Up to this length a streamed answer is drawn as Markdown at every token; longer, once it ends. */
const LIVE_MARKDOWN_CHARS = 20_000;

/** A stored session's messages as turns: each user message with the answer that followed it. */
export function turnsOf(messages: ChatMessage[]): Turn[] {
  const turns: Turn[] = [];
  for (const message of messages) {
    if (message.role === 'user')
      turns.push({
        key: nextTurnKey(),
        input: message.content,
        answer: '',
        steps: [],
        sources: [],
        warnings: [],
        state: 'done',
        runId: message.runId ?? undefined,
      });
    else if (turns.length > 0) turns[turns.length - 1].answer = message.content;
  }
  return turns;
}

export function TurnView({ turn }: { turn: Turn }) {
  return (
    <article class={`turn ${turn.state}`} data-state={turn.state}>
      <div class="message user">
        <h3 class="visually-hidden">You</h3>
        <Folded text={turn.input} />
      </div>
      {turn.steps.length > 0 && (
        <ol class="steps" aria-label="Tool steps">
          {turn.steps.map((step) => (
            <li key={step.id} class="step">
              <details>
                <summary>
                  Tool <strong>{step.tool}</strong>{' '}
                  {step.error !== undefined ? '— failed' : step.output === undefined ? '— running…' : '— done'}
                </summary>
                <p>Input</p>
                <JsonText value={step.input} />
                {step.output !== undefined && (
                  <>
                    <p>Result</p>
                    <JsonText value={step.output} />
                  </>
                )}
                {step.error !== undefined && (
                  <>
                    <p>Error</p>
                    <JsonText value={step.error} />
                  </>
                )}
              </details>
            </li>
          ))}
        </ol>
      )}
      {/* A run that failed or was stopped before any text has no answer: only its notice shows. */}
      {(turn.answer || turn.state === 'streaming' || turn.state === 'queued') && (
        <div class="message assistant">
          <h3 class="visually-hidden">Agent</h3>
          <div class="answer">
            {/* Markdown is read again at every token: a long answer is drawn as text until it ends. */}
            {turn.state === 'streaming' && turn.answer.length > LIVE_MARKDOWN_CHARS ? (
              <p class="text">{turn.answer}</p>
            ) : turn.answer ? (
              <Markdown text={turn.answer} />
            ) : (
              <p class="text">…</p>
            )}
          </div>
        </div>
      )}
      {turn.error && (
        <p class="notice error" role="alert">
          {turn.error}
        </p>
      )}
      {turn.warnings.map((warning) => (
        <p key={warning} class="notice">
          {warning}
        </p>
      ))}
      {turn.sources.length > 0 && (
        <details class="sources">
          <summary>Sources ({turn.sources.length})</summary>
          <SourceList sources={turn.sources} />
        </details>
      )}
      {turn.state === 'queued' && <p class="notice">Queued: the run starts when one of your runs ends.</p>}
      {turn.state === 'waiting' && (
        <p class="notice">
          The agent waits for your approval of a tool call: <a href={href(`/runs/${turn.runId}`)}>answer it on the run's page</a>.
        </p>
      )}
      {turn.runId && (turn.state !== 'streaming' || turn.background) && (
        <p class="run-link">
          <a href={href(`/runs/${turn.runId}`)}>{turn.background && turn.state === 'streaming' ? 'Follow the run' : 'See the run'}</a>
          {turn.background && <span class="muted"> · in the background</span>}
        </p>
      )}
    </article>
  );
}

/** A message drawn as its first lines when it is long, with a control to show all of it. */
function Folded({ text }: { text: string }) {
  const ref = useRef<HTMLParagraphElement>(null);
  const [long, setLong] = useState(false);
  const [open, setOpen] = useState(false);
  // Measured once drawn: whether the text is taller than the folded height.
  useLayoutEffect(() => {
    const element = ref.current;
    if (element && !open) setLong(element.scrollHeight > element.clientHeight + 1);
  }, [text, open]);
  return (
    <>
      <p ref={ref} class={open ? 'text' : 'text folded'}>
        {text}
      </p>
      {long && (
        <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Show less' : 'Show all'}
        </button>
      )}
    </>
  );
}
