// Executing a prepared run: the agent's documents are searched, its memory (or the conversation
// the caller gave) replayed, and the agent type's strategy talks to the model (and tools) until an
// answer, a failure, the deadline, a disconnect or a shutdown ends it. Every end is recorded, and
// reported last through the run's emitter; what the run reports before it goes through the same
// emitter (nothing more once the run was stopped).
import type { Config } from '../config.js';
import type { AgentStore } from '../agents/store.js';
import { describeError, type Logger } from '../lib/log.js';
import { cutToBytes } from '../lib/utf8.js';
import { answerCut } from './bounds.js';
import type { ChatApi } from './chat-api.js';
import { contextChunks, sourcesOf, systemMessage } from './context.js';
import { echoChatApi } from './echo-model.js';
import type { RunEvent } from './events.js';
import { abortFailure, agentNotFound, cancelAbort, redact, RunFailure } from './failures.js';
import type { ChatMessage } from './messages.js';
import type { ModelEndpoint } from './model.js';
import { createModelCall } from './model-call.js';
import type { ExecuteOptions, PreparedRun, RunChains, RunOutcome } from './run.js';
import { strategies } from './strategies.js';
import type { MemoryStore } from './memory-store.js';
import type { RunSource, RunStep, RunStore, RunUsage } from './store.js';
import { createToolCaller } from './tool-calls.js';
import type { ToolCallContext, ToolProvider } from '../lib/tool-contract.js';
import type { SearchStore } from '../documents/search-store.js';

/** Turns of a session replayed to the model (a turn is the user's input and the answer). */
export const MEMORY_TURNS = 10;

export interface ExecuteDeps {
  stores: { agents: AgentStore; runs: RunStore; memory: MemoryStore; search: SearchStore };
  config: Pick<Config, 'runs' | 'runBounds'>;
  log: Logger;
  /** The chat-completions call to model servers (the built-in echo model is answered inside). */
  chatApi: ChatApi;
  chains: RunChains;
  /** Gives each run its tools. */
  tools: ToolProvider;
  /** Runs another of the user's agents as a child of the run whose tool context is `parent`. */
  runChild(parent: ToolCallContext, agentId: string, input: string): Promise<string>;
}

export function createExecutor(deps: ExecuteDeps) {
  const { stores, config, log, chatApi, chains } = deps;

  /** Whatever ended a run, as a RunFailure whose message names the cause and never a key. */
  function failureOf(error: unknown, signal: AbortSignal, endpoint: ModelEndpoint, timeoutMs: number): RunFailure {
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
    let recorded!: () => void;
    chains.set(runId, {
      agentId: agent.id,
      parentRunId: prepared.parentRunId,
      abort: (reason) => admission.abort(cancelAbort(reason)),
      ended: new Promise<void>((resolve) => (recorded = resolve)),
    });
    const onCancel = () => admission.abort(cancelAbort(cancel?.reason));
    cancel?.addEventListener('abort', onCancel, { once: true });
    if (cancel?.aborted) onCancel();

    const steps: RunStep[] = [];
    let sources: RunSource[] = [];
    const warnings: string[] = [];
    const warn = (message: string) => {
      if (!warnings.includes(message)) warnings.push(message);
    };
    let usage = (): RunUsage | null => null;
    // A background run is followed through its event log: it reads the model's answer as it comes.
    const streaming = prepared.stream || prepared.background;
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
    const ended = (
      status: 'succeeded' | 'failed' | 'cancelled',
      output: string | null,
      error: { code: string; message: string } | null,
      memory: boolean,
    ) =>
      stores.runs.finishRunSoon(
        runId,
        {
          status,
          output,
          error: error?.message ?? null,
          errorCode: error?.code ?? null,
          steps,
          sources,
          warnings,
          usage: usage(),
          ms: Math.round(performance.now() - started),
        },
        memory && prepared.remembers && prepared.sessionId !== null
          ? { agentId: agent.id, sessionId: prepared.sessionId, input: prepared.input }
          : null,
      );

    let outcome: RunOutcome;
    try {
      // Sent even when the run was stopped before it began: a stream starts with `run` (a queued run's was sent when it was queued).
      if (!prepared.announced) prepared.events.emit({ name: 'run', data: { runId, sessionId: prepared.sessionId } });
      if (signal.aborted) throw signal.reason;
      const toolContext: ToolCallContext = {
        signal,
        deadline: admission.deadline,
        runId,
        userId,
        depth: prepared.depth,
        runChild: (agentId, input) => deps.runChild(toolContext, agentId, input),
      };

      // Documents as context.
      const chunks = contextChunks(stores.search, userId, agent.id, prepared.input);
      sources = sourcesOf(chunks);
      if (sources.length > 0) emit({ name: 'sources', data: sources });

      const toolSet = await deps.tools(agent, { id: userId }, toolContext);
      warnings.push(...toolSet.warnings);

      const history =
        prepared.conversation ??
        (prepared.remembers && prepared.sessionId !== null
          ? stores.memory.recentMessages(agent.id, prepared.sessionId, MEMORY_TURNS * 2, config.runBounds.memoryMaxBytes)
          : []);
      const messages: ChatMessage[] = [
        { role: 'system', content: systemMessage(prepared.system, chunks) },
        ...history.map((message) => ({ role: message.role, content: message.content })),
        { role: 'user', content: prepared.input },
      ];
      const model = createModelCall({
        endpoint,
        api: endpoint.builtIn === 'echo' ? echoChatApi : chatApi,
        maxSteps: config.runs.maxSteps,
        signal,
        streaming,
        emitToken,
      });
      usage = model.usage;
      const chat: typeof model.chat = async (request) => {
        const reply = await model.chat(request);
        return Object.assign(reply, { content: boundAnswer(reply.content) });
      };
      const callTool = createToolCaller(
        toolSet.tools,
        toolContext,
        steps,
        {
          toolCall: (data) => emit({ name: 'tool_call', data }),
          toolResult: (data) => emit({ name: 'tool_result', data }),
        },
        { maxCalls: config.runBounds.maxToolCalls, warn },
      );

      const output = boundAnswer(
        await strategies[agent.type]({
          messages,
          tools: toolSet.tools,
          streaming,
          signal,
          chat,
          callTool,
          emitToken,
          warn,
        }),
      );
      if (signal.aborted) throw signal.reason;
      const recorded = await ended('succeeded', output, null, true);
      // Deleted while it ran: its runs went with it, so there is no run to answer with.
      if (!recorded && !stores.agents.get(userId, agent.id)) {
        outcome = { ok: false, runId, failure: agentNotFound() };
      } else {
        outcome = {
          ok: true,
          result: {
            runId,
            sessionId: prepared.sessionId,
            output,
            model: endpoint.model,
            steps,
            sources,
            warnings,
            usage: usage(),
            ms: Math.round(performance.now() - started),
          },
        };
      }
    } catch (error) {
      const failure = failureOf(error, signal, endpoint, prepared.timeoutMs);
      try {
        await ended(failure.code === 'cancelled' ? 'cancelled' : 'failed', null, failure, false);
      } catch (recordError) {
        log.error({ msg: 'could not record the end of a run', runId, error: describeError(recordError) });
      }
      outcome = { ok: false, runId, failure };
    } finally {
      cancel?.removeEventListener('abort', onCancel);
      chains.delete(runId);
      recorded();
      admission.release();
    }
    prepared.events.emit(
      outcome.ok
        ? { name: 'done', data: outcome.result }
        : { name: 'error', data: { code: outcome.failure.code, message: outcome.failure.message } },
    );
    return outcome;
  }

  return execute;
}
