// SQL for tools. `metadata` may hold secrets: it is stored sealed (AES-256-GCM) and read back only to run a tool.
import type { Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import { unknownReference } from '../http/errors.js';
import { boolean, columnMap } from '../lib/columns.js';
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
  /** Whether the sealed metadata holds `headers` (what a kind with `showsHasHeaders` answers instead of them). */
  hasHeaders: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A tool's row and the columns it is read from (links nest it: see links/store.ts). Never its metadata. */
export const TOOL_ROW = columnMap<ToolRow>({
  id: 'id',
  userId: 'user_id',
  name: 'name',
  type: 'type',
  description: 'description',
  hasHeaders: boolean('has_headers'),
  createdAt: 'created_at',
  updatedAt: 'updated_at',
});

/** 1 when `metadata.headers` is an object with at least one header (stored as has_headers). */
const hasHeaders = (metadata: Record<string, unknown>): number => {
  const headers = metadata.headers;
  return typeof headers === 'object' && headers !== null && Object.keys(headers).length > 0 ? 1 : 0;
};

export type ToolStore = ReturnType<typeof createToolStore>;

export function createToolStore(db: Db, sealer: Sealer) {
  const table = ownedTable(db, 'tools', TOOL_ROW);
  const insert = db.prepare(
    `INSERT INTO tools (id, user_id, name, type, description, metadata, has_headers, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     RETURNING ${TOOL_ROW.select('tools')}`,
  );
  const update = db.prepare(
    `UPDATE tools SET name = coalesce(?, name), type = coalesce(?, type), description = iif(?, ?, description), metadata = coalesce(?, metadata),
            has_headers = coalesce(?, has_headers), updated_at = ?
      WHERE id = ? AND user_id = ? RETURNING ${TOOL_ROW.select('tools')}`,
  );

  const selectTypeAndMetadata = db.prepare(`SELECT type, metadata FROM tools WHERE id = ? AND user_id = ?`);
  const selectAgentTools = db.prepare(
    `SELECT t.id, t.name, t.type, t.description, t.metadata, l.requires_approval AS requiresApproval FROM agent_tools l JOIN tools t ON t.id = l.tool_id
      WHERE l.agent_id = ? AND l.user_id = ? ORDER BY l.seq`,
  );
  const selectToolRecord = db.prepare(`SELECT id, name, type, description, metadata FROM tools WHERE id = ? AND user_id = ?`);
  const ownsAgent = db.prepare(`SELECT 1 FROM agents WHERE id = ? AND user_id = ?`).pluck();

  const { fromRow } = TOOL_ROW;
  const unseal = (sealed: string | null): Record<string, unknown> =>
    sealed ? (JSON.parse(sealer.open(sealed)) as Record<string, unknown>) : {};

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
    const raw = update.get(
      change.name ?? null,
      change.type ?? null,
      change.description === undefined ? 0 : 1,
      change.description ?? null,
      metadata,
      change.metadata === undefined ? null : hasHeaders(change.metadata),
      timestamp(),
      id,
      userId,
    ) as Record<string, unknown> | undefined;
    return raw && fromRow(raw);
  });

  return {
    get: table.get,
    seqOf: table.seqOf,
    list: table.list,
    /** Deletes the tool and (schema cascade) its agent-tool links. */
    delete: table.delete,

    /**
     * The tools linked to an agent, in link order, with their metadata unsealed (for running the
     * agent only, never for a response) and whether the link asks for approval of each call.
     */
    listForRun(userId: string, agentId: string): ToolRecord[] {
      type Raw = { id: string; name: string; type: string; description: string | null; metadata: string | null; requiresApproval: number };
      return (selectAgentTools.all(agentId, userId) as Raw[]).map((row) => ({
        id: row.id,
        name: row.name,
        type: row.type,
        description: row.description,
        metadata: unseal(row.metadata),
        requiresApproval: row.requiresApproval === 1,
      }));
    },

    /** One tool of the user with its metadata unsealed: for building its functions only, never for a response. */
    getRecord(userId: string, id: string): ToolRecord | undefined {
      const row = selectToolRecord.get(id, userId) as
        { id: string; name: string; type: string; description: string | null; metadata: string | null } | undefined;
      return row && { ...row, metadata: unseal(row.metadata) };
    },

    /** Creates the tool; a 422 when its metadata names an agent that is not the user's. */
    create(userId: string, input: ToolInput): ToolRow {
      checkAgentReferences(userId, input.type, input.metadata);
      const now = timestamp();
      const raw = insert.get(
        newId(),
        userId,
        input.name,
        input.type,
        input.description,
        sealer.seal(JSON.stringify(input.metadata)),
        hasHeaders(input.metadata),
        now,
        now,
      ) as Record<string, unknown>;
      return fromRow(raw);
    },

    /** Changes what `change` names (checked as on create, in one transaction); undefined when the user has no such tool. */
    update(userId: string, id: string, change: ToolChange): ToolRow | undefined {
      return updateInTransaction(userId, id, change);
    },
  };
}
