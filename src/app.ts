// Builds the Koa application: the seam every test uses. No listen() here (see main.ts).
import Koa from 'koa';
import * as v from 'valibot';
import type { Config } from './config.js';
import { databaseFileProblem, type Db } from './db.js';
import { createStores } from './stores.js';
import type { AppContext, AppState } from './http/context.js';
import { envelope } from './http/envelope.js';
import { jsonBody } from './http/body.js';
import { wellFormedQuery } from './http/unicode.js';
import { authenticator } from './api-tokens/authenticate.js';
import { cors } from './http/cors.js';
import { createRateLimits } from './http/rate-limit.js';
import { defineRoute, mountRoutes, type Route } from './http/route.js';
import { createSealer } from './lib/secrets.js';
import { PasswordHasher } from './auth/password.js';
import { unavailable } from './http/errors.js';
import { describeError, jsonLogger, type Logger } from './lib/log.js';
import { authRoutes } from './auth/routes.js';
import { apiTokenRoutes } from './api-tokens/routes.js';
import { agentRoutes, libraryRoute } from './agents/routes.js';
import { agentDocumentRoutes, agentDocumentViaAgentsRoute, agentToolRoutes } from './links/routes.js';
import { documentRoutes } from './documents/routes.js';
import { IngestionQueue } from './documents/ingestion.js';
import { ChunkSweeper } from './documents/chunk-sweeper.js';
import { promptRoutes } from './prompts/routes.js';
import { tagRoutes } from './tags/routes.js';
import { toolRoutes } from './tools/routes.js';
import { openApiRoute } from './openapi/document.js';
import { DOCS_PATHS, docsPage } from './docs/page.js';
import { consoleRoutes } from './console/serve.js';
import { createRunEngine, type RunEngine } from './runs/engine.js';
import { createToolProvider } from './tools/runtime/provider.js';
import { createGuardedFetch, type ResolvedAddress } from './ingest/fetch.js';
import { runRoutes } from './runs/routes.js';
import { userRoutes } from './users/routes.js';

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
}

/**
 * The Koa app, its routes, the run engine (where tools plug in), and `stopBackgroundWork`, which
 * must finish before the database is closed.
 */
export type App = Koa<AppState, AppContext> & { routes: Route[]; runs: RunEngine; stopBackgroundWork(): Promise<void> };

export function createApp({ db, config, secretKey, log = jsonLogger, beforeHash, onHashWait, keepAliveMs, resolveHost }: AppOptions): App {
  // Behind a proxy, the client address is the last X-Forwarded-For hop (the one the proxy added).
  const app = new Koa<AppState, AppContext>({ proxy: config.trustProxy, maxIpsCount: 1 });
  // Koa reports errors after a response began (a client that left a stream) here; by default it
  // prints their stack to stderr. A client going away is not an error of the service.
  app.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE' || error.code === 'ECONNRESET' || error.code === 'EPIPE') return;
    log.error({ msg: 'response failed', error: describeError(error) });
  });
  const sealer = createSealer(secretKey);
  const stores = createStores(db, sealer);
  const rateLimits = createRateLimits(config.rateLimit);
  const passwords = new PasswordHasher({ concurrency: config.hashConcurrency, queueMax: config.hashQueueMax, maxWaitMs: MAX_HASH_WAIT_MS, maxQueueWaitMs: MAX_HASH_QUEUE_WAIT_MS, beforeHash, onWait: onHashWait });
  const ingestion = new IngestionQueue(stores.chunks, sealer, config.ingestion, log);
  const sweeper = new ChunkSweeper(stores.chunks, log);
  const engine = createRunEngine({ stores, config, log, resolveHost });
  engine.setToolProvider(
    createToolProvider({
      listToolsForRun: stores.tools.listForRun,
      findAgent: (userId, agentId) => stores.agents.get(userId, agentId),
      fetch: createGuardedFetch({ allowPrivateNetworks: config.allowPrivateNetworks }),
      runChild: engine.runChildAgent,
    }),
  );

  const healthCheck = db.prepare('SELECT 1').pluck();
  const health = defineRoute({
    method: 'get',
    path: '/healthz',
    root: true,
    operationId: 'getHealth',
    summary: 'Health check',
    description: 'Answers 200 when the database answers and is still the file at its configured path; 503 `unavailable` when that file was deleted or replaced. Not under /api/v1.',
    tag: 'Service',
    auth: false,
    success: { status: 200, description: 'The service and its database answer.', data: v.strictObject({ status: v.literal('ok') }) },
    errors: [503],
    handler: () => {
      // A database file deleted or replaced under the running service: its writes would be lost.
      const problem = databaseFileProblem(db);
      if (problem !== undefined) {
        log.error({ msg: 'database file lost: writes since then are not in the file at DATABASE_PATH; stop the service and restore', problem });
        throw unavailable('The database file this service opened is no longer at its path; see the service log.');
      }
      healthCheck.get();
      return { status: 'ok' as const };
    },
  });

  // The order matters where paths overlap: the link form of POST /agents before agent creation.
  const routes: Route[] = [
    ...authRoutes({ ...stores, config, rateLimits, passwords }),
    ...apiTokenRoutes(stores),
    ...toolRoutes(stores),
    ...documentRoutes({ ...stores, ingestion }),
    agentDocumentViaAgentsRoute(stores),
    // Before GET /agents/:id, which would read "library" as an id.
    libraryRoute(stores),
    ...agentRoutes(stores),
    ...promptRoutes(stores),
    ...tagRoutes(stores),
    ...runRoutes({ ...stores, engine, keepAliveMs }),
    ...userRoutes(),
    ...agentDocumentRoutes(stores),
    ...agentToolRoutes(stores),
    health,
  ];
  routes.push(openApiRoute(routes));

  app.use(envelope(log, { logRequests: config.logRequests }));
  if (config.corsOrigins.length > 0) app.use(cors(config.corsOrigins));
  app.use(wellFormedQuery());
  app.use(jsonBody(config.bodyLimitBytes));
  const table = mountRoutes(routes, authenticator(stores.apiTokens, rateLimits));
  const docs = docsPage();
  for (const path of DOCS_PATHS) table.add('all', path, docs);
  consoleRoutes(table);
  app.use(table.middleware());

  ingestion.start();
  sweeper.start();
  // Token uses (lastUsedAt) are written a few seconds behind, in one transaction.
  const flushTouches = () => {
    try {
      stores.apiTokens.flushTouches();
    } catch (error) {
      log.error({ msg: 'writing token last-use times failed; retrying later', error: describeError(error) });
    }
  };
  const touchTimer = setInterval(flushTouches, TOUCH_FLUSH_MS);
  touchTimer.unref();
  const stopBackgroundWork = async () => {
    clearInterval(touchTimer);
    await Promise.all([engine.shutdown(), ingestion.stop(), sweeper.stop()]);
    flushTouches();
  };
  return Object.assign(app, { routes, runs: engine, stopBackgroundWork });
}
