// SQL for the operator's user administration (the admin scripts and the start-up line): listing
// accounts, disabling and enabling them, and counting what an account owns before it is deleted.
import type { Db } from '../db.js';
import { timestamp } from '../lib/ids.js';

export interface UserListRow {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  disabledAt: string | null;
  /** API tokens, sign-in tokens included. */
  tokens: number;
}

export interface TokenListRow {
  id: string;
  description: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export interface TokenOwnerRow {
  id: string;
  description: string;
  userId: string;
  email: string;
}

export type UserAdminStore = ReturnType<typeof createUserAdminStore>;

export function createUserAdminStore(db: Db) {
  const any = db.prepare('SELECT 1 FROM users LIMIT 1').pluck();
  const list = db.prepare(
    `SELECT u.id, u.email, u.name, u.created_at AS createdAt, u.disabled_at AS disabledAt,
            (SELECT count(*) FROM api_tokens t WHERE t.user_id = u.id) AS tokens
       FROM users u ORDER BY u.seq`,
  );
  const byEmail = db.prepare(
    `SELECT id, email, name, created_at AS createdAt, disabled_at AS disabledAt,
            (SELECT count(*) FROM api_tokens t WHERE t.user_id = users.id) AS tokens
       FROM users WHERE email = ?`,
  );
  const tokensOf = db.prepare(
    `SELECT id, description, created_at AS createdAt, expires_at AS expiresAt, last_used_at AS lastUsedAt
       FROM api_tokens WHERE user_id = ? ORDER BY seq`,
  );
  const tokenById = db.prepare(
    `SELECT t.id, t.description, t.user_id AS userId, u.email FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = ?`,
  );
  const deleteToken = db.prepare('DELETE FROM api_tokens WHERE id = ?');
  const deleteTokensOf = db.prepare('DELETE FROM api_tokens WHERE user_id = ?');
  const deleteUser = db.prepare('DELETE FROM users WHERE id = ?');
  const disable = db.prepare(`UPDATE users SET disabled_at = ?, updated_at = ? WHERE id = ? AND disabled_at IS NULL`);
  const enable = db.prepare(`UPDATE users SET disabled_at = NULL, updated_at = ? WHERE id = ? AND disabled_at IS NOT NULL`);
  // Every table with a user_id column holds records of one user (the schema's rule), whatever tables
  // later versions add. Names come from sqlite_master, quoted as identifiers: never client input.
  const ownedTables = () =>
    (
      db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).pluck().all() as string[]
    ).filter((name) => (db.prepare(`SELECT count(*) FROM pragma_table_info(?) WHERE name = 'user_id'`).pluck().get(name) as number) > 0);

  return {
    /** Whether there is any user: one row read, where counting them reads them all. */
    hasUsers(): boolean {
      return any.get() !== undefined;
    },

    listUsers(): UserListRow[] {
      return list.all() as UserListRow[];
    },

    /** The user with this email (any case), or undefined. */
    findUserByEmail(email: string): UserListRow | undefined {
      return byEmail.get(email) as UserListRow | undefined;
    },

    listTokensOf(userId: string): TokenListRow[] {
      return tokensOf.all(userId) as TokenListRow[];
    },

    /** A token by its id, whoever owns it, with its owner's email; undefined when there is none. */
    findToken(tokenId: string): TokenOwnerRow | undefined {
      return tokenById.get(tokenId) as TokenOwnerRow | undefined;
    },

    /** Revokes (deletes) one token; false when it did not exist. */
    revokeToken(tokenId: string): boolean {
      return deleteToken.run(tokenId).changes > 0;
    },

    /** Revokes every token of the user; returns how many there were. */
    revokeAllTokensOf(userId: string): number {
      return deleteTokensOf.run(userId).changes;
    },

    /**
     * Deletes the user and, through the schema's cascades, everything the user owns (chunks of the
     * user's documents are swept in the background by the running service). False when already gone.
     */
    deleteUser(id: string): boolean {
      return deleteUser.run(id).changes > 0;
    },

    /** Disables (true) or enables (false) the account; false when it already was so. */
    setUserDisabled(id: string, disabled: boolean): boolean {
      const now = timestamp();
      return (disabled ? disable.run(now, now, id) : enable.run(now, id)).changes > 0;
    },

    /** How many records of each kind the user owns: table name → rows (tables with none left out). */
    countOwnedRecords(id: string): Record<string, number> {
      const counts: Record<string, number> = {};
      for (const table of ownedTables()) {
        const rows = db
          .prepare(`SELECT count(*) FROM "${table.replaceAll('"', '""')}" WHERE user_id = ?`)
          .pluck()
          .get(id) as number;
        if (rows > 0) counts[table] = rows;
      }
      return counts;
    },
  };
}
