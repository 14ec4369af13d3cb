// The JSON shape of an API token: the API returns the secret in full in every token response.
import type { Caller } from '../http/context.js';
import type { UserRow } from '../users/store.js';
import { presentUser } from '../users/present.js';
import type { ApiToken } from './schema.js';
import type { ApiTokenRow } from './store.js';

export function presentApiToken(token: ApiTokenRow, owner: Caller | UserRow): ApiToken {
  return {
    id: token.id,
    userId: token.userId,
    user: presentUser(owner),
    description: token.description,
    token: token.token,
    createdAt: token.createdAt,
    updatedAt: token.updatedAt,
    expiresAt: token.expiresAt,
    lastUsedAt: token.lastUsedAt,
  };
}
