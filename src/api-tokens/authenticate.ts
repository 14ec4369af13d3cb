// Bearer-token authentication: what every route with `auth: true` runs first. A stream answering
// the request goes on being checked after that (watch.ts).
import { bearerSecret, type Authenticate } from '../http/auth.js';
import { unauthorized } from '../http/errors.js';
import type { RateLimits } from '../http/rate-limit.js';
import { watchStreamOf } from '../http/sse.js';
import { formatTimestamp } from '../lib/ids.js';
import type { ApiTokenStore } from './store.js';
import { createTokenWatch } from './watch.js';

/** `lastUsedAt` is written at most this often per token, so authenticated reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Authentication by API token: the caller, its token checked against the per-token rate limit and its use noted. */
export function authenticator(tokens: ApiTokenStore, limits: RateLimits): Authenticate {
  const watch = createTokenWatch(tokens);
  return function authenticate(ctx) {
    const secret = bearerSecret(ctx);
    if (secret === undefined) throw unauthorized();
    const found = secret.length <= 256 ? tokens.findCaller(secret) : undefined;
    if (found === undefined) {
      // Only the holder of the secret learns that its account is disabled: holding it is proof enough.
      if (secret.length <= 256 && tokens.isOfDisabledAccount(secret))
        throw unauthorized("The API token's account is disabled by the service's operator.");
      throw unauthorized('The API token is unknown or revoked.');
    }
    const nowMs = Date.now();
    if (found.expiresAt !== null && Date.parse(found.expiresAt) <= nowMs) throw unauthorized('The API token has expired.');
    limits.checkToken(found.tokenId);
    if (found.lastUsedAt === null || nowMs - Date.parse(found.lastUsedAt) >= LAST_USED_RESOLUTION_MS) {
      tokens.touch(found.tokenId, formatTimestamp(nowMs));
    }
    const { expiresAt, lastUsedAt, ...caller } = found;
    watchStreamOf(ctx, watch);
    // A request that may have revoked the caller's tokens or deleted the account ends the caller's
    // open streams whose token it stopped, once it is done.
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && watch.watches(caller.id)) {
      ctx.res.once('close', () => watch.recheckUser(caller.id));
    }
    return caller;
  };
}
