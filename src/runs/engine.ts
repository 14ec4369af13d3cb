// Running an agent, in two steps: `prepare` (prepare.ts) admits, checks and records a run; a
// failure there is a RunFailure the caller answers as an ordinary error. `execute` (execute.ts)
// runs it to its end, which is always recorded. A run of an agent may start runs of other agents
// (child-runs.ts). What a run reports, its end included, goes through the run's emitter
// (events.ts), which its caller subscribes to and the engine's observers see. The engine never
// answers HTTP itself.
import type { Config } from '../config.js';
import type { AgentStore } from '../agents/store.js';
import type { PromptStore } from '../prompts/store.js';
import type { SearchStore } from '../documents/search-store.js';
import type { ToolProvider } from '../lib/tool-contract.js';
import type { ResolvedAddress } from '../ingest/fetch.js';
import { describeError, type Logger } from '../lib/log.js';
import { createChatApi } from './chat-api.js';
import { createChildRuns } from './child-runs.js';
import { createRunEmitter, type RunInfo, type RunObserver } from './events.js';
import { createExecutor } from './execute.js';
import { createPreparer } from './prepare.js';
import type { RunChains } from './run.js';
import { createRunSlots } from './slots.js';
import type { MemoryStore } from './memory-store.js';
import type { RunStore } from './store.js';

export interface RunEngineDeps {
  stores: { agents: AgentStore; prompts: PromptStore; runs: RunStore; memory: MemoryStore; search: SearchStore };
  config: Pick<Config, 'runs' | 'runBounds' | 'allowPrivateNetworks'>;
  log: Logger;
  /** Gives each run its tools (app.ts: the agent's linked tools, built by their kinds). */
  tools: ToolProvider;
  /** Tests only: answers the DNS lookups of the endpoint check. */
  resolveHost?: (host: string) => Promise<ResolvedAddress[]>;
}

export type RunEngine = ReturnType<typeof createRunEngine>;

export function createRunEngine(deps: RunEngineDeps) {
  const { stores, config, log } = deps;
  const slots = createRunSlots(config.runs.concurrencyPerUser);
  const chains: RunChains = new Map();
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

  const { prepare, begin } = createPreparer({ stores, config, log, slots, emitterOf, resolveHost: deps.resolveHost });
  const execute = createExecutor({
    stores,
    config,
    log,
    chains,
    chatApi: createChatApi({ allowPrivateNetworks: config.allowPrivateNetworks }),
    tools: deps.tools,
    // A tool's context offers its run's children (the AGENT kind); runChildAgent is made below, called later.
    runChild: (parent, agentId, input) => runChildAgent(parent, agentId, input),
  });
  const runChildAgent = createChildRuns({ agents: stores.agents, slots, chains, begin, execute });

  return {
    prepare,
    execute,
    /** Adds an observer of every run's events from the next run on (child runs included); returns what removes it. */
    observe(observer: RunObserver): () => void {
      observers.add(observer);
      return () => observers.delete(observer);
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
