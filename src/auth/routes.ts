// Sign-up, sign-in and the caller's own account (`/auth/*`).
import * as v from 'valibot';
import type { Config } from '../config.js';
import { conflict, forbidden, unauthorized } from '../http/errors.js';
import type { RateLimits } from '../http/rate-limit.js';
import { defineRoute, type Route } from '../http/route.js';
import { presentSignedUpUser, presentUser } from '../users/present.js';
import { UserSchema } from '../users/schema.js';
import type { UserRow, UserStore } from '../users/store.js';
import type { Caller } from '../http/context.js';
import { presentApiToken } from '../api-tokens/present.js';
import type { ApiTokenStore } from '../api-tokens/store.js';
import { formatTimestamp } from '../lib/ids.js';
import { hashPassword, verifyPassword } from './password.js';
import { defaultUserName, DeleteMeSchema, SignInResultSchema, SignInSchema, SignUpResultSchema, SignUpSchema, UpdateMeSchema } from './schema.js';

interface AuthDeps {
  users: UserStore;
  apiTokens: ApiTokenStore;
  config: Config;
  rateLimits: RateLimits;
}

export function authRoutes({ users, apiTokens, config, rateLimits }: AuthDeps): Route[] {
  // Verified against when the email is unknown, so both failures of sign-in take the same time.
  let decoyHash: Promise<string> | undefined;
  const decoy = () => (decoyHash ??= hashPassword('decoy password, never matches', config.scrypt));
  const tag = 'Auth';

  /** Checks the caller's password; attempts count against the account's failed-sign-in allowance. */
  async function checkOwnPassword(caller: Caller, password: string, wrong: string): Promise<UserRow> {
    rateLimits.passwordAttempt(caller.email);
    const stored = users.get(caller.id);
    if (!stored) throw unauthorized('The account no longer exists.');
    if (!(await verifyPassword(password, stored.passwordHash))) throw forbidden(wrong);
    return stored;
  }

  return [
    defineRoute({
      method: 'post',
      path: '/auth/sign-up',
      operationId: 'signUp',
      summary: 'Sign up',
      description: 'Creates an account. It answers no token: sign in for one.',
      tag,
      auth: false,
      before: [rateLimits.authAttempts],
      body: SignUpSchema,
      success: { status: 201, description: 'The new user, with the password hash and null related records.', data: SignUpResultSchema },
      errors: [403, 409, 429],
      handler: async ({ body }) => {
        if (!config.signUp) throw forbidden('Sign-up is closed on this service: its operator creates accounts.');
        const passwordHash = await hashPassword(body.password, config.scrypt);
        // Checked after the (awaited) hash, right before the insert: nothing can run in between.
        if (users.getByEmail(body.email)) throw conflict('An account with this email already exists.');
        const user = users.create({ email: body.email, name: body.name ?? defaultUserName(body.email), passwordHash });
        return { user: presentSignedUpUser(user) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/auth/sign-in',
      operationId: 'signIn',
      summary: 'Sign in',
      description: 'Creates an API token (shown in GET /api-tokens, revocable) and answers its secret as `token`.',
      tag,
      auth: false,
      before: [rateLimits.authAttempts],
      body: SignInSchema,
      success: { status: 200, description: 'The user, the bearer secret and its API token record.', data: SignInResultSchema },
      errors: [401, 429],
      handler: async ({ body }) => {
        rateLimits.checkSignInAllowed(body.email);
        const user = users.getByEmail(body.email);
        const matches = await verifyPassword(body.password, user?.passwordHash ?? (await decoy()));
        if (!user || !matches) {
          rateLimits.signInFailed(body.email);
          throw unauthorized('The email or password is wrong.');
        }
        rateLimits.signInSucceeded(body.email);
        if (user.disabledAt !== null) throw unauthorized('This account is disabled: ask the operator of this service.');
        const expiresAt = formatTimestamp(Date.now() + config.signInTokenTtlMs);
        const token = apiTokens.create(user.id, { description: 'Created by sign-in', expiresAt });
        return { user: presentUser(user), token: token.token, apiToken: presentApiToken(token, user) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/auth/me',
      operationId: 'getMe',
      summary: 'Get the caller',
      tag,
      auth: true,
      success: { status: 200, description: 'The caller (no password hash).', data: UserSchema },
      handler: ({ caller }) => presentUser(caller),
    }),
    defineRoute({
      method: 'patch',
      path: '/auth/me',
      operationId: 'updateMe',
      summary: "Update the caller's name or password",
      description: "A password change needs `currentPassword` and revokes the caller's other tokens.",
      tag,
      auth: true,
      body: UpdateMeSchema,
      success: { status: 200, description: 'The updated user.', data: UserSchema },
      errors: [403],
      handler: async ({ caller, body }) => {
        const changesPassword = body.password !== undefined;
        const stored = changesPassword
          ? await checkOwnPassword(caller, body.currentPassword!, 'The current password is wrong.')
          : users.get(caller.id);
        if (!stored) throw unauthorized('The account no longer exists.');
        const passwordHash = changesPassword ? await hashPassword(body.password!, config.scrypt) : stored.passwordHash;
        const user = users.updateOwnAccount(caller.id, caller.tokenId, { name: body.name ?? stored.name, passwordHash }, changesPassword);
        if (!user) throw unauthorized('The API token was revoked while the request ran.');
        return presentUser(user);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/auth/me',
      operationId: 'deleteMe',
      summary: "Delete the caller's account",
      description: 'Deletes the account and everything it owns; needs the password.',
      tag,
      auth: true,
      body: DeleteMeSchema,
      success: { status: 200, description: 'Deleted: data is null.', data: v.null() },
      errors: [403],
      handler: async ({ caller, body }) => {
        await checkOwnPassword(caller, body.password, 'The password is wrong.');
        if (!users.deleteOwnAccount(caller.id, caller.tokenId)) throw unauthorized('The API token was revoked while the request ran.');
        return null;
      },
    }),
  ];
}
