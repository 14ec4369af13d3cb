// SQL for API tokens. Requests find their token by the SHA-256 digest of the secret only.
import type { Db } from '../db.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import { digestToken, newTokenSecret } from './secrets.js';
import type { Caller } from '../http/context.js';

export interface ApiTokenRow {
  id: string;
  userId: string;
  description: string;
  token: string;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

const COLUMNS =
  'id, user_id AS userId, description, token, created_at AS createdAt, updated_at AS updatedAt, expires_at AS expiresAt, last_used_at AS lastUsedAt';

/** The caller a token names, with what authentication checks of the token. */
export interface TokenCaller extends Caller {
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export type ApiTokenStore = ReturnType<typeof createApiTokenStore>;

export function createApiTokenStore(db: Db) {
  const table = ownedTable<ApiTokenRow>(db, 'api_tokens', COLUMNS);
  const insert = db.prepare(
    `INSERT INTO api_tokens (id, user_id, description, token, token_digest, created_at, updated_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // Sign-in awaits the password hash: by then the password may have changed or the account gone.
  // The token is only written while the user still has the hash that was verified.
  const insertForVerifiedUser = db.prepare(
    `INSERT INTO api_tokens (id, user_id, description, token, token_digest, created_at, updated_at, expires_at)
     SELECT ?, id, ?, ?, ?, ?, ?, ? FROM users WHERE id = ? AND password_hash = ? AND disabled_at IS NULL`,
  );
  const selectCaller = db.prepare(
    `SELECT u.id, u.email, u.name, u.created_at AS createdAt, u.updated_at AS updatedAt,
            t.id AS tokenId, t.expires_at AS expiresAt, t.last_used_at AS lastUsedAt
       FROM api_tokens t JOIN users u ON u.id = t.user_id
      WHERE t.token_digest = ? AND u.disabled_at IS NULL`,
  );
  const updateDescription = db.prepare(
    `UPDATE api_tokens SET description = ?, updated_at = ? WHERE id = ? AND user_id = ? RETURNING ${COLUMNS}`,
  );
  const touch = db.prepare(`UPDATE api_tokens SET last_used_at = ? WHERE id = ?`);
  const deleteReturning = db.prepare(`DELETE FROM api_tokens WHERE id = ? AND user_id = ? RETURNING ${COLUMNS}`);

  return {
    get: table.get,
    seqOf: table.seqOf,
    list: table.list,

    /** Issues a new token for the user; the secret is returned once here and kept for later reads. */
    create(userId: string, input: { description: string; expiresAt?: string | null }): ApiTokenRow {
      const now = timestamp();
      const token = newTokenSecret();
      const row: ApiTokenRow = {
        id: newId(),
        userId,
        description: input.description,
        token,
        createdAt: now,
        updatedAt: now,
        expiresAt: input.expiresAt ?? null,
        lastUsedAt: null,
      };
      insert.run(row.id, userId, row.description, token, digestToken(token), now, now, row.expiresAt);
      return row;
    },

    /**
     * Issues a sign-in token, but only while `user` still has the password hash that was verified;
     * undefined when the password changed, or the account was deleted or disabled, since.
     */
    createForSignIn(user: { id: string; passwordHash: string }, input: { description: string; expiresAt: string }): ApiTokenRow | undefined {
      const now = timestamp();
      const token = newTokenSecret();
      const row: ApiTokenRow = {
        id: newId(),
        userId: user.id,
        description: input.description,
        token,
        createdAt: now,
        updatedAt: now,
        expiresAt: input.expiresAt,
        lastUsedAt: null,
      };
      const { changes } = insertForVerifiedUser.run(row.id, row.description, token, digestToken(token), now, now, row.expiresAt, user.id, user.passwordHash);
      return changes === 1 ? row : undefined;
    },

    /** The caller a token secret belongs to, with the token's expiry; undefined for an unknown token. */
    findCaller(secret: string): TokenCaller | undefined {
      return selectCaller.get(digestToken(secret)) as TokenCaller | undefined;
    },

    /** Records that the token was used at `at`. */
    touch(tokenId: string, at: string): void {
      touch.run(at, tokenId);
    },

    update(userId: string, id: string, change: { description: string }): ApiTokenRow | undefined {
      return updateDescription.get(change.description, timestamp(), id, userId) as ApiTokenRow | undefined;
    },

    /** Deletes (revokes) the token and returns it as it was. */
    delete(userId: string, id: string): ApiTokenRow | undefined {
      return deleteReturning.get(id, userId) as ApiTokenRow | undefined;
    },
  };
}
