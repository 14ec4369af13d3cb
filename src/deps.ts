// What route modules are given: the stores (all SQL), the configuration and the auth middleware.
import type { Config } from './config.js';
import type { Db } from './db.js';
import type { AppMiddleware } from './http/context.js';
import { createApiTokenStore } from './api-tokens/store.js';
import { createUserStore } from './users/store.js';

export type Stores = ReturnType<typeof createStores>;

/** Prepares every statement of every store, once per database. */
export function createStores(db: Db) {
  return {
    users: createUserStore(db),
    apiTokens: createApiTokenStore(db),
  };
}

export interface Deps {
  config: Config;
  stores: Stores;
  /** Route middleware: only callers with a valid token pass; sets `ctx.state.caller`. */
  requireCaller: AppMiddleware;
}
