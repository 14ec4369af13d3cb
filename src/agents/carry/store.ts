// SQL for carrying an agent between services: reading everything an export holds, and creating an
// imported agent with its prompt, tags, tools, documents, links and memory in one transaction
// through the stores that own those records (so an import is checked exactly as the API's creates).
import type { Db } from '../../db.js';
import { newId, timestamp } from '../../lib/ids.js';
import { ApiError, validationFailed, type FieldIssue } from '../../http/errors.js';
import type { Stores } from '../../stores.js';
import type { DocumentRow } from '../../documents/store.js';
import { PART_BYTES } from '../../documents/file-store.js';
import type { ToolRecord } from '../../tools/kinds/kind.js';
import type { AgentRow } from '../store.js';
import type { PromptRow } from '../../prompts/store.js';
import { CARRY_LIMITS, type AgentExport } from './format.js';

/** Everything of one agent an export is made from (tool metadata unsealed: strip it before answering). */
export interface AgentForExport {
  agent: AgentRow;
  prompt: PromptRow | undefined;
  /** The agent's own document (documentId), and its linked ones in link order. */
  ownDocumentId: string | null;
  documents: (DocumentRow & { file?: CarriedFile })[];
  linkedDocumentIds: Set<string>;
  tools: ToolRecord[];
  sessions: { id: string; messages: { role: 'user' | 'assistant'; content: string }[] }[] | undefined;
  /** What did not fit the format's bounds. */
  omitted: string[];
}

/** An uploaded document's file as carried: on export read from the file store, on import checked before storing. */
export interface CarriedFile {
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** What an import made (or, rolled back, would have made). */
export interface Imported {
  agent: AgentRow;
  tags: { existing: string[]; new: string[] };
  /** Documents to queue for ingestion once the transaction is committed. */
  documents: DocumentRow[];
}

type CarryStores = Pick<
  Stores,
  'agents' | 'prompts' | 'tags' | 'tools' | 'documents' | 'agentTools' | 'agentDocuments' | 'connections' | 'files' | 'memory'
>;

/** `write()`, its 422s naming the field within the file (`tools.2.metadata.url`, not `metadata.url`). */
function within<T>(prefix: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 422 || !Array.isArray(error.details)) throw error;
    throw validationFailed(
      (error.details as FieldIssue[]).map((issue) => ({ ...issue, path: issue.path ? `${prefix}.${issue.path}` : prefix })),
    );
  }
}

/** Thrown inside the import transaction of a dry run, so that everything it did is rolled back. */
class DryRun extends Error {
  constructor(readonly imported: Imported) {
    super('dry run');
  }
}

export interface ImportOptions {
  dryRun: boolean;
  /** The checked bytes of each document (by index) that carries its file. */
  files: Map<number, CarriedFile>;
  /** The URL of an uploaded document's file endpoint. */
  fileUrl: (documentId: string) => string;
}

export type CarryStore = ReturnType<typeof createCarryStore>;

export function createCarryStore(db: Db, stores: CarryStores) {
  const selectOwnDocumentId = db.prepare(`SELECT document_id FROM agents WHERE id = ? AND user_id = ?`).pluck();
  const selectLinkedDocumentIds = db
    .prepare(`SELECT document_id FROM agent_documents WHERE agent_id = ? AND user_id = ? ORDER BY seq LIMIT ?`)
    .pluck();
  const selectSessions = db.prepare(`SELECT id FROM agent_sessions WHERE agent_id = ? ORDER BY seq LIMIT ?`);
  const selectTagByName = db.prepare(`SELECT id FROM tags WHERE user_id = ? AND name = ? COLLATE NOCASE`).pluck();
  const insertSession = db.prepare(`INSERT INTO agent_sessions (id, agent_id, created_at, updated_at) VALUES (?, ?, ?, ?)`);
  const insertMessage = db.prepare(
    `INSERT INTO agent_messages (id, session_seq, role, content, run_id, created_at) VALUES (?, ?, ?, ?, NULL, ?)`,
  );

  /**
   * The documents, each uploaded one with its file while within the bounds (its bytes are its only
   * source: one over them is left out, and named in `omitted`). Sizes are checked before reading.
   */
  function readDocuments(userId: string, ids: string[], omitted: string[]): AgentForExport['documents'] {
    const read: AgentForExport['documents'] = [];
    let room: number = CARRY_LIMITS.filesBytes;
    for (const id of ids) {
      const document = stores.documents.get(userId, id);
      if (!document) continue;
      const stored = stores.files.get(userId, id);
      if (!stored) {
        read.push(document);
        continue;
      }
      if (stored.size > CARRY_LIMITS.fileBytes || stored.size > room) {
        omitted.push(
          `document "${document.name}": its uploaded file (${stored.size} bytes) is over the limit of ` +
            `${CARRY_LIMITS.fileBytes} bytes a file and ${CARRY_LIMITS.filesBytes} bytes in all`,
        );
        continue;
      }
      const bytes = stores.files.read(id)?.bytes;
      if (!bytes) continue;
      room -= bytes.length;
      read.push({ ...document, file: { filename: stored.filename, contentType: stored.contentType, bytes } });
    }
    return read;
  }

  /** Whole sessions, oldest first, while they fit the format's bounds. */
  function readSessions(agentId: string, omitted: string[]): AgentForExport['sessions'] {
    const sessions: NonNullable<AgentForExport['sessions']> = [];
    let room: number = CARRY_LIMITS.messages;
    const rows = selectSessions.all(agentId, CARRY_LIMITS.sessions + 1) as { id: string }[];
    for (const [index, row] of rows.entries()) {
      if (index === CARRY_LIMITS.sessions) {
        omitted.push(`sessions after the first ${CARRY_LIMITS.sessions}`);
        break;
      }
      const messages = stores.memory
        .listMessages(agentId, row.id, { afterSeq: 0, limit: room + 1 })
        .rows.map(({ role, content }) => ({ role, content }));
      if (messages.length > room) {
        omitted.push(`sessions from "${row.id}" on: more than ${CARRY_LIMITS.messages} messages in all`);
        break;
      }
      const long = messages.findIndex((message) => message.content.length > CARRY_LIMITS.messageChars);
      if (long !== -1) {
        omitted.push(`session "${row.id}": a message longer than ${CARRY_LIMITS.messageChars} characters`);
        continue;
      }
      room -= messages.length;
      sessions.push({ id: row.id, messages });
    }
    return sessions;
  }

  /** Stores a carried file as an upload does, a part at a time, under the id its document will have. */
  function storeFile(documentId: string, bytes: Buffer): void {
    for (let part = 0; part * PART_BYTES < bytes.length; part++) {
      stores.files.appendPart(documentId, part, bytes.subarray(part * PART_BYTES, (part + 1) * PART_BYTES));
    }
  }

  const importInTransaction = db.transaction((userId: string, file: AgentExport, options: ImportOptions): Imported => {
    const { dryRun } = options;
    const { agents, prompts, tags, tools, documents, agentTools, agentDocuments } = stores;
    const prompt = file.prompt && within('prompt', () => prompts.create(userId, file.prompt!));
    const tagIds: string[] = [];
    const tagNames: Imported['tags'] = { existing: [], new: [] };
    for (const tag of file.tags) {
      const existing = selectTagByName.get(userId, tag.name) as string | undefined;
      // Named like a tag before it in the file (as tag names compare, case aside): that tag, which the agent has once.
      if (existing && tagIds.includes(existing)) continue;
      if (existing) tagNames.existing.push(tag.name);
      else tagNames.new.push(tag.name);
      tagIds.push(existing ?? tags.create(userId, tag).id);
    }
    const created = file.documents.map((document, index) => {
      const carried = options.files.get(index);
      const row = within(`documents.${index}`, () => {
        if (!carried) return documents.create(userId, { ...document, url: document.url!, authorization: null });
        // A real upload in this account: its bytes stored here, its URL its own file endpoint.
        const id = newId();
        storeFile(id, carried.bytes);
        return documents.createUploaded(
          userId,
          id,
          { ...document, url: options.fileUrl(id), authorization: null },
          { filename: carried.filename, contentType: carried.contentType, size: carried.bytes.length },
        );
      });
      return { part: document, row };
    });
    const own = created.find(({ part }) => part.isAgentDocument);
    const { llm } = file.agent;
    const agent = within('agent', () =>
      agents.create(userId, {
        ...file.agent,
        llm: { model: llm.model, provider: llm.provider, baseUrl: llm.baseUrl, apiKey: null, connectionId: null },
        isListed: false,
        promptId: prompt ? prompt.id : null,
        documentId: own ? own.row.id : null,
        tags: tagIds,
      }),
    );
    for (const [index, tool] of file.tools.entries()) {
      const metadata = tool.callsThisAgent ? { ...tool.metadata, agentId: agent.id } : tool.metadata;
      const row = within(`tools.${index}`, () =>
        tools.create(userId, { name: tool.name, type: tool.type, description: tool.description, metadata }),
      );
      agentTools.create(userId, { agentId: agent.id, toolId: row.id, requiresApproval: tool.requiresApproval });
    }
    for (const { part, row } of created) {
      if (part.linked) agentDocuments.create(userId, { agentId: agent.id, documentId: row.id });
    }
    const now = timestamp();
    for (const session of file.sessions ?? []) {
      const seq = Number(insertSession.run(session.id, agent.id, now, now).lastInsertRowid);
      for (const message of session.messages) insertMessage.run(newId(), seq, message.role, message.content, now);
    }
    const imported: Imported = { agent: agents.get(userId, agent.id)!, tags: tagNames, documents: created.map(({ row }) => row) };
    if (dryRun) throw new DryRun(imported);
    return imported;
  });

  return {
    /** The user's agent with all an export holds; undefined when the user has no such agent. */
    readForExport(userId: string, agentId: string, withSessions: boolean): AgentForExport | undefined {
      const stored = stores.agents.get(userId, agentId);
      if (!stored) return undefined;
      const omitted: string[] = [];
      // A connection belongs to its account: the file carries the server it stands for instead.
      const connection = stored.llmConnectionId ? stores.connections.settingsFor(userId, stored.llmConnectionId) : undefined;
      const agent = connection
        ? { ...stored, llmProvider: connection.provider, llmBaseUrl: connection.baseUrl, hasApiKey: connection.apiKey !== null }
        : stored;
      if (connection)
        omitted.push("llm.connectionId: the file carries the connection's provider and server instead (and its key is needed again)");
      const ownDocumentId = selectOwnDocumentId.get(agentId, userId) as string | null;
      const linked = selectLinkedDocumentIds.all(agentId, userId, CARRY_LIMITS.documents) as string[];
      const ids = [...new Set([...(ownDocumentId ? [ownDocumentId] : []), ...linked])].slice(0, CARRY_LIMITS.documents);
      if (linked.length === CARRY_LIMITS.documents) omitted.push(`documents after the first ${CARRY_LIMITS.documents}`);
      const tools = stores.tools.listForRun(userId, agentId);
      if (tools.length > CARRY_LIMITS.tools) omitted.push(`tools after the first ${CARRY_LIMITS.tools}`);
      return {
        agent,
        prompt: agent.promptId ? stores.prompts.get(userId, agent.promptId) : undefined,
        ownDocumentId,
        documents: readDocuments(userId, ids, omitted),
        linkedDocumentIds: new Set(linked),
        tools: tools.slice(0, CARRY_LIMITS.tools),
        sessions: withSessions ? readSessions(agentId, omitted) : undefined,
        omitted,
      };
    },

    /**
     * Creates the file's agent and everything it uses in the user's account, in one transaction (a
     * 4xx from any part leaves nothing behind). A dry run does the same and rolls it all back, so
     * that it answers exactly what the import would do, or the error it would meet.
     */
    import(userId: string, file: AgentExport, options: ImportOptions): Imported {
      try {
        return importInTransaction(userId, file, options);
      } catch (error) {
        if (error instanceof DryRun) return error.imported;
        throw error;
      }
    },
  };
}
