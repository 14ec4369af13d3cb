// The bearer credential of a request and the caller it names. The original clients spell the
// header `Autorization`; the correct `Authorization` is accepted too. The original spelling wins
// when both are sent. The check of the token is src/api-tokens/authenticate.ts.
import type { AppContext, Caller } from './context.js';

/** Finds the caller of a request with a known, unexpired token; throws 401 (or 429) otherwise. */
export type Authenticate = (ctx: AppContext) => Caller;

const BEARER = /^\s*bearer\s+(\S+)\s*$/i;

/** The bearer secret a request carries, or undefined. */
export function bearerSecret(ctx: AppContext): string | undefined {
  const { autorization, authorization } = ctx.req.headers;
  const header = autorization || authorization;
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
}

/** The authenticated caller; only valid on a route with `auth: true`. */
export function callerOf(ctx: AppContext): Caller {
  const caller = ctx.state.caller;
  if (caller === undefined) throw new Error('callerOf used on a route without auth');
  return caller;
}
