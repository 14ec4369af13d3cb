// Bearer-token authentication. The interface spells the header `Autorization`; the correct
// `Authorization` is accepted too (decisions.md). The interface's spelling wins when both are sent.
import type { ApiTokenStore } from '../api-tokens/store.js';
import { formatTimestamp } from '../lib/ids.js';
import type { AppContext, AppMiddleware, Caller } from './context.js';
import { unauthorized } from './errors.js';
import type { RateLimits } from './rate-limit.js';

const BEARER = /^\s*bearer\s+(\S+)\s*$/i;
/** `lastUsedAt` is written at most this often per token, so authenticated reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** The bearer secret a request carries, or undefined. */
export function bearerSecret(ctx: AppContext): string | undefined {
  const header = ctx.get('Autorization') || ctx.get('Authorization');
  return BEARER.exec(header)?.[1];
}

/** Middleware: lets the request through only with a known, unexpired token; sets the caller. */
export function requireCaller(tokens: ApiTokenStore, limits: RateLimits): AppMiddleware {
  return async function requireCallerMiddleware(ctx, next) {
    const secret = bearerSecret(ctx);
    if (secret === undefined) throw unauthorized();
    const found = secret.length <= 256 ? tokens.findCaller(secret) : undefined;
    if (found === undefined) throw unauthorized('The API token is unknown or revoked.');
    const nowMs = Date.now();
    if (found.expiresAt !== null && Date.parse(found.expiresAt) <= nowMs) throw unauthorized('The API token has expired.');
    limits.checkToken(found.tokenId);
    if (found.lastUsedAt === null || nowMs - Date.parse(found.lastUsedAt) >= LAST_USED_RESOLUTION_MS) {
      tokens.touch(found.tokenId, formatTimestamp(nowMs));
    }
    const { expiresAt, lastUsedAt, ...caller } = found;
    ctx.state.caller = caller;
    return next();
  };
}

/** The authenticated caller; only valid behind `requireCaller`. */
export function callerOf(ctx: AppContext): Caller {
  const caller = ctx.state.caller;
  if (caller === undefined) throw new Error('callerOf used on a route without requireCaller');
  return caller;
}
