// SQL for agents, their tags and their references (prompt, document). An agent and everything it
// shows (its document and tags) come back from one statement, for one agent or a whole page.
import type { Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import { unknownReference } from '../http/errors.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import { documentFromJson, documentJsonSql, type DocumentRow } from '../documents/store.js';
import type { TagRow } from '../tags/store.js';
import type { AgentChange, AgentInput, AgentType } from './schema.js';

export interface AgentRow {
  id: string;
  userId: string;
  name: string;
  type: AgentType;
  llmModel: string;
  llmProvider: string;
  hasMemory: boolean;
  promptId: string | null;
  documentId: string | null;
  createdAt: string;
  updatedAt: string;
  document: DocumentRow | null;
  tags: TagRow[];
}

const AGENT_COLUMNS = `id, user_id AS userId, name, type, llm_model AS llmModel, llm_provider AS llmProvider,
  has_memory AS hasMemory, prompt_id AS promptId, document_id AS documentId,
  created_at AS createdAt, updated_at AS updatedAt`;

const FULL_COLUMNS = `${AGENT_COLUMNS},
  (SELECT ${documentJsonSql('d')} FROM documents d WHERE d.id = agents.document_id) AS document,
  (SELECT json_group_array(json_object('id', t.id, 'userId', t.user_id, 'name', t.name, 'color', t.color,
            'createdAt', t.created_at, 'updatedAt', t.updated_at) ORDER BY at.position)
     FROM agent_tags at JOIN tags t ON t.id = at.tag_id WHERE at.agent_id = agents.id) AS tags`;

/** SQL for the agent `alias` as one JSON object, without document and tags (for nesting in links). */
export const agentBriefJsonSql = (alias: string) =>
  `json_object('id', ${alias}.id, 'userId', ${alias}.user_id, 'name', ${alias}.name, 'type', ${alias}.type,
    'llmModel', ${alias}.llm_model, 'llmProvider', ${alias}.llm_provider, 'hasMemory', json(iif(${alias}.has_memory, 'true', 'false')),
    'promptId', ${alias}.prompt_id, 'documentId', ${alias}.document_id,
    'createdAt', ${alias}.created_at, 'updatedAt', ${alias}.updated_at)`;

export type AgentBrief = Omit<AgentRow, 'document' | 'tags'>;

/** Reads an agent built by agentBriefJsonSql. */
export const agentBriefFromJson = (raw: Record<string, unknown>): AgentBrief => raw as unknown as AgentBrief;

function agentFromRow(raw: Record<string, unknown>): AgentRow {
  return {
    ...(raw as unknown as AgentRow),
    hasMemory: raw.hasMemory === 1,
    document: raw.document === null ? null : documentFromJson(JSON.parse(raw.document as string)),
    tags: JSON.parse(raw.tags as string),
  };
}

export type AgentStore = ReturnType<typeof createAgentStore>;

export function createAgentStore(db: Db, sealer: Sealer) {
  const table = ownedTable(db, 'agents', FULL_COLUMNS, agentFromRow);
  const insert = db.prepare(
    `INSERT INTO agents (id, user_id, name, type, llm_model, llm_provider, llm_extra, has_memory, prompt_id, document_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare(
    `UPDATE agents SET name = ?, type = ?, llm_model = ?, llm_provider = ?, llm_extra = coalesce(?, llm_extra),
            has_memory = ?, prompt_id = ?, document_id = ?, updated_at = ?
      WHERE id = ? AND user_id = ?`,
  );
  const ownsPrompt = db.prepare(`SELECT 1 FROM prompts WHERE id = ? AND user_id = ?`).pluck();
  const ownsDocument = db.prepare(`SELECT 1 FROM documents WHERE id = ? AND user_id = ?`).pluck();
  const countOwnedTags = db.prepare(`SELECT count(*) FROM tags WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))`).pluck();
  const clearTags = db.prepare(`DELETE FROM agent_tags WHERE agent_id = ?`);
  const insertTag = db.prepare(`INSERT INTO agent_tags (agent_id, tag_id, position) VALUES (?, ?, ?)`);

  /** Throws a 422 naming the field when a reference is not one of the user's records. */
  function checkReferences(userId: string, refs: { promptId?: string | null; documentId?: string | null; tags?: string[] }): void {
    if (refs.promptId && !ownsPrompt.get(refs.promptId, userId)) throw unknownReference('promptId', 'prompt');
    if (refs.documentId && !ownsDocument.get(refs.documentId, userId)) throw unknownReference('documentId', 'document');
    if (refs.tags && refs.tags.length > 0 && countOwnedTags.get(userId, JSON.stringify(refs.tags)) !== refs.tags.length) {
      throw unknownReference('tags', 'tag (one or more)');
    }
  }

  function setTags(agentId: string, tagIds: string[]): void {
    clearTags.run(agentId);
    tagIds.forEach((tagId, position) => insertTag.run(agentId, tagId, position));
  }

  const createInTransaction = db.transaction((userId: string, input: AgentInput): AgentRow => {
    checkReferences(userId, input);
    const id = newId();
    const now = timestamp();
    insert.run(id, userId, input.name, input.type, input.llm.model, input.llm.provider, sealer.seal(JSON.stringify(input.llm.extra)),
      input.hasMemory ? 1 : 0, input.promptId, input.documentId, now, now);
    setTags(id, input.tags);
    return table.get(userId, id)!;
  });

  const updateInTransaction = db.transaction((userId: string, id: string, change: AgentChange): AgentRow | undefined => {
    const stored = table.get(userId, id);
    if (!stored) return undefined;
    checkReferences(userId, change);
    update.run(
      change.name ?? stored.name,
      change.type ?? stored.type,
      change.llm?.model ?? stored.llmModel,
      change.llm?.provider ?? stored.llmProvider,
      change.llm ? sealer.seal(JSON.stringify(change.llm.extra)) : null,
      (change.hasMemory ?? stored.hasMemory) ? 1 : 0,
      change.promptId === undefined ? stored.promptId : change.promptId,
      change.documentId === undefined ? stored.documentId : change.documentId,
      timestamp(),
      id,
      userId,
    );
    if (change.tags) setTags(id, change.tags);
    return table.get(userId, id);
  });

  return {
    get: table.get,
    seqOf: table.seqOf,
    list: table.list,
    /** Deletes the agent with its tags and links (schema cascades). */
    delete: table.delete,
    /** Creates the agent and its tags in one transaction; a reference not the user's is a 422. */
    create: createInTransaction,
    /** Applies a partial change in one transaction; undefined when the user has no such agent. */
    update: updateInTransaction,
  };
}
