// Chat with an agent through the streaming invoke endpoint: tokens appear as they arrive, tool calls
// and results as steps, then the sources. Sessions (for agents with memory) can be picked, started
// and deleted; the prompt's variables are asked for (and remembered per agent); Stop aborts the
// request, which cancels the run. "Run in background" starts a run that goes on without the page:
// the chat follows it through its event log, and comes back to it when opened again in this tab.
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  call,
  get,
  list,
  MAX_INPUT_CHARS,
  rememberedRuns,
  rememberedVariables,
  send,
  UNDER_WAY,
  type Agent,
  type ChatMessage,
  type ChatSession,
  type Prompt,
  type Run,
} from '../api.js';
import { followRun, type RunEventHandler } from '../follow.js';
import { runErrorText } from '../run-errors.js';
import { END_EVENTS, NO_PROGRESS, withEvent } from '../run-progress.js';
import { readEvents } from '../sse.js';
import { Checkbox, ConfirmButton, describeError, Empty, ErrorNotice, href, Loading, PageTitle, TextField, Time } from '../ui.js';
import { nextTurnKey, TurnView, turnsOf, type Turn } from './chat-turn.js';

/** A turn still going: what Stop does to it. */
interface Going {
  key: number;
  controller: AbortController;
}

const goingStates: Turn['state'][] = ['streaming', 'queued', 'waiting'];

export function ChatPage({ id, sessionId: initialSession }: { id: string; sessionId?: string }) {
  const [agent, setAgent] = useState<Agent>();
  const [variables, setVariables] = useState<string[]>([]);
  const [values, setValues] = useState<Record<string, string>>(() => rememberedVariables.load(id));
  const [sessions, setSessions] = useState<ChatSession[]>([]);
  const [sessionId, setSessionId] = useState<string | undefined>(initialSession);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [input, setInput] = useState('');
  const [error, setError] = useState<string>();
  const [running, setRunning] = useState<Going>();
  const [background, setBackground] = useState(false);
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
      // A background run the chat came back to stays below the stored turns.
      .then((page) =>
        setTurns((shown) => [...turnsOf(page.items), ...shown.filter((turn) => turn.background && goingStates.includes(turn.state))]),
      )
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

  /** Draws the events of turn `key`'s run; a background run is remembered, to come back to. */
  const eventsOf =
    (key: number): RunEventHandler =>
    (name, data) => {
      const payload = data as any;
      if (name === 'run') {
        update(key, (turn) => ({ ...turn, runId: payload.runId }));
        if (payload.sessionId && payload.sessionId !== sessionId && agent?.hasMemory) {
          setSessionId(payload.sessionId);
          history.replaceState(null, '', href(`/agents/${id}/chat?session=${encodeURIComponent(payload.sessionId)}`));
        }
      } else if (name === 'error') {
        const cancelled = payload?.code === 'cancelled';
        update(key, (turn) => ({
          ...turn,
          state: cancelled ? 'stopped' : 'failed',
          error: cancelled ? 'Stopped: the run was cancelled.' : runErrorText({ code: payload?.code, message: String(payload?.message) }),
        }));
      } else if (name === 'requires_action') {
        update(key, (turn) => ({ ...turn, state: 'waiting' }));
      } else {
        // Any other event: the run is going (again, after a wait it was answered from).
        update(key, (turn) => ({ ...withEvent(turn, name, payload), state: name === 'done' ? 'done' : 'streaming' }));
      }
    };

  /**
   * Follows background run `runId` of turn `key` from after event `after` to its end (a waiting run:
   * until it waits); a run seen to end is forgotten.
   */
  async function followBackground(key: number, runId: string, signal: AbortSignal, after: number) {
    const { end } = await followRun(runId, eventsOf(key), signal, after);
    if (end !== 'requires_action') rememberedRuns.forget(id, runId);
  }

  // Coming back: the newest background run of this session still under way is followed again,
  // its answer so far replayed from its event log.
  useEffect(() => {
    if (!agent) return;
    const saved = rememberedRuns
      .load(id)
      .filter((run) => !agent.hasMemory || run.sessionId === (sessionId ?? null))
      .at(-1);
    if (!saved) return;
    const controller = new AbortController();
    const key = nextTurnKey();
    (async () => {
      const run = await get<Run>(`/runs/${encodeURIComponent(saved.runId)}`, controller.signal).catch(() => undefined);
      if (!run || !UNDER_WAY.includes(run.status)) return rememberedRuns.forget(id, saved.runId);
      const state = run.status === 'queued' ? 'queued' : 'streaming';
      setTurns((all) => [...all, { key, input: run.input, ...NO_PROGRESS, state, runId: run.id, background: true }]);
      setRunning({ key, controller });
      await followBackground(key, run.id, controller.signal, 0);
    })()
      .catch((failure) => {
        if ((failure as Error).name !== 'AbortError') update(key, (turn) => ({ ...turn, state: 'failed', error: describeError(failure) }));
      })
      .finally(() => setRunning((going) => (going?.key === key ? undefined : going)));
    return () => controller.abort();
  }, [agent]);

  /** Stop: a foreground run's request is aborted (which cancels it); a background run is cancelled. */
  async function stop(going: Going) {
    const turn = turns.find((shown) => shown.key === going.key);
    if (!turn?.background || !turn.runId) return going.controller.abort();
    try {
      await call('POST', `/runs/${encodeURIComponent(turn.runId)}/cancel`);
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  async function submit(event: Event) {
    event.preventDefault();
    const text = input.trim();
    // Too long: the counter under the box says so, and the text stays there to be shortened.
    if (!text || running || text.length > MAX_INPUT_CHARS) return;
    const key = nextTurnKey();
    const controller = new AbortController();
    setRunning({ key, controller });
    setInput('');
    setError(undefined);
    setTurns((all) => [...all, { key, input: text, ...NO_PROGRESS, state: 'streaming', background }]);
    // Streamed either way; in the background the stream is the run's numbered event log.
    const body: Record<string, unknown> = { input: text, stream: true, background };
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
      const onEvent = eventsOf(key);
      let end: string | undefined;
      let runId: string | undefined;
      let last = 0;
      for await (const { event: name, data, id: seq } of readEvents(response.body)) {
        const payload = JSON.parse(data);
        onEvent(name, payload);
        last = Number(seq) || last;
        if (name === 'run' && background) {
          runId = payload.runId as string;
          rememberedRuns.add(id, { runId, sessionId: payload.sessionId ?? null });
          // Beyond the user's run slots it waits: said until its first event.
          void get<Run>(`/runs/${encodeURIComponent(runId)}`).then(
            (run) =>
              run.status === 'queued' &&
              update(key, (turn) => (turn.state === 'streaming' && !turn.answer ? { ...turn, state: 'queued' } : turn)),
            () => undefined,
          );
        }
        if (END_EVENTS.has(name)) {
          end = name;
          break;
        }
      }
      // A background run's stream cut short: the rest from its event log.
      if (runId && end === undefined) await followBackground(key, runId, controller.signal, last);
      else if (runId && end !== 'requires_action') rememberedRuns.forget(id, runId);
      else if (end === undefined)
        update(key, (turn) => ({ ...turn, state: 'failed', error: 'The answer stopped before it was complete.' }));
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
            <Checkbox
              label="Run in background"
              name="background"
              checked={background}
              onChange={setBackground}
              hint="The run goes on when you leave the page; the chat comes back to it, and its page follows it."
            />
            <p class="actions">
              <button type="submit" class="primary" disabled={!!running || !input.trim() || tooLong}>
                Send
              </button>
              {running && (
                <button type="button" class="danger" onClick={() => stop(running)}>
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
