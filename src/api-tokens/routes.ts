// `/api-tokens`: the caller's API tokens (list, create, get, change the description, revoke).
import { resourceRoutes } from '../http/resource-routes.js';
import { presentApiToken } from './present.js';
import { ApiTokenSchema, CreateApiTokenSchema, UpdateApiTokenSchema } from './schema.js';
import type { ApiTokenStore } from './store.js';

export function apiTokenRoutes({ apiTokens }: { apiTokens: ApiTokenStore }) {
  return resourceRoutes({
    path: '/api-tokens',
    tag: 'API tokens',
    names: { one: 'API token', One: 'ApiToken', Many: 'ApiTokens', what: 'API token' },
    schema: ApiTokenSchema,
    present: presentApiToken,
    store: apiTokens,
    create: { body: CreateApiTokenSchema },
    update: { body: UpdateApiTokenSchema },
    delete: {
      answers: 'record',
      description: 'The token stops working at once: event streams it opened end with an error event, and a request with it gets 401.',
    },
  });
}
