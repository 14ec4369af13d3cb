// SQL for documents. `authorization` holds credentials: stored sealed (AES-256-GCM), never returned.
import type { Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import type { DocumentInput, Splitter } from './schema.js';
import type { IndexSummary, IngestStatus } from './ingestion-store.js';

export interface DocumentRow {
  id: string;
  userId: string;
  name: string;
  type: string;
  url: string;
  fromPage: number;
  toPage: number | null;
  splitter: Splitter | null;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  status: IngestStatus;
  error: string | null;
  index: IndexSummary | null;
}

export const DOCUMENT_COLUMNS = `id, user_id AS userId, name, type, url, from_page AS fromPage, to_page AS toPage,
  splitter, metadata, created_at AS createdAt, updated_at AS updatedAt, status, error, index_summary AS "index"`;

/** SQL for the document `alias` as one JSON object shaped like DocumentRow (for nesting in other rows). */
export const documentJsonSql = (alias: string) =>
  `json_object('id', ${alias}.id, 'userId', ${alias}.user_id, 'name', ${alias}.name, 'type', ${alias}.type,
    'url', ${alias}.url, 'fromPage', ${alias}.from_page, 'toPage', ${alias}.to_page, 'splitter', json(${alias}.splitter),
    'metadata', json(${alias}.metadata), 'createdAt', ${alias}.created_at, 'updatedAt', ${alias}.updated_at,
    'status', ${alias}.status, 'error', ${alias}.error, 'index', json(${alias}.index_summary))`;

/** Reads a document built by documentJsonSql (its JSON columns arrive already parsed). */
export const documentFromJson = (raw: Record<string, unknown>): DocumentRow => raw as unknown as DocumentRow;

/** Finishes a row selected with DOCUMENT_COLUMNS (its JSON columns). */
export function documentFromRow(raw: Record<string, unknown>): DocumentRow {
  return {
    ...(raw as unknown as DocumentRow),
    splitter: raw.splitter === null ? null : JSON.parse(raw.splitter as string),
    metadata: JSON.parse(raw.metadata as string),
    index: raw.index === null ? null : JSON.parse(raw.index as string),
  };
}

export type DocumentStore = ReturnType<typeof createDocumentStore>;

export function createDocumentStore(db: Db, sealer: Sealer) {
  const table = ownedTable(db, 'documents', DOCUMENT_COLUMNS, documentFromRow);
  const insert = db.prepare(
    `INSERT INTO documents (id, user_id, name, type, url, from_page, to_page, authorization, splitter, metadata, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare(
    `UPDATE documents
        SET name = @name, type = @type, url = @url, from_page = @fromPage, to_page = @toPage, splitter = @splitter,
            metadata = @metadata,
            authorization = CASE WHEN @replaceAuthorization THEN @authorization ELSE authorization END,
            status = CASE WHEN @reingest THEN 'pending' ELSE status END,
            error = CASE WHEN @reingest THEN NULL ELSE error END,
            ingest_generation = ingest_generation + @reingest,
            updated_at = @now
      WHERE id = @id AND user_id = @userId RETURNING ${DOCUMENT_COLUMNS}`,
  );
  const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
  const sealed = (value: unknown) => (value === null ? null : sealer.seal(JSON.stringify(value)));

  return {
    getDocument: table.get,
    seqOfDocument: table.seqOf,
    listDocuments: table.list,
    /** Deletes the document, its agent-document links, and clears it as any agent's `documentId`. */
    deleteDocument: table.delete,

    createDocument(userId: string, input: DocumentInput): DocumentRow {
      const now = timestamp();
      const row: DocumentRow = {
        id: newId(),
        userId,
        name: input.name,
        type: input.type,
        url: input.url,
        fromPage: input.from_page,
        toPage: input.to_page,
        splitter: input.splitter,
        metadata: input.metadata,
        createdAt: now,
        updatedAt: now,
        status: 'pending',
        error: null,
        index: null,
      };
      insert.run(row.id, userId, row.name, row.type, row.url, row.fromPage, row.toPage, sealed(input.authorization), json(row.splitter), json(row.metadata), now, now);
      return row;
    },

    /**
     * Writes `next` (the stored document with the change applied). `authorization` undefined keeps
     * the stored credentials; null clears them. `reingest` puts the document back to pending.
     */
    updateDocument(
      userId: string,
      id: string,
      next: Omit<DocumentInput, 'authorization'> & { authorization?: Record<string, unknown> | null },
      reingest: boolean,
    ): DocumentRow | undefined {
      const raw = update.get({
        name: next.name,
        type: next.type,
        url: next.url,
        fromPage: next.from_page,
        toPage: next.to_page,
        splitter: json(next.splitter),
        metadata: json(next.metadata),
        replaceAuthorization: next.authorization === undefined ? 0 : 1,
        authorization: sealed(next.authorization ?? null),
        reingest: reingest ? 1 : 0,
        now: timestamp(),
        id,
        userId,
      });
      return raw === undefined ? undefined : documentFromRow(raw as Record<string, unknown>);
    },
  };
}
