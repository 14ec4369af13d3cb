// Builds the Koa application: the seam every test uses. No listen() here (see main.ts).
import Koa from 'koa';
import Router from '@koa/router';
import type { Config } from './config.js';
import type { Db } from './db.js';
import { createStores, type Deps } from './deps.js';
import type { AppContext, AppState } from './http/context.js';
import { envelope } from './http/envelope.js';
import { jsonBody } from './http/body.js';
import { requireCaller } from './http/auth.js';
import { cors } from './http/cors.js';
import { createRateLimits } from './http/rate-limit.js';
import { createSealer } from './lib/secrets.js';
import { setHashConcurrency } from './auth/password.js';
import { ok } from './http/respond.js';
import { jsonLogger, type Logger } from './lib/log.js';
import { authRoutes } from './auth/routes.js';
import { apiTokenRoutes } from './api-tokens/routes.js';
import { agentRoutes } from './agents/routes.js';
import { agentDocumentRoutes, agentToolRoutes } from './links/routes.js';
import { documentRoutes } from './documents/routes.js';
import { documentIngestionRoutes } from './documents/ingestion-routes.js';
import { IngestionQueue } from './documents/ingestion.js';
import { ChunkSweeper } from './documents/chunk-sweeper.js';
import { promptRoutes } from './prompts/routes.js';
import { tagRoutes } from './tags/routes.js';
import { toolRoutes } from './tools/routes.js';
import { openApiRoutes } from './openapi/routes.js';
import { docsPage } from './docs/page.js';
import { consoleRoutes } from './console/serve.js';

export interface AppOptions {
  db: Db;
  config: Config;
  /** The 32-byte key that seals secrets at rest (see src/lib/secrets.ts). */
  secretKey: Buffer;
  log?: Logger;
}

/** Every route module, mounted under /api/v1 in this order. */
const ROUTES = [authRoutes, apiTokenRoutes, toolRoutes, documentIngestionRoutes, documentRoutes, agentRoutes, promptRoutes, tagRoutes, agentDocumentRoutes, agentToolRoutes, openApiRoutes];

/** The Koa app, and `stopBackgroundWork`, which must finish before the database is closed. */
export type App = Koa<AppState, AppContext> & { stopBackgroundWork(): Promise<void> };

export function createApp({ db, config, secretKey, log = jsonLogger }: AppOptions): App {
  // Behind a proxy, the client address is the last X-Forwarded-For hop (the one the proxy added).
  const app = new Koa<AppState, AppContext>({ proxy: config.trustProxy, maxIpsCount: 1 });
  setHashConcurrency(config.hashConcurrency);
  const sealer = createSealer(secretKey);
  const stores = createStores(db, sealer);
  const rateLimits = createRateLimits(config.rateLimit);
  const ingestion = new IngestionQueue(stores.ingestion, sealer, config.ingestion, log);
  const sweeper = new ChunkSweeper(stores.ingestion, log);
  const deps: Deps = { config, stores, rateLimits, ingestion, requireCaller: requireCaller(stores.apiTokens, rateLimits) };

  app.use(envelope(log, { logRequests: config.logRequests }));
  app.use(cors(config.corsOrigins));
  app.use(docsPage());
  app.use(jsonBody(config.bodyLimitBytes));

  const root = new Router<AppState>();
  const healthCheck = db.prepare('SELECT 1').pluck();
  root.get('/healthz', (ctx) => {
    healthCheck.get();
    ok(ctx, { status: 'ok' });
  });
  consoleRoutes(root);

  const api = new Router<AppState>({ prefix: '/api/v1' });
  for (const mount of ROUTES) mount(api, deps);

  for (const router of [root, api]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  ingestion.start();
  sweeper.start();
  const stopBackgroundWork = async () => {
    await Promise.all([ingestion.stop(), sweeper.stop()]);
  };
  return Object.assign(app, { stopBackgroundWork });
}
