// SQL for documents. `authorization` holds credentials: stored sealed (AES-256-GCM), never returned.
import type { Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import { boolean, columnMap, json } from '../lib/columns.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import { toPage, type Page, type PageRequest } from '../lib/paging.js';
import { validationFailed } from '../http/errors.js';
import { sameOrigin } from '../lib/urls.js';
import type { DocumentChange, DocumentInput, DocumentType, Splitter } from './schema.js';
import type { IndexSummary, IngestStatus } from './ingestion-store.js';

export interface DocumentRow {
  id: string;
  userId: string;
  name: string;
  type: DocumentType;
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
  /** Whether credentials are stored (they are never read back out). */
  hasAuthorization: boolean;
}

/** A document's row and the columns it is read from (agents and links nest it). Never its credentials. */
export const DOCUMENT_ROW = columnMap<DocumentRow>({
  id: 'id',
  userId: 'user_id',
  name: 'name',
  type: 'type',
  url: 'url',
  fromPage: 'from_page',
  toPage: 'to_page',
  splitter: json('splitter'),
  metadata: json('metadata'),
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  status: 'status',
  error: 'error',
  index: json('index_summary'),
  hasAuthorization: boolean((d) => `${d}.authorization IS NOT NULL`),
});
const COLUMNS = DOCUMENT_ROW.select('documents');
const { fromRow } = DOCUMENT_ROW;

/** The page range is inclusive and may not run backwards. */
function checkPageRange(input: { from_page: number; to_page: number | null }): void {
  if (input.to_page !== null && input.to_page < input.from_page) {
    throw validationFailed([{ path: 'to_page', message: `must be at least from_page (${input.from_page})` }]);
  }
}

/** True when a change alters what ingestion reads (source, credentials, pages or splitting). */
function changesContent(stored: DocumentRow, next: DocumentInput, authorizationGiven: boolean): boolean {
  return (
    authorizationGiven ||
    next.type !== stored.type ||
    next.url !== stored.url ||
    next.from_page !== stored.fromPage ||
    next.to_page !== stored.toPage ||
    JSON.stringify(next.splitter) !== JSON.stringify(stored.splitter)
  );
}

export type DocumentStore = ReturnType<typeof createDocumentStore>;

export function createDocumentStore(db: Db, sealer: Sealer) {
  const table = ownedTable(db, 'documents', DOCUMENT_ROW);
  const insert = db.prepare(
    `INSERT INTO documents (id, user_id, name, type, url, from_page, to_page, authorization, splitter, metadata, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`,
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
      WHERE id = @id AND user_id = @userId RETURNING ${COLUMNS}`,
  );
  const selectPage = db.prepare(
    `SELECT ${COLUMNS} FROM documents
      WHERE user_id = @userId AND seq > @afterSeq AND (@status IS NULL OR status = @status) AND (@type IS NULL OR type = @type)
      ORDER BY seq LIMIT @limit`,
  );
  const dropFile = db.prepare(`DELETE FROM document_files WHERE document_id = ?`);
  const insertFile = db.prepare(`INSERT INTO document_files (document_id, filename, content_type, size) VALUES (?, ?, ?, ?)`);
  const jsonText = (value: unknown) => (value === null ? null : JSON.stringify(value));
  const sealed = (value: unknown) => (value === null ? null : sealer.seal(JSON.stringify(value)));

  /** Stores a new document, `pending` until ingested; `id` when it was chosen beforehand (an upload's). */
  function create(userId: string, input: DocumentInput, id = newId()): DocumentRow {
    checkPageRange(input);
    const now = timestamp();
    const raw = insert.get(
      id,
      userId,
      input.name,
      input.type,
      input.url,
      input.from_page,
      input.to_page,
      sealed(input.authorization),
      jsonText(input.splitter),
      jsonText(input.metadata),
      now,
      now,
    );
    return fromRow(raw as Record<string, unknown>);
  }

  return {
    get: table.get,
    seqOf: table.seqOf,
    /** One page of the user's documents, optionally only those with a status and/or a type. */
    list(userId: string, page: PageRequest, filter: { status?: string; type?: string } = {}): Page<DocumentRow> {
      const raws = selectPage.all({
        userId,
        afterSeq: page.afterSeq,
        limit: page.limit + 1,
        status: filter.status ?? null,
        type: filter.type ?? null,
      });
      return toPage((raws as Record<string, unknown>[]).map(fromRow), page.limit);
    },
    /** Deletes the document, its agent-document links, and clears it as any agent's `documentId`. */
    delete: table.delete,

    create,

    /** Stores a new uploaded document (id chosen beforehand: its file's parts are written under it) and its file record. */
    createUploaded: db.transaction(
      (userId: string, id: string, input: DocumentInput, file: { filename: string; contentType: string; size: number }): DocumentRow => {
        const row = create(userId, input, id);
        insertFile.run(id, file.filename, file.contentType, file.size);
        return row;
      },
    ),

    /**
     * Applies `change` to the stored document and checks the result, in one transaction. A change
     * of what ingestion reads puts the document back to `pending`. `authorization` absent keeps the
     * stored credentials while the URL stays on the same origin and drops them when it moves to
     * another (they were given for that server only); null clears them.
     */
    update: db.transaction((userId: string, id: string, change: DocumentChange): DocumentRow | undefined => {
      const stored = table.get(userId, id);
      if (!stored) return undefined;
      const next: DocumentInput = {
        name: change.name ?? stored.name,
        type: change.type ?? stored.type,
        url: change.url ?? stored.url,
        from_page: change.from_page ?? stored.fromPage,
        to_page: change.to_page === undefined ? stored.toPage : change.to_page,
        splitter: change.splitter === undefined ? stored.splitter : change.splitter,
        metadata: change.metadata ?? stored.metadata,
        authorization: change.authorization ?? null,
      };
      checkPageRange(next);
      const authorizationGiven = change.authorization !== undefined;
      const dropAuthorization = !authorizationGiven && !sameOrigin(stored.url, next.url);
      const reingest = changesContent(stored, next, authorizationGiven);
      // An uploaded file is the source only while the URL stays its own: a new URL is fetched instead.
      if (next.url !== stored.url) dropFile.run(id);
      const raw = update.get({
        name: next.name,
        type: next.type,
        url: next.url,
        fromPage: next.from_page,
        toPage: next.to_page,
        splitter: jsonText(next.splitter),
        metadata: jsonText(next.metadata),
        replaceAuthorization: authorizationGiven || dropAuthorization ? 1 : 0,
        authorization: sealed(next.authorization),
        reingest: reingest ? 1 : 0,
        now: timestamp(),
        id,
        userId,
      });
      return fromRow(raw as Record<string, unknown>);
    }),
  };
}
