// `/tags`: coloured labels for agents.
import type { Caller } from '../http/context.js';
import { forbidden } from '../http/errors.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { presentTag } from './present.js';
import { CreateTagSchema, TagSchema, UpdateTagSchema } from './schema.js';
import type { TagStore } from './store.js';

/** A client may send `userId`; the owner is always the caller. */
function assertOwnUserId(input: { userId?: string }, caller: Caller): void {
  if (input.userId !== undefined && input.userId !== caller.id) throw forbidden('A tag can only be created for yourself.');
}

export function tagRoutes({ tags }: { tags: TagStore }) {
  return resourceRoutes({
    path: '/tags',
    tag: 'Tags',
    names: { one: 'tag', One: 'Tag', Many: 'Tags', what: 'Tag' },
    schema: TagSchema,
    present: presentTag,
    store: tags,
    create: {
      body: CreateTagSchema,
      check: assertOwnUserId,
      errors: [403, 409],
      description: "Names are unique per user, case-insensitively. A `userId` other than the caller's is a 403.",
    },
    update: { body: UpdateTagSchema, check: assertOwnUserId, errors: [403, 409] },
    delete: { answers: 'null', description: "Removed from agents' `tags`." },
  });
}
