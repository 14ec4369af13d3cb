// Running an agent, in two steps: `prepare` (prepare.ts) admits, checks and records a run; a
// failure there is a RunFailure the caller answers as an ordinary error. `execute` (execute.ts)
// runs it to its end, which is always recorded. A run of an agent may start runs of other agents
// (child-runs.ts). What a run reports, its end included, goes through the run's emitter
// (events.ts), which its caller subscribes to and the engine's observers see. A run whose tool
// calls wait for approval pauses (approval.ts) and is taken up again by `answer`. The runs of an
// account that is deleted or disabled stop: at once when this process deletes it, else at their
// next step (a model or tool call), and its queued runs never start. The engine never answers HTTP
// itself.
import type { Config } from '../config.js';
import type { ConnectionStore } from '../connections/store.js';
import type { AgentStore } from '../agents/store.js';
import type { PromptStore } from '../prompts/store.js';
import type { SearchStore } from '../documents/search-store.js';
import type { ToolFunction, ToolProvider } from '../lib/tool-contract.js';
import type { ResolvedAddress } from '../ingest/fetch.js';
import { describeError, type Logger } from '../lib/log.js';
import { createChatApi, type ChatApi } from './chat-api.js';
import type { ConnectionPool } from '../ingest/fetch.js';
import { createChildRuns } from './child-runs.js';
import { createRunEmitter, type RunEmitter, type RunInfo, type RunObserver } from './events.js';
import { createExecutor } from './execute.js';
import { createPreparer } from './prepare.js';
import { createRunQueue } from './queue.js';
import type { PreparedRun, RunChains, RunRequest } from './run.js';
import { createRunSlots, type Admission } from './slots.js';
import { cancelAbort, RunAbort, RunFailure } from './failures.js';
import { endWaitingChain, type Decision, type PausedState } from './approval.js';
import type { FieldIssue } from '../http/errors.js';
import { formatTimestamp } from '../lib/ids.js';
import type { MemoryStore } from './memory-store.js';
import type { RunRow, RunStore } from './store.js';
import type { AccountState, UserStore } from '../users/store.js';

export interface RunEngineDeps {
  stores: {
    agents: AgentStore;
    prompts: PromptStore;
    runs: RunStore;
    memory: MemoryStore;
    search: SearchStore;
    connections: ConnectionStore;
    users: UserStore;
  };
  config: Pick<Config, 'runs' | 'runBounds' | 'allowPrivateNetworks'>;
  log: Logger;
  /** Gives each run its tools (app.ts: the agent's linked tools, built by their kinds). */
  tools: ToolProvider;
  /** Connections to users' servers kept between runs (a user's model endpoint is called through it). */
  connections?: ConnectionPool;
  /** Tests only: answers the DNS lookups of the endpoint check. */
  resolveHost?: (host: string) => Promise<ResolvedAddress[]>;
}

export type RunEngine = ReturnType<typeof createRunEngine>;

/** What a run of an account that may no longer act ends with (`cancelled`). */
const accountStopped = (state: Exclude<AccountState, 'active'>) =>
  state === 'gone'
    ? 'The run was stopped: its account was deleted.'
    : "The run was stopped: its account was disabled by the service's operator.";

export function createRunEngine(deps: RunEngineDeps) {
  const { stores, config, log } = deps;
  const slots = createRunSlots(config.runs.concurrencyPerUser, (userId) => startNext(userId));
  const queue = createRunQueue(config.runs.queuePerUser);
  const chains: RunChains = new Map();
  /** Queued runs' emitters, to end their events when they are cancelled or the service stops. */
  const queuedEvents = new Map<string, RunEmitter>();
  /** What sees every run's events (see `observe`). */
  const observers = new Set<RunObserver>();
  const listenerFailed = (error: unknown) => log.error({ msg: 'a listener of run events failed', error: describeError(error) });

  /** A new run's emitter, each observer subscribed (until it is removed). */
  function emitterOf(run: RunInfo) {
    const events = createRunEmitter(listenerFailed);
    for (const observer of observers) {
      events.subscribe((event) => {
        if (observers.has(observer)) observer(run, event);
      });
    }
    return events;
  }

  /**
   * Ends the log of a run that cannot go on once its own emitter has sent its last event (it was
   * to wait, or it was taken up again): whoever follows it is told.
   */
  function endLog(run: RunInfo, failure: RunFailure): void {
    emitterOf(run).emit({ name: 'error', data: { code: failure.code, message: failure.message } });
  }

  /**
   * Stops every run of the user: the queued ones leave the queue and end, the admitted ones are
   * aborted as a cancel aborts them (an upstream request closed at once); all end `cancelled`.
   */
  function stopRunsOf(userId: string, message: string): void {
    for (const runId of queue.removeUser(userId)) endWaiting(runId, 'cancelled', 'cancelled', message);
    slots.stopUser(userId, new RunAbort('cancelled', message));
  }

  /**
   * Why the user's runs may take no further step (the account was deleted or disabled, perhaps by
   * an admin script in another process), every one of them then stopped; undefined while it may
   * act. One read of the user by id.
   */
  function accountStop(userId: string): string | undefined {
    const state = stores.users.accountState(userId);
    if (state === 'active') return undefined;
    const message = accountStopped(state);
    stopRunsOf(userId, message);
    return message;
  }

  /** Before each step of the run holding `signal` (a model or tool call): throws its stop when its account may no longer act. */
  function checkAccount(signal: AbortSignal): void {
    const userId = slots.ownerOf(signal);
    const stopped = userId === undefined ? undefined : accountStop(userId);
    if (stopped !== undefined) throw signal.aborted ? signal.reason : new RunAbort('cancelled', stopped);
  }

  // This process deleting an account stops its runs at once (its runs' records went with it).
  stores.users.onDeleted((userId) => stopRunsOf(userId, accountStopped('gone')));

  const chatApi = createChatApi({ allowPrivateNetworks: config.allowPrivateNetworks, pool: deps.connections });
  // Every model call is a step of a run, checked first.
  const checkedChatApi: ChatApi = {
    complete(endpoint, params, signal) {
      checkAccount(signal);
      return chatApi.complete(endpoint, params, signal);
    },
    stream(endpoint, params, signal, onChunk) {
      checkAccount(signal);
      return chatApi.stream(endpoint, params, signal, onChunk);
    },
  };
  // So is every tool call.
  const checkedTools: ToolProvider = async (agent, caller, context) => {
    const set = await deps.tools(agent, caller, context);
    const checked = (fn: ToolFunction): ToolFunction => ({
      ...fn,
      async call(args, callContext) {
        checkAccount(callContext.signal);
        return fn.call(args, callContext);
      },
    });
    return { ...set, tools: set.tools.map(checked) };
  };

  const { prepare, begin, enqueue, reopen } = createPreparer({ stores, config, log, slots, emitterOf, resolveHost: deps.resolveHost });
  const execute = createExecutor({
    stores,
    config,
    log,
    chains,
    endLog,
    chatApi: checkedChatApi,
    tools: checkedTools,
    // A tool's context offers its run's children (the AGENT kind); runChildAgent is made below, called later.
    runChild: (parent, agentId, input) => childRuns.runChildAgent(parent, agentId, input),
    resumeChild: (parent, runId, decisions) => childRuns.resumeChildAgent(parent, runId, decisions),
  });
  const childRuns = createChildRuns({ agents: stores.agents, runs: stores.runs, slots, chains, begin, execute, reopen, endLog });

  /** Runs a prepared run to its end without a client waiting for it. */
  function detach(prepared: PreparedRun): void {
    void execute(prepared).catch((error) => log.error({ msg: 'a background run failed unexpectedly', error: describeError(error) }));
  }

  /** Starts the user's next queued run when a slot is free (told by the slots each time one is given back). */
  function startNext(userId: string): void {
    while (slots.hasRoom(userId)) {
      const next = queue.next(userId);
      if (!next) return;
      next.start();
    }
  }

  /** Ends a run that never ran or waits (queued, cancelled or stopped): recorded, its events ended with `error`. */
  function endWaiting(runId: string, status: 'failed' | 'cancelled', code: 'cancelled' | 'interrupted' | 'unavailable', message: string) {
    // An answered run waiting for a slot ends with the nested runs it was to take up.
    endWaitingChain(stores.runs, runId, status, message, code);
    const events = queuedEvents.get(runId);
    queuedEvents.delete(runId);
    events?.emit({ name: 'error', data: { code, message } });
  }

  /**
   * A slot for a queued run whose turn has come; undefined when none can be had (the service is
   * stopping), the run then ended failed and its log closed.
   */
  function admitQueued(userId: string, runId: string): Admission | undefined {
    try {
      return slots.admit(userId, Date.now() + config.runs.backgroundTimeoutMs);
    } catch (error) {
      endWaiting(runId, 'failed', 'unavailable', error instanceof RunFailure ? error.message : 'The run could not be started.');
      return undefined;
    }
  }

  /**
   * Starts a background run: with a free slot it is checked like any run (what is wrong answered as
   * the RunFailure) and goes on at once; without one it waits `queued`, up to RUN_QUEUE_PER_USER
   * (then 429). Resolves once it is recorded, with its emitter for a client that follows it.
   */
  async function startBackground(
    userId: string,
    agentId: string,
    request: RunRequest,
  ): Promise<{ runId: string; sessionId: string | null; status: 'queued' | 'running'; events: RunEmitter }> {
    const background = { ...request, background: true };
    if (slots.hasRoom(userId) || slots.closing) {
      const prepared = await prepare(userId, agentId, background);
      detach(prepared);
      return { runId: prepared.runId, sessionId: prepared.sessionId, status: 'running', events: prepared.events };
    }
    if (!queue.hasRoom(userId)) {
      const { concurrencyPerUser, queuePerUser } = config.runs;
      throw new RunFailure(
        'rate_limited',
        `Too many runs at once (at most ${concurrencyPerUser} running and ${queuePerUser} queued per user); retry after 1 s.`,
      );
    }
    const { agent, record } = enqueue(userId, agentId, background);
    queuedEvents.set(record.runId, record.events);
    queue.add(userId, {
      runId: record.runId,
      start() {
        // Its account may have been deleted or disabled while it waited.
        const stopped = accountStop(userId);
        if (stopped !== undefined) return endWaiting(record.runId, 'cancelled', 'cancelled', stopped);
        const admission = admitQueued(userId, record.runId);
        if (!admission) return;
        // Until it is running it is still `queued` in the file (its endpoint is checked first): a
        // cancel meanwhile ends it through endWaiting, which needs its emitter to close its log.
        begin(userId, agent, background, admission, null, record).then(
          (prepared) => {
            queuedEvents.delete(record.runId);
            detach(prepared);
          },
          (error: unknown) => {
            // A cancel while it waited ended it and closed its log (endWaiting took its emitter).
            if (!queuedEvents.delete(record.runId)) return;
            const failure = error instanceof RunFailure ? error : new RunFailure('internal', 'The run could not be started.');
            // What stops it here (its agent deleted, its endpoint refused, its account stopped) ends its log with `error`.
            stores.runs.endUnderWay(record.runId, failure.code === 'cancelled' ? 'cancelled' : 'failed', failure.message, failure.code);
            record.events.emit({ name: 'error', data: { code: failure.code, message: failure.message } });
          },
        );
      },
    });
    return { runId: record.runId, sessionId: record.sessionId, status: 'queued', events: record.events };
  }

  /**
   * Cancels one of the user's runs still under way: a queued one leaves its queue, a running one
   * is stopped (its upstream request aborted) and resolves once its end is recorded. Answers
   * 'not_found' or 'ended' when there is nothing to cancel.
   */
  async function cancel(userId: string, runId: string): Promise<'cancelled' | 'not_found' | 'ended'> {
    const run = stores.runs.getRun(userId, runId);
    if (!run) return 'not_found';
    const message = 'The run was cancelled (POST /runs/{id}/cancel).';
    if (run.status === 'queued') {
      queue.remove(userId, runId);
      endWaiting(runId, 'cancelled', 'cancelled', message);
      return 'cancelled';
    }
    let under = chains.get(runId);
    // A queued run just given a slot is `running` a moment before it is under way here.
    for (let tries = 0; run.status === 'running' && !under && tries < 100; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      under = chains.get(runId);
    }
    if (run.status === 'running' && under) {
      under.abort(new RunAbort('cancelled', message));
      await under.ended;
      // Its end may have been on its way already (the model had answered): that end is the one recorded.
      return stores.runs.getRun(userId, runId)?.status === 'cancelled' ? 'cancelled' : 'ended';
    }
    if (run.status === 'requires_action') {
      // The nested runs it waits on end with it.
      endWaitingChain(stores.runs, runId, 'cancelled', message, 'cancelled');
      return 'cancelled';
    }
    return 'ended';
  }

  /**
   * Answers the calls a top-level run waits for (POST /runs/{id}/actions): every one, each once.
   * The run is `running` again before this returns, in the caller's slot, and goes on in the
   * background (under RUN_BACKGROUND_TIMEOUT_MS): its approved calls are made, the denied ones
   * told to the model, the nested runs it waits on taken up, then its conversation goes on.
   * With no slot free it waits `queued`, first in its user's queue, and goes on with the next slot
   * freed. Throws a RunFailure when the service is stopping.
   */
  function answer(
    userId: string,
    runId: string,
    answers: { id: string; approve: boolean; reason?: string }[],
  ):
    | { status: 'not_found' }
    | { status: 'conflict'; message: string }
    | { status: 'invalid'; details: FieldIssue[] }
    | { status: 'running' | 'queued' } {
    const run = stores.runs.getRun(userId, runId);
    if (!run) return { status: 'not_found' };
    if (run.status !== 'requires_action') {
      return { status: 'conflict', message: `The run is not waiting for approval (it is ${run.status}); there is nothing to answer.` };
    }
    if (run.parentRunId !== null) {
      let top = run;
      for (let depth = 0; top.parentRunId !== null && depth < 10; depth += 1) top = stores.runs.getRun(userId, top.parentRunId) ?? top;
      return {
        status: 'conflict',
        message: `This run is nested in run ${top.id}, which waits with it: answer its calls there (POST /runs/${top.id}/actions).`,
      };
    }
    const waiting = new Set(run.actions.map((action) => action.id));
    const decisions = new Map<string, Decision>();
    const details: FieldIssue[] = [];
    answers.forEach((given, index) => {
      if (!waiting.has(given.id)) details.push({ path: `actions.${index}.id`, message: `"${given.id}" is not a call this run waits for` });
      else if (decisions.has(given.id)) details.push({ path: `actions.${index}.id`, message: `"${given.id}" is answered more than once` });
      else decisions.set(given.id, { approve: given.approve, reason: given.reason });
    });
    for (const id of waiting) {
      if (!decisions.has(id) && !answers.some((given) => given.id === id))
        details.push({ path: 'actions', message: `has no answer for the call "${id}"` });
    }
    if (details.length > 0) return { status: 'invalid', details };
    const state = stores.runs.stateOf(runId) as PausedState | undefined;
    if (state === undefined) return { status: 'conflict', message: 'The run is no longer waiting for approval.' };
    if (!slots.hasRoom(userId) && !slots.closing) {
      // Every slot is taken: it goes on with the next one freed, before the runs queued since (a
      // freed slot goes straight to the queue, so an answer that asked again later would never get one).
      if (!stores.runs.markQueued(runId)) return { status: 'conflict', message: 'The run is no longer waiting for approval.' };
      // Its log is followed meanwhile: a cancel or a shutdown closes it through this emitter.
      queuedEvents.set(runId, emitterOf({ runId, userId, agentId: run.agentId, parentRunId: null }));
      queue.addFirst(userId, {
        runId,
        start() {
          const stopped = accountStop(userId);
          if (stopped !== undefined) return endWaiting(runId, 'cancelled', 'cancelled', stopped);
          const admission = admitQueued(userId, runId);
          if (!admission) return;
          queuedEvents.delete(runId); // `goOn` gives it an emitter of its own
          goOn(userId, run, state, decisions, admission);
        },
      });
      return { status: 'queued' };
    }
    const admission = slots.admit(userId, Date.now() + config.runs.backgroundTimeoutMs);
    return goOn(userId, run, state, decisions, admission)
      ? { status: 'running' }
      : { status: 'conflict', message: 'The run is no longer waiting for approval.' };
  }

  /**
   * An answered run goes on in the slot `admission` holds: `running` again (false, the slot given
   * back, when it no longer waits), then taken up in the background from what it paused with.
   */
  function goOn(userId: string, run: RunRow, state: PausedState, decisions: Map<string, Decision>, admission: Admission): boolean {
    const runId = run.id;
    if (!stores.runs.markRunning(runId)) {
      admission.release();
      // A cancel while it waited for a slot ended its log; a run gone with its agent has nobody else to end it.
      if (!stores.runs.getRun(userId, runId)) {
        endLog({ runId, userId, agentId: run.agentId, parentRunId: null }, new RunFailure('not_found', 'The agent was deleted.'));
      }
      return false;
    }
    // Cancellable at once, before `execute` takes its place in the chains.
    let settle!: () => void;
    chains.set(runId, {
      agentId: run.agentId,
      parentRunId: null,
      abort: (reason) => admission.abort(cancelAbort(reason)),
      ended: new Promise<void>((resolve) => (settle = resolve)),
    });
    void (async () => {
      const agent = stores.agents.getForRun(userId, run.agentId);
      let prepared: PreparedRun;
      try {
        if (!agent) throw new RunFailure('not_found', 'The agent was deleted.');
        prepared = await reopen(
          userId,
          agent,
          {
            runId,
            sessionId: run.sessionId,
            input: run.input,
            parentRunId: null,
            depth: 0,
            remembers: state.remembers,
            sampling: state.sampling,
          },
          admission,
        );
      } catch (error) {
        admission.release();
        chains.delete(runId);
        const failure = error instanceof RunFailure ? error : new RunFailure('internal', 'The run could not go on.');
        endWaitingChain(stores.runs, runId, failure.code === 'cancelled' ? 'cancelled' : 'failed', failure.message, failure.code, state);
        endLog({ runId, userId, agentId: run.agentId, parentRunId: null }, failure);
        settle();
        return;
      }
      // `execute` takes the chains' entry over in this same step.
      settle();
      await execute(prepared, { resume: { state, decisions } });
    })().catch((error) => log.error({ msg: 'a run taken up after approval failed unexpectedly', runId, error: describeError(error) }));
    return true;
  }

  /** Ends the top-level runs (and the nested runs with them) that have waited for approval longer than RUN_APPROVAL_TTL_MS. */
  function expireWaiting(): number {
    const before = formatTimestamp(Date.now() - config.runs.approvalTtlMs);
    let count = 0;
    for (const runId of stores.runs.waitingSince(before, 100)) {
      const message = `approval expired: nobody answered its tool calls within ${config.runs.approvalTtlMs} ms (RUN_APPROVAL_TTL_MS).`;
      if (endWaitingChain(stores.runs, runId, 'failed', message, 'approval_expired')) count += 1;
    }
    if (count > 0) log.info({ msg: 'runs whose approval expired marked failed', count });
    return count;
  }

  return {
    prepare,
    execute,
    startBackground,
    cancel,
    answer,
    expireWaiting,
    /** Adds an observer of every run's events from the next run on (child runs included); returns what removes it. */
    observe(observer: RunObserver): () => void {
      observers.add(observer);
      return () => observers.delete(observer);
    },
    /** Marks the runs a stopped process left under way as failed (a start-up write: see becomePrimary in app.ts). */
    failInterruptedRuns(): void {
      const interrupted = stores.runs.failInterruptedRuns('interrupted: the service stopped before the run ended', 'interrupted');
      if (interrupted > 0) log.info({ msg: 'runs interrupted by the last stop marked failed', count: interrupted });
    },
    /**
     * Refuses new runs and stops every admitted one (streams end with an `error` event, runs are
     * marked failed); queued runs end failed, interrupted, the same way.
     */
    async shutdown(): Promise<void> {
      const stopping = slots.shutdown();
      for (const runId of queue.drain())
        endWaiting(runId, 'failed', 'interrupted', 'interrupted: the service stopped before the run began');
      await stopping;
    },
  };
}
