// SQL for tools. `metadata` may hold secrets: it is stored sealed (AES-256-GCM) and read back only to run a tool.
import type { Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import { unknownReference } from '../http/errors.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import { kindOf } from './kinds/index.js';
import type { ToolRecord } from './kinds/kind.js';
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

  const selectTypeAndMetadata = db.prepare(`SELECT type, metadata FROM tools WHERE id = ? AND user_id = ?`);
  const selectAgentTools = db.prepare(
    `SELECT t.id, t.name, t.type, t.description, t.metadata FROM agent_tools l JOIN tools t ON t.id = l.tool_id
      WHERE l.agent_id = ? AND l.user_id = ? ORDER BY l.seq`,
  );
  const ownsAgent = db.prepare(`SELECT 1 FROM agents WHERE id = ? AND user_id = ?`).pluck();

  const unseal = (sealed: string | null): Record<string, unknown> => (sealed ? (JSON.parse(sealer.open(sealed)) as Record<string, unknown>) : {});

  /** The agents a tool's kind names in its metadata (AGENT's `agentId`) must be the user's own, where named: else a 422. */
  function checkAgentReferences(userId: string, type: string, metadata: Record<string, unknown>): void {
    for (const field of kindOf(type)?.agentFields ?? []) {
      const agentId = metadata[field];
      if (agentId === undefined) continue;
      if (typeof agentId !== 'string' || !ownsAgent.get(agentId, userId)) throw unknownReference(`metadata.${field}`, 'agent');
    }
  }

  const updateInTransaction = db.transaction((userId: string, id: string, change: ToolChange): ToolRow | undefined => {
    const stored = selectTypeAndMetadata.get(id, userId) as { type: string; metadata: string | null } | undefined;
    if (!stored) return undefined;
    const type = change.type ?? stored.type;
    // Checked when the change gives the tool another type or new metadata; a rename is not.
    if (kindOf(type)?.agentFields && (type !== stored.type || change.metadata !== undefined)) {
      checkAgentReferences(userId, type, change.metadata ?? unseal(stored.metadata));
    }
    const metadata = change.metadata === undefined ? null : sealer.seal(JSON.stringify(change.metadata));
    return update.get(change.name ?? null, change.type ?? null, change.description === undefined ? 0 : 1, change.description ?? null, metadata, timestamp(), id, userId) as ToolRow | undefined;
  });

  return {
    get: table.get,
    seqOf: table.seqOf,
    list: table.list,
    /** Deletes the tool and (schema cascade) its agent-tool links. */
    delete: table.delete,

    /** The tools linked to an agent, in link order, with their metadata unsealed: for running the agent only, never for a response. */
    listForRun(userId: string, agentId: string): ToolRecord[] {
      type Raw = { id: string; name: string; type: string; description: string | null; metadata: string | null };
      return (selectAgentTools.all(agentId, userId) as Raw[]).map((row) => ({
        id: row.id,
        name: row.name,
        type: row.type,
        description: row.description,
        metadata: unseal(row.metadata),
      }));
    },

    /** Creates the tool; a 422 when its metadata names an agent that is not the user's. */
    create(userId: string, input: ToolInput): ToolRow {
      checkAgentReferences(userId, input.type, input.metadata);
      const now = timestamp();
      const row: ToolRow = { id: newId(), userId, name: input.name, type: input.type, description: input.description, createdAt: now, updatedAt: now };
      insert.run(row.id, userId, row.name, row.type, row.description, sealer.seal(JSON.stringify(input.metadata)), now, now);
      return row;
    },

    /** Changes what `change` names (checked as on create, in one transaction); undefined when the user has no such tool. */
    update(userId: string, id: string, change: ToolChange): ToolRow | undefined {
      return updateInTransaction(userId, id, change);
    },
  };
}
