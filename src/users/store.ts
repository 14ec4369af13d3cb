// SQL for user accounts.
import type { Db } from '../db.js';
import { columnMap } from '../lib/columns.js';
import { newId, timestamp } from '../lib/ids.js';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  passwordHash: string;
  createdAt: string;
  updatedAt: string;
  /** Set while an operator has disabled the account (user:disable): no sign-in, its tokens refused. */
  disabledAt: string | null;
}

const USER_ROW = columnMap<UserRow>({
  id: 'id',
  email: 'email',
  name: 'name',
  passwordHash: 'password_hash',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  disabledAt: 'disabled_at',
});
const COLUMNS = USER_ROW.select('users');

export type UserStore = ReturnType<typeof createUserStore>;

export function createUserStore(db: Db) {
  const insert = db.prepare(`INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`);
  const selectByEmail = db.prepare(`SELECT ${COLUMNS} FROM users WHERE email = ?`);
  const selectById = db.prepare(`SELECT ${COLUMNS} FROM users WHERE id = ?`);
  const update = db.prepare(`UPDATE users SET name = ?, password_hash = ?, updated_at = ? WHERE id = ? RETURNING ${COLUMNS}`);
  const remove = db.prepare(`DELETE FROM users WHERE id = ?`);
  const revokeOtherTokens = db.prepare(`DELETE FROM api_tokens WHERE user_id = ? AND id <> ?`);
  const tokenStillValid = db.prepare(`SELECT 1 FROM api_tokens WHERE id = ? AND user_id = ?`).pluck();
  // The caller's own account changes run after awaited password hashing: by then the token may have
  // been revoked or the account deleted. Both are checked again inside the write transaction.
  const updateOwnAccount = db.transaction(
    (id: string, tokenId: string, change: { name: string; passwordHash: string }, revokeOthers: boolean): UserRow | undefined => {
      if (!tokenStillValid.get(tokenId, id)) return undefined;
      if (revokeOthers) revokeOtherTokens.run(id, tokenId);
      return update.get(change.name, change.passwordHash, timestamp(), id) as UserRow;
    },
  );
  const deleteOwnAccount = db.transaction((id: string, tokenId: string): boolean => {
    if (!tokenStillValid.get(tokenId, id)) return false;
    remove.run(id);
    return true;
  });
  const updateAccount = db.transaction((id: string, change: { name: string; passwordHash: string }, keepTokenId?: string) => {
    if (keepTokenId !== undefined) revokeOtherTokens.run(id, keepTokenId);
    return update.get(change.name, change.passwordHash, timestamp(), id) as UserRow;
  });

  return {
    /** Creates a user; a clash on email raises SQLITE_CONSTRAINT_UNIQUE (answered as 409). */
    create(input: { email: string; name: string; passwordHash: string }): UserRow {
      const now = timestamp();
      const user = {
        id: newId(),
        email: input.email,
        name: input.name,
        passwordHash: input.passwordHash,
        createdAt: now,
        updatedAt: now,
        disabledAt: null,
      };
      insert.run(user.id, user.email, user.name, user.passwordHash, now, now);
      return user;
    },

    getByEmail(email: string): UserRow | undefined {
      return selectByEmail.get(email) as UserRow | undefined;
    },

    get(id: string): UserRow | undefined {
      return selectById.get(id) as UserRow | undefined;
    },

    /** Changes name and password hash; with `revokeTokensExcept`, also revokes every other token. */
    update(id: string, change: { name: string; passwordHash: string }, revokeTokensExcept?: string): UserRow {
      return updateAccount(id, change, revokeTokensExcept);
    },

    /** Deletes the user and, through the schema's cascades, everything the user owns. */
    delete(id: string): void {
      remove.run(id);
    },

    /**
     * The caller changes their own account through token `tokenId`; `revokeOthers` revokes every
     * other token. Undefined when that token is gone by now (revoked, or the account deleted).
     */
    updateOwnAccount(
      id: string,
      tokenId: string,
      change: { name: string; passwordHash: string },
      revokeOthers: boolean,
    ): UserRow | undefined {
      return updateOwnAccount(id, tokenId, change, revokeOthers);
    },

    /** The caller deletes their own account through token `tokenId`; false when that token is gone by now. */
    deleteOwnAccount(id: string, tokenId: string): boolean {
      return deleteOwnAccount(id, tokenId);
    },
  };
}
