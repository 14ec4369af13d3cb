// Chat with an agent through the streaming invoke endpoint: tokens appear as they arrive, tool calls
// and results as steps, then the sources. Sessions (for agents with memory) can be picked, started
// and deleted; the prompt's variables are asked for (and remembered per agent); Stop aborts the
// request, which cancels the run.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  call,
  get,
  list,
  MAX_INPUT_CHARS,
  rememberedVariables,
  send,
  type Agent,
  type ChatMessage,
  type ChatSession,
  type Prompt,
  type Source,
} from '../api.js';
import { Markdown } from '../markdown.js';
import { runErrorText } from '../run-errors.js';
import { readEvents } from '../sse.js';
import { ConfirmButton, describeError, Empty, ErrorNotice, href, JsonText, Loading, PageTitle, TextField, Time } from '../ui.js';

interface StepView {
  id: string;
  tool: string;
  input: unknown;
  output?: unknown;
  error?: unknown;
}

interface Turn {
  key: number;
  input: string;
  answer: string;
  steps: StepView[];
  sources: Source[];
  warnings: string[];
  state: 'streaming' | 'done' | 'failed' | 'stopped';
  error?: string;
  runId?: string;
}

let turnKeys = 0;

/** Up to this length a streamed answer is drawn as Markdown at every token; longer, once it ends. */
const LIVE_MARKDOWN_CHARS = 20_000;

export function ChatPage({ id, sessionId: initialSession }: { id: string; sessionId?: string }) {
  const [agent, setAgent] = useState<Agent>();
  const [variables, setVariables] = useState<string[]>([]);
  const [values, setValues] = useState<Record<string, string>>(() => rememberedVariables.load(id));
  const [sessions, setSessions] = useState<ChatSession[]>([]);
  const [sessionId, setSessionId] = useState<string | undefined>(initialSession);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [input, setInput] = useState('');
  const [error, setError] = useState<string>();
  const [running, setRunning] = useState<AbortController>();
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const endRef = useRef<HTMLDivElement>(null);

  const loadSessions = async () => {
    try {
      const page = await list<ChatSession>(`/agents/${encodeURIComponent(id)}/sessions`, 100);
      setSessions([...page.items].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt)));
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  useEffect(() => {
    (async () => {
      try {
        const loaded = await get<Agent>(`/agents/${encodeURIComponent(id)}`);
        setAgent(loaded);
        if (loaded.promptId) {
          const prompt = await get<Prompt>(`/prompts/${encodeURIComponent(loaded.promptId)}`);
          // `{input}` is filled with the message itself.
          setVariables(prompt.input_variables.filter((name) => name !== 'input'));
        }
        if (loaded.hasMemory) await loadSessions();
      } catch (failure) {
        setError(describeError(failure));
      }
    })();
  }, [id]);

  useEffect(() => {
    if (!sessionId || !agent?.hasMemory) return;
    if (turns.some((turn) => turn.state === 'streaming')) return;
    list<ChatMessage>(`/agents/${encodeURIComponent(id)}/sessions/${encodeURIComponent(sessionId)}/messages`, 1000)
      .then((page) => setTurns(turnsOf(page.items)))
      .catch((failure) => setError(describeError(failure)));
  }, [sessionId, agent?.hasMemory]);

  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: 'end' });
  }, [turns]);

  const update = (key: number, change: (turn: Turn) => Turn) =>
    setTurns((all) => all.map((turn) => (turn.key === key ? change(turn) : turn)));

  function pickSession(next: string | undefined) {
    if (running || (next && next === sessionId)) return;
    setSessionId(next);
    setTurns([]);
    history.replaceState(null, '', href(`/agents/${id}/chat${next ? `?session=${encodeURIComponent(next)}` : ''}`));
  }

  async function deleteSession(session: ChatSession) {
    try {
      await call('DELETE', `/agents/${encodeURIComponent(id)}/sessions/${encodeURIComponent(session.id)}`);
      if (session.id === sessionId) pickSession(undefined);
      await loadSessions();
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  async function submit(event: Event) {
    event.preventDefault();
    const text = input.trim();
    // Too long: the counter under the box says so, and the text stays there to be shortened.
    if (!text || running || text.length > MAX_INPUT_CHARS) return;
    const key = ++turnKeys;
    const controller = new AbortController();
    setRunning(controller);
    setInput('');
    setError(undefined);
    setTurns((all) => [...all, { key, input: text, answer: '', steps: [], sources: [], warnings: [], state: 'streaming' }]);
    const body: Record<string, unknown> = { input: text, stream: true };
    if (variables.length > 0) {
      body.variables = Object.fromEntries(variables.map((name) => [name, values[name] ?? '']));
      rememberedVariables.save(id, body.variables as Record<string, string>);
    }
    if (sessionId) body.sessionId = sessionId;
    try {
      const response = await send('POST', `/agents/${encodeURIComponent(id)}/invoke`, { body, signal: controller.signal, raw: true });
      if (!response.body || !(response.headers.get('Content-Type') ?? '').startsWith('text/event-stream')) {
        const data = ((await response.json()) as { data: { output: string; runId: string } }).data;
        update(key, (turn) => ({ ...turn, answer: data.output, runId: data.runId, state: 'done' }));
        return;
      }
      let ended = false;
      for await (const { event: name, data } of readEvents(response.body)) {
        const payload = JSON.parse(data);
        if (name === 'run') {
          update(key, (turn) => ({ ...turn, runId: payload.runId }));
          if (payload.sessionId && payload.sessionId !== sessionId && agent?.hasMemory) {
            setSessionId(payload.sessionId);
            history.replaceState(null, '', href(`/agents/${id}/chat?session=${encodeURIComponent(payload.sessionId)}`));
          }
        } else if (name === 'token') {
          update(key, (turn) => ({ ...turn, answer: turn.answer + payload.text }));
        } else if (name === 'tool_call') {
          update(key, (turn) => ({ ...turn, steps: [...turn.steps, { id: payload.id, tool: payload.tool, input: payload.input }] }));
        } else if (name === 'tool_result') {
          update(key, (turn) => ({
            ...turn,
            steps: turn.steps.map((step) => (step.id === payload.id ? { ...step, output: payload.output, error: payload.error } : step)),
          }));
        } else if (name === 'sources') {
          update(key, (turn) => ({ ...turn, sources: payload }));
        } else if (name === 'done') {
          ended = true;
          update(key, (turn) => ({
            ...turn,
            answer: payload.output ?? turn.answer,
            sources: payload.sources ?? turn.sources,
            warnings: payload.warnings ?? [],
            state: 'done',
          }));
        } else if (name === 'error') {
          ended = true;
          update(key, (turn) => ({ ...turn, state: 'failed', error: runErrorText({ code: payload.code, message: payload.message }) }));
        }
      }
      if (!ended) update(key, (turn) => ({ ...turn, state: 'failed', error: 'The answer stopped before it was complete.' }));
    } catch (failure) {
      if ((failure as Error).name === 'AbortError') {
        update(key, (turn) => ({ ...turn, state: 'stopped', error: 'Stopped: the run was cancelled.' }));
      } else if (failure instanceof ApiError) {
        // Refused before the agent saw it: the message goes back into the box (unless a new one is there).
        setInput((current) => current || text);
        const said = runErrorText({
          code: failure.code,
          message: failure.message,
          details: failure.details,
          retryAfter: failure.retryAfter,
        });
        update(key, (turn) => ({ ...turn, state: 'failed', error: said }));
      } else {
        update(key, (turn) => ({ ...turn, state: 'failed', error: describeError(failure) }));
      }
    } finally {
      setRunning(undefined);
      if (agent?.hasMemory) void loadSessions();
      inputRef.current?.focus();
    }
  }

  if (!agent) return error ? <ErrorNotice error={error} /> : <Loading />;
  const tooLong = input.trim().length > MAX_INPUT_CHARS;

  return (
    <section class="chat-page">
      <p class="crumbs">
        <a href={href('/agents')}>Agents</a> › <a href={href(`/agents/${id}`)}>{agent.name}</a>
      </p>
      <PageTitle>{`Chat with ${agent.name}`}</PageTitle>
      <div class="chat-layout">
        <aside class="sessions" aria-labelledby="sessions-title">
          <h2 id="sessions-title">Sessions</h2>
          {!agent.hasMemory ? (
            <p class="hint">This agent has no memory: each message is answered on its own, and nothing is kept.</p>
          ) : (
            <>
              <button type="button" onClick={() => pickSession(undefined)} disabled={!!running}>
                New session
              </button>
              {sessions.length === 0 ? (
                <p class="hint">No earlier sessions. Your first message starts one.</p>
              ) : (
                <ul>
                  {sessions.map((session) => (
                    <li key={session.id} class={session.id === sessionId ? 'current' : undefined}>
                      <button
                        type="button"
                        class="link"
                        aria-current={session.id === sessionId ? 'true' : undefined}
                        onClick={() => pickSession(session.id)}
                        disabled={!!running}
                      >
                        <span class="session-title">{session.title?.replace(/\s+/g, ' ').trim() || 'Untitled session'}</span>
                        <span class="muted">
                          <Time value={session.updatedAt} /> · {session.messages} messages
                        </span>
                      </button>
                      <ConfirmButton label="Delete" question="Delete this session?" onConfirm={() => deleteSession(session)} />
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </aside>
        <div class="conversation">
          <ErrorNotice error={error} />
          <div class="turns" role="log" aria-label="Conversation" aria-busy={running ? 'true' : 'false'}>
            {turns.length === 0 && <Empty>Ask {agent.name} something to start.</Empty>}
            {turns.map((turn) => (
              <TurnView key={turn.key} turn={turn} />
            ))}
            <div ref={endRef} />
          </div>
          <form class="composer" onSubmit={submit}>
            {variables.length > 0 && (
              <fieldset>
                <legend>Prompt variables</legend>
                {variables.map((name) => (
                  <TextField
                    key={name}
                    label={name}
                    name={`variables.${name}`}
                    value={values[name] ?? ''}
                    onInput={(value) => setValues((current) => ({ ...current, [name]: value }))}
                    required
                  />
                ))}
              </fieldset>
            )}
            <label for="chat-input">Message</label>
            <textarea
              id="chat-input"
              ref={inputRef}
              rows={3}
              value={input}
              aria-describedby="chat-input-hint"
              aria-invalid={tooLong || undefined}
              onInput={(event) => setInput(event.currentTarget.value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) submit(event);
              }}
            />
            <p class="hint" id="chat-input-hint">
              Enter sends; Shift+Enter starts a new line.{' '}
              <span class={tooLong ? 'error-text' : undefined} data-testid="input-count">
                {input.trim().length.toLocaleString('en')} / {MAX_INPUT_CHARS.toLocaleString('en')} characters
              </span>
            </p>
            {tooLong && (
              <p class="field-error" role="alert">
                The message is {(input.trim().length - MAX_INPUT_CHARS).toLocaleString('en')} characters too long: shorten it to send it.
              </p>
            )}
            <p class="actions">
              <button type="submit" class="primary" disabled={!!running || !input.trim() || tooLong}>
                Send
              </button>
              {running && (
                <button type="button" class="danger" onClick={() => running.abort()}>
                  Stop
                </button>
              )}
            </p>
          </form>
        </div>
      </div>
    </section>
  );
}

/** A stored session's messages as turns: each user message with the answer that followed it. */
function turnsOf(messages: ChatMessage[]): Turn[] {
  const turns: Turn[] = [];
  for (const message of messages) {
    if (message.role === 'user')
      turns.push({
        key: ++turnKeys,
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

function TurnView({ turn }: { turn: Turn }) {
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
      {(turn.answer || turn.state === 'streaming') && (
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
          <ol>
            {turn.sources.map((source) => (
              <li key={source.chunkId}>
                <a href={href(`/documents/${source.documentId}`)}>{source.documentName}</a>{' '}
                <span class="muted">(chunk {source.position + 1})</span>
                <blockquote>{source.snippet}</blockquote>
              </li>
            ))}
          </ol>
        </details>
      )}
      {turn.runId && turn.state !== 'streaming' && (
        <p class="run-link">
          <a href={href(`/runs/${turn.runId}`)}>See the run</a>
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
