// SQL for link records between an agent and another of the user's records: agent-documents and
// agent-tools share this shape (one table each, see schema.sql).
import type { Db } from '../db.js';
import { conflict, unknownReference } from '../http/errors.js';
import { newId, timestamp } from '../lib/ids.js';
import { toPage, type Page, type PageRequest } from '../lib/paging.js';
import { isUniqueViolation } from '../lib/sqlite.js';
import { agentBriefJsonSql, agentBriefFromJson, type AgentBrief } from '../agents/store.js';
import { documentFromJson, documentJsonSql, type DocumentRow } from '../documents/store.js';
import { toolFromJson, toolJsonSql, type ToolRow } from '../tools/store.js';

export interface LinkRow<Target> {
  id: string;
  userId: string;
  agentId: string;
  targetId: string;
  createdAt: string;
  updatedAt: string;
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
  /** SQL for the target row aliased `x` as JSON, and how to finish it. */
  targetJsonSql: (alias: string) => string;
  targetFromJson: (raw: Record<string, unknown>) => Target;
}

/** List filters: by agent and/or by target (`documentId` or `toolId`). */
export type LinkFilter = Partial<Record<'agentId' | 'documentId' | 'toolId', string>>;

/** A new link: the agent and the target (`documentId` or `toolId`). */
export type LinkInput = { agentId: string } & Partial<Record<'documentId' | 'toolId', string>>;

export type LinkStore<Target> = ReturnType<typeof createLinkStore<Target>>;

/** Links of agents to documents (`/agent-documents`). */
export const createAgentDocumentStore = (db: Db) =>
  createLinkStore<DocumentRow>(db, {
    table: 'agent_documents',
    targetTable: 'documents',
    targetColumn: 'document_id',
    targetField: 'documentId',
    targetName: 'document',
    targetJsonSql: documentJsonSql,
    targetFromJson: documentFromJson,
  });

/** Links of agents to tools (`/agent-tools`). */
export const createAgentToolStore = (db: Db) =>
  createLinkStore<ToolRow>(db, {
    table: 'agent_tools',
    targetTable: 'tools',
    targetColumn: 'tool_id',
    targetField: 'toolId',
    targetName: 'tool',
    targetJsonSql: toolJsonSql,
    targetFromJson: toolFromJson,
  });

function createLinkStore<Target>(db: Db, kind: LinkKind<Target>) {
  const { table, targetTable, targetColumn } = kind;
  const columns = `l.id, l.user_id AS userId, l.agent_id AS agentId, l.${targetColumn} AS targetId,
    l.created_at AS createdAt, l.updated_at AS updatedAt,
    ${agentBriefJsonSql('a')} AS agent, ${kind.targetJsonSql('x')} AS target`;
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
    `INSERT INTO ${table} (id, user_id, agent_id, ${targetColumn}, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const remove = db.prepare(`DELETE FROM ${table} WHERE id = ? AND user_id = ?`);
  const ownsAgent = db.prepare(`SELECT 1 FROM agents WHERE id = ? AND user_id = ?`).pluck();
  const ownsTarget = db.prepare(`SELECT 1 FROM ${targetTable} WHERE id = ? AND user_id = ?`).pluck();

  function fromRow(raw: Record<string, unknown>): LinkRow<Target> {
    const agent = agentBriefFromJson(JSON.parse(raw.agent as string));
    return { ...(raw as unknown as LinkRow<Target>), agent, target: kind.targetFromJson(JSON.parse(raw.target as string)) };
  }

  function get(userId: string, id: string): LinkRow<Target> | undefined {
    const raw = selectById.get(id, userId) as Record<string, unknown> | undefined;
    return raw === undefined ? undefined : fromRow(raw);
  }

  const createInTransaction = db.transaction((userId: string, agentId: string, targetId: string): string => {
    if (!ownsAgent.get(agentId, userId)) throw unknownReference('agentId', 'agent');
    if (!ownsTarget.get(targetId, userId)) throw unknownReference(kind.targetField, kind.targetName);
    const id = newId();
    const now = timestamp();
    try {
      insert.run(id, userId, agentId, targetId, now, now);
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
      return get(userId, createInTransaction(userId, input.agentId, input[kind.targetField] ?? ''))!;
    },

    delete: (userId: string, id: string) => remove.run(id, userId).changes > 0,
  };
}
