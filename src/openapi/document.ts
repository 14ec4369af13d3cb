// Builds the OpenAPI 3.1 document from the routes the app mounts: request bodies, query and path
// parameters from the valibot schemas the routes validate with (their *input* shape, before
// trimming and defaults), responses from the routes' answer shapes, errors from ERRORS.
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type JsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { ERRORS, type ErrorStatus } from '../http/errors.js';
import { packageVersion } from '../lib/version.js';
import { defineRoute, fullPath, pathParameters, type Route } from '../http/route.js';
import { ErrorEnvelopeSchema, FieldIssueSchema, successEnvelope } from '../http/shapes.js';
import { IdSchema, JsonObjectSchema } from '../http/validate.js';
import { AgentBriefSchema, AgentSchema } from '../agents/schema.js';
import { ApiTokenSchema } from '../api-tokens/schema.js';
import { SignInResultSchema, SignUpResultSchema } from '../auth/schema.js';
import { DOCUMENT_COMPONENTS } from '../documents/schema.js';
import { AgentDocumentSchema, AgentToolSchema } from '../links/schema.js';
import { PromptSchema } from '../prompts/schema.js';
import { TagSchema } from '../tags/schema.js';
import { ToolSchema } from '../tools/schema.js';
import { SignedUpUserSchema, UserSchema } from '../users/schema.js';

/** The answer shapes that become named components (`$ref`s) of the document. */
const RESPONSE_COMPONENTS = {
  User: UserSchema,
  SignedUpUser: SignedUpUserSchema,
  ApiToken: ApiTokenSchema,
  Tool: ToolSchema,
  ...DOCUMENT_COMPONENTS,
  Tag: TagSchema,
  Prompt: PromptSchema,
  AgentBrief: AgentBriefSchema,
  Agent: AgentSchema,
  AgentDocument: AgentDocumentSchema,
  AgentTool: AgentToolSchema,
  SignUpResult: SignUpResultSchema,
  SignInResult: SignInResultSchema,
  FieldIssue: FieldIssueSchema,
  ErrorEnvelope: ErrorEnvelopeSchema,
} satisfies Record<string, v.GenericSchema>;

/** One operation of the document: a route, or a route with `when` and the route it passes to. */
interface Operation {
  route: Route;
  /** The bodies it takes and the shapes it answers, when several routes share the operation. */
  body?: v.GenericSchema;
  data?: v.GenericSchema;
  description?: string;
  /** The multipart/form-data body one of them takes (an upload). */
  form?: Route['form'];
}

type Json = Record<string, unknown>;

const SCHEMA_REF = '#/components/schemas/';

/**
 * Checks JSON Schema cannot state. They are still enforced (a 422 names them); the document is a
 * little looser than the service there, never stricter.
 */
const IGNORED_ACTIONS = ['trim', 'to_lower_case', 'check', 'forward'];

/** `custom` schemas are opaque to the converter: each one used in a request is described here. */
const CUSTOM_SCHEMAS = new Map<unknown, JsonSchema>([
  [
    JsonObjectSchema.pipe[0],
    { type: 'object', description: 'A JSON object (its size and nesting depth are limited; a 422 names the limit).' },
  ],
]);

/**
 * A case-insensitive regex source (the `i` flag, which JSON Schema patterns lack) spelled out:
 * every ASCII letter also matches its other case (`a-f` → `a-fA-F`, `x` → `[xX]`).
 */
export function caseInsensitivePattern(source: string): string {
  const other = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
  const isLetter = (c: string | undefined) => c !== undefined && /^[A-Za-z]$/.test(c);
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      out += c + (source[++i] ?? '');
    } else if (inClass) {
      if (c === ']') inClass = false;
      if (isLetter(c) && source[i + 1] === '-' && isLetter(source[i + 2])) {
        out += `${c}-${source[i + 2]}${other(c)}-${other(source[i + 2])}`;
        i += 2;
      } else {
        out += isLetter(c) ? c + other(c) : c;
      }
    } else if (c === '[') {
      inClass = true;
      out += c;
      if (source[i + 1] === '^') out += source[++i];
    } else {
      out += isLetter(c) ? `[${c}${other(c)}]` : c;
    }
  }
  return out;
}

/** The conversion settings; anything else the converter cannot express stops the service from starting. */
function conversion(typeMode: 'input' | 'output', definitions: Record<string, v.GenericSchema>): ConversionConfig {
  return {
    target: 'draft-2020-12',
    typeMode,
    errorMode: 'throw',
    definitions,
    ignoreActions: IGNORED_ACTIONS,
    overrideRef: ({ referenceId }) => SCHEMA_REF + referenceId,
    overrideAction({ valibotAction, jsonSchema }) {
      if (valibotAction.type !== 'regex') return undefined;
      const { source, flags } = (valibotAction as v.RegexAction<string, undefined>).requirement;
      if (flags.replace(/[iu]/g, '') !== '') throw new Error(`Regex flags "${flags}" have no JSON Schema equivalent: /${source}/${flags}`);
      return { ...jsonSchema, pattern: flags.includes('i') ? caseInsensitivePattern(source) : source };
    },
    overrideSchema({ valibotSchema, jsonSchema }) {
      const custom = CUSTOM_SCHEMAS.get(valibotSchema);
      if (custom) return custom;
      if (valibotSchema.type === 'custom') throw new Error('A custom valibot schema has no description in src/openapi/document.ts.');
      // Answers may gain fields (changes are additive), so the document does not close response
      // objects; the schemas stay strict so the tests catch an undocumented field.
      if (typeMode === 'output' && valibotSchema.type === 'strict_object' && Object.keys(jsonSchema.properties ?? {}).length > 0) {
        const { additionalProperties: _closed, ...open } = jsonSchema;
        return open;
      }
      return undefined;
    },
  };
}

/**
 * Converts many schemas at once, keyed by name. One call for all of them: the converter converts
 * every definition again on each call. Schemas that are definitions come back as `$ref`s.
 */
function convertAll(schemas: Record<string, v.GenericSchema>, config: ConversionConfig): Record<string, Json> {
  const converted = toJsonSchema(v.object(schemas), config) as { properties?: Record<string, Json> };
  return converted.properties ?? {};
}

const ERROR_RESPONSE_NAMES: Record<ErrorStatus, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'ValidationFailed',
  429: 'RateLimited',
  500: 'Internal',
  502: 'BadGateway',
  503: 'Unavailable',
  504: 'GatewayTimeout',
};

/** What the query parameters mean (their schemas come from the handlers' query schemas). */
const QUERY_PARAMETER_DESCRIPTIONS: Record<string, string> = {
  limit: 'How many records to answer: a whole number from 1 to 1000 (default 100).',
  after: 'The id of the last record of the previous page; the page starts after it.',
  agentId: 'Only links of this agent.',
  documentId: 'Only links to this document.',
  toolId: 'Only links to this tool.',
};

const REQUEST_ID_HEADER = {
  description: "The request's id (the client's X-Request-Id when it sent a sane one); server logs carry it.",
  schema: { type: 'string' },
};
const RETRY_AFTER_HEADER = { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } };

/** The error statuses an operation can answer, from what it takes. */
function errorStatuses({ route }: Operation): ErrorStatus[] {
  const statuses = new Set<ErrorStatus>(route.errors ?? []);
  if (route.auth) statuses.add(401).add(429);
  if (route.body) statuses.add(400).add(413).add(415).add(422);
  if (route.query) statuses.add(422);
  if (route.path.includes('/:')) statuses.add(404).add(422);
  if (route.errorFormat && statuses.delete(422)) statuses.add(route.errorFormat.validationStatus);
  statuses.add(500);
  // Everything but the document itself reads the database, which may be busy.
  if (!('raw' in route.success)) statuses.add(503);
  return [...statuses].sort((a, b) => a - b);
}

/** `/agents/:id` → `/agents/{id}`. */
export function openApiPath(routerPath: string): string {
  return routerPath.replace(/:(\w+)/g, '{$1}');
}

/** `createTool` → `CreateToolBody`: the component name of an operation's request body. */
function bodyName(route: Route): string {
  return `${route.operationId[0].toUpperCase()}${route.operationId.slice(1)}Body`;
}

/** The schema of `data` in a success answer (the whole body for a raw one). */
function answerData(route: Route): v.GenericSchema | undefined {
  const { success } = route;
  if ('page' in success) return v.array(success.page);
  if ('data' in success) return success.data;
  if ('raw' in success) return success.raw;
  if ('file' in success) return undefined;
  return success.json;
}

/**
 * The operations of `routes`: a route with `when` and the next route with the same method and path
 * are one operation, taking either body and answering either shape (the later route names it).
 */
function operationsOf(routes: Route[]): Operation[] {
  const operations: Operation[] = [];
  const pending = new Map<string, Route[]>();
  for (const route of routes) {
    const key = `${route.method} ${fullPath(route)}`;
    if (route.when) {
      pending.set(key, [...(pending.get(key) ?? []), route]);
      continue;
    }
    const variants = pending.get(key) ?? [];
    pending.delete(key);
    if (variants.length === 0) {
      operations.push({ route });
      continue;
    }
    const all = [route, ...variants];
    const bodies = all.map((r) => r.body).filter((b): b is v.GenericSchema => b !== undefined);
    const answers = all.map(answerData).filter((d): d is v.GenericSchema => d !== undefined);
    operations.push({
      route: { ...route, errors: [...new Set(all.flatMap((r) => r.errors ?? []))] },
      body: bodies.length > 1 ? v.union(bodies) : bodies[0],
      data: answers.length > 1 ? v.union(answers) : answers[0],
      description: all
        .map((r) => r.description)
        .filter(Boolean)
        .join(' '),
      form: all.find((r) => r.form)?.form,
    });
  }
  if (pending.size > 0) throw new Error(`A route with \`when\` has no route to pass to: ${[...pending.keys()].join(', ')}`);
  return operations;
}

/** The OpenAPI 3.1 document of `routes`. */
export function buildOpenApiDocument(routes: Route[]): Json {
  const operations = operationsOf(routes);
  // Each request body schema becomes a named component, once (the same schema object may serve two routes).
  const requestDefs: Record<string, v.GenericSchema> = {};
  const named = new Set<unknown>();
  for (const operation of operations) {
    const body = operation.body ?? operation.route.body;
    if (body && !named.has(body)) {
      named.add(body);
      requestDefs[bodyName(operation.route)] = body;
    }
  }
  const requestConfig = conversion('input', requestDefs);
  // The error bodies of route groups with their own format are components too.
  const responseComponents: Record<string, v.GenericSchema> = { ...RESPONSE_COMPONENTS };
  for (const { route } of operations) if (route.errorFormat) responseComponents[route.errorFormat.component] = route.errorFormat.schema;
  const responseConfig = conversion('output', responseComponents);
  const schemas = {
    ...toJsonSchemaDefs(responseComponents, responseConfig),
    ...toJsonSchemaDefs(requestDefs, requestConfig),
  };

  // Every schema an operation uses, converted in one pass per direction.
  const requests: Record<string, v.GenericSchema> = {};
  const answers: Record<string, v.GenericSchema> = {};
  for (const operation of operations) {
    const { route } = operation;
    const key = route.operationId;
    const body = operation.body ?? route.body;
    if (body) requests[`${key} body`] = body;
    const form = operation.form ?? route.form;
    if (form) requests[`${key} form`] = form.fields;
    for (const [name, entry] of Object.entries(queryEntries(route))) requests[`${key} query ${name}`] = entry;
    for (const name of pathParameters(route.path)) requests[`${key} path ${name}`] = route.params?.[name] ?? IdSchema;
    const data = operation.data ?? answerData(route);
    if (data) answers[key] = 'raw' in route.success ? data : successEnvelope(data);
    if ('accepted' in route.success && route.success.accepted) answers[`${key} accepted`] = successEnvelope(route.success.accepted.data);
  }
  const converted = { ...convertAll(requests, requestConfig), ...convertAll(answers, responseConfig) };

  const paths: Record<string, Record<string, Json>> = {};
  for (const operation of operations) {
    const path = openApiPath(fullPath(operation.route));
    paths[path] ??= {};
    paths[path][operation.route.method] = describeOperation(operation, converted);
  }

  return {
    openapi: '3.1.1',
    info: {
      title: 'Agent management service',
      version: packageVersion(),
      description: [
        'A self-hosted HTTP API for language-model agents with their tools, documents, prompts and tags.',
        '',
        'Every success answer is `{ "success": true, "data": ... }`; every failure is',
        '`{ "success": false, "data": null, "error": { "code", "message", "details"? } }` with a real HTTP status.',
        'The OpenAI-compatible API under `/v1` (tag OpenAI-compatible) answers as OpenAI does instead: its own objects, and errors as',
        '`{ "error": { "message", "type", "param", "code" } }` (a body that fails validation: 400).',
        'Authenticate with `Autorization: Bearer <token>` (the spelling the original clients send) or `Authorization: Bearer <token>`;',
        'get a token from POST /api/v1/auth/sign-in. Lists take `limit` (1-1000, default 100) and `after`',
        '(the id of the last record of the previous page) and answer `Link: <...>; rel="next"` while more records exist.',
      ].join('\n'),
    },
    servers: [{ url: '/', description: 'This service' }],
    tags: [...new Set(operations.map(({ route }) => route.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      responses: errorResponses(),
      headers: { 'X-Request-Id': REQUEST_ID_HEADER, 'Retry-After': RETRY_AFTER_HEADER },
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API token in `Authorization: Bearer <token>`.',
        },
        autorizationHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'Autorization',
          description:
            'The same token in the `Autorization` header (the spelling the original clients send): the value is `Bearer <token>`.',
        },
      },
    },
  };
}

/** The query parameters of a route: the entries of its query object schema. */
function queryEntries(route: Route): Record<string, v.GenericSchema> {
  const query = route.query as { entries?: Record<string, v.GenericSchema> } | undefined;
  return query?.entries ?? {};
}

/** One operation object; `converted` holds its schemas, keyed as buildOpenApiDocument keys them. */
function describeOperation(operation: Operation, converted: Record<string, Json>): Json {
  const { route } = operation;
  const key = route.operationId;
  const parameters: Json[] = [];
  for (const name of pathParameters(route.path)) {
    parameters.push({ name, in: 'path', required: true, schema: converted[`${key} path ${name}`] });
  }
  for (const [name, entry] of Object.entries(queryEntries(route))) {
    const optional = entry.type === 'optional' || entry.type === 'exact_optional' || entry.type === 'nullish';
    const description = v.getDescription(entry) ?? QUERY_PARAMETER_DESCRIPTIONS[name];
    parameters.push({
      name,
      in: 'query',
      required: !optional,
      ...(description ? { description } : {}),
      schema: converted[`${key} query ${name}`],
    });
  }

  const described: Json = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    security: route.auth ? [{ bearerAuth: [] }, { autorizationHeader: [] }] : [],
  };
  const description = operation.description ?? route.description;
  if (description) described.description = description;
  if (parameters.length > 0) described.parameters = parameters;
  const body = operation.body ?? route.body;
  if (body) {
    described.requestBody = {
      // A missing body counts as `{}`: it is optional exactly when `{}` is a valid body.
      required: !v.safeParse(body, {}).success,
      content: { 'application/json': { schema: converted[`${key} body`] } },
    };
  }
  const form = operation.form ?? route.form;
  if (form) {
    // Form fields are text: numbers as digits, objects as JSON text (OpenAPI's default encoding of an object part).
    const fields = converted[`${key} form`] as { properties?: Json; required?: string[] };
    const schema = {
      ...fields,
      type: 'object',
      properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', description: form.file }, ...fields.properties },
      required: ['file', ...(fields.required ?? [])],
    };
    const requestBody = (described.requestBody ??= { required: true, content: {} }) as { required: boolean; content: Json };
    requestBody.required = true;
    requestBody.content['multipart/form-data'] = { schema };
  }

  const { success } = route;
  const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
  if ('page' in success) {
    headers.Link = {
      description: 'Present while more records exist: `<URL of the next page>; rel="next"`.',
      schema: { type: 'string' },
    };
  }
  const content: Json = {};
  if (converted[key]) content['application/json'] = { schema: converted[key] };
  if ('file' in success) content['*/*'] = { schema: { type: 'string', contentMediaType: 'application/octet-stream' } };
  if ('stream' in success) {
    const events = Object.entries(success.stream.events).map(([name, carries]) => `\`${name}\`: ${carries}`);
    content['text/event-stream'] = {
      schema: { type: 'string', description: `Server-sent events, each \`event: <name>\` with one \`data:\` line. ${events.join(' ')}` },
    };
  }
  const responses: Json = { [success.status]: { description: success.description, headers, content } };
  if ('accepted' in success && success.accepted) {
    responses[202] = {
      description: success.accepted.description,
      headers,
      content: { 'application/json': { schema: converted[`${key} accepted`] } },
    };
  }
  const format = route.errorFormat;
  for (const status of errorStatuses(operation)) {
    responses[status] = format
      ? {
          description: `${ERROR_RESPONSE_NAMES[status]}, as a ${format.component}.`,
          headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
          content: { 'application/json': { schema: { $ref: SCHEMA_REF + format.component } } },
        }
      : { $ref: `#/components/responses/${ERROR_RESPONSE_NAMES[status]}` };
  }
  described.responses = responses;
  return described;
}

/** One reusable response per error status: the error envelope, the codes it carries and why. */
function errorResponses(): Json {
  const responses: Json = {};
  for (const status of Object.keys(ERROR_RESPONSE_NAMES).map(Number) as ErrorStatus[]) {
    const errors = ERRORS.filter((error) => error.status === status);
    const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
    if (status === 429 || status === 503) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    if (status === 405) headers.Allow = { description: 'The methods the path serves.', schema: { type: 'string' } };
    responses[ERROR_RESPONSE_NAMES[status]] = {
      description: errors.map((error) => `\`${error.code}\`: ${error.when}`).join(' '),
      headers,
      content: {
        'application/json': {
          schema: { $ref: `${SCHEMA_REF}ErrorEnvelope` },
          example: { success: false, data: null, error: { code: errors[0].code, message: errors[0].when } },
        },
      },
    };
  }
  return responses;
}

/** `GET /api/v1/openapi.json`: the document of `routes` (and of itself), built once, when the app is built. */
export function openApiRoute(routes: Route[]): Route {
  let serialised: string | undefined;
  const route: Route = defineRoute({
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI document',
    tag: 'Service',
    auth: false,
    success: { status: 200, description: 'The OpenAPI 3.1 document of this service.', raw: v.record(v.string(), v.unknown()) },
    // Built on the first request, not at start-up (about 60 ms and the schema converter's modules);
    // the test suite builds it, so a schema the converter cannot describe fails there.
    handler: (): string => (serialised ??= JSON.stringify(buildOpenApiDocument([...routes, route]))),
  });
  return route;
}

/** One schema as a JSON Schema document of its own, converted by the same rules as the OpenAPI document (request view). */
export function standaloneJsonSchema(schema: v.GenericSchema): Json {
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...(toJsonSchema(schema, conversion('input', {})) as Json) };
}
