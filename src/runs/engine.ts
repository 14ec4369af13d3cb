// Running an agent: everything decided before the model is called (agent, endpoint, prompt,
// concurrency) fails as an ordinary 4xx; then the run is recorded, the agent's documents searched,
// its memory replayed, and the agent type's strategy talks to the model (and tools) until an answer,
// a failure, the deadline, a disconnect or a shutdown ends it. Every end is recorded.
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Config } from '../config.js';
import type { AgentRow, AgentStore } from '../agents/store.js';
import type { AgentType } from '../agents/schema.js';
import type { PromptStore } from '../prompts/store.js';
import { ApiError, notFound, rateLimited } from '../http/errors.js';
import { isIngestError } from '../ingest/errors.js';
import type { ResolvedAddress } from '../ingest/fetch.js';
import { newId } from '../lib/ids.js';
import { describeError, type Logger } from '../lib/log.js';
import { CONTEXT_CHUNKS, anyWordQuery, fillPrompt, sourcesOf, systemMessage } from './context.js';
import { checkEndpoint, createModelClient, resolveEndpoint, type ModelEndpoint } from './model.js';
import type { RunSource, RunStep, RunStore, RunUsage } from './store.js';
import type { RunTool, RunToolSet, ToolCallContext } from './tool-types.js';

/** Turns of a session replayed to the model (a turn is the user's input and the answer). */
export const MEMORY_TURNS = 10;
/** How deep agents may call agents (a top-level run is depth 0). */
export const MAX_DEPTH = 3;
/** The session an agent with memory uses when a v0 predict names none. */
export const DEFAULT_SESSION = 'default';

// ---- What callers see -----------------------------------------------------------------------------

/** What POST /agents/{id}/invoke asks for, validated. */
export interface RunRequest {
  input: string;
  variables: Record<string, string>;
  sessionId: string | null;
  stream: boolean;
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

export type FailureCode = 'upstream_error' | 'upstream_timeout' | 'max_steps' | 'cancelled' | 'unavailable' | 'internal';

const FAILURE_STATUS: Record<FailureCode, number> = {
  upstream_error: 502,
  max_steps: 502,
  upstream_timeout: 504,
  unavailable: 503,
  cancelled: 499,
  internal: 500,
};

/** Why a run failed after it started: a code, words safe to show, and the HTTP status it answers. */
export class RunFailure extends Error {
  override readonly name = 'RunFailure';
  constructor(
    readonly code: FailureCode,
    message: string,
  ) {
    super(message);
  }
  get status(): number {
    return FAILURE_STATUS[this.code];
  }
  toApiError(): ApiError {
    return new ApiError(this.status, this.code === 'cancelled' ? 'internal' : this.code, this.message);
  }
}

/** Where a run's progress goes while it runs (a stream); all optional. */
export interface RunSink {
  /** The client went away: the run is cancelled. */
  cancel?: AbortSignal;
  run?(data: { runId: string; sessionId: string | null }): void;
  token?(text: string): void;
  toolCall?(data: { id: string; tool: string; function: string; input: unknown }): void;
  toolResult?(data: { id: string; output?: string; error?: string }): void;
  sources?(sources: RunSource[]): void;
}

export type RunOutcome = { ok: true; result: RunResult } | { ok: false; runId: string; failure: RunFailure };

// ---- Seams: tools and per-type strategies ---------------------------------------------------------

/** Gives a run its tools (none until a provider is plugged in). */
export type ToolProvider = (agent: AgentRow, caller: { id: string }, context: ToolCallContext) => Promise<RunToolSet>;

export const noTools: ToolProvider = async () => ({ tools: [], warnings: [] });

/** One model reply: its text and the tool calls it asks for (arguments as the model wrote them). */
export interface ModelReply {
  content: string;
  toolCalls: { id: string; name: string; arguments: string }[];
}

/** What a strategy works with: the conversation so far, the tools, and one call each to the model and a tool. */
export interface StrategyContext {
  /** System message, remembered turns, the user's input. A strategy may append to it. */
  messages: ChatCompletionMessageParam[];
  tools: RunTool[];
  /** True when the client is streamed: `chat` with `streamTokens` forwards text as it comes, `emitToken` sends text. */
  streaming: boolean;
  signal: AbortSignal;
  /** One model call (counted against RUN_MAX_STEPS). */
  chat(request: {
    messages: ChatCompletionMessageParam[];
    tools?: ChatCompletionTool[];
    stop?: string[];
    streamTokens?: boolean;
    /** Sees the text of a streamed answer as it comes (the ReAct loop streams only its final answer). */
    onText?: (text: string) => void;
  }): Promise<ModelReply>;
  /** Runs one tool call: records the step, streams tool_call/tool_result; a failure comes back as `error`, never thrown. */
  callTool(call: { id: string; name: string; arguments: string }): Promise<{ output?: string; error?: string }>;
  /** Sends text to a streamed client as `token` events (a strategy that does not stream its model calls). */
  emitToken(text: string): void;
}

/** How an agent type reaches its answer; resolves with the final text. */
export type RunStrategy = (run: StrategyContext) => Promise<string>;

/** The functions offered to a model with native tool calling. */
export function toOpenAiTools(tools: RunTool[]): ChatCompletionTool[] {
  return tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }));
}

/** Native tool calling (VENDOR_A): the model asks for tool calls, gets their results, until it answers in text. */
export const nativeToolsStrategy: RunStrategy = async (run) => {
  const offered = run.tools.length > 0 ? toOpenAiTools(run.tools) : undefined;
  for (;;) {
    const reply = await run.chat({ messages: run.messages, tools: offered, streamTokens: true });
    if (reply.toolCalls.length === 0) return reply.content;
    run.messages.push({
      role: 'assistant',
      content: reply.content === '' ? null : reply.content,
      tool_calls: reply.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
    });
    for (const call of reply.toolCalls) {
      const result = await run.callTool(call);
      run.messages.push({ role: 'tool', tool_call_id: call.id, content: result.error === undefined ? result.output ?? '' : `Error: ${result.error}` });
    }
  }
};

/** One plain chat call, tools not offered: what REACT does until a ReAct loop is plugged in. */
export const plainChatStrategy: RunStrategy = async (run) => (await run.chat({ messages: run.messages, streamTokens: true })).content;

export const defaultStrategies: Record<AgentType, RunStrategy> = {
  VENDOR_A: nativeToolsStrategy,
  REACT: plainChatStrategy,
};

// ---- The engine -----------------------------------------------------------------------------------

export interface RunEngineDeps {
  stores: { agents: AgentStore; prompts: PromptStore; runs: RunStore };
  config: Pick<Config, 'runs' | 'allowPrivateNetworks'>;
  log: Logger;
  toolProvider?: ToolProvider;
  strategies?: Partial<Record<AgentType, RunStrategy>>;
  resolveHost?: (host: string) => Promise<ResolvedAddress[]>;
}

/** A run checked and ready: nothing is recorded yet. */
export interface PreparedRun {
  userId: string;
  agent: AgentRow;
  endpoint: ModelEndpoint;
  system: string | null;
  input: string;
  sessionId: string | null;
  stream: boolean;
  /** Releases the caller's concurrency slot (top-level runs only). */
  release: () => void;
}

type AbortKind = 'timeout' | 'cancelled' | 'shutdown';
class RunAbort extends Error {
  constructor(readonly kind: AbortKind) {
    super(`run ${kind}`);
    this.name = 'AbortError';
  }
}

interface ActiveRun {
  agentId: string;
  parentRunId: string | null;
  controller: AbortController;
  done: Promise<unknown>;
}

const MAX_ERROR_TEXT = 500;

export type RunEngine = ReturnType<typeof createRunEngine>;

export function createRunEngine(deps: RunEngineDeps) {
  const { stores, config, log } = deps;
  const strategies: Record<AgentType, RunStrategy> = { ...defaultStrategies, ...deps.strategies };
  let toolProvider: ToolProvider = deps.toolProvider ?? noTools;
  const running = new Map<string, number>();
  const active = new Map<string, ActiveRun>();
  let closing = false;

  const interrupted = stores.runs.failInterruptedRuns('interrupted: the service stopped before the run ended');
  if (interrupted > 0) log.info({ msg: 'runs interrupted by the last stop marked failed', count: interrupted });

  function acquire(userId: string): () => void {
    const count = running.get(userId) ?? 0;
    if (count >= config.runs.concurrencyPerUser) throw rateLimited(1, `runs at once (at most ${config.runs.concurrencyPerUser} per user)`);
    running.set(userId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (running.get(userId) ?? 1) - 1;
      if (left <= 0) running.delete(userId);
      else running.set(userId, left);
    };
  }

  /** The checks shared by top-level and nested runs; ApiErrors (404, 422) describe the request. */
  async function check(userId: string, agent: AgentRow, variables: Record<string, string>, input: string) {
    const llm = stores.agents.getModelSettings(userId, agent.id);
    if (!llm) throw notFound('Agent');
    const endpoint = resolveEndpoint(llm, config.runs);
    let system: string | null = null;
    if (agent.promptId) {
      const prompt = stores.prompts.get(userId, agent.promptId);
      if (prompt) system = fillPrompt(prompt, variables, input);
    }
    await checkEndpoint(endpoint, config.allowPrivateNetworks, deps.resolveHost);
    return { endpoint, system };
  }

  /** Checks a top-level run; throws the 4xx that describes why it cannot run. Takes a concurrency slot. */
  async function prepare(userId: string, agentId: string, request: RunRequest): Promise<PreparedRun> {
    if (closing) throw new ApiError(503, 'unavailable', 'The service is shutting down; try again shortly.');
    const agent = stores.agents.get(userId, agentId);
    if (!agent) throw notFound('Agent');
    // The slot is taken before the endpoint check: its DNS lookup uses libuv's small thread pool
    // (shared with password hashing), so a user may not have more lookups in flight than runs.
    const release = acquire(userId);
    let checked: Awaited<ReturnType<typeof check>>;
    try {
      checked = await check(userId, agent, request.variables, request.input);
    } catch (error) {
      release();
      throw error;
    }
    const { endpoint, system } = checked;
    const sessionId = agent.hasMemory ? (request.sessionId ?? newId()) : request.sessionId;
    if (closing) {
      release();
      throw new ApiError(503, 'unavailable', 'The service is shutting down; try again shortly.');
    }
    return { userId, agent, endpoint, system, input: request.input, sessionId, stream: request.stream, release };
  }

  /** `text` without the endpoint's key (or anything shaped like a key), cut to `max` characters. */
  function redact(text: string, endpoint: ModelEndpoint, max = MAX_ERROR_TEXT): string {
    let clean = text;
    if (endpoint.apiKey.length >= 4) clean = clean.split(endpoint.apiKey).join('[redacted]');
    clean = clean.replace(/\b(sk|key|token)-[A-Za-z0-9_*.-]{6,}/gi, '$1-[redacted]');
    return clean.length > max ? `${clean.slice(0, max)}…` : clean;
  }

  /** Whatever ended a run, as a RunFailure whose message names the cause and never a key. */
  function toFailure(error: unknown, signal: AbortSignal, endpoint: ModelEndpoint): RunFailure {
    if (signal.aborted && signal.reason instanceof RunAbort) {
      const kind = signal.reason.kind;
      if (kind === 'timeout') return new RunFailure('upstream_timeout', `The run did not finish within ${config.runs.timeoutMs} ms (RUN_TIMEOUT_MS).`);
      if (kind === 'shutdown') return new RunFailure('unavailable', 'The service is shutting down; the run was stopped. Run it again.');
      return new RunFailure('cancelled', 'The client disconnected; the run was cancelled.');
    }
    if (error instanceof RunFailure) return error;
    log.error({ msg: 'run failed unexpectedly', error: redact(describeError(error), endpoint, 4000) });
    return new RunFailure('internal', 'The run failed unexpectedly.');
  }

  /** What a model call threw, in words: the server's status and message, or why it could not be reached. */
  function modelFailure(error: unknown, endpoint: ModelEndpoint): RunFailure {
    const host = new URL(endpoint.baseURL).host;
    if (error instanceof OpenAI.APIConnectionTimeoutError) {
      return new RunFailure('upstream_timeout', `The model endpoint ${host} did not answer within ${config.runs.timeoutMs} ms (RUN_TIMEOUT_MS).`);
    }
    if (error instanceof OpenAI.APIUserAbortError) return new RunFailure('cancelled', 'The run was cancelled.');
    if (error instanceof OpenAI.APIError) {
      const inner = (error.error as { message?: unknown } | undefined)?.message;
      const said = typeof inner === 'string' && inner.trim() !== '' ? inner.trim() : error.message.replace(/^\d{3}\s*/, '');
      if (error.status === undefined) return new RunFailure('upstream_error', redact(`The model endpoint ${host} reported an error while answering: ${said || 'no message'}`, endpoint));
      const meaning = error.status === 401 || error.status === 403 ? " (check the agent's llm.apiKey or the operator's key)" : '';
      return new RunFailure('upstream_error', redact(`The model endpoint ${host} answered ${error.status}${meaning}: ${said || 'no message'}`, endpoint));
    }
    const cause = error instanceof OpenAI.APIConnectionError ? error.cause : error;
    if (isIngestError(cause)) return new RunFailure('upstream_error', redact(`Could not reach the model endpoint ${host}: ${cause.message}`, endpoint));
    if (error instanceof OpenAI.APIConnectionError) {
      const code = (cause as NodeJS.ErrnoException | undefined)?.code;
      return new RunFailure('upstream_error', `Could not reach the model endpoint ${host}${code ? ` (${code})` : ''}.`);
    }
    if (error instanceof OpenAI.OpenAIError) {
      return new RunFailure('upstream_error', redact(`The model endpoint ${host} sent an answer that could not be read: ${error.message}`, endpoint));
    }
    // The connection broke while the answer streamed in (reset, closed early, not JSON).
    const code = (error as NodeJS.ErrnoException | undefined)?.code ?? (cause as { cause?: NodeJS.ErrnoException } | undefined)?.cause?.code;
    return new RunFailure('upstream_error', `The connection to the model endpoint ${host} broke before the answer was complete${code ? ` (${code})` : ''}.`);
  }

  /**
   * Runs a prepared run to its end. Never throws: the outcome says how it ended, and the run record
   * (and, for a successful run with memory, the session) is written before it resolves.
   */
  async function execute(
    prepared: PreparedRun,
    sink: RunSink = {},
    nesting: { parentRunId: string; depth: number; deadline: number; signal: AbortSignal } | null = null,
  ): Promise<RunOutcome> {
    const { agent, endpoint, userId } = prepared;
    const started = performance.now();
    const deadline = nesting?.deadline ?? Date.now() + config.runs.timeoutMs;
    const depth = nesting?.depth ?? 0;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new RunAbort('timeout')), Math.max(0, deadline - Date.now()));
    const onCancel = () => controller.abort(new RunAbort('cancelled'));
    const onParentAbort = () => controller.abort(nesting!.signal.reason);
    sink.cancel?.addEventListener('abort', onCancel, { once: true });
    nesting?.signal.addEventListener('abort', onParentAbort, { once: true });
    if (sink.cancel?.aborted) onCancel();
    if (nesting?.signal.aborted) onParentAbort();
    const signal = controller.signal;

    let runId: string;
    try {
      runId = stores.runs.startRun({
        userId, agentId: agent.id, parentRunId: nesting?.parentRunId ?? null, sessionId: prepared.sessionId, input: prepared.input, model: endpoint.model,
      }).id;
    } catch (error) {
      // Nothing was recorded (the database is busy, say): the run never started.
      clearTimeout(timer);
      sink.cancel?.removeEventListener('abort', onCancel);
      nesting?.signal.removeEventListener('abort', onParentAbort);
      if (nesting === null) prepared.release();
      log.error({ msg: 'could not record a new run', error: describeError(error) });
      return { ok: false, runId: '', failure: new RunFailure('unavailable', 'The run could not be started; try again.') };
    }
    let settle!: () => void;
    active.set(runId, { agentId: agent.id, parentRunId: nesting?.parentRunId ?? null, controller, done: new Promise<void>((resolve) => (settle = resolve)) });

    const steps: RunStep[] = [];
    let sources: RunSource[] = [];
    const warnings: string[] = [];
    let usage: RunUsage | null = null;
    let modelCalls = 0;
    const streaming = prepared.stream && sink.token !== undefined;
    const emit = <K extends keyof RunSink>(name: K, ...args: Parameters<Exclude<RunSink[K], AbortSignal | undefined>>) => {
      const listener = sink[name] as ((...values: unknown[]) => void) | undefined;
      if (listener && !signal.aborted) listener(...args);
    };

    let outcome: RunOutcome;
    try {
      emit('run', { runId, sessionId: prepared.sessionId });
      const toolContext: ToolCallContext = { signal, deadline, runId, userId, depth };

      // Documents as context.
      const query = anyWordQuery(prepared.input);
      const chunks = query ? stores.runs.searchContext(userId, agent.id, query, CONTEXT_CHUNKS) : [];
      sources = sourcesOf(chunks);
      if (sources.length > 0) emit('sources', sources);

      const toolSet = await toolProvider(agent, { id: userId }, toolContext);
      warnings.push(...toolSet.warnings);

      const history = agent.hasMemory && prepared.sessionId !== null && nesting === null
        ? stores.runs.recentMessages(agent.id, prepared.sessionId, MEMORY_TURNS * 2)
        : [];
      const messages: ChatCompletionMessageParam[] = [
        { role: 'system', content: systemMessage(prepared.system, chunks) },
        ...history.map((message) => ({ role: message.role, content: message.content })),
        { role: 'user', content: prepared.input },
      ];
      const client = createModelClient(endpoint, { timeoutMs: config.runs.timeoutMs, allowPrivateNetworks: config.allowPrivateNetworks });
      const addUsage = (reported: { prompt_tokens?: number; completion_tokens?: number } | null | undefined) => {
        if (!reported) return;
        usage = {
          promptTokens: (usage?.promptTokens ?? 0) + (reported.prompt_tokens ?? 0),
          completionTokens: (usage?.completionTokens ?? 0) + (reported.completion_tokens ?? 0),
        };
      };

      const context: StrategyContext = {
        messages,
        tools: toolSet.tools,
        streaming,
        signal,
        emitToken: (text) => emit('token', text),
        async chat(request) {
          if (modelCalls >= config.runs.maxSteps) {
            throw new RunFailure('max_steps', `The agent made ${config.runs.maxSteps} model calls without reaching an answer (RUN_MAX_STEPS).`);
          }
          try {
            modelCalls += 1;
            const params = {
              model: endpoint.model,
              messages: request.messages,
              ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
              ...(request.stop ? { stop: request.stop } : {}),
            };
            const options = { signal, timeout: Math.max(1, deadline - Date.now()) };
            if (!streaming) {
              const completion = await client.chat.completions.create(params, options);
              addUsage(completion.usage);
              const message = completion.choices[0]?.message;
              const toolCalls = (message?.tool_calls ?? []).flatMap((call) =>
                call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments ?? '' }] : [],
              );
              return { content: message?.content ?? '', toolCalls };
            }
            const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, options);
            let content = '';
            const calls: { id: string; name: string; arguments: string }[] = [];
            for await (const chunk of stream) {
              addUsage(chunk.usage);
              const delta = chunk.choices[0]?.delta;
              if (!delta) continue;
              if (delta.content) {
                content += delta.content;
                if (request.streamTokens) emit('token', delta.content);
                request.onText?.(delta.content);
              }
              for (const piece of delta.tool_calls ?? []) {
                const slot = (calls[piece.index ?? calls.length] ??= { id: '', name: '', arguments: '' });
                if (piece.id) slot.id = piece.id;
                if (piece.function?.name && slot.name !== piece.function.name) slot.name += piece.function.name;
                if (piece.function?.arguments) slot.arguments += piece.function.arguments;
              }
            }
            return { content, toolCalls: calls.filter(Boolean).map((call, index) => ({ ...call, id: call.id || `call_${index}` })) };
          } catch (error) {
            if (signal.aborted) throw error;
            throw modelFailure(error, endpoint);
          }
        },
        async callTool(call) {
          const tool = toolSet.tools.find((candidate) => candidate.name === call.name);
          let input: unknown = call.arguments;
          const begun = performance.now();
          let result: { output?: string; error?: string };
          try {
            input = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
          } catch {
            // kept as the text the model wrote
          }
          emit('toolCall', { id: call.id, tool: tool?.toolName ?? call.name, function: call.name, input });
          if (!tool) {
            result = { error: `There is no function named "${call.name.slice(0, 64)}"; use one of: ${toolSet.tools.map((t) => t.name).join(', ') || 'none'}.` };
          } else if (typeof input === 'string') {
            result = { error: 'The arguments are not valid JSON; send a JSON object.' };
          } else {
            try {
              result = { output: await tool.call(input, toolContext) };
            } catch (error) {
              if (signal.aborted) throw error;
              result = { error: error instanceof Error && error.message ? error.message.slice(0, MAX_ERROR_TEXT * 2) : 'The tool failed.' };
            }
          }
          const ms = Math.round(performance.now() - begun);
          steps.push({ tool: tool?.toolName ?? call.name, toolId: tool?.toolId ?? '', function: call.name, input, ...result, ms });
          emit('toolResult', { id: call.id, ...result });
          return result;
        },
      };

      const output = await strategies[agent.type](context);
      if (signal.aborted) throw signal.reason;
      const ms = Math.round(performance.now() - started);
      const memory = agent.hasMemory && prepared.sessionId !== null && nesting === null
        ? { agentId: agent.id, sessionId: prepared.sessionId, input: prepared.input }
        : null;
      stores.runs.finishRun(runId, { status: 'succeeded', output, error: null, steps, sources, warnings, usage, ms }, memory);
      outcome = {
        ok: true,
        result: { runId, sessionId: prepared.sessionId, output, model: endpoint.model, steps, sources, warnings, usage, ms },
      };
    } catch (error) {
      const failure = toFailure(error, signal, endpoint);
      const status = failure.code === 'cancelled' ? 'cancelled' : 'failed';
      const ms = Math.round(performance.now() - started);
      try {
        stores.runs.finishRun(runId, { status, output: null, error: failure.message, steps, sources, warnings, usage, ms }, null);
      } catch (recordError) {
        log.error({ msg: 'could not record the end of a run', runId, error: describeError(recordError) });
      }
      outcome = { ok: false, runId, failure };
    } finally {
      clearTimeout(timer);
      sink.cancel?.removeEventListener('abort', onCancel);
      nesting?.signal.removeEventListener('abort', onParentAbort);
      if (nesting === null) prepared.release();
      active.delete(runId);
      settle();
    }
    return outcome;
  }

  /**
   * Runs another of the user's agents as a child of the run `parent` describes (the AGENT tool):
   * recorded with parentRunId, without memory, outside the concurrency limit, under the parent's
   * deadline and signal, at most MAX_DEPTH deep. Resolves with its answer; rejects with an Error
   * whose message is safe to give the model (missing agent, too deep, a cycle, the child's failure).
   */
  async function runChildAgent(parent: ToolCallContext, agentId: string, input: string): Promise<string> {
    const depth = parent.depth + 1;
    if (depth > MAX_DEPTH) throw new Error(`Agents may call agents at most ${MAX_DEPTH} deep.`);
    const chain: string[] = [];
    for (let runId: string | null = parent.runId; runId !== null; runId = active.get(runId)?.parentRunId ?? null) {
      const run = active.get(runId);
      if (!run) break;
      chain.push(run.agentId);
    }
    if (chain.includes(agentId)) throw new Error('That agent is already running in this chain of calls; calling it again would loop.');
    const agent = stores.agents.get(parent.userId, agentId);
    if (!agent) throw new Error('The agent this tool calls no longer exists.');
    let checked: Awaited<ReturnType<typeof check>>;
    try {
      checked = await check(parent.userId, agent, {}, input);
    } catch (error) {
      if (error instanceof ApiError) {
        const details = (error.details as { path: string; message: string }[] | undefined) ?? [];
        throw new Error(`The agent "${agent.name}" cannot run: ${details.map((d) => `${d.path} ${d.message}`).join('; ') || error.message}`);
      }
      throw error;
    }
    const prepared: PreparedRun = { userId: parent.userId, agent, ...checked, input, sessionId: null, stream: false, release: () => {} };
    const outcome = await execute(prepared, {}, { parentRunId: parent.runId, depth, deadline: parent.deadline, signal: parent.signal });
    if (outcome.ok) return outcome.result.output;
    throw new Error(`The agent "${agent.name}" failed: ${outcome.failure.message}`);
  }

  return {
    prepare,
    execute,
    runChildAgent,
    /** Plugs in the tools (the default offers none). */
    setToolProvider(provider: ToolProvider): void {
      toolProvider = provider;
    },
    /** Replaces how an agent type reaches its answer (e.g. the ReAct loop for REACT). */
    setStrategy(type: AgentType, strategy: RunStrategy): void {
      strategies[type] = strategy;
    },
    /** Runs going on now (top-level and nested). */
    get activeRuns(): number {
      return active.size;
    },
    /** Stops every run (streams end with an `error` event, runs are marked failed) and refuses new ones. */
    async shutdown(): Promise<void> {
      closing = true;
      const runs = [...active.values()];
      for (const run of runs) run.controller.abort(new RunAbort('shutdown'));
      await Promise.all(runs.map((run) => run.done));
    },
  };
}
