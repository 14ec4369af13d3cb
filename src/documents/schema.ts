// The shapes of `/documents`: request bodies, queries and the document, chunk and search hit as answered.
import * as v from 'valibot';
import { httpUrlSchema, IdSchema, JsonObjectSchema, limitSchema, NameSchema, noArrays } from '../http/validate.js';
import { AlwaysNull, Id, Integer, Timestamp } from '../http/shapes.js';
import { UserSchema } from '../users/schema.js';

export const DOCUMENT_TYPES = ['TXT', 'PDF', 'VIDEO', 'CSV', 'URL'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

const MAX_PAGE = 1_000_000;

const UrlSchema = httpUrlSchema('put those in authorization');

const PageSchema = v.pipe(
  v.number('must be a whole number'),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(MAX_PAGE, `must be at most ${MAX_PAGE}`),
);

/** The interface documents `to_page` as a string: a numeric string is read as its number. */
const ToPageSchema = v.pipe(
  v.union([v.number(), v.string()], 'must be a whole number or a numeric string'),
  v.transform((value) => (typeof value === 'string' && /^\s*\d{1,7}\s*$/.test(value) ? Number(value) : value)),
  PageSchema,
);

const SPLITTER_TYPES: Record<string, 'character' | 'recursive'> = {
  character: 'character',
  CharacterTextSplitter: 'character',
  recursive: 'recursive',
  RecursiveCharacterTextSplitter: 'recursive',
};

/** A splitter's chunk_size or chunk_overlap (in characters): a whole number from `min` to 100000. */
export const SplitterSizeSchema = (min: number) =>
  v.pipe(
    v.number('must be a whole number'),
    v.integer('must be a whole number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(100_000, 'must be at most 100000'),
  );

/**
 * A text splitter. `type` defaults to character (LangChain's CharacterTextSplitter); chunk_size to
 * 1000; chunk_overlap to 200, or a fifth of a smaller chunk_size, and must stay below chunk_size.
 */
export const SplitterSchema = v.pipe(
  noArrays(
    v.object(
      {
        type: v.optional(
          v.pipe(
            v.picklist(Object.keys(SPLITTER_TYPES), `must be one of ${Object.keys(SPLITTER_TYPES).join(', ')}`),
            v.transform((name) => SPLITTER_TYPES[name]),
          ),
          'character',
        ),
        chunk_size: v.optional(SplitterSizeSchema(1), 1000),
        chunk_overlap: v.optional(SplitterSizeSchema(0)),
      },
      'must be an object or null',
    ),
  ),
  v.transform((splitter) => ({
    type: splitter.type,
    chunk_size: splitter.chunk_size,
    chunk_overlap: splitter.chunk_overlap ?? Math.min(200, Math.floor(splitter.chunk_size / 5)),
  })),
  v.forward(
    v.check((splitter) => splitter.chunk_overlap < splitter.chunk_size, 'must be smaller than chunk_size'),
    ['chunk_overlap'],
  ),
);
export type { Splitter } from '../ingest/splitters.js';

const fields = {
  name: NameSchema,
  type: v.picklist(DOCUMENT_TYPES, `must be one of ${DOCUMENT_TYPES.join(', ')}`),
  url: UrlSchema,
  from_page: PageSchema,
  to_page: v.nullable(ToPageSchema),
  /** Access credentials for the URL: stored, never returned. */
  authorization: v.nullable(JsonObjectSchema),
  splitter: v.nullable(SplitterSchema),
  metadata: JsonObjectSchema,
};

export const CreateDocumentSchema = v.object({
  ...fields,
  from_page: v.optional(fields.from_page, 1),
  to_page: v.optional(fields.to_page, null),
  authorization: v.optional(fields.authorization, null),
  splitter: v.optional(fields.splitter, null),
  metadata: v.optional(fields.metadata, {}),
});
/**
 * The form fields of an uploaded document (multipart/form-data): the fields of a created one but
 * `url` (the file's own) and `authorization`; without `name` the file's name is taken, without
 * `type` it is told from the file.
 */
export const UploadFieldsSchema = v.object({
  name: v.optional(fields.name),
  type: v.optional(fields.type),
  from_page: v.optional(fields.from_page, 1),
  to_page: v.optional(fields.to_page, null),
  splitter: v.optional(fields.splitter, null),
  metadata: v.optional(fields.metadata, {}),
});
export type UploadFields = v.InferOutput<typeof UploadFieldsSchema>;
export const UpdateDocumentSchema = v.partial(v.object(fields));
export type DocumentInput = v.InferOutput<typeof CreateDocumentSchema>;
export type DocumentChange = v.InferOutput<typeof UpdateDocumentSchema>;

export const DOCUMENT_STATUSES = ['pending', 'processing', 'ready', 'failed'] as const;

/** List filters of GET /documents (besides `limit` and `after`). */
export const DocumentFilters = {
  status: v.optional(v.picklist(DOCUMENT_STATUSES, `must be one of ${DOCUMENT_STATUSES.join(', ')}`)),
  type: v.optional(v.picklist(DOCUMENT_TYPES, `must be one of ${DOCUMENT_TYPES.join(', ')}`)),
};

/** The query of GET /documents/{id}: `wait` seconds for ingestion to end (long poll). */
export const GetDocumentQuerySchema = v.object({
  wait: v.optional(
    v.pipe(
      v.string('must be given once'),
      v.regex(/^\d{1,2}(\.\d+)?$/, 'must be a number of seconds from 0 to 30'),
      v.transform(Number),
      v.maxValue(30, 'must be a number of seconds from 0 to 30'),
    ),
  ),
});

/** The query of GET /documents/search. */
export const SearchQuerySchema = v.object({
  q: v.pipe(
    v.string('must be given once'),
    v.trim(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(1000, 'must be at most 1000 characters'),
  ),
  documentId: v.optional(IdSchema),
  agentId: v.optional(IdSchema),
  limit: v.pipe(limitSchema(100, 20), v.description('How many hits to answer, best first: a whole number from 1 to 100 (default 20).')),
});

// ---- Answers ---------------------------------------------------------------------------------------

const SplitterShape = v.strictObject({
  type: v.picklist(['character', 'recursive']),
  chunk_size: Integer,
  chunk_overlap: Integer,
});

const IndexSummarySchema = v.strictObject({
  chunks: Integer,
  characters: Integer,
  pages: v.pipe(v.nullable(Integer), v.description('Pages in the PDF; null for other types.')),
  pagesRead: v.pipe(v.nullable(Integer), v.description('Pages read (the page range); null for other types.')),
  splitter: SplitterShape,
  ingestedAt: Timestamp,
});

/** A document as answered; its `authorization` is stored and never returned. */
export const DocumentSchema = v.strictObject({
  id: Id,
  userId: Id,
  user: UserSchema,
  name: v.string(),
  type: v.picklist(DOCUMENT_TYPES),
  url: v.string(),
  from_page: Integer,
  to_page: v.pipe(v.nullable(Integer), v.description('The last page to ingest (inclusive); null: to the end.')),
  splitter: v.pipe(v.nullable(SplitterShape), v.description('null: the default character splitter.')),
  metadata: v.record(v.string(), v.unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  status: v.pipe(
    v.picklist(DOCUMENT_STATUSES),
    v.description('Ingestion: pending → processing → ready, or failed with `error` saying why.'),
  ),
  error: v.pipe(v.nullable(v.string()), v.description('Why the last ingestion failed; null otherwise.')),
  index: v.pipe(v.nullable(IndexSummarySchema), v.description('What the last successful ingestion produced; null before.')),
  progress: v.pipe(
    v.optional(
      v.strictObject({
        phase: v.picklist(['fetching', 'extracting', 'storing']),
        chunksStored: Integer,
        chunksTotal: v.pipe(v.nullable(Integer), v.description('Known once the text is split.')),
      }),
    ),
    v.description('Present while `status` is processing, on the /documents endpoints: how far ingestion has got.'),
  ),
  hasAuthorization: v.pipe(
    v.boolean(),
    v.description(
      'Whether credentials are stored for the URL (never returned). A change of `url` to another origin without `authorization` drops them.',
    ),
  ),
  Agent: AlwaysNull,
});
export type Document = v.InferOutput<typeof DocumentSchema>;

/** One chunk of an ingested document's text. */
export const ChunkSchema = v.strictObject({
  id: Id,
  documentId: Id,
  position: v.pipe(Integer, v.description('0-based order of the chunk in its document.')),
  content: v.string(),
  createdAt: Timestamp,
});

/** A search result: a chunk ranked by BM25 (over the caller's chunks), with its document's name. */
export const SearchHitSchema = v.strictObject({
  chunkId: Id,
  documentId: Id,
  documentName: v.pipe(v.string(), v.description("The document's name.")),
  position: Integer,
  score: v.pipe(
    v.number(),
    v.description(
      "Relevance from 0 to 1, higher is better: BM25 over the caller's own chunks divided by the most these words could " +
        'score. A chunk of average length holding each word once scores about 0.45; repeated words and shorter chunks score higher.',
    ),
  ),
  snippet: v.pipe(v.string(), v.description('HTML: the text around the matches, escaped, with matches in <mark>…</mark>.')),
});

/** The components of the OpenAPI document this module names. */
export const DOCUMENT_COMPONENTS = { Document: DocumentSchema, Splitter: SplitterShape };
