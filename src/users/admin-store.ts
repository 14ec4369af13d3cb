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

export type UserAdminStore = ReturnType<typeof createUserAdminStore>;

export function createUserAdminStore(db: Db) {
  const count = db.prepare('SELECT count(*) FROM users').pluck();
  const list = db.prepare(
    `SELECT u.id, u.email, u.name, u.created_at AS createdAt, u.disabled_at AS disabledAt,
            (SELECT count(*) FROM api_tokens t WHERE t.user_id = u.id) AS tokens
       FROM users u ORDER BY u.seq`,
  );
  const disable = db.prepare(`UPDATE users SET disabled_at = ?, updated_at = ? WHERE id = ? AND disabled_at IS NULL`);
  const enable = db.prepare(`UPDATE users SET disabled_at = NULL, updated_at = ? WHERE id = ? AND disabled_at IS NOT NULL`);
  // Every table with a user_id column holds records of one user (the schema's rule), whatever tables
  // later versions add. Names come from sqlite_master, quoted as identifiers: never client input.
  const ownedTables = () =>
    (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).pluck().all() as string[]).filter(
      (name) => (db.prepare(`SELECT count(*) FROM pragma_table_info(?) WHERE name = 'user_id'`).pluck().get(name) as number) > 0,
    );

  return {
    countUsers(): number {
      return count.get() as number;
    },

    listUsers(): UserListRow[] {
      return list.all() as UserListRow[];
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
        const rows = db.prepare(`SELECT count(*) FROM "${table.replaceAll('"', '""')}" WHERE user_id = ?`).pluck().get(id) as number;
        if (rows > 0) counts[table] = rows;
      }
      return counts;
    },
  };
}
