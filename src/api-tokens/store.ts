// SQL for API tokens. Requests find their token by the SHA-256 digest of the secret only.
import type { Db } from '../db.js';
import { columnMap } from '../lib/columns.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import type { Page, PageRequest } from '../lib/paging.js';
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

const TOKEN_ROW = columnMap<ApiTokenRow>({
  id: 'id',
  userId: 'user_id',
  description: 'description',
  token: 'token',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  expiresAt: 'expires_at',
  lastUsedAt: 'last_used_at',
});
const COLUMNS = TOKEN_ROW.select('api_tokens');

/** The caller a token names, with what authentication checks of the token. */
export interface TokenCaller extends Caller {
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export type ApiTokenStore = ReturnType<typeof createApiTokenStore>;

export function createApiTokenStore(db: Db) {
  const table = ownedTable(db, 'api_tokens', TOKEN_ROW);
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
  const selectStanding = db.prepare(
    `SELECT t.expires_at AS expiresAt, u.disabled_at IS NOT NULL AS disabled
       FROM api_tokens t JOIN users u ON u.id = t.user_id
      WHERE t.id = ?`,
  );
  const selectDisabledOwner = db
    .prepare(`SELECT 1 FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_digest = ? AND u.disabled_at IS NOT NULL`)
    .pluck();
  const updateDescription = db.prepare(
    `UPDATE api_tokens SET description = ?, updated_at = ? WHERE id = ? AND user_id = ? RETURNING ${COLUMNS}`,
  );
  const touch = db.prepare(`UPDATE api_tokens SET last_used_at = ? WHERE id = ?`);
  const deleteReturning = db.prepare(`DELETE FROM api_tokens WHERE id = ? AND user_id = ? RETURNING ${COLUMNS}`);

  // lastUsedAt is written behind: a use is noted here and `flushTouches` writes the notes in one
  // transaction (the app calls it every few seconds and before closing). Written per request, the
  // first use of each token in a minute was a commit, with its fsync, on the read path. Every read
  // of a token in this process sees the noted value at once.
  const touches = new Map<string, string>();
  const withTouch = <Row extends { lastUsedAt: string | null } | undefined>(row: Row, id: string | undefined): Row => {
    const at = id === undefined ? undefined : touches.get(id);
    return at === undefined || row === undefined ? row : { ...row, lastUsedAt: at };
  };
  const flushInTransaction = db.transaction((entries: [string, string][]) => {
    for (const [id, at] of entries) touch.run(at, id);
  });

  return {
    get: (userId: string, id: string) => withTouch(table.get(userId, id), id),
    seqOf: table.seqOf,
    list(userId: string, page: PageRequest): Page<ApiTokenRow> {
      const listed = table.list(userId, page);
      return touches.size === 0 ? listed : { ...listed, rows: listed.rows.map((row) => withTouch(row, row.id)) };
    },

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
    createForSignIn(
      user: { id: string; passwordHash: string },
      input: { description: string; expiresAt: string },
    ): ApiTokenRow | undefined {
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
      const { changes } = insertForVerifiedUser.run(
        row.id,
        row.description,
        token,
        digestToken(token),
        now,
        now,
        row.expiresAt,
        user.id,
        user.passwordHash,
      );
      return changes === 1 ? row : undefined;
    },

    /** The caller a token secret belongs to, with the token's expiry; undefined for an unknown token. */
    findCaller(secret: string): TokenCaller | undefined {
      const found = selectCaller.get(digestToken(secret)) as TokenCaller | undefined;
      return found && withTouch(found, found.tokenId);
    },

    /** True when the secret is a token of a disabled account (which findCaller does not find). */
    isOfDisabledAccount(secret: string): boolean {
      return selectDisabledOwner.get(digestToken(secret)) !== undefined;
    },

    /** Whether the token `tokenId` still exists: its expiry and whether its account is disabled; undefined when it was revoked or its account deleted. */
    standingOf(tokenId: string): { expiresAt: string | null; disabled: boolean } | undefined {
      const row = selectStanding.get(tokenId) as { expiresAt: string | null; disabled: number } | undefined;
      return row && { expiresAt: row.expiresAt, disabled: row.disabled === 1 };
    },

    /** Notes that the token was used at `at` (written by the next `flushTouches`). */
    touch(tokenId: string, at: string): void {
      touches.set(tokenId, at);
    },

    /** Writes the noted uses in one transaction; returns how many. */
    flushTouches(): number {
      if (touches.size === 0) return 0;
      const entries = [...touches];
      flushInTransaction(entries);
      // Only what was written: nothing can note a use during the (synchronous) transaction.
      touches.clear();
      return entries.length;
    },

    update(userId: string, id: string, change: { description: string }): ApiTokenRow | undefined {
      return withTouch(updateDescription.get(change.description, timestamp(), id, userId) as ApiTokenRow | undefined, id);
    },

    /** Deletes (revokes) the token and returns it as it was. */
    delete(userId: string, id: string): ApiTokenRow | undefined {
      const deleted = withTouch(deleteReturning.get(id, userId) as ApiTokenRow | undefined, id);
      touches.delete(id);
      return deleted;
    },
  };
}
