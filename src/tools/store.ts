// SQL for tools. `metadata` may hold secrets: it is stored sealed (AES-256-GCM) and never read back out.
import type { Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import type { ToolInput } from './schema.js';

export interface ToolRow {
  id: string;
  userId: string;
  name: string;
  type: string;
  description: string | null;
  createdAt: string;
  updatedAt: string;
}

export const TOOL_COLUMNS = 'id, user_id AS userId, name, type, description, created_at AS createdAt, updated_at AS updatedAt';

/** SQL for the tool `alias` as one JSON object shaped like ToolRow (for nesting in other rows). */
export const toolJsonSql = (alias: string) =>
  `json_object('id', ${alias}.id, 'userId', ${alias}.user_id, 'name', ${alias}.name, 'type', ${alias}.type,
    'description', ${alias}.description, 'createdAt', ${alias}.created_at, 'updatedAt', ${alias}.updated_at)`;

export type ToolStore = ReturnType<typeof createToolStore>;

export function createToolStore(db: Db, sealer: Sealer) {
  const table = ownedTable<ToolRow>(db, 'tools', TOOL_COLUMNS);
  const insert = db.prepare(
    `INSERT INTO tools (id, user_id, name, type, description, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare(
    `UPDATE tools SET name = ?, type = ?, description = ?, metadata = coalesce(?, metadata), updated_at = ?
      WHERE id = ? AND user_id = ? RETURNING ${TOOL_COLUMNS}`,
  );

  return {
    getTool: table.get,
    seqOfTool: table.seqOf,
    listTools: table.list,
    /** Deletes the tool and (schema cascade) its agent-tool links. */
    deleteTool: table.delete,

    createTool(userId: string, input: ToolInput): ToolRow {
      const now = timestamp();
      const row: ToolRow = { id: newId(), userId, name: input.name, type: input.type, description: input.description, createdAt: now, updatedAt: now };
      insert.run(row.id, userId, row.name, row.type, row.description, sealer.seal(JSON.stringify(input.metadata)), now, now);
      return row;
    },

    /** Sets name, type and description; replaces metadata only when a new one is given. */
    updateTool(
      userId: string,
      id: string,
      next: { name: string; type: string; description: string | null; metadata?: Record<string, unknown> },
    ): ToolRow | undefined {
      const metadata = next.metadata === undefined ? null : sealer.seal(JSON.stringify(next.metadata));
      return update.get(next.name, next.type, next.description, metadata, timestamp(), id, userId) as ToolRow | undefined;
    },
  };
}
