// The service's rate limits (aimed at brute force and floods, not at ordinary use):
// sign-up/sign-in attempts per client address, failed sign-ins per email, requests per API token.
import type { RateLimitConfig } from '../config.js';
import { RateLimiter } from '../lib/rate-limiter.js';
import type { AppContext, AppMiddleware } from './context.js';
import { rateLimited } from './errors.js';

const MINUTE = 60_000;

/**
 * One password check, counted against the email's failed-sign-in allowance from before its hash
 * starts (so parallel guesses cannot all pass the check before any has failed). Settle it once.
 */
export interface PasswordAttempt {
  /** The password was right. */
  succeeded(): void;
  /** The password was wrong: the attempt stays counted. */
  failed(): void;
  /** The password was never checked (the hash queue was full): the attempt is given back. */
  cancelled(): void;
}

export interface RateLimits {
  /** Route middleware for sign-up and sign-in: limits attempts per client address. */
  authAttempts: AppMiddleware;
  /**
   * A sign-in for `email` from `address`, or 429 when the email's allowance is used up and this
   * address has failed for it too. A right password gives its attempt back.
   */
  beginSignIn(email: string, address: string): PasswordAttempt;
  /**
   * A password check of a signed-in caller (PATCH/DELETE /auth/me), under the same rule; every check
   * counts, right or wrong, so a token can neither guess the password nor flood hashing.
   */
  beginPasswordCheck(email: string, address: string): PasswordAttempt;
  /** Throws 429 when the token has made too many requests. */
  checkToken(tokenId: string): void;
}

const settled: PasswordAttempt = { succeeded() {}, failed() {}, cancelled() {} };

export function createRateLimits(config: RateLimitConfig): RateLimits {
  if (!config.enabled) {
    const pass: AppMiddleware = (_ctx, next) => next();
    return { authAttempts: pass, beginSignIn: () => settled, beginPasswordCheck: () => settled, checkToken() {} };
  }
  const byAddress = new RateLimiter({ capacity: config.authPerMinute, windowMs: MINUTE });
  // Failed password checks per email, whoever makes them; and per email and client address, which
  // tells an address that has guessed wrong for this email from one that has not.
  const failuresByEmail = new RateLimiter({ capacity: config.failedSignInsPer15Minutes, windowMs: 15 * MINUTE });
  const failuresByEmailAndAddress = new RateLimiter({ capacity: config.failedSignInsPer15Minutes, windowMs: 15 * MINUTE });

  /**
   * Takes the attempt's place before the hash. While the email's allowance lasts, any address may
   * try. Once it is used up, only an address that has not failed for this email lately may, one
   * check at a time: so a known email is not enough to lock its owner out, and an attacker gains at
   * most one more guess per fresh address.
   */
  function begin(email: string, address: string, what: string, refundOnSuccess: boolean): PasswordAttempt {
    const pair = `${email}\n${address}`;
    const emailWait = failuresByEmail.take(email);
    if (emailWait > 0 && !failuresByEmailAndAddress.isFull(pair)) throw rateLimited(emailWait, what);
    const tookEmail = emailWait === 0;
    const tookPair = failuresByEmailAndAddress.take(pair) === 0;
    const giveBack = () => {
      if (tookEmail) failuresByEmail.giveBack(email);
      if (tookPair) failuresByEmailAndAddress.giveBack(pair);
    };
    let open = true;
    const settle = (action: () => void) => () => {
      if (open) action();
      open = false;
    };
    return {
      succeeded: settle(() => {
        if (!refundOnSuccess) return;
        // This address knows the password: its failures are forgotten. The email's failures from
        // elsewhere stay, so its owner signing in does not give a guesser a fresh allowance.
        if (tookEmail) failuresByEmail.giveBack(email);
        failuresByEmailAndAddress.reset(pair);
      }),
      failed: settle(() => {}),
      cancelled: settle(giveBack),
    };
  }

  const byToken = new RateLimiter({ capacity: config.perTokenPerMinute, windowMs: MINUTE });

  return {
    authAttempts: async (ctx: AppContext, next) => {
      const wait = byAddress.take(ctx.ip || 'unknown');
      if (wait > 0) throw rateLimited(wait, 'sign-up and sign-in attempts from this address');
      return next();
    },
    beginSignIn: (email, address) => begin(email, address, 'failed sign-ins for this email', true),
    beginPasswordCheck: (email, address) => begin(email, address, 'password attempts for this account', false),
    checkToken(tokenId) {
      const wait = byToken.take(tokenId);
      if (wait > 0) throw rateLimited(wait, 'requests with this API token');
    },
  };
}
