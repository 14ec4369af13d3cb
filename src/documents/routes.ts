// `/documents`: content to ingest from a URL or an uploaded file, its chunks, and search across them.
import { Readable } from 'node:stream';
import * as v from 'valibot';
import { notFound, validationFailed } from '../http/errors.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { defineRoute, RESPONSE_WRITTEN, type Route } from '../http/route.js';
import { ListQuerySchema, pageRequest } from '../http/validate.js';
import type { DocumentRow, DocumentStore } from './store.js';
import type { Caller } from '../http/context.js';
import type { IngestionStore } from './ingestion-store.js';
import type { SearchStore } from './search-store.js';
import type { IngestionQueue } from './ingestion.js';
import { presentDocument } from './present.js';
import {
  ChunkSchema,
  CreateDocumentSchema,
  DocumentFilters,
  DocumentSchema,
  GetDocumentQuerySchema,
  SearchHitSchema,
  SearchQuerySchema,
  UpdateDocumentSchema,
} from './schema.js';
import { presentHit, searchWords } from './search.js';
import type { FileStore } from './file-store.js';
import { createUploadedDocument, isMultipart, UPLOAD_FORM } from './upload.js';

interface DocumentDeps {
  documents: DocumentStore;
  files: FileStore;
  /** UPLOAD_MAX_BYTES: the largest file uploaded. */
  uploadMaxBytes: number;
  chunks: IngestionStore;
  search: SearchStore;
  ingestion: IngestionQueue;
}

export function documentRoutes({ documents, files, uploadMaxBytes, chunks, search: searchStore, ingestion }: DocumentDeps): Route[] {
  /** A document the store put (back) to pending is queued for ingestion. */
  const queueIfPending = (document: { id: string; status: string }) => {
    if (document.status === 'pending') ingestion.enqueue(document.id);
  };
  const tag = 'Documents';
  const present = (document: DocumentRow, caller: Caller) => presentDocument(document, caller, ingestion.progressOf(document.id));
  const settled = (document: DocumentRow) => document.status === 'ready' || document.status === 'failed';

  const getDocument = defineRoute({
    method: 'get',
    path: '/documents/:id',
    operationId: 'getDocument',
    summary: 'Get a document',
    description:
      'With `?wait=<seconds>` (0-30) the answer waits until ingestion ends (status ready or failed) or the time is up, ' +
      'so a client need not poll.',
    tag,
    auth: true,
    query: GetDocumentQuerySchema,
    success: { status: 200, description: 'The document.', data: DocumentSchema },
    handler: async ({ caller, params, query }) => {
      let document = documents.get(caller.id, params.id);
      const deadline = Date.now() + (query.wait ?? 0) * 1000;
      while (document && !settled(document) && Date.now() < deadline && !ingestion.isStopped) {
        await ingestion.waitForJobEnd(document.id, deadline - Date.now());
        document = documents.get(caller.id, params.id);
      }
      if (!document) throw notFound('Document');
      return present(document, caller);
    },
  });

  // Before the /documents/:id routes, so `/documents/search` is not read as an id.
  const search = defineRoute({
    method: 'get',
    path: '/documents/search',
    operationId: 'searchDocuments',
    summary: "Search the caller's documents",
    description:
      "Full-text search over the chunks of ready documents, ranked by BM25 over the caller's chunks. Every word of `q` must " +
      'match, in any of its forms (words are compared by their stem: `otter` finds "Otters"); ' +
      'punctuation and query syntax in `q` are ignored. Narrow it with `documentId` or `agentId` (its own `documentId` and its linked documents). ' +
      'The best 20 hits are answered; `limit` (1-100) asks for fewer or more.',
    tag,
    auth: true,
    query: SearchQuerySchema,
    success: { status: 200, description: 'The best-ranked chunks first.', data: v.array(SearchHitSchema) },
    handler: ({ caller, query }) => {
      const words = searchWords(query.q, 'all');
      if (words === undefined) throw validationFailed([{ path: 'q', message: 'must hold at least one word' }]);
      const scope = { userId: caller.id, documentId: query.documentId, agentId: query.agentId };
      const hits = searchStore.find(scope, words, { match: 'all', limit: query.limit, snippet: { words: 24, marked: true } });
      return hits.map(presentHit);
    },
  });

  const ingest = defineRoute({
    method: 'post',
    path: '/documents/:id/ingest',
    operationId: 'ingestDocument',
    summary: 'Ingest a document again',
    description: 'Puts the document back to `pending` and queues it; a run still going is superseded.',
    tag,
    auth: true,
    success: { status: 202, description: 'The document, now pending.', data: DocumentSchema },
    handler: ({ caller, params }) => {
      const document = chunks.requestIngestion(caller.id, params.id) ? documents.get(caller.id, params.id) : undefined;
      if (!document) throw notFound('Document');
      ingestion.enqueue(document.id);
      return present(document, caller);
    },
  });

  const listChunks = defineRoute({
    method: 'get',
    path: '/documents/:id/chunks',
    operationId: 'listDocumentChunks',
    summary: "List a document's chunks",
    tag,
    auth: true,
    query: ListQuerySchema,
    success: { status: 200, description: 'A page of the chunks, in document order.', page: ChunkSchema },
    handler: ({ caller, params, query }) => {
      // The query is checked first: a bad `limit` is a 422 whatever the id.
      const page = pageRequest(query, (chunkId) => chunks.seqOfChunk(caller.id, params.id, chunkId));
      if (!documents.get(caller.id, params.id)) throw notFound('Document');
      return chunks.listChunks(params.id, page);
    },
  });

  // Before the JSON create route: a multipart/form-data body is an upload, any other goes on to it.
  const upload = defineRoute({
    method: 'post',
    path: '/documents',
    operationId: 'uploadDocument',
    summary: 'Upload a document',
    description:
      `Or send the document as a file: a multipart/form-data body with the file in the part \`file\` and any of \`name\` ` +
      `(default: the file's name), \`type\` (default: told from the file's content, name and media type), \`from_page\`, ` +
      `\`to_page\`, \`splitter\` and \`metadata\` (JSON text) as fields. At most UPLOAD_MAX_BYTES (20 MiB by default): a larger ` +
      'file is answered 413 as soon as the limit is passed. The bytes are kept, the `url` is GET /documents/{id}/file, and a file ' +
      'whose content does not match its type is refused with 422 saying why.',
    tag,
    auth: true,
    when: isMultipart,
    form: UPLOAD_FORM,
    success: { status: 201, description: 'The new document.', data: DocumentSchema },
    errors: [413],
    handler: async ({ ctx, caller }) => {
      const document = await createUploadedDocument(ctx, caller.id, { documents, files, maxBytes: uploadMaxBytes });
      queueIfPending(document);
      return present(document, caller);
    },
  });

  const getFile = defineRoute({
    method: 'get',
    path: '/documents/:id/file',
    operationId: 'getDocumentFile',
    summary: "Download an uploaded document's file",
    description:
      'The bytes as uploaded, with their media type and `Content-Disposition: attachment` naming the file. 404 for a document ' +
      "that was not uploaded (or is not the caller's).",
    tag,
    auth: true,
    success: { status: 200, description: 'The file.', file: true },
    handler: ({ ctx, caller, params }): typeof RESPONSE_WRITTEN => {
      const file = files.get(caller.id, params.id);
      if (!file) throw notFound('Document file');
      ctx.status = 200;
      // attachment() sets Content-Disposition, the file name quoted (and UTF-8 encoded) as RFC 6266 says; the type is the stored one.
      ctx.attachment(file.filename || 'document');
      ctx.set('Content-Type', file.contentType); // as stored: ctx.type would add a charset the file may not be in
      ctx.length = file.size;
      // Never shown as a page of this origin, whatever it holds (HTML uploads included).
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      ctx.set('Cache-Control', 'private, no-store');
      // A part at a time, as the client reads: a 20 MiB file is never held whole.
      ctx.body = Readable.from(fileParts(file.documentId, file.parts), { objectMode: false });
      return RESPONSE_WRITTEN;
    },
  });
  function* fileParts(documentId: string, count: number) {
    for (let part = 0; part < count; part++) {
      const bytes = files.part(documentId, part);
      if (bytes === undefined) throw new Error('the document was deleted while its file was being sent');
      yield bytes;
    }
  }

  return [
    search,
    ingest,
    listChunks,
    getFile,
    getDocument,
    upload,
    ...resourceRoutes({
      path: '/documents',
      tag,
      names: { one: 'document', One: 'Document', Many: 'Documents', what: 'Document' },
      schema: DocumentSchema,
      present,
      store: documents,
      list: { filters: DocumentFilters, description: 'Filter by `status` and/or `type`.' },
      get: false,
      create: {
        body: CreateDocumentSchema,
        after: queueIfPending,
        description:
          '`to_page` takes a number or a numeric string, at least `from_page`. `authorization` is stored and never returned. ' +
          'The document is ingested in the background: watch `status`.',
      },
      update: {
        body: UpdateDocumentSchema,
        after: queueIfPending,
        description: 'Changing `type`, `url`, the page range, `splitter` or `authorization` ingests the document again.',
      },
      delete: {
        answers: 'null',
        description: 'Its agent-document links and chunks are deleted; an agent that showed it shows its next linked document, or none.',
      },
    }),
  ];
}
