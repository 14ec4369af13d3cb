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
import { ok } from './http/respond.js';
import { jsonLogger, type Logger } from './lib/log.js';
import { authRoutes } from './auth/routes.js';
import { apiTokenRoutes } from './api-tokens/routes.js';
import { agentRoutes } from './agents/routes.js';
import { agentDocumentRoutes, agentToolRoutes } from './links/routes.js';
import { documentRoutes } from './documents/routes.js';
import { promptRoutes } from './prompts/routes.js';
import { tagRoutes } from './tags/routes.js';
import { toolRoutes } from './tools/routes.js';

export interface AppOptions {
  db: Db;
  config: Config;
  log?: Logger;
}

/** Every route module, mounted under /api/v1 in this order. */
const ROUTES = [authRoutes, apiTokenRoutes, toolRoutes, documentRoutes, agentRoutes, promptRoutes, tagRoutes, agentDocumentRoutes, agentToolRoutes];

export function createApp({ db, config, log = jsonLogger }: AppOptions): Koa<AppState, AppContext> {
  const app = new Koa<AppState, AppContext>();
  const stores = createStores(db);
  const deps: Deps = { config, stores, requireCaller: requireCaller(stores.apiTokens) };

  app.use(envelope(log, { logRequests: config.logRequests }));
  app.use(jsonBody(config.bodyLimitBytes));

  const root = new Router<AppState>();
  const healthCheck = db.prepare('SELECT 1').pluck();
  root.get('/healthz', (ctx) => {
    healthCheck.get();
    ok(ctx, { status: 'ok' });
  });

  const api = new Router<AppState>({ prefix: '/api/v1' });
  for (const mount of ROUTES) mount(api, deps);

  for (const router of [root, api]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
