// Builds the Koa application: the seam every test uses. No listen() here (see main.ts).
import Koa from 'koa';
import * as v from 'valibot';
import type { Config } from './config.js';
import type { Db } from './db.js';
import { createStores } from './stores.js';
import type { AppContext, AppState } from './http/context.js';
import { envelope, presentEnvelope } from './http/envelope.js';
import { jsonBody } from './http/body.js';
import { wellFormedQuery } from './http/unicode.js';
import { authenticator } from './api-tokens/authenticate.js';
import { cors } from './http/cors.js';
import { createRateLimits } from './http/rate-limit.js';
import { defineRoute, mountRoutes, type Route } from './http/route.js';
import { createSealer } from './lib/secrets.js';
import { PasswordHasher } from './auth/password.js';
import { StorageMonitor, storageGuard } from './http/storage.js';
import { describeError, jsonLogger, type Logger } from './lib/log.js';
import { authRoutes } from './auth/routes.js';
import { apiTokenRoutes } from './api-tokens/routes.js';
import { agentRoutes, libraryRoute } from './agents/routes.js';
import { carryRoutes } from './agents/carry/routes.js';
import { createCarryStore } from './agents/carry/store.js';
import { agentDocumentRoutes, agentDocumentViaAgentsRoute, agentToolRoutes } from './links/routes.js';
import { documentRoutes } from './documents/routes.js';
import { isUploadRequest } from './documents/upload.js';
import { IngestionQueue } from './documents/ingestion.js';
import { ChunkSweeper } from './documents/chunk-sweeper.js';
import { promptRoutes } from './prompts/routes.js';
import { tagRoutes } from './tags/routes.js';
import { toolRoutes } from './tools/routes.js';
import { openApiRoute } from './openapi/document.js';
import { DOCS_PATHS, docsPage } from './docs/page.js';
import { consoleRoutes } from './console/serve.js';
import { createRunEngine, type RunEngine } from './runs/engine.js';
import { createKeeper, KEPT_FOR_RUNS } from './tools/runtime/keeper.js';
import { createToolProvider, toolFunctions } from './tools/runtime/provider.js';
import type { ToolProvider } from './lib/tool-contract.js';
import { createConnectionPool, createGuardedFetch, KEPT_CONNECTIONS, createGuardedSession, type ResolvedAddress } from './ingest/fetch.js';
import { runRoutes } from './runs/routes.js';
import { createEventLog, type EventLog } from './runs/event-log.js';
import { createEventSweeper } from './runs/event-sweeper.js';
import { userRoutes } from './users/routes.js';
import { mcpRoutes } from './mcp/server.js';
import { openAIRoutes } from './openai/routes.js';
import { presentOpenAIError } from './openai/errors.js';
import { webhookRoutes } from './webhooks/routes.js';
import { connectionRoutes } from './connections/routes.js';
import { createModelLister } from './connections/models.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { subscribeWebhookEvents } from './webhooks/events.js';
import { startCheckpointer, type Checkpointer } from './db-checkpointer.js';

/** How far behind a token's lastUsedAt may be written (it is shown to the minute). */
const TOUCH_FLUSH_MS = 5_000;
/**
 * A sign-in (or sign-up) that other addresses' password hashes would make take longer than this,
 * its own hash included, is answered 503 at once: what a real sign-in waits for during a flood.
 */
const MAX_HASH_WAIT_MS = 1_000;
/**
 * The longest a hash may expect to wait in all, its own address's earlier hashes included: 30
 * sign-ups at once from one address (the per-address limit's default) take ~11 s one at a time at
 * the default cost; this leaves room for a slower or busier machine.
 */
const MAX_HASH_QUEUE_WAIT_MS = 30_000;

export interface AppOptions {
  db: Db;
  config: Config;
  /** The 32-byte key that seals secrets at rest (see src/lib/secrets.ts). */
  secretKey: Buffer;
  log?: Logger;
  /** How often an idle event stream gets a keep-alive comment (default 15 s; tests shorten it). */
  keepAliveMs?: number;
  /** Tests only: awaited right before each password hash runs, to hold it mid-way (see PasswordHasher). */
  beforeHash?: (password: string) => Promise<void>;
  /** Tests only: told when a password hash has to wait for a slot. */
  onHashWait?: (password: string) => void;
  /** Tests only: answers the DNS lookups of the check of a user's model endpoint before a run. */
  resolveHost?: (host: string) => Promise<ResolvedAddress[]>;
  /** Tests only: gives runs these tools instead of the agent's linked ones. */
  toolProvider?: ToolProvider;
  /** Tests only: the waits between attempts of a webhook delivery (default about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h). */
  webhookRetryDelaysMs?: number[];
}

/**
 * The Koa app, its routes, the run engine (where tools plug in), `becomePrimary` (the start-up
 * writes, called once before serving writes), and `stopBackgroundWork`, which must finish before
 * the database is closed.
 */
export type App = Koa<AppState, AppContext> & {
  routes: Route[];
  runs: RunEngine;
  /** Every run's events (the bench reads its write counts). */
  eventLog: EventLog;
  /**
   * Every write a start makes, in this one place: runs a stopped process left under way are marked
   * failed, documents it left pending or mid-ingestion are queued again, and the background writers
   * begin (the chunk sweeper, the webhook dispatcher, the deferred token last-use times, the expiry of runs waiting for approval). Until it is called the app writes
   * nothing by itself and serves reads from a database it may not write (a read-only start); every
   * start of src/main.ts calls it, since the service is its database's only writer. (Opening a
   * database already at this code's schema version writes nothing; only migrations write there.)
   */
  becomePrimary(): void;
  /**
   * Ends what holds a request open — run event streams, `?wait=` long-polls — so that a graceful
   * stop does not wait for them: the streams end with an `error` event, the long-polls answer.
   */
  releaseHeldRequests(): Promise<void>;
  stopBackgroundWork(): Promise<void>;
};

export function createApp({
  db,
  config,
  secretKey,
  log = jsonLogger,
  beforeHash,
  onHashWait,
  keepAliveMs,
  resolveHost,
  toolProvider,
  webhookRetryDelaysMs,
}: AppOptions): App {
  // Behind a proxy, the client address is the last X-Forwarded-For hop (the one the proxy added).
  const app = new Koa<AppState, AppContext>({ proxy: config.trustProxy, maxIpsCount: 1 });
  // Koa reports errors after a response began (a client that left a stream) here; by default it
  // prints their stack to stderr. A client going away is not an error of the service.
  app.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE' || error.code === 'ECONNRESET' || error.code === 'EPIPE') return;
    log.error({ msg: 'response failed', error: describeError(error) });
  });
  const sealer = createSealer(secretKey);
  const stores = createStores(db, sealer, { allowPrivateNetworks: config.allowPrivateNetworks });
  const rateLimits = createRateLimits(config.rateLimit);
  const passwords = new PasswordHasher({
    concurrency: config.hashConcurrency,
    queueMax: config.hashQueueMax,
    maxWaitMs: MAX_HASH_WAIT_MS,
    maxQueueWaitMs: MAX_HASH_QUEUE_WAIT_MS,
    beforeHash,
    onWait: onHashWait,
  });
  const ingestion = new IngestionQueue(stores.chunks, sealer, config.ingestion, log, stores.files);
  const sweeper = new ChunkSweeper(stores.chunks, log);
  // Connections to users' servers (MCP servers, model endpoints) outlive a run, for the next run to
  // the same server and address.
  const connections = createConnectionPool(KEPT_CONNECTIONS);
  // What tools open for a run (an MCP server's connected client) and the next run may use again.
  const keeper = createKeeper(KEPT_FOR_RUNS);
  const toolDeps = {
    findAgent: (userId: string, agentId: string) => stores.agents.get(userId, agentId),
    fetch: createGuardedFetch({ allowPrivateNetworks: config.allowPrivateNetworks }),
    session: (limits: { maxResponseBytes: number }) =>
      createGuardedSession({ allowPrivateNetworks: config.allowPrivateNetworks, ...limits, pool: connections }),
    toolTimeoutMs: config.toolTimeoutMs,
    keeper,
  };
  const tools = toolProvider ?? createToolProvider({ ...toolDeps, listToolsForRun: stores.tools.listForRun });
  const engine = createRunEngine({ stores, config, log, tools, resolveHost, connections });
  const eventLog = createEventLog({ events: stores.runEvents, runs: stores.runs, log });
  engine.observe((run, event) => eventLog.observe(run, event));
  const eventSweeper = createEventSweeper(stores.runEvents, config.runs.eventsRetentionDays, log);
  const dispatcher = new WebhookDispatcher({
    store: stores.webhooks,
    log,
    allowPrivateNetworks: config.allowPrivateNetworks,
    retryDelaysMs: webhookRetryDelaysMs,
    pool: connections,
  });
  const wakeDispatcher = () => dispatcher.wake();
  subscribeWebhookEvents({ ...stores, outbox: dispatcher });

  const healthCheck = db.prepare('SELECT 1').pluck();
  const storage = new StorageMonitor(db, log);
  const health = defineRoute({
    method: 'get',
    path: '/healthz',
    root: true,
    operationId: 'getHealth',
    summary: 'Health check',
    description:
      'Answers 200 when the database answers, is still the file at its configured path and can be written. 503 `storage_unavailable` ' +
      'when that file was deleted or replaced; 503 `storage_full` after a write failed for lack of disk space, until a write succeeds again. Not under /api/v1.',
    tag: 'Service',
    auth: false,
    success: { status: 200, description: 'The service and its database answer.', data: v.strictObject({ status: v.literal('ok') }) },
    errors: [503],
    handler: () => {
      storage.assertWritable();
      healthCheck.get();
      return { status: 'ok' as const };
    },
  });

  // The order matters where paths overlap: the link form of POST /agents before agent creation.
  const routes: Route[] = [
    ...authRoutes({ ...stores, config, rateLimits, passwords }),
    ...apiTokenRoutes(stores),
    ...toolRoutes({ tools: stores.tools, functionsOf: (userId, record) => toolFunctions(toolDeps, userId, record) }),
    ...documentRoutes({ ...stores, ingestion, uploadMaxBytes: config.uploadMaxBytes }),
    agentDocumentViaAgentsRoute(stores),
    // Before GET /agents/:id, which would read "library" as an id.
    libraryRoute(stores),
    ...agentRoutes(stores),
    ...carryRoutes({ carry: createCarryStore(db, stores), ingestion }),
    ...connectionRoutes({
      connections: stores.connections,
      models: createModelLister({ allowPrivateNetworks: config.allowPrivateNetworks, operator: config.runs, resolveHost }),
      allowPrivateNetworks: config.allowPrivateNetworks,
      operatorHasOpenAIKey: config.runs.openaiApiKey !== undefined,
      resolveHost,
    }),
    ...promptRoutes(stores),
    ...tagRoutes(stores),
    ...runRoutes({ ...stores, engine, eventLog, keepAliveMs }),
    ...userRoutes(),
    ...webhookRoutes({ ...stores, allowPrivateNetworks: config.allowPrivateNetworks, wake: wakeDispatcher, resolveHost }),
    ...agentDocumentRoutes(stores),
    ...agentToolRoutes(stores),
    ...mcpRoutes({ agents: stores.agents, search: stores.search, engine, log }),
    health,
  ];
  // The OpenAI-compatible API: its own group under /v1, answering errors in OpenAI's shape.
  const openai = openAIRoutes({ ...stores, engine, eventLog, keepAliveMs });
  routes.push(openApiRoute([...routes, ...openai]));

  const table = mountRoutes(
    [
      { routes, presentError: presentEnvelope },
      { prefix: '/v1', routes: openai, presentError: presentOpenAIError },
    ],
    authenticator(stores.apiTokens, rateLimits),
  );
  const docs = docsPage();
  for (const path of DOCS_PATHS) table.add('all', path, docs);
  consoleRoutes(table);

  app.use(envelope(log, { logRequests: config.logRequests, presenterFor: table.presenterFor }));
  app.use(storageGuard(storage));
  if (config.corsOrigins.length > 0) app.use(cors(config.corsOrigins));
  app.use(wellFormedQuery());
  app.use(jsonBody(config.bodyLimitBytes, isUploadRequest));
  app.use(table.middleware());

  // Token uses (lastUsedAt) are written a few seconds behind, in one transaction.
  const flushTouches = () => {
    try {
      stores.apiTokens.flushTouches();
    } catch (error) {
      log.error({ msg: 'writing token last-use times failed; retrying later', error: describeError(error) });
    }
  };
  // Runs waiting for approval past RUN_APPROVAL_TTL_MS are ended: looked for a few times per TTL, at most every minute.
  const expireWaiting = () => {
    try {
      engine.expireWaiting();
    } catch (error) {
      log.error({ msg: 'ending runs whose approval expired failed; retrying later', error: describeError(error) });
    }
  };
  const expiryEveryMs = Math.min(60_000, Math.max(50, Math.floor(config.runs.approvalTtlMs / 4)));
  let primary = false;
  let touchTimer: NodeJS.Timeout | undefined;
  let expiryTimer: NodeJS.Timeout | undefined;
  let checkpointer: Checkpointer | undefined;
  const becomePrimary = () => {
    if (primary) return;
    primary = true;
    checkpointer = startCheckpointer(db, { onError: (msg) => log.error({ msg }) });
    engine.failInterruptedRuns();
    // Uploads a stopped process left mid-way: no request is taking one yet.
    stores.files.sweepOrphans();
    eventSweeper.start();
    ingestion.start();
    sweeper.start();
    dispatcher.start();
    touchTimer = setInterval(flushTouches, TOUCH_FLUSH_MS);
    touchTimer.unref();
    expireWaiting();
    expiryTimer = setInterval(expireWaiting, expiryEveryMs);
    expiryTimer.unref();
  };
  const stopBackgroundWork = async () => {
    clearInterval(touchTimer);
    clearInterval(expiryTimer);
    await Promise.all([engine.shutdown(), ingestion.stop(), sweeper.stop(), eventSweeper.stop(), dispatcher.stop()]);
    keeper.close();
    connections.close();
    if (primary) {
      flushTouches();
      eventLog.flush();
    }
    await checkpointer?.stop();
  };
  const releaseHeldRequests = async () => {
    await Promise.all([engine.shutdown(), ingestion.stop()]);
  };
  return Object.assign(app, {
    routes: [...routes, ...openai],
    runs: engine,
    eventLog,
    becomePrimary,
    releaseHeldRequests,
    stopBackgroundWork,
  });
}
