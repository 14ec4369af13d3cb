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

/** What the caller changes of their own account: a new name, a new password hash (with the hash the current password was checked against). */
export interface OwnAccountChange {
  name?: string;
  password?: { hash: string; checked: string };
}

/** Whether an account may still act: `gone` when it was deleted, `disabled` while an operator has disabled it. */
export type AccountState = 'active' | 'disabled' | 'gone';

export function createUserStore(db: Db) {
  const insert = db.prepare(`INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`);
  const selectByEmail = db.prepare(`SELECT ${COLUMNS} FROM users WHERE email = ?`);
  const selectById = db.prepare(`SELECT ${COLUMNS} FROM users WHERE id = ?`);
  const selectDisabled = db.prepare(`SELECT disabled_at IS NOT NULL FROM users WHERE id = ?`).pluck();
  // A field given as null keeps its stored value: a change writes only what it changes.
  const update = db.prepare(
    `UPDATE users SET name = coalesce(?, name), password_hash = coalesce(?, password_hash), updated_at = ? WHERE id = ? RETURNING ${COLUMNS}`,
  );
  const remove = db.prepare(`DELETE FROM users WHERE id = ?`);
  const revokeOtherTokens = db.prepare(`DELETE FROM api_tokens WHERE user_id = ? AND id <> ?`);
  const tokenStillValid = db.prepare(`SELECT 1 FROM api_tokens WHERE id = ? AND user_id = ?`).pluck();
  const passwordHashOf = db.prepare(`SELECT password_hash FROM users WHERE id = ?`).pluck();
  // The caller's own account changes run after awaited password hashing: by then the token may have
  // been revoked, the account deleted or its password changed by another request. Each is checked
  // again inside the write transaction, which writes only the fields the request changes (a rename
  // made meanwhile stays).
  const updateOwnAccount = db.transaction(
    (id: string, tokenId: string, change: OwnAccountChange): UserRow | 'token_gone' | 'password_changed' => {
      if (!tokenStillValid.get(tokenId, id)) return 'token_gone';
      if (change.password !== undefined) {
        if (passwordHashOf.get(id) !== change.password.checked) return 'password_changed';
        revokeOtherTokens.run(id, tokenId);
      }
      return update.get(change.name ?? null, change.password?.hash ?? null, timestamp(), id) as UserRow;
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
  const deletedHooks: ((id: string) => void)[] = [];
  const deleted = (id: string) => {
    for (const hook of deletedHooks) hook(id);
  };

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

    /** Whether the account may still act, read anew each time (an admin script may have changed it): one read by its unique id. */
    accountState(id: string): AccountState {
      const disabled = selectDisabled.get(id) as number | undefined;
      return disabled === undefined ? 'gone' : disabled ? 'disabled' : 'active';
    },

    /** Adds a hook told of each account this process deletes, once the deletion is committed. */
    onDeleted(hook: (id: string) => void): void {
      deletedHooks.push(hook);
    },

    /** Changes name and password hash; with `revokeTokensExcept`, also revokes every other token. */
    update(id: string, change: { name: string; passwordHash: string }, revokeTokensExcept?: string): UserRow {
      return updateAccount(id, change, revokeTokensExcept);
    },

    /** Deletes the user and, through the schema's cascades, everything the user owns. */
    delete(id: string): void {
      if (remove.run(id).changes > 0) deleted(id);
    },

    /**
     * The caller changes their own account through token `tokenId`: only the fields `change` gives.
     * A new password also revokes every other token. 'token_gone' when that token is gone by now
     * (revoked, or the account deleted); 'password_changed' when the password hash is no longer the
     * one the current password was checked against.
     */
    updateOwnAccount(id: string, tokenId: string, change: OwnAccountChange): UserRow | 'token_gone' | 'password_changed' {
      return updateOwnAccount(id, tokenId, change);
    },

    /** The caller deletes their own account through token `tokenId`; false when that token is gone by now. */
    deleteOwnAccount(id: string, tokenId: string): boolean {
      if (!deleteOwnAccount(id, tokenId)) return false;
      deleted(id);
      return true;
    },
  };
}
