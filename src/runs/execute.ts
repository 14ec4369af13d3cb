// Executing a prepared run: the agent's documents are searched, its memory (or the conversation
// the caller gave) replayed, and the agent type's strategy talks to the model (and tools) until an
// answer, a failure, the deadline, a disconnect or a shutdown ends it. Every end is recorded, and
// reported last through the run's emitter; what the run reports before it goes through the same
// emitter (nothing more once the run was stopped). A run whose tool calls wait for approval pauses
// instead of ending (approval.ts): what it resumes from is recorded with its `requires_action`,
// and `execute` given that state (`resume`) takes it up where it stopped.
import type { Config } from '../config.js';
import type { AgentStore } from '../agents/store.js';
import { describeError, type Logger } from '../lib/log.js';
import { cutToBytes } from '../lib/utf8.js';
import { answerCut } from './bounds.js';
import type { ChatApi } from './chat-api.js';
import { contextChunks, sourcesOf, systemMessage } from './context.js';
import { echoChatApi } from './echo-model.js';
import type { RunEvent, RunInfo } from './events.js';
import { abortFailure, agentNotFound, cancelAbort, redact, RunFailure, waitingMessage } from './failures.js';
import type { ChatMessage } from './messages.js';
import { endWaitingChain, RunPaused, type Decision, type PausedState } from './approval.js';
import type { ModelEndpoint } from './model.js';
import { createModelCall } from './model-call.js';
import type { ExecuteOptions, PreparedRun, RunChains, RunOutcome } from './run.js';
import { strategies, type StrategyContext } from './strategies.js';
import type { MemoryStore } from './memory-store.js';
import type { RunSource, RunStep, RunStore, RunUsage } from './store.js';
import { createToolCaller } from './tool-calls.js';
import type { ToolCallContext, ToolProvider, ToolSet } from '../lib/tool-contract.js';
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
  /** Takes up a nested run that waited (its calls answered) as a child of `parent`: its answer, as `runChild`. */
  resumeChild(parent: ToolCallContext, runId: string, decisions: Map<string, Decision>): Promise<string>;
  /** Ends the log of a run whose emitter has ended (a wait that could not be recorded). */
  endLog(run: RunInfo, failure: RunFailure): void;
}

/** How a nested run its caller ended without is ended. */
const ABANDONED = 'The run that called this agent ended without it; it will not go on.';

export function createExecutor(deps: ExecuteDeps) {
  const { stores, config, log, chatApi, chains } = deps;

  /** Whatever ended a run, as a RunFailure whose message names the cause and never a key. */
  function failureOf(error: unknown, signal: AbortSignal, endpoint: ModelEndpoint, prepared: PreparedRun): RunFailure {
    const stopped = abortFailure(signal, prepared.timeoutMs, 'run', prepared.background ? 'RUN_BACKGROUND_TIMEOUT_MS' : 'RUN_TIMEOUT_MS');
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
    const { cancel, resume } = options;
    const started = performance.now();
    // A run going on after a pause: its record holds what it did before (steps, sources, usage).
    const earlier = resume ? stores.runs.getRun(userId, runId) : undefined;
    const elapsed = () => (earlier ? Math.max(0, Date.now() - Date.parse(earlier.startedAt)) : Math.round(performance.now() - started));
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

    const steps: RunStep[] = earlier ? [...earlier.steps] : [];
    let sources: RunSource[] = earlier?.sources ?? [];
    const warnings: string[] = earlier ? [...earlier.warnings] : [];
    const warn = (message: string) => {
      if (!warnings.includes(message)) warnings.push(message);
    };
    let usage = (): RunUsage | null => earlier?.usage ?? null;
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
    let tokenBytes = resume?.state.counters.tokenBytes ?? 0;
    const emitToken = (text: string) => {
      if (tokenBytes >= answerMaxBytes) return;
      const piece = cutToBytes(text, answerMaxBytes - tokenBytes);
      tokenBytes = piece === text ? tokenBytes + Buffer.byteLength(text) : answerMaxBytes;
      if (piece !== '') emit({ name: 'token', data: { text: piece } });
    };
    // The run's time as its record keeps it; the answer and the log's `done` tell the same (not a
    // time taken later, after the end's fsync).
    let endedMs = 0;
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
          ms: (endedMs = elapsed()),
        },
        memory && prepared.remembers && prepared.sessionId !== null ? { agentId: agent.id, sessionId: prepared.sessionId } : null,
        // The slot is free as soon as the run is seen to have ended, not only once its end is on disk.
        () => admission.freeSlot(),
      );

    // What a pause records (set once the conversation and the counters exist).
    let messages: ChatMessage[] = [];
    let counters = (): PausedState['counters'] => ({ toolCalls: 0, modelSteps: 0, tokenBytes });
    const endWaiting = (childRunId: string) => endWaitingChain(stores.runs, childRunId, 'cancelled', ABANDONED, 'cancelled');

    let outcome: RunOutcome;
    let toolSet: ToolSet | undefined;
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

      toolSet = await deps.tools(agent, { id: userId }, toolContext);
      for (const warning of toolSet.warnings) warn(warning);
      if (resume) {
        // Its documents were found, and its memory replayed, before it paused: the conversation holds them.
        messages = resume.state.messages;
      } else {
        // Documents as context.
        const chunks = contextChunks(stores.search, userId, agent.id, prepared.input);
        sources = sourcesOf(chunks);
        if (sources.length > 0) emit({ name: 'sources', data: sources });
        const remembered =
          prepared.replaySession !== null
            ? stores.memory.recentMessages(agent.id, prepared.replaySession, MEMORY_TURNS * 2, config.runBounds.memoryMaxBytes)
            : [];
        const history = prepared.conversation ? [...remembered, ...prepared.conversation] : remembered;
        // A tool left out of this run (its server unreachable) is named to the model in a note.
        const notes = toolSet.notes ?? [];
        const system = systemMessage(prepared.system, chunks);
        messages = [
          { role: 'system', content: notes.length === 0 ? system : `${system}\n\n${notes.join('\n')}` },
          ...history.map((message) => ({ role: message.role, content: message.content })),
          { role: 'user', content: prepared.input },
        ];
      }

      const model = createModelCall({
        endpoint,
        api: endpoint.builtIn === 'echo' ? echoChatApi : chatApi,
        maxSteps: config.runs.maxSteps,
        signal,
        streaming,
        emitToken,
        sampling: prepared.sampling,
        made: resume?.state.counters.modelSteps,
        usage: earlier?.usage,
      });
      usage = model.usage;
      const chat: typeof model.chat = async (request) => {
        const reply = await model.chat(request);
        return Object.assign(reply, { content: boundAnswer(reply.content) });
      };
      const tools = createToolCaller(
        toolSet.tools,
        toolContext,
        steps,
        {
          toolCall: (data) => emit({ name: 'tool_call', data }),
          toolResult: (data) => emit({ name: 'tool_result', data }),
        },
        { maxCalls: config.runBounds.maxToolCalls, warn, made: resume?.state.counters.toolCalls, endWaiting },
      );
      counters = () => ({ toolCalls: tools.made(), modelSteps: model.made(), tokenBytes });

      // Going on after a pause: the calls it paused in are answered first, then the strategy takes up from their results.
      let resumed: StrategyContext['resumed'];
      if (resume) {
        const { batch } = resume.state;
        const results = await tools.settle(batch, resume.decisions, (childRunId, decisions) =>
          deps.resumeChild(toolContext, childRunId, decisions),
        );
        resumed = { calls: batch.calls, results, memo: batch.memo };
      }

      const output = boundAnswer(
        await strategies[agent.type]({
          messages,
          tools: toolSet.tools,
          streaming,
          signal,
          chat,
          callTools: tools.callTools,
          resumed,
          emitToken,
          warn,
        }),
      );
      if (signal.aborted) throw signal.reason;
      // A run not streamed still reports its answer as a token, so the tokens of every run's log join into its output.
      if (!streaming && output !== '') emitToken(output);
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
            ms: endedMs,
          },
        };
      }
    } catch (error) {
      if (error instanceof RunPaused && !signal.aborted) {
        outcome = pause(error);
        return outcome;
      }
      // The nested runs it waited on before it paused go no further without it.
      for (const entry of resume?.state.batch.waiting ?? []) if (entry.kind === 'child') endWaiting(entry.runId);
      const failure = failureOf(error, signal, endpoint, prepared);
      try {
        await ended(failure.code === 'cancelled' ? 'cancelled' : 'failed', null, failure, false);
      } catch (recordError) {
        log.error({ msg: 'could not record the end of a run', runId, error: describeError(recordError) });
      }
      outcome = { ok: false, runId, failure };
    } finally {
      void toolSet?.release?.();
      cancel?.removeEventListener('abort', onCancel);
      chains.delete(runId);
      recorded();
      admission.release();
    }
    // Every path but a pause (which sent `requires_action`) ends the events here.
    prepared.events.emit(
      outcome.ok
        ? { name: 'done', data: outcome.result }
        : { name: 'error', data: { code: outcome.failure.code, message: outcome.failure.message } },
    );
    return outcome;

    /**
     * The run waits for approval of `paused.actions`: `requires_action` is sent and the run recorded
     * waiting, with what it resumes from, in one synchronous step (so nothing reads it in between);
     * the `finally` above then gives up its slot.
     */
    function pause(paused: RunPaused): RunOutcome {
      const state: PausedState = {
        messages,
        batch: paused.batch,
        counters: counters(),
        remembers: prepared.remembers,
        depth: prepared.depth,
        sampling: prepared.sampling,
      };
      const { actions } = paused;
      prepared.events.emit({ name: 'requires_action', data: { runId, actions } });
      let recorded = false;
      try {
        recorded = stores.runs.pauseRun(runId, { actions, state, steps, sources, warnings, usage: usage() });
      } catch (error) {
        log.error({ msg: 'could not record a run waiting for approval', runId, error: describeError(error) });
      }
      if (!recorded) {
        for (const entry of paused.batch.waiting) if (entry.kind === 'child') endWaiting(entry.runId);
        // Deleted with its agent meanwhile: no run is left to answer with, as when a run succeeds after that.
        const failure = stores.agents.get(userId, agent.id)
          ? new RunFailure('internal', 'The run could not be kept waiting for approval.')
          : agentNotFound();
        try {
          stores.runs.endUnderWay(runId, 'failed', failure.message, failure.code);
        } catch {
          // deleted with its agent
        }
        // Its log said it waits (its emitter has ended): it ends with the failure, else a reader would follow it forever.
        deps.endLog({ runId, userId: prepared.userId, agentId: prepared.agent.id, parentRunId: prepared.parentRunId }, failure);
        return { ok: false, runId, failure };
      }
      const failure = new RunFailure('conflict', waitingMessage(runId, actions.length));
      return { ok: false, runId, failure, waiting: { sessionId: prepared.sessionId, actions } };
    }
  }

  return execute;
}
