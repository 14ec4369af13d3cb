// The JSON shapes the service answers with, as valibot schemas: the single description of what the
// presenters (src/*/present.ts) return, used by the OpenAPI document. tests/openapi.test.ts parses
// real responses of every operation with these schemas, so a presenter that changes shape fails there.
import * as v from 'valibot';
import { AGENT_TYPES } from '../agents/schema.js';
import { DOCUMENT_TYPES } from '../documents/schema.js';
import { TOOL_TYPES } from '../tools/schema.js';

const Id = v.pipe(v.string(), v.description('An opaque id (a UUID today; treat it as an opaque string).'));

const Timestamp = v.pipe(
  v.string(),
  v.isoTimestamp(),
  v.metadata({ description: 'ISO 8601 in UTC with six fractional digits.', examples: ['2026-11-22T10:15:30.123456+00:00'] }),
);

const NullTimestamp = v.nullable(Timestamp);

/** A related record the interface names but this service does not fill in: always null. */
const AlwaysNull = v.pipe(v.null(), v.description('Always null in this version.'));

/** A user as nested in other records and as GET /auth/me answers: never the password hash. */
export const UserSchema = v.strictObject({
  id: Id,
  email: v.pipe(v.string(), v.email()),
  name: v.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: AlwaysNull,
});

/** The user as sign-up answers (interface endpoint 1): with the password hash and null related records. */
export const SignedUpUserSchema = v.strictObject({
  ...UserSchema.entries,
  password: v.pipe(v.string(), v.description('The one-way scrypt hash of the password (never the password).')),
  profile: AlwaysNull,
  Agent: AlwaysNull,
  ApiToken: AlwaysNull,
  Document: AlwaysNull,
});

export const ApiTokenSchema = v.strictObject({
  id: Id,
  userId: Id,
  user: UserSchema,
  description: v.string(),
  token: v.pipe(v.string(), v.description('The bearer secret, in full (the interface returns it in every token response).')),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  expiresAt: v.pipe(NullTimestamp, v.description('When the token stops working; null: never.')),
  lastUsedAt: v.pipe(NullTimestamp, v.description('When a request last used the token (to the minute); null: never used.')),
});

/** A tool; its `metadata` is stored and never returned (it holds secrets). */
export const ToolSchema = v.strictObject({
  id: Id,
  userId: Id,
  user: UserSchema,
  name: v.string(),
  type: v.picklist(TOOL_TYPES),
  description: v.pipe(v.nullable(v.string()), v.description('What the model is told the tool does; null: a default for its type.')),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const SplitterSchema = v.strictObject({
  type: v.picklist(['character', 'recursive']),
  chunk_size: v.pipe(v.number(), v.integer()),
  chunk_overlap: v.pipe(v.number(), v.integer()),
});

const IndexSummarySchema = v.strictObject({
  chunks: v.pipe(v.number(), v.integer()),
  characters: v.pipe(v.number(), v.integer()),
  pages: v.pipe(v.nullable(v.pipe(v.number(), v.integer())), v.description('Pages in the PDF; null for other types.')),
  pagesRead: v.pipe(v.nullable(v.pipe(v.number(), v.integer())), v.description('Pages read (the page range); null for other types.')),
  splitter: SplitterSchema,
  ingestedAt: Timestamp,
});

/** A document; its `authorization` is stored and never returned. */
export const DocumentSchema = v.strictObject({
  id: Id,
  userId: Id,
  user: UserSchema,
  name: v.string(),
  type: v.picklist(DOCUMENT_TYPES),
  url: v.string(),
  from_page: v.pipe(v.number(), v.integer()),
  to_page: v.pipe(v.nullable(v.pipe(v.number(), v.integer())), v.description('The last page to ingest (inclusive); null: to the end.')),
  splitter: v.pipe(v.nullable(SplitterSchema), v.description('null: the default character splitter.')),
  metadata: v.record(v.string(), v.unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  status: v.pipe(
    v.picklist(['pending', 'processing', 'ready', 'failed']),
    v.description('Ingestion: pending → processing → ready, or failed with `error` saying why.'),
  ),
  error: v.pipe(v.nullable(v.string()), v.description('Why the last ingestion failed; null otherwise.')),
  index: v.pipe(v.nullable(IndexSummarySchema), v.description('What the last successful ingestion produced; null before.')),
  Agent: AlwaysNull,
});

/** One chunk of an ingested document's text. */
export const ChunkSchema = v.strictObject({
  id: Id,
  documentId: Id,
  position: v.pipe(v.number(), v.integer(), v.description('0-based order of the chunk in its document.')),
  content: v.string(),
  createdAt: Timestamp,
});

/** A search result: a chunk ranked by BM25. */
export const SearchHitSchema = v.strictObject({
  chunkId: Id,
  documentId: Id,
  position: v.pipe(v.number(), v.integer()),
  score: v.pipe(v.number(), v.description('BM25 relevance: higher is better.')),
  snippet: v.pipe(v.string(), v.description('HTML: the text around the matches, escaped, with matches in <mark>…</mark>.')),
});

export const TagSchema = v.strictObject({
  id: Id,
  userId: Id,
  name: v.string(),
  color: v.pipe(v.string(), v.description('A CSS hex colour: #rgb, #rgba, #rrggbb or #rrggbbaa.')),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const PromptSchema = v.strictObject({
  id: Id,
  userId: Id,
  name: v.string(),
  template: v.string(),
  input_variables: v.array(v.string()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** An agent as nested in link records: without its document and tags. */
export const AgentBriefSchema = v.strictObject({
  id: Id,
  userId: Id,
  user: UserSchema,
  name: v.string(),
  type: v.picklist(AGENT_TYPES),
  llm: v.strictObject({ model: v.string(), provider: v.string() }),
  hasMemory: v.boolean(),
  AgentMemory: v.pipe(
    v.nullable(v.strictObject({ sessions: v.pipe(v.number(), v.integer()), messages: v.pipe(v.number(), v.integer()) })),
    v.description('null when hasMemory is false; else how many sessions and messages the agent remembers.'),
  ),
  promptId: v.nullable(Id),
  documentId: v.nullable(Id),
  description: v.nullable(v.string()),
  avatarUrl: v.pipe(v.nullable(v.string()), v.description('An http(s) URL of a picture of the agent.')),
  isListed: v.pipe(v.boolean(), v.description('Shown to every user in GET /agents/library (public fields only).')),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** `{}`: how the interface shows a related record that is absent. */
const EmptyObject = v.pipe(v.strictObject({}), v.metadata({ maxProperties: 0, description: 'An empty object: no record.' }));

/** An agent as create, get, list and update answer. */
export const AgentSchema = v.strictObject({
  ...AgentBriefSchema.entries,
  document: v.pipe(v.union([DocumentSchema, EmptyObject]), v.description('The document named by documentId, or {} when none.')),
  tags: v.array(TagSchema),
});

const linkEntries = {
  id: Id,
  userId: Id,
  user: UserSchema,
  agent: AgentBriefSchema,
  agentId: Id,
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const AgentDocumentSchema = v.strictObject({ ...linkEntries, document: DocumentSchema, documentId: Id });
export const AgentToolSchema = v.strictObject({ ...linkEntries, tool: ToolSchema, toolId: Id });

export const SignUpResultSchema = v.strictObject({ user: SignedUpUserSchema });

export const SignInResultSchema = v.strictObject({
  user: UserSchema,
  token: v.pipe(v.string(), v.description('The bearer secret: send it as `Autorization: Bearer <token>` (or `Authorization`).')),
  apiToken: ApiTokenSchema,
});

export const HealthSchema = v.strictObject({ status: v.literal('ok') });

/** `{ success: true, data }`: every success answer (but the OpenAPI document itself). */
export function successEnvelope<Data extends v.GenericSchema>(data: Data) {
  return v.strictObject({ success: v.literal(true), data });
}

// ---- Errors ---------------------------------------------------------------------------------------

/** Every error a client can get: its status, its stable code and when it happens (decisions.md). */
export const ERRORS = [
  { status: 400, code: 'invalid_json', when: 'The request body is not JSON, is cut short, or does not decompress as its Content-Encoding says.' },
  { status: 401, code: 'unauthorized', when: 'No credential; an unknown, expired or revoked token; a wrong sign-in.' },
  { status: 403, code: 'forbidden', when: 'Authenticated but not allowed (a body userId naming another user, a wrong current password).' },
  { status: 404, code: 'not_found', when: "An unknown route, or an id that does not exist or is another user's." },
  { status: 405, code: 'method_not_allowed', when: 'A known path with a method it does not serve (see the Allow header).' },
  { status: 409, code: 'conflict', when: 'A unique clash: email already registered, duplicate link, duplicate tag name.' },
  { status: 413, code: 'payload_too_large', when: 'The request body is over the limit (1 MiB by default).' },
  { status: 415, code: 'unsupported_media_type', when: 'A request body that is not application/json, or in an unknown encoding or charset.' },
  {
    status: 422,
    code: 'validation_failed',
    when: "A body, query or path parameter fails validation, or a body reference is not one of the caller's records.",
  },
  { status: 429, code: 'rate_limited', when: 'Too many requests; wait for the Retry-After header (seconds).' },
  { status: 500, code: 'internal', when: 'Anything unexpected (logged on the server with the request id).' },
  { status: 503, code: 'unavailable', when: 'The database is busy; retry after the Retry-After header (seconds).' },
] as const;

export type ErrorStatus = (typeof ERRORS)[number]['status'];

export const FieldIssueSchema = v.strictObject({
  path: v.pipe(v.string(), v.description('The dotted field path; "" for the body itself.')),
  message: v.string(),
});

/** `{ success: false, data: null, error }`: every failure. */
export const ErrorEnvelopeSchema = v.strictObject({
  success: v.literal(false),
  data: v.null(),
  error: v.strictObject({
    code: v.picklist(ERRORS.map((error) => error.code)),
    message: v.string(),
    details: v.pipe(v.optional(v.array(FieldIssueSchema)), v.description('For validation_failed: one entry per bad field.')),
  }),
});

/** The schemas that become named components of the OpenAPI document. */
export const RESPONSE_COMPONENTS = {
  User: UserSchema,
  SignedUpUser: SignedUpUserSchema,
  ApiToken: ApiTokenSchema,
  Tool: ToolSchema,
  Document: DocumentSchema,
  Splitter: SplitterSchema,
  Tag: TagSchema,
  Prompt: PromptSchema,
  AgentBrief: AgentBriefSchema,
  Agent: AgentSchema,
  AgentDocument: AgentDocumentSchema,
  AgentTool: AgentToolSchema,
  SignUpResult: SignUpResultSchema,
  SignInResult: SignInResultSchema,
  Health: HealthSchema,
  FieldIssue: FieldIssueSchema,
  ErrorEnvelope: ErrorEnvelopeSchema,
} satisfies Record<string, v.GenericSchema>;
