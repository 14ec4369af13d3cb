// The types every middleware and handler shares.
import type { RouterContext } from '@koa/router';
import type { Middleware } from 'koa';

/** The signed-in caller as handlers see it (never holds the password hash). */
export interface Caller {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  /** The id of the API token this request came with. */
  tokenId: string;
}

export interface AppState {
  requestId: string;
  /** Set by authentication (src/api-tokens/authenticate.ts); read it through `callerOf(ctx)`. */
  caller?: Caller;
}

export type AppContext = RouterContext<AppState>;
export type AppMiddleware = Middleware<AppState, AppContext>;
