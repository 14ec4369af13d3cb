// SQL for tools. `metadata` may hold secrets: it is stored sealed (AES-256-GCM) and never read back out.
import type { Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import type { Tool, ToolChange, ToolInput } from './schema.js';

export interface ToolRow {
  id: string;
  userId: string;
  name: string;
  type: Tool['type'];
  description: string | null;
  createdAt: string;
  updatedAt: string;
}

export const TOOL_COLUMNS = 'id, user_id AS userId, name, type, description, created_at AS createdAt, updated_at AS updatedAt';

/** SQL for the tool `alias` as one JSON object shaped like ToolRow (for nesting in other rows). */
export const toolJsonSql = (alias: string) =>
  `json_object('id', ${alias}.id, 'userId', ${alias}.user_id, 'name', ${alias}.name, 'type', ${alias}.type,
    'description', ${alias}.description, 'createdAt', ${alias}.created_at, 'updatedAt', ${alias}.updated_at)`;

/** Reads a tool built by toolJsonSql. */
export const toolFromJson = (raw: Record<string, unknown>): ToolRow => ({
  id: raw.id as string,
  userId: raw.userId as string,
  name: raw.name as string,
  type: raw.type as ToolRow['type'],
  description: (raw.description as string | null) ?? null,
  createdAt: raw.createdAt as string,
  updatedAt: raw.updatedAt as string,
});

export type ToolStore = ReturnType<typeof createToolStore>;

export function createToolStore(db: Db, sealer: Sealer) {
  const table = ownedTable<ToolRow>(db, 'tools', TOOL_COLUMNS);
  const insert = db.prepare(
    `INSERT INTO tools (id, user_id, name, type, description, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare(
    `UPDATE tools SET name = coalesce(?, name), type = coalesce(?, type), description = iif(?, ?, description), metadata = coalesce(?, metadata), updated_at = ?
      WHERE id = ? AND user_id = ? RETURNING ${TOOL_COLUMNS}`,
  );

  return {
    get: table.get,
    seqOf: table.seqOf,
    list: table.list,
    /** Deletes the tool and (schema cascade) its agent-tool links. */
    delete: table.delete,

    create(userId: string, input: ToolInput): ToolRow {
      const now = timestamp();
      const row: ToolRow = { id: newId(), userId, name: input.name, type: input.type, description: input.description, createdAt: now, updatedAt: now };
      insert.run(row.id, userId, row.name, row.type, row.description, sealer.seal(JSON.stringify(input.metadata)), now, now);
      return row;
    },

    /** Changes what `change` names (one statement); undefined when the user has no such tool. */
    update(userId: string, id: string, change: ToolChange): ToolRow | undefined {
      const metadata = change.metadata === undefined ? null : sealer.seal(JSON.stringify(change.metadata));
      return update.get(change.name ?? null, change.type ?? null, change.description === undefined ? 0 : 1, change.description ?? null, metadata, timestamp(), id, userId) as ToolRow | undefined;
    },
  };
}
