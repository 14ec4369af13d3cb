// Sign-up, sign-in and the caller's own account (`/auth/*`).
import type Router from '@koa/router';
import type { AppState } from '../http/context.js';
import type { Deps } from '../deps.js';
import { callerOf } from '../http/auth.js';
import { conflict, forbidden, unauthorized } from '../http/errors.js';
import { created, ok } from '../http/respond.js';
import { parseBody } from '../http/validate.js';
import { presentSignedUpUser, presentUser } from '../users/present.js';
import type { UserRow } from '../users/store.js';
import type { Caller } from '../http/context.js';
import { presentApiToken } from '../api-tokens/present.js';
import { formatTimestamp } from '../lib/ids.js';
import { hashPassword, verifyPassword } from './password.js';
import { DeleteMeSchema, SignInSchema, SignUpSchema, UpdateMeSchema } from './schema.js';

export function authRoutes(router: Router<AppState>, { stores, config, rateLimits, requireCaller }: Deps): void {
  const { users, apiTokens } = stores;
  // Verified against when the email is unknown, so both failures of sign-in take the same time.
  let decoyHash: Promise<string> | undefined;
  const decoy = () => (decoyHash ??= hashPassword('decoy password, never matches', config.scrypt));

  router.post('/auth/sign-up', rateLimits.authAttempts, async (ctx) => {
    if (!config.signUp) throw forbidden('Sign-up is closed on this service: its operator creates accounts.');
    const input = parseBody(ctx, SignUpSchema);
    const passwordHash = await hashPassword(input.password, config.scrypt);
    // Checked after the (awaited) hash, right before the insert: nothing can run in between.
    if (users.getUserByEmail(input.email)) throw conflict('An account with this email already exists.');
    const user = users.createUser({ email: input.email, name: input.name, passwordHash });
    created(ctx, { user: presentSignedUpUser(user) });
  });

  router.post('/auth/sign-in', rateLimits.authAttempts, async (ctx) => {
    const input = parseBody(ctx, SignInSchema);
    rateLimits.checkSignInAllowed(input.email);
    const user = users.getUserByEmail(input.email);
    const matches = await verifyPassword(input.password, user?.passwordHash ?? (await decoy()));
    if (!user || !matches) {
      rateLimits.signInFailed(input.email);
      throw unauthorized('The email or password is wrong.');
    }
    rateLimits.signInSucceeded(input.email);
    if (user.disabledAt !== null) throw unauthorized('This account is disabled: ask the operator of this service.');
    const expiresAt = formatTimestamp(Date.now() + config.signInTokenTtlMs);
    const token = apiTokens.createApiToken(user.id, { description: 'Created by sign-in', expiresAt });
    ok(ctx, { user: presentUser(user), token: token.token, apiToken: presentApiToken(token, user) });
  });

  router.get('/auth/me', requireCaller, (ctx) => {
    ok(ctx, presentUser(callerOf(ctx)));
  });

  /** Checks the caller's password; attempts count against the account's failed-sign-in allowance. */
  async function checkOwnPassword(caller: Caller, password: string, wrong: string): Promise<UserRow> {
    rateLimits.passwordAttempt(caller.email);
    const stored = users.getUserById(caller.id);
    if (!stored) throw unauthorized('The account no longer exists.');
    if (!(await verifyPassword(password, stored.passwordHash))) throw forbidden(wrong);
    return stored;
  }

  router.patch('/auth/me', requireCaller, async (ctx) => {
    const caller = callerOf(ctx);
    const input = parseBody(ctx, UpdateMeSchema);
    const changesPassword = input.password !== undefined;
    const stored = changesPassword
      ? await checkOwnPassword(caller, input.currentPassword!, 'The current password is wrong.')
      : users.getUserById(caller.id);
    if (!stored) throw unauthorized('The account no longer exists.');
    const passwordHash = changesPassword ? await hashPassword(input.password!, config.scrypt) : stored.passwordHash;
    const user = users.updateOwnAccount(caller.id, caller.tokenId, { name: input.name ?? stored.name, passwordHash }, changesPassword);
    if (!user) throw unauthorized('The API token was revoked while the request ran.');
    ok(ctx, presentUser(user));
  });

  router.delete('/auth/me', requireCaller, async (ctx) => {
    const caller = callerOf(ctx);
    const input = parseBody(ctx, DeleteMeSchema);
    await checkOwnPassword(caller, input.password, 'The password is wrong.');
    if (!users.deleteOwnAccount(caller.id, caller.tokenId)) throw unauthorized('The API token was revoked while the request ran.');
    ok(ctx, null);
  });
}
