// The statements every per-user table needs (get one, page through, delete), prepared once.
// `table` and its column map are constants of the calling store, never client input.
import type { Db } from '../db.js';
import type { ColumnMap } from './columns.js';
import { toPage, type Page, type PageRequest } from './paging.js';

export interface OwnedTable<Row> {
  /** The caller's row with this id, or undefined (also when another user owns it). */
  get(userId: string, id: string): Row | undefined;
  /** The `seq` of the caller's row with this id: the keyset cursor of `list`. */
  seqOf(userId: string, id: string): number | undefined;
  /** One page of the caller's rows in creation order. */
  list(userId: string, page: PageRequest): Page<Row>;
  /** Deletes the caller's row; false when there was none. */
  delete(userId: string, id: string): boolean;
}

/** `row`: the table's column map (the SELECT list and how to read it). */
export function ownedTable<Row>(db: Db, table: string, row: ColumnMap<Row>): OwnedTable<Row> {
  const columns = row.select(table);
  const { fromRow } = row;
  const selectById = db.prepare(`SELECT ${columns} FROM ${table} WHERE id = ? AND user_id = ?`);
  const selectSeq = db.prepare(`SELECT seq FROM ${table} WHERE id = ? AND user_id = ?`).pluck();
  const selectPage = db.prepare(`SELECT ${columns} FROM ${table} WHERE user_id = ? AND seq > ? ORDER BY seq LIMIT ?`);
  const deleteById = db.prepare(`DELETE FROM ${table} WHERE id = ? AND user_id = ?`);

  return {
    get(userId, id) {
      const raw = selectById.get(id, userId) as Record<string, unknown> | undefined;
      return raw === undefined ? undefined : fromRow(raw);
    },
    seqOf(userId, id) {
      return selectSeq.get(id, userId) as number | undefined;
    },
    list(userId, { limit, afterSeq }) {
      const raws = selectPage.all(userId, afterSeq, limit + 1) as Record<string, unknown>[];
      return toPage(raws.map(fromRow), limit);
    },
    delete(userId, id) {
      return deleteById.run(id, userId).changes > 0;
    },
  };
}
