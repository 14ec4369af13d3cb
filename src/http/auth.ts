// The bearer credential of a request and the caller it names. The original clients spell the
// header `Autorization`; the correct `Authorization` is accepted too. The original spelling wins
// when both are sent. The middleware that checks the token is src/api-tokens/authenticate.ts.
import type { AppContext, Caller } from './context.js';

const BEARER = /^\s*bearer\s+(\S+)\s*$/i;

/** The bearer secret a request carries, or undefined. */
export function bearerSecret(ctx: AppContext): string | undefined {
  const header = ctx.get('Autorization') || ctx.get('Authorization');
  return BEARER.exec(header)?.[1];
}

/** The authenticated caller; only valid behind `requireCaller`. */
export function callerOf(ctx: AppContext): Caller {
  const caller = ctx.state.caller;
  if (caller === undefined) throw new Error('callerOf used on a route without requireCaller');
  return caller;
}
