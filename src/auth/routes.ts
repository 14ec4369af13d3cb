// Sign-up, sign-in and the caller's own account (`/auth/*`); what they do is in accounts.ts.
import * as v from 'valibot';
import type { Config } from '../config.js';
import type { RateLimits } from '../http/rate-limit.js';
import { defineRoute, type Route } from '../http/route.js';
import { presentSignedUpUser, presentUser } from '../users/present.js';
import { UserSchema } from '../users/schema.js';
import type { UserStore } from '../users/store.js';
import { presentApiToken } from '../api-tokens/present.js';
import type { ApiTokenStore } from '../api-tokens/store.js';
import { createAccounts } from './accounts.js';
import type { PasswordHasher } from './password.js';
import { DeleteMeSchema, SignInResultSchema, SignInSchema, SignUpResultSchema, SignUpSchema, UpdateMeSchema } from './schema.js';

// Here rather than in ./schema.ts: the answer of one public route, read by the console's sign-in page.
const AuthOptionsSchema = v.strictObject({
  signUp: v.pipe(
    v.boolean(),
    v.description('True when anyone may sign up; false when the operator creates accounts (`SIGN_UP=off`): sign-up answers 403.'),
  ),
});

interface AuthDeps {
  users: UserStore;
  apiTokens: ApiTokenStore;
  config: Config;
  rateLimits: RateLimits;
  passwords: PasswordHasher;
}

export function authRoutes({ users, apiTokens, config, rateLimits, passwords }: AuthDeps): Route[] {
  const accounts = createAccounts({ users, apiTokens, passwords, rateLimits, config });
  const tag = 'Auth';

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
      errors: [403, 409, 429, 503],
      handler: async ({ ctx, body }) => ({ user: presentSignedUpUser(await accounts.signUp(body, ctx.ip)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/auth/options',
      operationId: 'getAuthOptions',
      summary: 'How accounts are made on this service',
      description: 'Public. Says whether `POST /auth/sign-up` is open, so a sign-in page offers sign-up only where it works.',
      tag,
      auth: false,
      success: { status: 200, description: "The service's account options.", data: AuthOptionsSchema },
      handler: () => ({ signUp: config.signUp }),
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
      errors: [401, 429, 503],
      handler: async ({ ctx, body }) => {
        const { user, token } = await accounts.signIn(body, ctx.ip);
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
      errors: [403, 429, 503],
      handler: async ({ ctx, caller, body }) => presentUser(await accounts.updateMe(caller, ctx.ip, body)),
    }),
    defineRoute({
      method: 'delete',
      path: '/auth/me',
      operationId: 'deleteMe',
      summary: "Delete the caller's account",
      description: 'Deletes the account and everything it owns, and cancels its runs under way at once; needs the password.',
      tag,
      auth: true,
      body: DeleteMeSchema,
      success: { status: 200, description: 'Deleted: data is null.', data: v.null() },
      errors: [403, 429, 503],
      handler: async ({ ctx, caller, body }) => {
        await accounts.deleteMe(caller, ctx.ip, body);
        return null;
      },
    }),
  ];
}
