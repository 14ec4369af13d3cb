// Sign-up, sign-in and the caller's own account (`/auth/*`); what they do is in accounts.ts.
import type Router from '@koa/router';
import type { AppState } from '../http/context.js';
import type { Deps } from '../deps.js';
import { callerOf } from '../http/auth.js';
import { created, ok } from '../http/respond.js';
import { parseBody } from '../http/validate.js';
import { presentSignedUpUser, presentUser } from '../users/present.js';
import { presentApiToken } from '../api-tokens/present.js';
import { createAccounts } from './accounts.js';
import { DeleteMeSchema, SignInSchema, SignUpSchema, UpdateMeSchema } from './schema.js';

export function authRoutes(router: Router<AppState>, { stores, config, rateLimits, passwords, requireCaller }: Deps): void {
  const accounts = createAccounts({ users: stores.users, apiTokens: stores.apiTokens, passwords, rateLimits, config });

  router.post('/auth/sign-up', rateLimits.authAttempts, async (ctx) => {
    const user = await accounts.signUp(parseBody(ctx, SignUpSchema));
    created(ctx, { user: presentSignedUpUser(user) });
  });

  router.post('/auth/sign-in', rateLimits.authAttempts, async (ctx) => {
    const { user, token } = await accounts.signIn(parseBody(ctx, SignInSchema), ctx.ip);
    ok(ctx, { user: presentUser(user), token: token.token, apiToken: presentApiToken(token, user) });
  });

  router.get('/auth/me', requireCaller, (ctx) => {
    ok(ctx, presentUser(callerOf(ctx)));
  });

  router.patch('/auth/me', requireCaller, async (ctx) => {
    ok(ctx, presentUser(await accounts.updateMe(callerOf(ctx), ctx.ip, parseBody(ctx, UpdateMeSchema))));
  });

  router.delete('/auth/me', requireCaller, async (ctx) => {
    await accounts.deleteMe(callerOf(ctx), ctx.ip, parseBody(ctx, DeleteMeSchema));
    ok(ctx, null);
  });
}
