// `/tags`: coloured labels for agents.
import type Router from '@koa/router';
import type { AppState, Caller } from '../http/context.js';
import type { Deps } from '../deps.js';
import { callerOf } from '../http/auth.js';
import { forbidden, notFound } from '../http/errors.js';
import { created, ok, okPage } from '../http/respond.js';
import { parseBody, parseId, parsePageRequest } from '../http/validate.js';
import { presentTag } from './present.js';
import { CreateTagSchema, UpdateTagSchema } from './schema.js';

/** The interface lets a client send `userId`; the owner is always the caller. */
function assertOwnUserId(caller: Caller, userId: string | undefined): void {
  if (userId !== undefined && userId !== caller.id) throw forbidden('A tag can only be created for yourself.');
}

export function tagRoutes(router: Router<AppState>, { stores, requireCaller }: Deps): void {
  const { tags } = stores;

  router.get('/tags', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const page = parsePageRequest(ctx, (id) => tags.seqOfTag(caller.id, id));
    okPage(ctx, tags.listTags(caller.id, page), presentTag);
  });

  router.post('/tags', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const input = parseBody(ctx, CreateTagSchema);
    assertOwnUserId(caller, input.userId);
    created(ctx, presentTag(tags.createTag(caller.id, input)));
  });

  router.get('/tags/:id', requireCaller, (ctx) => {
    const tag = tags.getTag(callerOf(ctx).id, parseId(ctx));
    if (!tag) throw notFound('Tag');
    ok(ctx, presentTag(tag));
  });

  router.patch('/tags/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const id = parseId(ctx);
    const change = parseBody(ctx, UpdateTagSchema);
    assertOwnUserId(caller, change.userId);
    const stored = tags.getTag(caller.id, id);
    if (!stored) throw notFound('Tag');
    ok(ctx, presentTag(tags.updateTag(caller.id, id, { name: change.name ?? stored.name, color: change.color ?? stored.color })!));
  });

  router.delete('/tags/:id', requireCaller, (ctx) => {
    if (!tags.deleteTag(callerOf(ctx).id, parseId(ctx))) throw notFound('Tag');
    ok(ctx, null);
  });
}
