// `/documents`: content to ingest from a URL.
import type Router from '@koa/router';
import type { AppState } from '../http/context.js';
import type { Deps } from '../deps.js';
import { callerOf } from '../http/auth.js';
import { notFound, validationFailed } from '../http/errors.js';
import { created, ok, okPage } from '../http/respond.js';
import { parseBody, parseId, parsePageRequest } from '../http/validate.js';
import { presentDocument } from './present.js';
import { CreateDocumentSchema, UpdateDocumentSchema, type DocumentInput } from './schema.js';
import type { DocumentRow } from './store.js';

type DocumentInputWithOptionalAuthorization = Omit<DocumentInput, 'authorization'> & { authorization?: Record<string, unknown> | null };

/** The page range is inclusive and may not run backwards. */
function checkPageRange<T extends { from_page: number; to_page: number | null }>(input: T): T {
  if (input.to_page !== null && input.to_page < input.from_page) {
    throw validationFailed([{ path: 'to_page', message: `must be at least from_page (${input.from_page})` }]);
  }
  return input;
}

/** True when a change alters what ingestion reads (source, credentials, pages or splitting). */
function changesContent(stored: DocumentRow, next: DocumentInputWithOptionalAuthorization): boolean {
  return (
    next.authorization !== undefined ||
    next.type !== stored.type ||
    next.url !== stored.url ||
    next.from_page !== stored.fromPage ||
    next.to_page !== stored.toPage ||
    JSON.stringify(next.splitter) !== JSON.stringify(stored.splitter)
  );
}

export function documentRoutes(router: Router<AppState>, { stores, ingestion, requireCaller }: Deps): void {
  const { documents } = stores;

  router.get('/documents', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const page = parsePageRequest(ctx, (id) => documents.seqOfDocument(caller.id, id));
    okPage(ctx, documents.listDocuments(caller.id, page), (document) => presentDocument(document, caller));
  });

  router.post('/documents', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const input = checkPageRange(parseBody(ctx, CreateDocumentSchema));
    const document = documents.createDocument(caller.id, input);
    ingestion.enqueue(document.id);
    created(ctx, presentDocument(document, caller));
  });

  router.get('/documents/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const document = documents.getDocument(caller.id, parseId(ctx));
    if (!document) throw notFound('Document');
    ok(ctx, presentDocument(document, caller));
  });

  router.patch('/documents/:id', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const id = parseId(ctx);
    const change = parseBody(ctx, UpdateDocumentSchema);
    const stored = documents.getDocument(caller.id, id);
    if (!stored) throw notFound('Document');
    const next = checkPageRange({
      name: change.name ?? stored.name,
      type: change.type ?? (stored.type as typeof change.type & string),
      url: change.url ?? stored.url,
      from_page: change.from_page ?? stored.fromPage,
      to_page: change.to_page === undefined ? stored.toPage : change.to_page,
      splitter: change.splitter === undefined ? stored.splitter : change.splitter,
      metadata: change.metadata ?? stored.metadata,
      authorization: change.authorization,
    });
    const reingest = changesContent(stored, next);
    const document = documents.updateDocument(caller.id, id, next, reingest)!;
    if (reingest) ingestion.enqueue(id);
    ok(ctx, presentDocument(document, caller));
  });

  router.delete('/documents/:id', requireCaller, (ctx) => {
    if (!documents.deleteDocument(callerOf(ctx).id, parseId(ctx))) throw notFound('Document');
    ok(ctx, null);
  });
}
