// SQL for tools. `metadata` may hold secrets: it is stored sealed (AES-256-GCM) and never read back out.
import type { Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import { unknownReference } from '../http/errors.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import type { ToolInput } from './schema.js';
import type { ToolRecord } from './runtime/web-tools.js';

export interface ToolRow {
  id: string;
  userId: string;
  name: string;
  type: string;
  createdAt: string;
  updatedAt: string;
}

export const TOOL_COLUMNS = 'id, user_id AS userId, name, type, created_at AS createdAt, updated_at AS updatedAt';

/** SQL for the tool `alias` as one JSON object shaped like ToolRow (for nesting in other rows). */
export const toolJsonSql = (alias: string) =>
  `json_object('id', ${alias}.id, 'userId', ${alias}.user_id, 'name', ${alias}.name, 'type', ${alias}.type,
    'createdAt', ${alias}.created_at, 'updatedAt', ${alias}.updated_at)`;

export type ToolStore = ReturnType<typeof createToolStore>;

export function createToolStore(db: Db, sealer: Sealer) {
  const table = ownedTable<ToolRow>(db, 'tools', TOOL_COLUMNS);
  const insert = db.prepare(
    `INSERT INTO tools (id, user_id, name, type, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare(
    `UPDATE tools SET name = ?, type = ?, metadata = coalesce(?, metadata), updated_at = ?
      WHERE id = ? AND user_id = ? RETURNING ${TOOL_COLUMNS}`,
  );

  const selectMetadata = db.prepare(`SELECT metadata FROM tools WHERE id = ? AND user_id = ?`).pluck();
  const selectAgentTools = db.prepare(
    `SELECT t.id, t.name, t.type, t.metadata FROM agent_tools l JOIN tools t ON t.id = l.tool_id
      WHERE l.agent_id = ? AND l.user_id = ? ORDER BY l.seq`,
  );
  const ownsAgent = db.prepare(`SELECT 1 FROM agents WHERE id = ? AND user_id = ?`).pluck();

  /** An AGENT tool must name one of the user's own agents (when it names one at all): else a 422. */
  function checkAgentReference(userId: string, type: string, metadata: Record<string, unknown>): void {
    if (type !== 'AGENT' || metadata.agentId === undefined) return;
    const agentId = metadata.agentId;
    if (typeof agentId !== 'string' || !ownsAgent.get(agentId, userId)) throw unknownReference('metadata.agentId', 'agent');
  }

  function readMetadata(userId: string, id: string): Record<string, unknown> {
    const sealed = selectMetadata.get(id, userId) as string | null | undefined;
    return sealed ? (JSON.parse(sealer.open(sealed)) as Record<string, unknown>) : {};
  }

  const updateInTransaction = db.transaction(
    (userId: string, id: string, next: { name: string; type: string; metadata?: Record<string, unknown> }, typeChanged: boolean) => {
      if (next.type === 'AGENT' && (typeChanged || next.metadata !== undefined)) {
        checkAgentReference(userId, next.type, next.metadata ?? readMetadata(userId, id));
      }
      const metadata = next.metadata === undefined ? null : sealer.seal(JSON.stringify(next.metadata));
      return update.get(next.name, next.type, metadata, timestamp(), id, userId) as ToolRow | undefined;
    },
  );

  return {
    getTool: table.get,
    seqOfTool: table.seqOf,
    listTools: table.list,
    /** Deletes the tool and (schema cascade) its agent-tool links. */
    deleteTool: table.delete,

    /** The tools linked to an agent, in link order, with their metadata unsealed: for running the agent only, never for a response. */
    listToolsForRun(userId: string, agentId: string): ToolRecord[] {
      return (selectAgentTools.all(agentId, userId) as { id: string; name: string; type: string; metadata: string | null }[]).map((row) => ({
        id: row.id,
        name: row.name,
        type: row.type,
        description: null,
        metadata: row.metadata ? (JSON.parse(sealer.open(row.metadata)) as Record<string, unknown>) : {},
      }));
    },

    /** Creates the tool; a 422 when an AGENT tool names an agent that is not the user's. */
    createTool(userId: string, input: ToolInput): ToolRow {
      checkAgentReference(userId, input.type, input.metadata);
      const now = timestamp();
      const row: ToolRow = { id: newId(), userId, name: input.name, type: input.type, createdAt: now, updatedAt: now };
      insert.run(row.id, userId, row.name, row.type, sealer.seal(JSON.stringify(input.metadata)), now, now);
      return row;
    },

    /**
     * Sets name and type; replaces metadata only when a new one is given. A change that makes the
     * tool an AGENT tool, or gives an AGENT tool new metadata, is checked as on create (422).
     */
    updateTool(userId: string, id: string, next: { name: string; type: string; metadata?: Record<string, unknown> }, typeChanged = false): ToolRow | undefined {
      return updateInTransaction(userId, id, next, typeChanged);
    },
  };
}
