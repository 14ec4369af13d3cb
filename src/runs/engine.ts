// Running an agent, in two steps. `prepare` admits the run (a concurrency slot, the deadline),
// checks everything that can be decided before the model is called (agent, endpoint, prompt) and
// records the run; a failure there is a RunFailure the caller answers as an ordinary error. Then
// `execute` searches the agent's documents, replays its memory, and lets the agent type's strategy
// talk to the model (and tools) until an answer, a failure, the deadline, a disconnect or a
// shutdown ends it. Every recorded run's end is recorded; the engine never answers HTTP itself.
// What a run reports while it runs, its end included, goes through the run's emitter (events.ts).
import type { Config } from '../config.js';
import type { AgentStore, RunAgent } from '../agents/store.js';
import type { PromptStore } from '../prompts/store.js';
import type { ResolvedAddress } from '../ingest/fetch.js';
import { newId } from '../lib/ids.js';
import { describeError, type Logger } from '../lib/log.js';
import { CONTEXT_CHUNKS, DEFAULT_SYSTEM_MESSAGE, anyWordQuery, fillPrompt, sourcesOf, systemMessage } from './context.js';
import { answerCut, cutToBytes } from './bounds.js';
import { abortFailure, agentNotFound, redact, RunAbort, RunFailure } from './failures.js';
import { checkEndpoint, resolveEndpoint, type ModelEndpoint } from './model.js';
import { createChatApi } from './chat-api.js';
import { createRunEmitter, type RunEmitter, type RunEvent, type RunObserver } from './events.js';
import { echoChatApi } from './echo-model.js';
import type { ChatMessage, PriorMessage } from './messages.js';
import { createModelCall } from './model-call.js';
import { createRunSlots, type Admission } from './slots.js';
import { strategies } from './strategies.js';
import type { RunSource, RunStep, RunStore, RunUsage } from './store.js';
import { createToolCaller } from './tool-calls.js';
import type { RunToolSet, ToolCallContext } from './tool-types.js';

/** Turns of a session replayed to the model (a turn is the user's input and the answer). */
export const MEMORY_TURNS = 10;
/** How deep agents may call agents (a top-level run is depth 0). */
export const MAX_DEPTH = 3;

/** What POST /agents/{id}/invoke (or predict) asks for, validated. */
export interface RunRequest {
  input: string;
  variables: Record<string, string>;
  sessionId: string | null;
  stream: boolean;
  /** The session an agent with memory uses when `sessionId` is null (default: a new one). */
  defaultSessionId?: string;
  /**
   * The conversation before `input`, oldest first, as the caller holds it (a stateless
   * chat-completions call): given, it takes the place of memory, so no session is replayed or
   * written. The route that takes it bounds it, as it bounds `input`.
   */
  messages?: PriorMessage[];
  /** The caller's own system instructions, added after the agent's prompt in the system message. */
  instructions?: string[];
}

/** A finished run as invoke answers it. */
export interface RunResult {
  runId: string;
  sessionId: string | null;
  output: string;
  model: string;
  steps: RunStep[];
  sources: RunSource[];
  warnings: string[];
  usage: RunUsage | null;
  ms: number;
}

/** How `execute` runs a prepared run. */
export interface ExecuteOptions {
  /** The client went away: the run is cancelled (with the RunAbort it aborts with, if any). */
  cancel?: AbortSignal;
}

export type RunOutcome = { ok: true; result: RunResult } | { ok: false; runId: string; failure: RunFailure };

/** Gives a run its tools (none until a provider is plugged in). */
export type ToolProvider = (agent: RunAgent, caller: { id: string }, context: ToolCallContext) => Promise<RunToolSet>;

const noTools: ToolProvider = async () => ({ tools: [], warnings: [] });

/** A run checked and recorded (`running`), not yet run: hand it to `execute` at once. */
export interface PreparedRun {
  runId: string;
  userId: string;
  agent: RunAgent;
  endpoint: ModelEndpoint;
  /** The agent's filled prompt and the caller's instructions; null: neither (the default system message). */
  system: string | null;
  input: string;
  sessionId: string | null;
  /** The session's last turns are replayed, and a successful turn is added to it. */
  remembers: boolean;
  /** The conversation the caller gave (`RunRequest.messages`), replayed instead of memory. */
  conversation: PriorMessage[] | null;
  stream: boolean;
  parentRunId: string | null;
  depth: number;
  admission: Admission;
  /** Everything the run reports; subscribe before `execute`, which sends `run` first and an end last. */
  events: RunEmitter;
}

export interface RunEngineDeps {
  stores: { agents: AgentStore; prompts: PromptStore; runs: RunStore };
  config: Pick<Config, 'runs' | 'runBounds' | 'allowPrivateNetworks'>;
  log: Logger;
  /** Tests only: answers the DNS lookups of the endpoint check. */
  resolveHost?: (host: string) => Promise<ResolvedAddress[]>;
}

export type RunEngine = ReturnType<typeof createRunEngine>;

export function createRunEngine(deps: RunEngineDeps) {
  const { stores, config, log } = deps;
  const timeoutMs = config.runs.timeoutMs;
  const slots = createRunSlots(config.runs.concurrencyPerUser);
  const chatApi = createChatApi({ allowPrivateNetworks: config.allowPrivateNetworks });
  let toolProvider: ToolProvider = noTools;
  /** Runs under way: which agent each runs and its parent (for the cycle check of nested runs). */
  const chains = new Map<string, { agentId: string; parentRunId: string | null }>();
  /** What sees every run's events (see `observe`). */
  const observers = new Set<RunObserver>();
  const listenerFailed = (error: unknown) => log.error({ msg: 'a listener of run events failed', error: describeError(error) });

  /**
   * Checks an admitted run and records it; releases the admission and throws a RunFailure when it
   * cannot run (the endpoint check stops at the deadline or a shutdown like the run would).
   */
  async function begin(
    userId: string,
    agent: RunAgent,
    request: RunRequest,
    admission: Admission,
    parent: { runId: string; depth: number } | null,
  ): Promise<PreparedRun> {
    try {
      const endpoint = resolveEndpoint(agent.llm, config.runs);
      const prompt = agent.promptId ? stores.prompts.get(userId, agent.promptId) : undefined;
      const prompted = prompt ? fillPrompt(prompt, request.variables, request.input) : null;
      const instructions = request.instructions ?? [];
      const system = instructions.length === 0 ? prompted : [prompted ?? DEFAULT_SYSTEM_MESSAGE, ...instructions].join('\n\n');
      try {
        await checkEndpoint(endpoint, { allowPrivateNetworks: config.allowPrivateNetworks, signal: admission.signal, resolve: deps.resolveHost });
      } catch (error) {
        throw abortFailure(admission.signal, timeoutMs, 'check') ?? error;
      }
      const stopped = abortFailure(admission.signal, timeoutMs, 'check');
      if (stopped) throw stopped;
      const conversation = request.messages ?? null;
      const usesMemory = agent.hasMemory && parent === null && conversation === null;
      const sessionId = usesMemory ? (request.sessionId ?? request.defaultSessionId ?? newId()) : request.sessionId;
      const parentRunId = parent?.runId ?? null;
      const runId = record({ userId, agentId: agent.id, parentRunId, sessionId, input: request.input, model: endpoint.model });
      const events = createRunEmitter(listenerFailed);
      const run = { runId, userId, agentId: agent.id, parentRunId };
      for (const observer of observers) {
        events.subscribe((event) => {
          if (observers.has(observer)) observer(run, event);
        });
      }
      return {
        runId, userId, agent, endpoint, system, input: request.input, sessionId, remembers: usesMemory && sessionId !== null, conversation, stream: request.stream,
        parentRunId, depth: parent === null ? 0 : parent.depth + 1, admission, events,
      };
    } catch (error) {
      admission.release();
      throw error;
    }
  }

  /** Records a new run; a RunFailure when its agent was deleted meanwhile or the database refused. */
  function record(run: Parameters<RunStore['startRun']>[0]): string {
    let started: ReturnType<RunStore['startRun']>;
    try {
      started = stores.runs.startRun(run);
    } catch (error) {
      log.error({ msg: 'could not record a new run', error: describeError(error) });
      throw new RunFailure('unavailable', 'The run could not be started; try again.');
    }
    if (!started) throw agentNotFound();
    return started.id;
  }

  /** Admits, checks and records a top-level run; throws the RunFailure that says why it cannot run. */
  async function prepare(userId: string, agentId: string, request: RunRequest): Promise<PreparedRun> {
    const agent = stores.agents.getForRun(userId, agentId);
    if (!agent) throw agentNotFound();
    // Admitted (a slot taken) before the endpoint check: its DNS lookup uses libuv's small thread
    // pool (shared with password hashing), so a user may not have more lookups in flight than runs.
    const admission = slots.admit(userId, Date.now() + timeoutMs);
    return begin(userId, agent, request, admission, null);
  }

  /** Whatever ended a run, as a RunFailure whose message names the cause and never a key. */
  function failureOf(error: unknown, signal: AbortSignal, endpoint: ModelEndpoint): RunFailure {
    const stopped = abortFailure(signal, timeoutMs);
    if (stopped) return stopped;
    if (error instanceof RunFailure) return error;
    log.error({ msg: 'run failed unexpectedly', error: redact(describeError(error), endpoint, 4000) });
    return new RunFailure('internal', 'The run failed unexpectedly.');
  }

  /**
   * Runs a prepared run to its end. Never throws: the outcome says how it ended, and the run record
   * (and, for a successful run with memory, the session) is written before it resolves.
   */
  async function execute(prepared: PreparedRun, options: ExecuteOptions = {}): Promise<RunOutcome> {
    const { runId, agent, endpoint, userId, admission } = prepared;
    const signal = admission.signal;
    const { cancel } = options;
    const started = performance.now();
    chains.set(runId, { agentId: agent.id, parentRunId: prepared.parentRunId });
    const onCancel = () => admission.abort(cancel?.reason instanceof RunAbort ? cancel.reason : new RunAbort('cancelled'));
    cancel?.addEventListener('abort', onCancel, { once: true });
    if (cancel?.aborted) onCancel();

    const steps: RunStep[] = [];
    let sources: RunSource[] = [];
    const warnings: string[] = [];
    const warn = (message: string) => {
      if (!warnings.includes(message)) warnings.push(message);
    };
    let usage = (): RunUsage | null => null;
    const streaming = prepared.stream;
    // Nothing more is reported once the run was stopped but its end (a stream then ends with its error).
    const emit = (event: RunEvent) => {
      if (!signal.aborted) prepared.events.emit(event);
    };
    // What the model writes is kept (and streamed) up to RUN_ANSWER_MAX_BYTES: past it, cut with a warning.
    const { answerMaxBytes } = config.runBounds;
    const boundAnswer = (text: string) => {
      const cut = cutToBytes(text, answerMaxBytes);
      if (cut !== text) warn(answerCut(answerMaxBytes));
      return cut;
    };
    let tokenBytes = 0;
    const emitToken = (text: string) => {
      if (tokenBytes >= answerMaxBytes) return;
      const piece = cutToBytes(text, answerMaxBytes - tokenBytes);
      tokenBytes = piece === text ? tokenBytes + Buffer.byteLength(text) : answerMaxBytes;
      if (piece !== '') emit({ name: 'token', data: { text: piece } });
    };
    const ended = (status: 'succeeded' | 'failed' | 'cancelled', output: string | null, error: string | null, memory: boolean) =>
      stores.runs.finishRunSoon(
        runId,
        { status, output, error, steps, sources, warnings, usage: usage(), ms: Math.round(performance.now() - started) },
        memory && prepared.remembers && prepared.sessionId !== null
          ? { agentId: agent.id, sessionId: prepared.sessionId, input: prepared.input }
          : null,
      );

    let outcome: RunOutcome;
    try {
      // Sent even when the run was stopped before it began: a stream starts with `run`.
      prepared.events.emit({ name: 'run', data: { runId, sessionId: prepared.sessionId } });
      if (signal.aborted) throw signal.reason;
      const toolContext: ToolCallContext = { signal, deadline: admission.deadline, runId, userId, depth: prepared.depth };

      // Documents as context.
      const query = anyWordQuery(prepared.input);
      const chunks = query ? stores.runs.searchContext(userId, agent.id, query, CONTEXT_CHUNKS) : [];
      sources = sourcesOf(chunks);
      if (sources.length > 0) emit({ name: 'sources', data: sources });

      const toolSet = await toolProvider(agent, { id: userId }, toolContext);
      warnings.push(...toolSet.warnings);

      const history = prepared.conversation
        ?? (prepared.remembers && prepared.sessionId !== null
          ? stores.runs.recentMessages(agent.id, prepared.sessionId, MEMORY_TURNS * 2, config.runBounds.memoryMaxBytes)
          : []);
      const messages: ChatMessage[] = [
        { role: 'system', content: systemMessage(prepared.system, chunks) },
        ...history.map((message) => ({ role: message.role, content: message.content })),
        { role: 'user', content: prepared.input },
      ];
      const model = createModelCall({
        endpoint, api: endpoint.builtIn === 'echo' ? echoChatApi : chatApi, maxSteps: config.runs.maxSteps, signal, streaming, emitToken,
      });
      usage = model.usage;
      const chat: typeof model.chat = async (request) => {
        const reply = await model.chat(request);
        return Object.assign(reply, { content: boundAnswer(reply.content) });
      };
      const callTool = createToolCaller(toolSet.tools, toolContext, steps, {
        toolCall: (data) => emit({ name: 'tool_call', data }),
        toolResult: (data) => emit({ name: 'tool_result', data }),
      }, { maxCalls: config.runBounds.maxToolCalls, warn });

      const output = boundAnswer(await strategies[agent.type]({
        messages, tools: toolSet.tools, streaming, signal, chat, callTool, emitToken, warn,
      }));
      if (signal.aborted) throw signal.reason;
      const recorded = await ended('succeeded', output, null, true);
      // Deleted while it ran: its runs went with it, so there is no run to answer with.
      if (!recorded && !stores.agents.get(userId, agent.id)) {
        outcome = { ok: false, runId, failure: agentNotFound() };
      } else {
        outcome = {
          ok: true,
          result: { runId, sessionId: prepared.sessionId, output, model: endpoint.model, steps, sources, warnings, usage: usage(), ms: Math.round(performance.now() - started) },
        };
      }
    } catch (error) {
      const failure = failureOf(error, signal, endpoint);
      try {
        await ended(failure.code === 'cancelled' ? 'cancelled' : 'failed', null, failure.message, false);
      } catch (recordError) {
        log.error({ msg: 'could not record the end of a run', runId, error: describeError(recordError) });
      }
      outcome = { ok: false, runId, failure };
    } finally {
      cancel?.removeEventListener('abort', onCancel);
      chains.delete(runId);
      admission.release();
    }
    prepared.events.emit(outcome.ok ? { name: 'done', data: outcome.result } : { name: 'error', data: { code: outcome.failure.code, message: outcome.failure.message } });
    return outcome;
  }

  /**
   * Runs another of the user's agents as a child of the run `parent` describes (the AGENT tool):
   * recorded with parentRunId, without memory, outside the concurrency limit, under the parent's
   * deadline and signal, at most MAX_DEPTH deep. Resolves with its answer; rejects with an Error
   * whose message is safe to give the model (missing agent, too deep, a cycle, the child's failure).
   */
  async function runChildAgent(parent: ToolCallContext, agentId: string, input: string): Promise<string> {
    if (parent.depth + 1 > MAX_DEPTH) throw new Error(`Agents may call agents at most ${MAX_DEPTH} deep.`);
    const chain: string[] = [];
    for (let runId: string | null = parent.runId; runId !== null; runId = chains.get(runId)?.parentRunId ?? null) {
      const run = chains.get(runId);
      if (!run) break;
      chain.push(run.agentId);
    }
    if (chain.includes(agentId)) throw new Error('That agent is already running in this chain of calls; calling it again would loop.');
    const agent = stores.agents.getForRun(parent.userId, agentId);
    if (!agent) throw new Error('The agent this tool calls no longer exists.');
    let prepared: PreparedRun;
    try {
      const admission = slots.admit(null, parent.deadline, parent.signal);
      prepared = await begin(parent.userId, agent, { input, variables: {}, sessionId: null, stream: false }, admission, { runId: parent.runId, depth: parent.depth });
    } catch (error) {
      if (!(error instanceof RunFailure)) throw error;
      if (error.code === 'not_found') throw new Error('The agent this tool calls no longer exists.');
      const details = error.details ?? [];
      throw new Error(`The agent "${agent.name}" cannot run: ${details.map((d) => `${d.path} ${d.message}`).join('; ') || error.message}`);
    }
    const outcome = await execute(prepared);
    if (outcome.ok) return outcome.result.output;
    throw new Error(`The agent "${agent.name}" failed: ${outcome.failure.message}`);
  }

  return {
    prepare,
    execute,
    runChildAgent,
    /** Adds an observer of every run's events from the next run on (child runs included); returns what removes it. */
    observe(observer: RunObserver): () => void {
      observers.add(observer);
      return () => observers.delete(observer);
    },
    /** Plugs in the tools (the default offers none); the provider needs `runChildAgent`, hence no constructor option. */
    setToolProvider(provider: ToolProvider): void {
      toolProvider = provider;
    },
    /** Marks the runs a stopped process left under way as failed (a start-up write: see becomePrimary in app.ts). */
    failInterruptedRuns(): void {
      const interrupted = stores.runs.failInterruptedRuns('interrupted: the service stopped before the run ended');
      if (interrupted > 0) log.info({ msg: 'runs interrupted by the last stop marked failed', count: interrupted });
    },
    /** Refuses new runs and stops every admitted one (streams end with an `error` event, runs are marked failed). */
    shutdown: () => slots.shutdown(),
  };
}
