// The JSON shapes of a user.
import type { Caller } from '../http/context.js';
import type { SignedUpUser, User } from './schema.js';
import type { UserRow } from './store.js';

type PublicUser = Pick<UserRow, 'id' | 'email' | 'name' | 'createdAt' | 'updatedAt'>;

/** A user as nested in other records and as `GET /auth/me` returns it: never the password hash. */
export function presentUser(user: PublicUser | Caller): User {
  return { id: user.id, email: user.email, name: user.name, createdAt: user.createdAt, updatedAt: user.updatedAt, deletedAt: null };
}

/** The user as sign-up returns it: with the hash and null related fields. */
export function presentSignedUpUser(user: UserRow): SignedUpUser {
  // Extended in place rather than spread into a new object with more keys (see presentAgent).
  return Object.assign(presentUser(user), { password: user.passwordHash, profile: null, Agent: null, ApiToken: null, Document: null });
}
