// The service's rate limits (aimed at brute force and floods, not at ordinary use):
// sign-up/sign-in attempts per client address, failed sign-ins per email, requests per API token.
import type { RateLimitConfig } from '../config.js';
import { RateLimiter } from '../lib/rate-limiter.js';
import type { AppContext, AppMiddleware } from './context.js';
import { rateLimited } from './errors.js';

const MINUTE = 60_000;

export interface RateLimits {
  /** Route middleware for sign-up and sign-in: limits attempts per client address. */
  authAttempts: AppMiddleware;
  /** Throws 429 while `email` has too many recent failed sign-ins. */
  checkSignInAllowed(email: string): void;
  /** Records a failed sign-in for `email`. */
  signInFailed(email: string): void;
  /** Clears `email`'s failures after a successful sign-in. */
  signInSucceeded(email: string): void;
  /**
   * For password checks of a signed-in caller (PATCH/DELETE /auth/me): every attempt counts against
   * the account's failed-sign-in allowance, so a token cannot guess the password or flood hashing.
   */
  passwordAttempt(email: string): void;
  /** Throws 429 when the token has made too many requests. */
  checkToken(tokenId: string): void;
}

export function createRateLimits(config: RateLimitConfig): RateLimits {
  if (!config.enabled) {
    const pass: AppMiddleware = (_ctx, next) => next();
    return { authAttempts: pass, checkSignInAllowed() {}, signInFailed() {}, signInSucceeded() {}, passwordAttempt() {}, checkToken() {} };
  }
  const byAddress = new RateLimiter({ capacity: config.authPerMinute, windowMs: MINUTE });
  const failuresByEmail = new RateLimiter({ capacity: config.failedSignInsPer15Minutes, windowMs: 15 * MINUTE });
  const byToken = new RateLimiter({ capacity: config.perTokenPerMinute, windowMs: MINUTE });

  return {
    authAttempts: async (ctx: AppContext, next) => {
      const wait = byAddress.take(ctx.ip || 'unknown');
      if (wait > 0) throw rateLimited(wait, 'sign-up and sign-in attempts from this address');
      return next();
    },
    checkSignInAllowed(email) {
      const wait = failuresByEmail.retryAfterSeconds(email);
      if (wait > 0) throw rateLimited(wait, 'failed sign-ins for this email');
    },
    signInFailed(email) {
      failuresByEmail.take(email);
    },
    signInSucceeded(email) {
      failuresByEmail.reset(email);
    },
    passwordAttempt(email) {
      const wait = failuresByEmail.take(email);
      if (wait > 0) throw rateLimited(wait, 'password attempts for this account');
    },
    checkToken(tokenId) {
      const wait = byToken.take(tokenId);
      if (wait > 0) throw rateLimited(wait, 'requests with this API token');
    },
  };
}
