// The webhook case's runs, in a process of their own: the service's stores on a seeded database,
// wired as src/app.ts wires them (the run event log and the webhook events on the run store's
// change hook, the dispatcher woken by them), end runs of two users in turn, one with a webhook on
// `*` and one without. Each end is timed from `finishRunSoon` to its promise resolving: the commit
// of the end (one end per commit, synchronous=FULL), the webhook's outbox row and payload included
// for the one. The dispatcher meanwhile sends the deliveries, from this process as the service
// would, to the receiver the benchmark runs; its attempts are recorded in this same database.
//
// Runs are started and ended through the store, not through HTTP and a model: the end's commit is
// what is compared, and the HTTP and model work around it would only dilute the ratio.
//
// The benchmark runs this file as a child process (`webhookRunsInChild` in processes.ts).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { closeDatabase, openDatabase } from '../../src/db.js';
import { createConnectionPool, KEPT_CONNECTIONS } from '../../src/ingest/fetch.js';
import { silentLogger } from '../../src/lib/log.js';
import { createSealer } from '../../src/lib/secrets.js';
import { createEventLog } from '../../src/runs/event-log.js';
import { createStores } from '../../src/stores.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { subscribeWebhookEvents } from '../../src/webhooks/events.js';
import { SECRET_KEY, sleep } from './options.js';
import type { SeededUser } from './seed.js';

export interface WebhookRunsJob {
  path: string;
  usersFile: string;
  /** Where the webhook of the first user sends (the benchmark's receiver). */
  receiverUrl: string;
  /** Runs ended per user after the warm-up. */
  runs: number;
  warmup: number;
}

export interface WebhookRunsOutcome {
  /** Each measured end's commit, ms, in order: with the webhook, and without. Pair k ran back to back. */
  withWebhookMs: number[];
  withoutMs: number[];
  /** Runs of the user with the webhook (warm-up included): each should be delivered once. */
  deliveriesExpected: number;
  /** False when deliveries were still pending after waiting 60 s for the dispatcher. */
  allSent: boolean;
  /**
   * The same ends again without waiting for the disk (synchronous=OFF for each end, the dispatcher
   * stopped): the CPU time of the end's transaction, µs, with the webhook and without. What the
   * ratio would tend to on a disk whose fsync took next to nothing.
   */
  cpuWithWebhookUs: number[];
  cpuWithoutUs: number[];
}

async function webhookRuns(job: WebhookRunsJob): Promise<WebhookRunsOutcome> {
  const [subscribed, plain] = JSON.parse(readFileSync(job.usersFile, 'utf8')) as SeededUser[];
  const db = openDatabase(job.path);
  const stores = createStores(db, createSealer(SECRET_KEY), { allowPrivateNetworks: true });
  createEventLog({ events: stores.runEvents, runs: stores.runs, log: silentLogger });
  const pool = createConnectionPool(KEPT_CONNECTIONS);
  const dispatcher = new WebhookDispatcher({ store: stores.webhooks, log: silentLogger, allowPrivateNetworks: true, pool });
  subscribeWebhookEvents({ ...stores, outbox: dispatcher });
  stores.webhooks.create(subscribed.id, { url: job.receiverUrl, events: ['*'], description: 'bench receiver' });
  dispatcher.start();

  const end = {
    status: 'succeeded' as const,
    output: 'Hello to the team, in English. The leave policy gives parents sixteen weeks.',
    error: null,
    steps: [],
    sources: [],
    warnings: [],
    usage: { promptTokens: 42, completionTokens: 17 },
    ms: 3,
  };
  const start = (user: SeededUser) => {
    const started = stores.runs.startRun({
      userId: user.id,
      agentId: user.agents[0],
      parentRunId: null,
      sessionId: null,
      input: 'What does the leave policy say about parental leave?',
      model: 'gpt-4o-mini',
    });
    if (!started) throw new Error('a bench run could not be started');
    return started;
  };
  /** Starts a run of the user's first agent and ends it; the time from asking for the end until it is committed. */
  const oneRun = async (user: SeededUser): Promise<number> => {
    const started = start(user);
    const t0 = performance.now();
    const changed = await stores.runs.finishRunSoon(started.id, end, null);
    const ms = performance.now() - t0;
    if (!changed) throw new Error('a bench run could not be ended');
    return ms;
  };

  const withWebhookMs: number[] = [];
  const withoutMs: number[] = [];
  try {
    // The order within a pair alternates, so neither side always runs right after a delivery was sent.
    for (let k = -job.warmup; k < job.runs; k++) {
      const firstSubscribed = k % 2 === 0;
      const a = await oneRun(firstSubscribed ? subscribed : plain);
      const b = await oneRun(firstSubscribed ? plain : subscribed);
      if (k < 0) continue;
      withWebhookMs.push(firstSubscribed ? a : b);
      withoutMs.push(firstSubscribed ? b : a);
    }
    // Until the dispatcher has sent everything (or 60 s have passed).
    const deadline = performance.now() + 60_000;
    while (stores.webhooks.pendingUsers().length > 0 && performance.now() < deadline) await sleep(50);
    const allSent = stores.webhooks.pendingUsers().length === 0;

    // The CPU of the end alone: the dispatcher stopped (these deliveries are never sent), and each
    // end committed without an fsync (startRun restores synchronous=FULL after its own commit).
    await dispatcher.stop();
    const cpuOfEnd = (user: SeededUser): number => {
      const started = start(user);
      db.pragma('synchronous = OFF');
      const before = process.cpuUsage();
      if (!stores.runs.finishRun(started.id, end, null)) throw new Error('a bench run could not be ended');
      const used = process.cpuUsage(before);
      return used.user + used.system;
    };
    const cpuWithWebhookUs: number[] = [];
    const cpuWithoutUs: number[] = [];
    for (let k = -job.warmup; k < job.runs; k++) {
      const firstSubscribed = k % 2 === 0;
      const a = cpuOfEnd(firstSubscribed ? subscribed : plain);
      const b = cpuOfEnd(firstSubscribed ? plain : subscribed);
      if (k < 0) continue;
      cpuWithWebhookUs.push(firstSubscribed ? a : b);
      cpuWithoutUs.push(firstSubscribed ? b : a);
    }
    db.pragma('synchronous = FULL');
    return { withWebhookMs, withoutMs, deliveriesExpected: job.runs + job.warmup, allSent, cpuWithWebhookUs, cpuWithoutUs };
  } finally {
    await dispatcher.stop();
    pool.close();
    closeDatabase(db);
  }
}

// Started by webhookRunsInChild: the job comes in BENCH_WEBHOOK_RUNS.
if (process.env.BENCH_WEBHOOK_RUNS && process.argv[1] === fileURLToPath(import.meta.url)) {
  const outcome = await webhookRuns(JSON.parse(process.env.BENCH_WEBHOOK_RUNS) as WebhookRunsJob);
  process.stdout.write(JSON.stringify(outcome));
}
