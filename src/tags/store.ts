// SQL for tags. Names are unique per user whatever their case (a UNIQUE index in schema.sql).
import type { Db } from '../db.js';
import { conflict } from '../http/errors.js';
import { columnMap } from '../lib/columns.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import { isUniqueViolation } from '../lib/sqlite.js';

export interface TagRow {
  id: string;
  userId: string;
  name: string;
  color: string;
  createdAt: string;
  updatedAt: string;
}

/** A tag's row and the columns it is read from (agents nest it: see agents/store.ts). */
export const TAG_ROW = columnMap<TagRow>({
  id: 'id',
  userId: 'user_id',
  name: 'name',
  color: 'color',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
});

export type TagStore = ReturnType<typeof createTagStore>;

/** Runs a write, answering a name clash as 409. */
function uniqueName<T>(write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('You already have a tag with this name.');
    throw error;
  }
}

export function createTagStore(db: Db) {
  const table = ownedTable(db, 'tags', TAG_ROW);
  const insert = db.prepare(`INSERT INTO tags (id, user_id, name, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`);
  const update = db.prepare(
    `UPDATE tags SET name = coalesce(?, name), color = coalesce(?, color), updated_at = ? WHERE id = ? AND user_id = ? RETURNING ${TAG_ROW.select('tags')}`,
  );

  return {
    get: table.get,
    seqOf: table.seqOf,
    list: table.list,
    /** Deletes the tag; the schema removes it from every agent's tags. */
    delete: table.delete,

    create(userId: string, input: { name: string; color: string }): TagRow {
      const now = timestamp();
      const row: TagRow = { id: newId(), userId, name: input.name, color: input.color, createdAt: now, updatedAt: now };
      uniqueName(() => insert.run(row.id, userId, row.name, row.color, now, now));
      return row;
    },

    /** Changes what `change` names (one statement); undefined when the user has no such tag. */
    update(userId: string, id: string, change: { name?: string; color?: string }): TagRow | undefined {
      return uniqueName(() => update.get(change.name ?? null, change.color ?? null, timestamp(), id, userId) as TagRow | undefined);
    },
  };
}
