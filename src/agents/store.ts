// SQL for agents, their tags and their references (prompt, document). An agent and everything it
// shows (its document and tags) come back from one statement, for one agent or a whole page.
import type { Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import { unknownReference, validationFailed } from '../http/errors.js';
import { boolean, columnMap, expression, json, type FieldSpecs } from '../lib/columns.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import { toPage, type Page, type PageRequest } from '../lib/paging.js';
import { DOCUMENT_ROW, type DocumentRow } from '../documents/store.js';
import { TAG_ROW, type TagRow } from '../tags/store.js';
import type { AgentChange, AgentInput, AgentType } from './schema.js';
import { llmProblem, mergeLlm, type Llm } from './llm.js';
import { builtinConnection } from '../connections/builtin.js';
import { agentMessagesSql } from '../runs/memory-store.js';

export interface AgentRow {
  id: string;
  userId: string;
  name: string;
  type: AgentType;
  llmModel: string;
  llmProvider: string;
  llmBaseUrl: string | null;
  hasApiKey: boolean;
  /** The connection that supplies the server and key (src/connections/), or null. */
  llmConnectionId: string | null;
  hasMemory: boolean;
  promptId: string | null;
  /** The document the agent shows: its own, else its first linked one (see shownDocumentIdSql). */
  documentId: string | null;
  description: string | null;
  avatarUrl: string | null;
  isListed: boolean;
  /** Memory held for the agent: its sessions and their messages. */
  memorySessions: number;
  memoryMessages: number;
  createdAt: string;
  updatedAt: string;
  document: DocumentRow | null;
  tags: TagRow[];
}

/**
 * SQL for the document the agent `alias` shows as `documentId`/`document`: the one set on the agent
 * itself, else the document of its oldest agent-document link (null when it has neither). Both ways
 * of giving an agent a document then show on it; a run reads all of them (runs/store.ts). The
 * oldest link's document is kept on the agent row by triggers (schema.sql): looking it up in the
 * links for every agent of a page cost a random seek per agent in a large table.
 */
const shownDocumentIdSql = (alias: string) => `coalesce(${alias}.document_id, ${alias}.linked_document_id)`;

const BRIEF_FIELDS: FieldSpecs<AgentBrief> = {
  id: 'id',
  userId: 'user_id',
  name: 'name',
  type: 'type',
  llmModel: 'llm_model',
  llmProvider: 'llm_provider',
  llmBaseUrl: 'llm_base_url',
  hasApiKey: boolean((a) => `${a}.llm_api_key IS NOT NULL`),
  llmConnectionId: 'llm_connection_id',
  hasMemory: boolean('has_memory'),
  promptId: 'prompt_id',
  documentId: expression(shownDocumentIdSql),
  description: 'description',
  avatarUrl: 'avatar_url',
  isListed: boolean('is_listed'),
  memorySessions: expression((a) => `(SELECT count(*) FROM agent_sessions s WHERE s.agent_id = ${a}.id)`),
  memoryMessages: expression(agentMessagesSql),
  createdAt: 'created_at',
  updatedAt: 'updated_at',
};

/** An agent without its document and tags, as links nest it (see links/store.ts). */
export const AGENT_BRIEF_ROW = columnMap<AgentBrief>(BRIEF_FIELDS);

/** An agent with the document it shows and its tags in their order, in one statement. */
const AGENT_ROW = columnMap<AgentRow>({
  ...BRIEF_FIELDS,
  document: json((a) => `(SELECT ${DOCUMENT_ROW.jsonSql('d')} FROM documents d WHERE d.id = ${shownDocumentIdSql(a)})`),
  tags: json(
    (a) => `(SELECT json_group_array(${TAG_ROW.jsonSql('t')} ORDER BY at.position)
               FROM agent_tags at JOIN tags t ON t.id = at.tag_id WHERE at.agent_id = ${a}.id)`,
  ),
});

/** What a run needs of an agent: how it runs and its llm (the key opened: never present it). */
export interface RunAgent {
  id: string;
  name: string;
  type: AgentType;
  hasMemory: boolean;
  promptId: string | null;
  llm: Llm;
}

/** An agent as an MCP host sees it: a tool (see src/mcp/tools.ts). */
export interface ToolAgentRow {
  id: string;
  name: string;
  description: string | null;
  /** The variables of its prompt (none without one). */
  variables: string[];
}

/** A listed agent as the library shows it: public fields only. */
export interface LibraryAgentRow {
  id: string;
  name: string;
  description: string | null;
  avatarUrl: string | null;
  type: string;
  llmModel: string;
  llmProvider: string;
}

export type AgentBrief = Omit<AgentRow, 'document' | 'tags'>;

export type AgentStore = ReturnType<typeof createAgentStore>;

/**
 * `allowPrivateNetworks`: the ALLOW_PRIVATE_NETWORKS setting, which decides whether an llm's
 * `baseUrl` may name a private address (checked when the agent is saved, see llmProblem).
 */
export function createAgentStore(db: Db, sealer: Sealer, options: { allowPrivateNetworks: boolean }) {
  const table = ownedTable(db, 'agents', AGENT_ROW);
  // llm_extra held the llm keys the service does not use, which nothing read: it stays (NOT NULL,
  // '{}' from now on) so that existing databases need no table rebuild; an llm change clears it.
  const insert = db.prepare(
    `INSERT INTO agents (id, user_id, name, type, llm_model, llm_provider, llm_extra, llm_base_url, llm_api_key, llm_connection_id, has_memory,
                         prompt_id, document_id, description, avatar_url, is_listed, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare(
    `UPDATE agents SET name = ?, type = ?, has_memory = ?, prompt_id = ?, document_id = ?, description = ?, avatar_url = ?, is_listed = ?,
            updated_at = ?
      WHERE id = ? AND user_id = ?`,
  );
  const updateLlm = db.prepare(
    `UPDATE agents SET llm_model = ?, llm_provider = ?, llm_extra = '{}', llm_base_url = ?, llm_api_key = ?, llm_connection_id = ?
      WHERE id = ? AND user_id = ?`,
  );
  // The document set on the agent itself (documentId of create and PATCH), not the one it shows.
  const selectOwnDocumentId = db.prepare(`SELECT document_id FROM agents WHERE id = ? AND user_id = ?`).pluck();
  // The llm columns as an Llm (its key still sealed: openLlm opens it).
  const LLM_COLUMNS = `llm_model AS model, llm_provider AS provider, llm_base_url AS baseUrl, llm_api_key AS apiKey, llm_connection_id AS connectionId`;
  const selectLlm = db.prepare(`SELECT ${LLM_COLUMNS} FROM agents WHERE id = ? AND user_id = ?`);
  const selectIdentities = db.prepare(`SELECT id, created_at AS createdAt FROM agents WHERE user_id = ? ORDER BY seq LIMIT ?`);
  const selectForRun = db.prepare(
    `SELECT id, name, type, has_memory AS hasMemory, prompt_id AS promptId, ${LLM_COLUMNS} FROM agents WHERE id = ? AND user_id = ?`,
  );
  const sealOrNull = (value: string | null) => (value === null ? null : sealer.seal(value));
  const openLlm = ({ model, provider, baseUrl, apiKey, connectionId }: Llm): Llm => ({
    model,
    provider,
    baseUrl,
    apiKey: apiKey === null ? null : sealer.open(apiKey),
    connectionId,
  });
  const selectConnectionProvider = db.prepare(`SELECT provider FROM connections WHERE id = ? AND user_id = ?`).pluck();
  const ownsPrompt = db.prepare(`SELECT 1 FROM prompts WHERE id = ? AND user_id = ?`).pluck();
  const ownsDocument = db.prepare(`SELECT 1 FROM documents WHERE id = ? AND user_id = ?`).pluck();
  const countOwnedTags = db.prepare(`SELECT count(*) FROM tags WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))`).pluck();
  // A disabled account's agents are hidden from the library (as its tokens stop working) until it is enabled again.
  const ownerEnabled = `NOT EXISTS (SELECT 1 FROM users u WHERE u.id = a.user_id AND u.disabled_at IS NOT NULL)`;
  const selectLibraryPage = db.prepare(
    `SELECT a.id, a.name, a.description, a.avatar_url AS avatarUrl, a.type, a.llm_model AS llmModel, a.llm_provider AS llmProvider
       FROM agents a WHERE a.is_listed = 1 AND a.seq > ? AND ${ownerEnabled} ORDER BY a.seq LIMIT ?`,
  );
  const selectListedSeq = db.prepare(`SELECT a.seq FROM agents a WHERE a.id = ? AND a.is_listed = 1 AND ${ownerEnabled}`).pluck();
  // In creation order: the later of two agents whose names make the same tool name gets the suffix.
  const selectToolAgents = db.prepare(
    `SELECT a.id, a.name, a.description, coalesce(p.input_variables, '[]') AS variables
       FROM agents a LEFT JOIN prompts p ON p.id = a.prompt_id WHERE a.user_id = ? ORDER BY a.seq`,
  );
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

  /**
   * The llm as it is stored, or a 422 naming why it could never run. An llm on a connection takes
   * the connection's provider (kept in step by the connection store) and no server or key of its own;
   * the connection must be the user's or a built-in one.
   */
  function checkedLlm(userId: string, llm: Llm): Llm {
    if (llm.connectionId !== null) {
      const provider =
        builtinConnection(llm.connectionId)?.provider ?? (selectConnectionProvider.get(llm.connectionId, userId) as string | undefined);
      if (provider === undefined) throw unknownReference('llm.connectionId', 'connection');
      return { ...llm, provider, baseUrl: null, apiKey: null };
    }
    const problem = llmProblem(llm, options);
    if (problem) throw validationFailed([problem]);
    return llm;
  }

  function setTags(agentId: string, tagIds: string[]): void {
    clearTags.run(agentId);
    tagIds.forEach((tagId, position) => insertTag.run(agentId, tagId, position));
  }

  const createInTransaction = db.transaction((userId: string, input: AgentInput): AgentRow => {
    checkReferences(userId, input);
    const llm = checkedLlm(userId, input.llm);
    const id = newId();
    const now = timestamp();
    insert.run(
      id,
      userId,
      input.name,
      input.type,
      llm.model,
      llm.provider,
      llm.baseUrl,
      sealOrNull(llm.apiKey),
      llm.connectionId,
      input.hasMemory ? 1 : 0,
      input.promptId,
      input.documentId,
      input.description,
      input.avatarUrl,
      input.isListed ? 1 : 0,
      now,
      now,
    );
    setTags(id, input.tags);
    return table.get(userId, id)!;
  });

  const updateInTransaction = db.transaction((userId: string, id: string, change: AgentChange): AgentRow | undefined => {
    const stored = table.get(userId, id);
    if (!stored) return undefined;
    checkReferences(userId, change);
    if (change.llm) {
      const llm = checkedLlm(userId, mergeLlm(openLlm(selectLlm.get(id, userId) as Llm), change.llm));
      updateLlm.run(llm.model, llm.provider, llm.baseUrl, sealOrNull(llm.apiKey), llm.connectionId, id, userId);
    }
    update.run(
      change.name ?? stored.name,
      change.type ?? stored.type,
      (change.hasMemory ?? stored.hasMemory) ? 1 : 0,
      change.promptId === undefined ? stored.promptId : change.promptId,
      change.documentId === undefined ? selectOwnDocumentId.get(id, userId) : change.documentId,
      change.description === undefined ? stored.description : change.description,
      change.avatarUrl === undefined ? stored.avatarUrl : change.avatarUrl,
      (change.isListed ?? stored.isListed) ? 1 : 0,
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

    /** The user's agent as a run needs it, in one read (only the key of the sealed columns is opened); undefined if there is none. */
    getForRun(userId: string, id: string): RunAgent | undefined {
      type Raw = Omit<RunAgent, 'llm' | 'hasMemory'> & Llm & { hasMemory: number };
      const raw = selectForRun.get(id, userId) as Raw | undefined;
      if (!raw) return undefined;
      return { id: raw.id, name: raw.name, type: raw.type, hasMemory: raw.hasMemory === 1, promptId: raw.promptId, llm: openLlm(raw) };
    },

    /** Every agent of the user, oldest first, with its prompt's variables: the tools of the user's MCP server. */
    listAsTools(userId: string): ToolAgentRow[] {
      return (selectToolAgents.all(userId) as (Omit<ToolAgentRow, 'variables'> & { variables: string })[]).map((row) => ({
        ...row,
        variables: JSON.parse(row.variables) as string[],
      }));
    },

    /** The user's first `limit` agents, oldest first: only their ids and creation times (the models of the OpenAI-compatible API). */
    listIdentities(userId: string, limit: number): { id: string; createdAt: string }[] {
      return selectIdentities.all(userId, limit) as { id: string; createdAt: string }[];
    },

    /** A page of the agents their owners listed publicly, every enabled account's (the one cross-user read). */
    listLibrary(page: PageRequest): Page<LibraryAgentRow> {
      return toPage(selectLibraryPage.all(page.afterSeq, page.limit + 1) as LibraryAgentRow[], page.limit);
    },
    /** The keyset cursor of a listed agent, for paging the library. */
    seqOfListed(id: string): number | undefined {
      return selectListedSeq.get(id) as number | undefined;
    },
  };
}
