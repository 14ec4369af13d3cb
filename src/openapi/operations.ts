// Every operation the service serves, with the schemas its handler validates with (imported from the
// resource modules, never restated) and the shape it answers with. The router stays the source of
// truth for which routes exist: tests/openapi.test.ts checks this table against it both ways.
import * as v from 'valibot';
import { CreateAgentSchema, UpdateAgentSchema } from '../agents/schema.js';
import { CreateApiTokenSchema, UpdateApiTokenSchema } from '../api-tokens/routes.js';
import { DeleteMeSchema, SignInSchema, SignUpSchema, UpdateMeSchema } from '../auth/schema.js';
import { CreateDocumentSchema, UpdateDocumentSchema } from '../documents/schema.js';
import { SearchQuerySchema } from '../documents/ingestion-routes.js';
import { ListQuerySchema } from '../http/validate.js';
import {
  AgentDocumentBodySchema,
  AgentDocumentFilterSchema,
  AgentToolBodySchema,
  AgentToolFilterSchema,
} from '../links/routes.js';
import { CreatePromptSchema, UpdatePromptSchema } from '../prompts/schema.js';
import { CreateTagSchema, UpdateTagSchema } from '../tags/schema.js';
import { CreateToolSchema, UpdateToolSchema } from '../tools/schema.js';
import {
  AgentDocumentSchema,
  AgentSchema,
  AgentToolSchema,
  ApiTokenSchema,
  ChunkSchema,
  SearchHitSchema,
  DocumentSchema,
  HealthSchema,
  PromptSchema,
  SignInResultSchema,
  SignUpResultSchema,
  TagSchema,
  ToolSchema,
  UserSchema,
  type ErrorStatus,
} from './resources.js';

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type QuerySchema = v.ObjectSchema<v.ObjectEntries, any>;

export interface Operation {
  method: HttpMethod;
  /** The path exactly as the router serves it (`:id` parameters), prefix included. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** The group the docs page shows it under. */
  tag: string;
  /** Whether the route needs a bearer token (it runs `requireCaller`). */
  auth: boolean;
  /** The schema the handler passes to `parseBody`. */
  body?: v.GenericSchema;
  /** The object schemas the handler parses `ctx.query` with; their entries are the query parameters. */
  query?: QuerySchema[];
  success: {
    status: 200 | 201 | 202;
    description: string;
    /** The shape of `data` in `{ success: true, data }`. */
    data: v.GenericSchema;
    /** A paged list: it may answer a `Link: <...>; rel="next"` header. */
    paged?: boolean;
    /** The body is this JSON document itself, not an envelope. */
    raw?: boolean;
  };
  /** Error statuses beyond those that follow from auth, body, query and path parameters. */
  errors?: ErrorStatus[];
  /** The endpoint's number in interface.md, when it has one. */
  interfaceEndpoint?: number;
}

const API = '/api/v1';

type Verb = 'list' | 'create' | 'get' | 'update' | 'delete';

interface ResourceSpec {
  /** The collection path under /api/v1, e.g. `/tools`. */
  path: string;
  tag: string;
  /** Names for summaries and operation ids: `tool`, `Tool`, `Tools`. */
  one: string;
  One: string;
  Many: string;
  /** The presented record. */
  schema: v.GenericSchema;
  create: v.GenericSchema;
  update?: v.GenericSchema;
  /** List filters besides `limit` and `after`. */
  filters?: QuerySchema;
  /** What DELETE answers: the deleted record (api-tokens) or null (everything else). */
  deleteAnswers?: 'record' | 'null';
  interfaceEndpoints?: Partial<Record<Verb, number>>;
  errors?: Partial<Record<Verb, ErrorStatus[]>>;
  notes?: Partial<Record<Verb, string>>;
}

/** `tool` → `a tool`, `agent` → `an agent`, `API token` → `an API token`. */
const article = (noun: string) => (/^[aeiouAEIOU]/.test(noun) ? `an ${noun}` : `a ${noun}`);

/** The list, create, get, update and delete operations of one resource (update only when it has one). */
function resourceOperations(spec: ResourceSpec): Operation[] {
  const base = API + spec.path;
  const common = (verb: Verb) => ({
    tag: spec.tag,
    auth: true,
    interfaceEndpoint: spec.interfaceEndpoints?.[verb],
    errors: spec.errors?.[verb],
    description: spec.notes?.[verb],
  });
  const operations: Operation[] = [
    {
      ...common('list'),
      method: 'get',
      path: base,
      operationId: `list${spec.Many}`,
      summary: `List ${spec.one}s`,
      query: [ListQuerySchema, ...(spec.filters ? [spec.filters] : [])],
      success: { status: 200, description: `A page of the caller's ${spec.one}s, oldest first.`, data: v.array(spec.schema), paged: true },
    },
    {
      ...common('create'),
      method: 'post',
      path: base,
      operationId: `create${spec.One}`,
      summary: `Create ${article(spec.one)}`,
      body: spec.create,
      success: { status: 201, description: `The new ${spec.one}.`, data: spec.schema },
    },
    {
      ...common('get'),
      method: 'get',
      path: `${base}/:id`,
      operationId: `get${spec.One}`,
      summary: `Get ${article(spec.one)}`,
      success: { status: 200, description: `The ${spec.one}.`, data: spec.schema },
    },
  ];
  if (spec.update) {
    operations.push({
      ...common('update'),
      method: 'patch',
      path: `${base}/:id`,
      operationId: `update${spec.One}`,
      summary: `Update ${article(spec.one)}`,
      body: spec.update,
      success: { status: 200, description: `The updated ${spec.one}.`, data: spec.schema },
    });
  }
  const answersRecord = spec.deleteAnswers === 'record';
  operations.push({
    ...common('delete'),
    method: 'delete',
    path: `${base}/:id`,
    operationId: `delete${spec.One}`,
    summary: `Delete ${article(spec.one)}`,
    success: {
      status: 200,
      description: answersRecord ? `The deleted ${spec.one}.` : `Deleted: data is null.`,
      data: answersRecord ? spec.schema : v.null(),
    },
  });
  return operations;
}

/** The operations of the whole service, in the order the docs page lists them. */
export const OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: `${API}/auth/sign-up`,
    operationId: 'signUp',
    summary: 'Sign up',
    description: 'Creates an account. It answers no token: sign in for one.',
    tag: 'Auth',
    auth: false,
    body: SignUpSchema,
    success: { status: 201, description: 'The new user, with the password hash and null related records.', data: SignUpResultSchema },
    errors: [409, 429],
    interfaceEndpoint: 1,
  },
  {
    method: 'post',
    path: `${API}/auth/sign-in`,
    operationId: 'signIn',
    summary: 'Sign in',
    description: 'Creates an API token (shown in GET /api-tokens, revocable) and answers its secret as `token`.',
    tag: 'Auth',
    auth: false,
    body: SignInSchema,
    success: { status: 200, description: 'The user, the bearer secret and its API token record.', data: SignInResultSchema },
    errors: [401, 429],
  },
  {
    method: 'get',
    path: `${API}/auth/me`,
    operationId: 'getMe',
    summary: 'Get the caller',
    tag: 'Auth',
    auth: true,
    success: { status: 200, description: 'The caller (no password hash).', data: UserSchema },
  },
  {
    method: 'patch',
    path: `${API}/auth/me`,
    operationId: 'updateMe',
    summary: "Update the caller's name or password",
    description: "A password change needs `currentPassword` and revokes the caller's other tokens.",
    tag: 'Auth',
    auth: true,
    body: UpdateMeSchema,
    success: { status: 200, description: 'The updated user.', data: UserSchema },
    errors: [403],
  },
  {
    method: 'delete',
    path: `${API}/auth/me`,
    operationId: 'deleteMe',
    summary: "Delete the caller's account",
    description: 'Deletes the account and everything it owns; needs the password.',
    tag: 'Auth',
    auth: true,
    body: DeleteMeSchema,
    success: { status: 200, description: 'Deleted: data is null.', data: v.null() },
    errors: [403],
  },
  ...resourceOperations({
    path: '/api-tokens',
    tag: 'API tokens',
    one: 'API token',
    One: 'ApiToken',
    Many: 'ApiTokens',
    schema: ApiTokenSchema,
    create: CreateApiTokenSchema,
    update: UpdateApiTokenSchema,
    deleteAnswers: 'record',
    interfaceEndpoints: { list: 2, create: 3, get: 4, delete: 5 },
    notes: { delete: 'The token stops working at once.' },
  }),
  ...resourceOperations({
    path: '/tools',
    tag: 'Tools',
    one: 'tool',
    One: 'Tool',
    Many: 'Tools',
    schema: ToolSchema,
    create: CreateToolSchema,
    update: UpdateToolSchema,
    interfaceEndpoints: { create: 7, get: 6 },
    notes: { create: '`metadata` is stored and never returned.', delete: "The tool's agent-tool links are deleted too." },
  }),
  ...resourceOperations({
    path: '/documents',
    tag: 'Documents',
    one: 'document',
    One: 'Document',
    Many: 'Documents',
    schema: DocumentSchema,
    create: CreateDocumentSchema,
    update: UpdateDocumentSchema,
    interfaceEndpoints: { list: 8, get: 9, create: 10 },
    notes: {
      create:
        '`to_page` takes a number or a numeric string, at least `from_page`. `authorization` is stored and never returned. ' +
        'The document is ingested in the background: watch `status`.',
      update: 'Changing `type`, `url`, the page range, `splitter` or `authorization` ingests the document again.',
      delete: "Its agent-document links and chunks are deleted; agents' `documentId` becomes null.",
    },
  }),
  {
    method: 'get',
    path: `${API}/documents/search`,
    operationId: 'searchDocuments',
    summary: "Search the caller's documents",
    description:
      'Full-text search (BM25) over the chunks of ready documents. Every word of `q` must match; ' +
      'punctuation and query syntax in `q` are ignored. Narrow it with `documentId` or `agentId` (its linked documents).',
    tag: 'Documents',
    auth: true,
    query: [SearchQuerySchema],
    success: { status: 200, description: 'The best-ranked chunks first.', data: v.array(SearchHitSchema) },
  },
  {
    method: 'post',
    path: `${API}/documents/:id/ingest`,
    operationId: 'ingestDocument',
    summary: 'Ingest a document again',
    description: 'Puts the document back to `pending` and queues it; a run still going is superseded.',
    tag: 'Documents',
    auth: true,
    success: { status: 202, description: 'The document, now pending.', data: DocumentSchema },
  },
  {
    method: 'get',
    path: `${API}/documents/:id/chunks`,
    operationId: 'listDocumentChunks',
    summary: "List a document's chunks",
    tag: 'Documents',
    auth: true,
    query: [ListQuerySchema],
    success: { status: 200, description: 'A page of the chunks, in document order.', data: v.array(ChunkSchema), paged: true },
  },
  ...resourceOperations({
    path: '/agents',
    tag: 'Agents',
    one: 'agent',
    One: 'Agent',
    Many: 'Agents',
    schema: AgentSchema,
    // Interface endpoint 19's only example posts an agent-document link to /agents: the handler
    // takes a body with `agentId` and no `name` as that request.
    create: v.union([CreateAgentSchema, AgentDocumentBodySchema]),
    update: UpdateAgentSchema,
    interfaceEndpoints: { list: 11, get: 12, create: 13 },
    errors: { create: [409] },
    notes: {
      create:
        'A body with `agentId` and no `name` creates an agent-document link instead (interface endpoint 19, as its example shows) and answers that link, like POST /agent-documents.',
      delete: 'Its links are deleted too.',
    },
  }).map((operation) =>
    operation.operationId === 'createAgent'
      ? { ...operation, success: { ...operation.success, data: v.union([AgentSchema, AgentDocumentSchema]) } }
      : operation,
  ),
  ...resourceOperations({
    path: '/prompts',
    tag: 'Prompts',
    one: 'prompt',
    One: 'Prompt',
    Many: 'Prompts',
    schema: PromptSchema,
    create: CreatePromptSchema,
    update: UpdatePromptSchema,
    interfaceEndpoints: { create: 14 },
    notes: {
      create: 'Every `{name}` in the template must be listed in `input_variables` and every listed variable used (`{{` and `}}` are literal braces).',
      delete: "Agents' `promptId` becomes null.",
    },
  }),
  ...resourceOperations({
    path: '/tags',
    tag: 'Tags',
    one: 'tag',
    One: 'Tag',
    Many: 'Tags',
    schema: TagSchema,
    create: CreateTagSchema,
    update: UpdateTagSchema,
    interfaceEndpoints: { create: 15, get: 16, delete: 17 },
    errors: { create: [403, 409], update: [403, 409] },
    notes: { create: "Names are unique per user, case-insensitively. A `userId` other than the caller's is a 403.", delete: "Removed from agents' `tags`." },
  }),
  ...resourceOperations({
    path: '/agent-documents',
    tag: 'Agent documents',
    one: 'agent-document link',
    One: 'AgentDocument',
    Many: 'AgentDocuments',
    schema: AgentDocumentSchema,
    create: AgentDocumentBodySchema,
    filters: AgentDocumentFilterSchema,
    interfaceEndpoints: { get: 18, create: 19 },
    errors: { create: [409] },
    notes: { list: "Filters with an id that is not the caller's match nothing." },
  }),
  ...resourceOperations({
    path: '/agent-tools',
    tag: 'Agent tools',
    one: 'agent-tool link',
    One: 'AgentTool',
    Many: 'AgentTools',
    schema: AgentToolSchema,
    create: AgentToolBodySchema,
    filters: AgentToolFilterSchema,
    interfaceEndpoints: { create: 20, delete: 21 },
    errors: { create: [409] },
    notes: { list: "Filters with an id that is not the caller's match nothing." },
  }),
  {
    method: 'get',
    path: `${API}/openapi.json`,
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI document',
    tag: 'Service',
    auth: false,
    success: { status: 200, description: 'The OpenAPI 3.1 document of this service.', data: v.record(v.string(), v.unknown()), raw: true },
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'getHealth',
    summary: 'Health check',
    description: 'Answers 200 when the database answers. Not under /api/v1.',
    tag: 'Service',
    auth: false,
    success: { status: 200, description: 'The service and its database answer.', data: HealthSchema },
  },
];
