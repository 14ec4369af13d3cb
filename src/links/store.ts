// SQL for link records between an agent and another of the user's records: agent-documents and
// agent-tools share this shape (one table each, see schema.sql).
import type { Db } from '../db.js';
import { conflict, unknownReference } from '../http/errors.js';
import { newId, timestamp } from '../lib/ids.js';
import { toPage, type Page, type PageRequest } from '../lib/paging.js';
import { isUniqueViolation } from '../lib/sqlite.js';
import { boolean, columnMap, json, type ColumnMap } from '../lib/columns.js';
import { AGENT_BRIEF_ROW, type AgentBrief } from '../agents/store.js';
import { DOCUMENT_ROW, type DocumentRow } from '../documents/store.js';
import { TOOL_ROW, type ToolRow } from '../tools/store.js';

export interface LinkRow<Target> {
  id: string;
  userId: string;
  agentId: string;
  targetId: string;
  createdAt: string;
  updatedAt: string;
  /** Agent-tool links: the model's calls of the tool wait for a person's approval (always false for documents). */
  requiresApproval: boolean;
  agent: AgentBrief;
  target: Target;
}

/** What differs between the link kinds; all of it constants of this codebase. */
export interface LinkKind<Target> {
  table: 'agent_documents' | 'agent_tools';
  targetTable: 'documents' | 'tools';
  targetColumn: 'document_id' | 'tool_id';
  /** The body field / query filter naming the target (`documentId`, `toolId`). */
  targetField: 'documentId' | 'toolId';
  /** What a client calls the target, for messages. */
  targetName: string;
  /** The target's row (nested in the link as JSON). */
  targetRow: ColumnMap<Target>;
  /** The link has `requires_approval` (agent-tools). */
  approval: boolean;
}

/** List filters: by agent and/or by target (`documentId` or `toolId`). */
export type LinkFilter = Partial<Record<'agentId' | 'documentId' | 'toolId', string>>;

/** A new link: the agent and the target (`documentId` or `toolId`). */
export type LinkInput = { agentId: string; requiresApproval?: boolean } & Partial<Record<'documentId' | 'toolId', string>>;

/** What PATCH changes of a link (agent-tools only). */
export interface LinkChange {
  requiresApproval?: boolean;
}

export type LinkStore<Target> = ReturnType<typeof createLinkStore<Target>>;

/** Links of agents to documents (`/agent-documents`). */
export const createAgentDocumentStore = (db: Db) =>
  createLinkStore<DocumentRow>(db, {
    table: 'agent_documents',
    targetTable: 'documents',
    targetColumn: 'document_id',
    targetField: 'documentId',
    targetName: 'document',
    targetRow: DOCUMENT_ROW,
    approval: false,
  });

/** Links of agents to tools (`/agent-tools`). */
export const createAgentToolStore = (db: Db) =>
  createLinkStore<ToolRow>(db, {
    table: 'agent_tools',
    targetTable: 'tools',
    targetColumn: 'tool_id',
    targetField: 'toolId',
    targetName: 'tool',
    targetRow: TOOL_ROW,
    approval: true,
  });

function createLinkStore<Target>(db: Db, kind: LinkKind<Target>) {
  const { table, targetTable, targetColumn } = kind;
  // The link `l` with its agent `a` and its target `x` (joined in `from`) nested as JSON.
  const linkRow = columnMap<LinkRow<Target>>({
    id: 'id',
    userId: 'user_id',
    agentId: 'agent_id',
    targetId: targetColumn,
    createdAt: 'created_at',
    updatedAt: 'updated_at',
    requiresApproval: boolean((l) => (kind.approval ? `${l}.requires_approval` : '0')),
    agent: json(() => AGENT_BRIEF_ROW.jsonSql('a')),
    target: json(() => kind.targetRow.jsonSql('x')),
  });
  const columns = linkRow.select('l');
  const from = `${table} l JOIN agents a ON a.id = l.agent_id JOIN ${targetTable} x ON x.id = l.${targetColumn}`;

  const selectById = db.prepare(`SELECT ${columns} FROM ${from} WHERE l.id = ? AND l.user_id = ?`);
  const selectSeq = db.prepare(`SELECT seq FROM ${table} WHERE id = ? AND user_id = ?`).pluck();
  const selectPage = db.prepare(
    `SELECT ${columns} FROM ${from}
      WHERE l.user_id = @userId AND l.seq > @afterSeq
        AND (@agentId IS NULL OR l.agent_id = @agentId) AND (@targetId IS NULL OR l.${targetColumn} = @targetId)
      ORDER BY l.seq LIMIT @limit`,
  );
  const insert = db.prepare(
    kind.approval
      ? `INSERT INTO ${table} (id, user_id, agent_id, ${targetColumn}, created_at, updated_at, requires_approval) VALUES (?, ?, ?, ?, ?, ?, ?)`
      : `INSERT INTO ${table} (id, user_id, agent_id, ${targetColumn}, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const update = kind.approval
    ? db.prepare(`UPDATE ${table} SET requires_approval = coalesce(?, requires_approval), updated_at = ? WHERE id = ? AND user_id = ?`)
    : undefined;
  const remove = db.prepare(`DELETE FROM ${table} WHERE id = ? AND user_id = ?`);
  const ownsAgent = db.prepare(`SELECT 1 FROM agents WHERE id = ? AND user_id = ?`).pluck();
  const ownsTarget = db.prepare(`SELECT 1 FROM ${targetTable} WHERE id = ? AND user_id = ?`).pluck();

  const { fromRow } = linkRow;

  function get(userId: string, id: string): LinkRow<Target> | undefined {
    const raw = selectById.get(id, userId) as Record<string, unknown> | undefined;
    return raw === undefined ? undefined : fromRow(raw);
  }

  const createInTransaction = db.transaction((userId: string, agentId: string, targetId: string, requiresApproval: boolean): string => {
    if (!ownsAgent.get(agentId, userId)) throw unknownReference('agentId', 'agent');
    if (!ownsTarget.get(targetId, userId)) throw unknownReference(kind.targetField, kind.targetName);
    const id = newId();
    const now = timestamp();
    try {
      if (kind.approval) insert.run(id, userId, agentId, targetId, now, now, requiresApproval ? 1 : 0);
      else insert.run(id, userId, agentId, targetId, now, now);
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`This agent is already linked to this ${kind.targetName}.`);
      throw error;
    }
    return id;
  });

  return {
    get,
    seqOf: (userId: string, id: string) => selectSeq.get(id, userId) as number | undefined,

    /** One page of the user's links, optionally only those of one agent and/or one target. */
    list(userId: string, page: PageRequest, filter: LinkFilter): Page<LinkRow<Target>> {
      const raws = selectPage.all({
        userId,
        afterSeq: page.afterSeq,
        limit: page.limit + 1,
        agentId: filter.agentId ?? null,
        targetId: filter[kind.targetField] ?? null,
      }) as Record<string, unknown>[];
      return toPage(raws.map(fromRow), page.limit);
    },

    /** Links the user's agent to the user's target: 422 for a reference not theirs, 409 for a repeat. */
    create(userId: string, input: LinkInput): LinkRow<Target> {
      return get(userId, createInTransaction(userId, input.agentId, input[kind.targetField] ?? '', input.requiresApproval ?? false))!;
    },

    /** Changes what `change` names (agent-tools); undefined when the user has no such link. */
    update(userId: string, id: string, change: LinkChange): LinkRow<Target> | undefined {
      if (!update) return undefined;
      const flag = change.requiresApproval === undefined ? null : change.requiresApproval ? 1 : 0;
      if (update.run(flag, timestamp(), id, userId).changes === 0) return undefined;
      return get(userId, id);
    },

    delete: (userId: string, id: string) => remove.run(id, userId).changes > 0,
  };
}
