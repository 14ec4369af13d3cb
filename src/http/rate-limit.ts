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
  /** The password was never checked (the hash queue was full): the attempt is given back. A no-op once settled. */
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
   * counts against the email's allowance, right or wrong, so a token can neither guess the password
   * nor flood hashing. A right one never counts as a failure of its address.
   */
  beginPasswordCheck(email: string, address: string): PasswordAttempt;
  /** True when a password check from `address` failed in the last 15 minutes (its hashes wait behind). */
  failedLately(address: string): boolean;
  /** Throws 429 when the token has made too many requests. */
  checkToken(tokenId: string): void;
}

const settled: PasswordAttempt = { succeeded() {}, failed() {}, cancelled() {} };

export function createRateLimits(config: RateLimitConfig): RateLimits {
  if (!config.enabled) {
    const pass: AppMiddleware = (_ctx, next) => next();
    return {
      authAttempts: pass,
      beginSignIn: () => settled,
      beginPasswordCheck: () => settled,
      failedLately: () => false,
      checkToken() {},
    };
  }
  const byAddress = new RateLimiter({ capacity: config.authPerMinute, windowMs: MINUTE });
  // Failed password checks per email, whoever makes them.
  const failuresByEmail = new RateLimiter({ capacity: config.failedSignInsPer15Minutes, windowMs: 15 * MINUTE });
  // Per email and client address: one mark, taken by a failure and back after 15 minutes. It tells
  // an address that has guessed wrong for this email lately from one that has not.
  const failedFromAddress = new RateLimiter({ capacity: 1, windowMs: 15 * MINUTE });
  // Checks being hashed, per email and address (an entry only while one is): they have not failed
  // yet, but may, so they make an address count as one that has.
  const inFlight = new Map<string, number>();
  // Per client address, whatever the email: a failed check marks it for 15 minutes.
  const failedAddresses = new RateLimiter({ capacity: 1, windowMs: 15 * MINUTE });

  /**
   * Takes the attempt's place before the hash. While the email's allowance lasts, any address may
   * try. Once it is used up, only an address that has not failed for this email in the last 15
   * minutes and has no check of it under way may, one check at a time: so a known email is not enough to lock its owner out, and a
   * guesser gains at most one more guess per fresh address per 15 minutes.
   */
  function begin(email: string, address: string, what: string, refundOnSuccess: boolean): PasswordAttempt {
    const pair = `${email}\n${address}`;
    const emailWait = failuresByEmail.take(email);
    const tookEmail = emailWait === 0;
    // While the email is locked, the address's mark is taken now, so its parallel checks wait.
    const tookMark = !tookEmail && !inFlight.has(pair) && failedFromAddress.take(pair) === 0;
    if (!tookEmail && !tookMark) throw rateLimited(emailWait, what);
    inFlight.set(pair, (inFlight.get(pair) ?? 0) + 1);
    let open = true;
    const settle = (action: () => void) => () => {
      if (!open) return;
      open = false;
      const left = inFlight.get(pair)! - 1;
      if (left > 0) inFlight.set(pair, left);
      else inFlight.delete(pair);
      action();
    };
    return {
      succeeded: settle(() => {
        // This address knows the password: a right check never marks it as one that failed (else
        // the owner's own password changes would lock them out of sign-in), so its mark comes back.
        if (tookMark) failedFromAddress.giveBack(pair);
        if (!refundOnSuccess) return;
        // A sign-in also forgets the address's earlier failure and gives its place in the email's
        // allowance back. The email's failures from elsewhere stay, so its owner signing in does not
        // give a guesser a fresh allowance.
        if (tookEmail) failuresByEmail.giveBack(email);
        failedFromAddress.reset(pair);
      }),
      failed: settle(() => {
        if (!tookMark) failedFromAddress.take(pair);
        failedAddresses.take(address);
      }),
      cancelled: settle(() => {
        if (tookEmail) failuresByEmail.giveBack(email);
        if (tookMark) failedFromAddress.giveBack(pair);
      }),
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
    failedLately: (address) => failedAddresses.retryAfterSeconds(address) > 0,
    checkToken(tokenId) {
      const wait = byToken.take(tokenId);
      if (wait > 0) throw rateLimited(wait, 'requests with this API token');
    },
  };
}
