// Preparing a run: everything that can be decided before the model is called. The run is admitted
// (a concurrency slot, the deadline), its agent, endpoint and prompt are checked, and it is recorded
// `running` with its emitter; a failure here is a RunFailure the caller answers as an ordinary
// error, and nothing of the run is left behind.
import type { Config } from '../config.js';
import type { AgentStore, RunAgent } from '../agents/store.js';
import type { PromptStore } from '../prompts/store.js';
import type { ConnectionStore } from '../connections/store.js';
import type { ResolvedAddress } from '../ingest/fetch.js';
import { newId } from '../lib/ids.js';
import { describeError, type Logger } from '../lib/log.js';
import { DEFAULT_SYSTEM_MESSAGE, fillPrompt } from './context.js';
import type { RunEmitter, RunInfo } from './events.js';
import { abortFailure, agentNotFound, RunFailure } from './failures.js';
import { checkEndpoint, resolveEndpoint, type ModelEndpoint } from './model.js';
import type { PreparedRun, ReopenedRun, RunRequest } from './run.js';
import type { Admission, RunSlots } from './slots.js';
import type { RunStore } from './store.js';

export interface PrepareDeps {
  stores: { agents: AgentStore; prompts: PromptStore; runs: RunStore; connections: ConnectionStore };
  config: Pick<Config, 'runs' | 'allowPrivateNetworks'>;
  log: Logger;
  slots: RunSlots;
  /** The emitter of a new run (the engine's observers already subscribed). */
  emitterOf(run: RunInfo): RunEmitter;
  /** Tests only: answers the DNS lookups of the endpoint check. */
  resolveHost?: (host: string) => Promise<ResolvedAddress[]>;
}

/** The parent of a child run (null: a top-level run). */
export type ParentRun = { runId: string; depth: number } | null;

/** A run already recorded `queued`, with its emitter, that `begin` checks and starts. */
export interface QueuedRecord {
  runId: string;
  sessionId: string | null;
  events: RunEmitter;
}

export function createPreparer(deps: PrepareDeps) {
  const { stores, config, log } = deps;
  const timeoutOf = (request: RunRequest) => (request.background ? config.runs.backgroundTimeoutMs : config.runs.timeoutMs);

  /** What a run's record and messages need of its prompt and session (throws a RunFailure for a prompt it cannot fill). */
  function framing(userId: string, agent: RunAgent, request: RunRequest, parent: ParentRun) {
    const endpoint = resolveEndpoint(agent.llm, config.runs, (id) => stores.connections.settingsFor(userId, id));
    const prompt = agent.promptId ? stores.prompts.get(userId, agent.promptId) : undefined;
    const prompted = prompt ? fillPrompt(prompt, request.variables, request.input) : null;
    const instructions = request.instructions ?? [];
    const system = instructions.length === 0 ? prompted : [prompted ?? DEFAULT_SYSTEM_MESSAGE, ...instructions].join('\n\n');
    const conversation = request.messages ?? null;
    // A session the caller names for this turn (a continued response) holds it whatever the agent's memory.
    const session = parent === null ? request.session : undefined;
    const usesMemory = agent.hasMemory && parent === null && conversation === null && session === undefined;
    // A session only replayed is not the run's: the run is not part of it.
    const sessionId = session
      ? session.remember
        ? session.id
        : null
      : usesMemory
        ? (request.sessionId ?? request.defaultSessionId ?? newId())
        : request.sessionId;
    return { endpoint, system, conversation, session, usesMemory, sessionId };
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

  /**
   * The SSRF check of an admitted run's endpoint; a RunFailure saying so when the run's deadline or a
   * shutdown stopped it meanwhile (the lookup may have won that race).
   */
  async function checkAdmitted(endpoint: ModelEndpoint, admission: Admission, timeoutMs: number): Promise<void> {
    try {
      await checkEndpoint(endpoint, {
        allowPrivateNetworks: config.allowPrivateNetworks,
        signal: admission.signal,
        resolve: deps.resolveHost,
      });
    } catch (error) {
      throw abortFailure(admission.signal, timeoutMs, 'check') ?? error;
    }
    const stopped = abortFailure(admission.signal, timeoutMs, 'check');
    if (stopped) throw stopped;
  }

  /**
   * Checks an admitted run and records it; releases the admission and throws a RunFailure when it
   * cannot run (the endpoint check stops at the deadline or a shutdown like the run would).
   */
  async function begin(
    userId: string,
    agent: RunAgent,
    request: RunRequest,
    admission: Admission,
    parent: ParentRun,
    queued?: QueuedRecord,
  ): Promise<PreparedRun> {
    const timeoutMs = timeoutOf(request);
    try {
      const { endpoint, system, conversation, session, usesMemory, sessionId: newSessionId } = framing(userId, agent, request, parent);
      await checkAdmitted(endpoint, admission, timeoutMs);
      const sessionId = queued ? queued.sessionId : newSessionId;
      const parentRunId = parent?.runId ?? null;
      const background = request.background ?? false;
      let runId: string;
      if (queued) {
        runId = queued.runId;
        if (!stores.runs.markRunning(runId)) {
          // Cancelled while it waited (the cancel ended it and its log), or gone with its agent (nothing ended its log).
          if (stores.runs.getRun(userId, runId)) throw new RunFailure('cancelled', 'The run was cancelled while it waited.');
          throw new RunFailure('not_found', 'The agent was deleted.');
        }
      } else {
        runId = record({ userId, agentId: agent.id, parentRunId, sessionId, input: request.input, model: endpoint.model, background });
      }
      return {
        runId,
        userId,
        agent,
        endpoint,
        system,
        input: request.input,
        sessionId,
        remembers: session ? session.remember : usesMemory && sessionId !== null,
        replaySession: session ? (session.replay ? session.id : null) : usesMemory ? sessionId : null,
        sampling: request.sampling,
        conversation,
        // A background run's answer is streamed from the model, so whoever follows its log sees it come.
        stream: request.stream || background,
        background,
        timeoutMs,
        announced: queued !== undefined,
        parentRunId,
        depth: parent === null ? 0 : parent.depth + 1,
        admission,
        events: queued?.events ?? deps.emitterOf({ runId, userId, agentId: agent.id, parentRunId }),
      };
    } catch (error) {
      admission.release();
      throw error;
    }
  }

  /**
   * A run that waited for approval, taken up again (already `running` again): checked as `begin`
   * checks a run (releasing the admission and throwing a RunFailure when it cannot go on), with a
   * new emitter continuing its event log (no second `run` event). It goes on without a client.
   */
  async function reopen(userId: string, agent: RunAgent, run: ReopenedRun, admission: Admission): Promise<PreparedRun> {
    const timeoutMs = config.runs.backgroundTimeoutMs;
    try {
      const endpoint = resolveEndpoint(agent.llm, config.runs, (id) => stores.connections.settingsFor(userId, id));
      await checkAdmitted(endpoint, admission, timeoutMs);
      return {
        ...run,
        userId,
        agent,
        endpoint,
        system: null,
        conversation: null,
        // The conversation it resumes from already holds what memory replayed.
        replaySession: null,
        // No client: its tokens go to its event log.
        stream: true,
        background: true,
        timeoutMs,
        announced: true,
        admission,
        events: deps.emitterOf({ runId: run.runId, userId, agentId: agent.id, parentRunId: run.parentRunId }),
      };
    } catch (error) {
      admission.release();
      throw error;
    }
  }

  /** Admits, checks and records a top-level run; throws the RunFailure that says why it cannot run. */
  async function prepare(userId: string, agentId: string, request: RunRequest): Promise<PreparedRun> {
    const agent = stores.agents.getForRun(userId, agentId);
    if (!agent) throw agentNotFound();
    // Admitted (a slot taken) before the endpoint check: its DNS lookup uses libuv's small thread
    // pool (shared with password hashing), so a user may not have more lookups in flight than runs.
    const admission = deps.slots.admit(userId, Date.now() + timeoutOf(request));
    return begin(userId, agent, request, admission, null);
  }

  /**
   * Records a background run `queued` (its prompt filled, so a bad request is still refused now),
   * with its emitter, its `run` event sent. `begin` with the answer starts it when its turn comes.
   */
  function enqueue(userId: string, agentId: string, request: RunRequest): { agent: RunAgent; record: QueuedRecord } {
    const agent = stores.agents.getForRun(userId, agentId);
    if (!agent) throw agentNotFound();
    const { endpoint, sessionId } = framing(userId, agent, request, null);
    const runId = record({
      userId,
      agentId: agent.id,
      parentRunId: null,
      sessionId,
      input: request.input,
      model: endpoint.model,
      status: 'queued',
      background: true,
    });
    const events = deps.emitterOf({ runId, userId, agentId: agent.id, parentRunId: null });
    events.emit({ name: 'run', data: { runId, sessionId } });
    return { agent, record: { runId, sessionId, events } };
  }

  return { prepare, begin, enqueue, reopen };
}
