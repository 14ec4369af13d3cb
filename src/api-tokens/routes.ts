// `/api-tokens`: the caller's API tokens (interface endpoints 2-5, and PATCH of the description).
import type Router from '@koa/router';
import * as v from 'valibot';
import type { AppState } from '../http/context.js';
import type { Deps } from '../deps.js';
import { callerOf } from '../http/auth.js';
import { notFound } from '../http/errors.js';
import { created, ok, okPage } from '../http/respond.js';
import { DescriptionSchema, parseBody, parseId, parsePageRequest } from '../http/validate.js';
import { formatTimestamp } from '../lib/ids.js';
import { presentApiToken } from './present.js';

/** Body of POST /api-tokens. */
export const CreateApiTokenSchema = v.object({
  description: v.optional(DescriptionSchema, ''),
  /** When the token stops working: an ISO 8601 time in the future; absent or null: never. */
  expiresAt: v.optional(
    v.nullable(
      v.pipe(
        v.string('must be an ISO 8601 date-time string'),
        v.isoTimestamp('must be an ISO 8601 date-time such as 2027-01-31T12:00:00Z'),
        v.transform((text) => Date.parse(text)),
        v.check((ms) => ms > Date.now(), 'must be in the future'),
        v.transform(formatTimestamp),
      ),
    ),
    null,
  ),
});
/** Body of PATCH /api-tokens/{id}. */
export const UpdateApiTokenSchema = v.object({ description: DescriptionSchema });

export function apiTokenRoutes(router: Router<AppState>, { stores, requireCaller }: Deps): void {
  const { apiTokens } = stores;

  router.get('/api-tokens', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const page = parsePageRequest(ctx, (id) => apiTokens.seqOfApiToken(caller.id, id));
    okPage(ctx, apiTokens.listApiTokens(caller.id, page), (token) => presentApiToken(token, caller));
  });

  router.post('/api-tokens', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const input = parseBody(ctx, CreateApiTokenSchema);
    created(ctx, presentApiToken(apiTokens.createApiToken(caller.id, input), caller));
  });

  router.get('/api-tokens/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const token = apiTokens.getApiToken(caller.id, parseId(ctx));
    if (!token) throw notFound('API token');
    ok(ctx, presentApiToken(token, caller));
  });

  router.patch('/api-tokens/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const id = parseId(ctx);
    const input = parseBody(ctx, UpdateApiTokenSchema);
    const token = apiTokens.updateApiToken(caller.id, id, input);
    if (!token) throw notFound('API token');
    ok(ctx, presentApiToken(token, caller));
  });

  router.delete('/api-tokens/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const token = apiTokens.deleteApiToken(caller.id, parseId(ctx));
    if (!token) throw notFound('API token');
    ok(ctx, presentApiToken(token, caller));
  });
}
