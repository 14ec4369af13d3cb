// Ingestion endpoints of documents: re-run ingestion, read the chunks, search across them.
// Mounted before the /documents/:id routes so `/documents/search` is not read as an id.
import type Router from '@koa/router';
import * as v from 'valibot';
import type { AppState } from '../http/context.js';
import type { Deps } from '../deps.js';
import { callerOf } from '../http/auth.js';
import { notFound, validationFailed } from '../http/errors.js';
import { ok, okPage } from '../http/respond.js';
import { IdSchema, limitSchema, parse, parseId, parsePageRequest } from '../http/validate.js';
import { presentDocument } from './present.js';
import { snippetHtml, toFtsQuery } from './search.js';

export const SearchQuerySchema = v.object({
  q: v.pipe(v.string('must be given once'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(1000, 'must be at most 1000 characters')),
  documentId: v.optional(IdSchema),
  agentId: v.optional(IdSchema),
  limit: limitSchema(100, 20),
});

export function documentIngestionRoutes(router: Router<AppState>, { stores, ingestion, requireCaller }: Deps): void {
  const { documents } = stores;
  const chunks = stores.ingestion;

  router.get('/documents/search', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const query = parse(SearchQuerySchema, ctx.query);
    const ftsQuery = toFtsQuery(query.q);
    if (ftsQuery === undefined) throw validationFailed([{ path: 'q', message: 'must hold at least one word' }]);
    const hits = chunks.search(caller.id, ftsQuery, query);
    ok(ctx, hits.map(({ rawSnippet, ...hit }) => ({ ...hit, snippet: snippetHtml(rawSnippet) })));
  });

  router.post('/documents/:id/ingest', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const id = parseId(ctx);
    if (!chunks.requestIngestion(caller.id, id)) throw notFound('Document');
    ingestion.enqueue(id);
    ok(ctx, presentDocument(documents.getDocument(caller.id, id)!, caller), 202);
  });

  router.get('/documents/:id/chunks', requireCaller, (ctx) => {
    const caller = callerOf(ctx);
    const id = parseId(ctx);
    // The query is checked first: a bad `limit` is a 422 whatever the id.
    const page = parsePageRequest(ctx, (chunkId) => chunks.seqOfChunk(caller.id, id, chunkId));
    if (!documents.getDocument(caller.id, id)) throw notFound('Document');
    okPage(ctx, chunks.listChunks(id, page), (chunk) => chunk);
  });
}
