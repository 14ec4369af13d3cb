// OPENAPI tools: an OpenAPI 3.x document (fetched from metadata.url or given inline as
// metadata.spec, JSON or YAML) becomes one function per operation. The model fills the
// operation's parameters and JSON body; its arguments are validated against that schema before
// anything is sent, and the request goes to the spec's own server only: the model never chooses
// the host, and path values cannot climb out of the operation's path.
import type { Ajv, ValidateFunction } from 'ajv';
import type { ToolFunction } from '../../lib/tool-contract.js';
import type { Built, ToolRecord } from '../kinds/kind.js';
import { callHttp, headersFromMetadata, ToolError, type ToolHttp } from './http-call.js';
import { readYaml, YamlUnreadable } from './openapi-parse.js';
import { jsonDepth } from '../../http/validate.js';

export const MAX_OPERATIONS = 32;
export const SPEC_MAX_BYTES = 1024 * 1024;
export const SPEC_CACHE_MS = 5 * 60_000;
const SPEC_TIMEOUT_MS = 10_000;

/**
 * How large a document may grow once its `$ref`s are inlined. A few kilobytes of `$ref`s that
 * each point twice at the next schema expand to tens of thousands of nodes, and every offered schema
 * is sent to the model on each call and compiled into a validator on the event loop: so what is
 * bounded is the expansion, counted as it is made (the work stops at the first part over a limit).
 * A part is one JSON value of a schema: an object, an array, a string, a number, a boolean or null.
 */
export const SCHEMA_LIMITS = {
  /** Parts of the schemas of all the operations read, together. */
  parts: 10_000,
  /** Parts of one operation's schema (its validator is compiled on its first call). */
  operationParts: 1_000,
  /** Characters of the names and strings in those schemas, together. */
  text: 256 * 1024,
  /** Levels of nesting of the document itself, and of a schema once its `$ref`s are inlined. */
  depth: 64,
} as const;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

type Json = Record<string, unknown>;

/** Why an operation (or the whole document) cannot be offered; the message goes into the run's warnings. */
class Unsupported extends Error {}

/** A spec that cannot be read as one JSON or YAML object: refused when a tool is created or changed. */
class Unreadable extends Unsupported {}

/**
 * A document or operation over SCHEMA_LIMITS: refused when a tool is created or changed; when met at
 * run time (a spec by URL) its operation is skipped, or the whole tool is left out (`document`).
 */
class OverLimit extends Unsupported {
  constructor(
    message: string,
    readonly scope: 'document' | 'operation',
  ) {
    super(message);
  }
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
}

/** One operation, ready to be offered and called. */
export interface Operation {
  operationId: string;
  method: string;
  path: string;
  description: string;
  parameters: Parameter[];
  /** The arguments field holding the JSON body, when the operation takes one. */
  bodyField?: string;
  /** JSON Schema of the arguments object, as the model sees it. */
  schema: Json;
  /** The model's arguments checked against `schema`: the problems found, none when they fit. */
  check: (args: unknown) => string[];
}

/** A loaded document: the server calls go to, the operations offered, and what was skipped. */
export interface OpenApiService {
  server: URL;
  operations: Operation[];
  warnings: string[];
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The JSON Schema validator, loaded on the first OPENAPI tool call: it is about 70 modules, which a
 * service that never calls such a tool should not load at start-up. (YAML is read on a worker
 * thread, which loads its reader itself: openapi-parse.ts.)
 */
interface Libraries {
  newAjv: () => Ajv;
}
let libraries: Promise<Libraries> | undefined;
function loadLibraries(): Promise<Libraries> {
  // CommonJS: `default` is its module.exports, under Node and in the production bundle alike (the
  // bundle gives a dynamically imported CommonJS module no named exports).
  libraries ??= import('ajv').then(({ default: ajv }) => ({
    // Compiling is synchronous and grows with the schema: without checking the schema against the
    // meta-schema or optimising the code it costs about a third (every problem is still reported,
    // so the model can mend all its arguments at once).
    newAjv: () =>
      new ajv.Ajv({
        strict: false,
        validateFormats: false,
        allErrors: true,
        addUsedSchema: false,
        validateSchema: false,
        code: { optimize: false },
      }),
  }));
  return libraries;
}

/** The document in `text`, read as JSON and else as YAML (on a worker: `signal` ends it). */
async function parseSpecText(text: string, signal?: AbortSignal): Promise<Json> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    try {
      doc = await readYaml(text, signal);
    } catch (error) {
      if (!(error instanceof YamlUnreadable)) throw error;
      throw new Unreadable(`the spec is neither JSON nor YAML (${error.message.split('\n')[0].slice(0, 120)})`);
    }
  }
  if (!isObject(doc)) throw new Unreadable('the spec is not a JSON or YAML object');
  return doc;
}

/** Refuses a document nested deeper than SCHEMA_LIMITS.depth (measured without recursion): everything after may then recurse over it. */
function checkDepth(doc: Json): Json {
  if (jsonDepth(doc, SCHEMA_LIMITS.depth) > SCHEMA_LIMITS.depth)
    throw new OverLimit(`the spec nests more than ${SCHEMA_LIMITS.depth} levels deep`, 'document');
  return doc;
}

/** What each `$ref` of a document points at, looked up once: a schema may be inlined many times. */
const pointerMemo = new WeakMap<Json, Map<string, unknown>>();

/** The value a local `$ref` ("#/components/schemas/Pet") points at. */
function resolvePointer(doc: Json, ref: string): unknown {
  let memo = pointerMemo.get(doc);
  if (memo === undefined) pointerMemo.set(doc, (memo = new Map()));
  if (memo.has(ref)) return memo.get(ref);
  if (!ref.startsWith('#/') && ref !== '#') throw new Unsupported(`it uses the external reference "${ref.slice(0, 80)}"`);
  const nowhere = () => new Unsupported(`the reference "${ref.slice(0, 80)}" points nowhere`);
  let node: unknown = doc;
  for (const raw of ref
    .slice(2)
    .split('/')
    .filter((part, i, all) => !(all.length === 1 && part === ''))) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      throw nowhere();
    }
    if ((!isObject(node) && !Array.isArray(node)) || !Object.hasOwn(node, key)) throw nowhere();
    node = (node as Json)[key];
  }
  memo.set(ref, node);
  return node;
}

/** Follows `$ref`s of a non-schema object (parameter, request body, path item). */
function deref(doc: Json, node: unknown, seen: string[] = []): unknown {
  if (isObject(node) && typeof node.$ref === 'string') {
    if (seen.includes(node.$ref) || seen.length > 20) throw new Unsupported(`the reference "${node.$ref.slice(0, 80)}" is circular`);
    return deref(doc, resolvePointer(doc, node.$ref), [...seen, node.$ref]);
  }
  return node;
}

const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required']);
const MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const DROPPED_KEYWORDS = new Set([
  'example',
  'xml',
  'externalDocs',
  'discriminator',
  '$schema',
  '$id',
  'nullable',
  'readOnly',
  'writeOnly',
  'deprecated',
]);

/** What the schemas read so far have spent of SCHEMA_LIMITS; `operation` names the one being read. */
class SchemaBudget {
  parts = 0;
  text = 0;
  private operationStart = 0;
  private operation = '';

  startOperation(operation: string): void {
    this.operationStart = this.parts;
    this.operation = operation;
  }

  /** Counts one part holding `text` characters at `depth`; throws OverLimit at the first part over a limit. */
  spend(depth: number, text = 0): void {
    this.parts += 1;
    this.text += text;
    if (depth > SCHEMA_LIMITS.depth) {
      throw new OverLimit(`its schema nests more than ${SCHEMA_LIMITS.depth} levels deep once $refs are inlined`, 'operation');
    }
    if (this.parts - this.operationStart > SCHEMA_LIMITS.operationParts) {
      throw new OverLimit(
        `its schema comes to more than ${SCHEMA_LIMITS.operationParts} parts once $refs are inlined (the limit for one operation)`,
        'operation',
      );
    }
    if (this.parts > SCHEMA_LIMITS.parts) {
      throw new OverLimit(
        `the schemas of its operations come to more than ${SCHEMA_LIMITS.parts} parts once $refs are inlined (the limit for a spec; passed at operation ${this.operation.slice(0, 100)})`,
        'document',
      );
    }
    if (this.text > SCHEMA_LIMITS.text) {
      throw new OverLimit(
        `the schemas of its operations hold more than ${SCHEMA_LIMITS.text / 1024} KiB of names and text once $refs are inlined (the limit for a spec; passed at operation ${this.operation.slice(0, 100)})`,
        'document',
      );
    }
  }
}

/** Counts a value kept as it is (`enum`, `default` …) against the budget, part by part. */
function countData(value: unknown, depth: number, budget: SchemaBudget): void {
  budget.spend(depth, typeof value === 'string' ? value.length : 0);
  if (Array.isArray(value)) for (const item of value) countData(item, depth + 1, budget);
  else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      budget.text += key.length;
      countData(item, depth + 1, budget);
    }
  }
}

/**
 * A JSON Schema for the model and the validator: `$ref`s inlined (a recursive one becomes "any"),
 * OpenAPI 3.0's `nullable` turned into a `null` type, OpenAPI-only keywords dropped. Every part it
 * makes is counted against `budget` as it is made, so neither its work nor its depth can run away.
 * `refs` holds the `$ref`s being inlined above this node.
 */
function cleanSchema(doc: Json, node: unknown, refs: Set<string>, depth: number, budget: SchemaBudget): unknown {
  if (Array.isArray(node)) {
    budget.spend(depth);
    return node.map((item) => cleanSchema(doc, item, refs, depth + 1, budget));
  }
  if (!isObject(node)) {
    countData(node, depth, budget);
    return node;
  }
  if (typeof node.$ref === 'string') {
    // A chain of `$ref`s (one pointing at another) is followed in this loop, not by recursion, and
    // each hop past the first counts as a part: a long chain inlines to one schema, but following
    // it is work all the same, and it must not be free of the budget nor deepen the stack.
    const followed: string[] = [];
    try {
      let target: unknown = node;
      while (isObject(target) && typeof target.$ref === 'string') {
        const ref = target.$ref;
        if (followed.length > 0 || refs.has(ref)) budget.spend(depth);
        if (refs.has(ref)) return { description: 'a nested value of the same shape as its parent' };
        refs.add(ref);
        followed.push(ref);
        target = resolvePointer(doc, ref);
      }
      return cleanSchema(doc, target, refs, depth, budget);
    } finally {
      for (const ref of followed) refs.delete(ref);
    }
  }
  budget.spend(depth);
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED_KEYWORDS.has(key) || key.startsWith('x-')) continue;
    budget.text += key.length;
    if (DATA_KEYWORDS.has(key)) {
      countData(value, depth + 1, budget);
      out[key] = value;
    } else if (MAP_KEYWORDS.has(key) && isObject(value)) {
      budget.spend(depth + 1);
      const map: Json = {};
      for (const [name, schema] of Object.entries(value)) {
        budget.text += name.length;
        map[name] = cleanSchema(doc, schema, refs, depth + 2, budget);
      }
      out[key] = map;
    } else out[key] = cleanSchema(doc, value, refs, depth + 1, budget);
  }
  if (node.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

/** A copy without the keywords a validator should not run on a schema a user wrote: regexes (catastrophic backtracking) and formats. */
function validationCopy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(validationCopy);
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'pattern' || key === 'patternProperties' || key === 'format') continue;
    out[key] = DATA_KEYWORDS.has(key) ? value : validationCopy(value);
  }
  return out;
}

/** The server a document's calls go to: its first `servers` URL (variables at their defaults), resolved against where the document came from. */
function serverOf(doc: Json, specUrl: URL | null): URL {
  const servers = Array.isArray(doc.servers) ? doc.servers : [];
  const first = isObject(servers[0]) ? servers[0] : undefined;
  let raw = typeof first?.url === 'string' ? first.url : undefined;
  if (raw !== undefined && isObject(first?.variables)) {
    for (const [name, variable] of Object.entries(first.variables)) {
      const value = isObject(variable) && variable.default !== undefined ? String(variable.default) : '';
      raw = raw.split(`{${name}}`).join(value);
    }
  }
  let server: URL;
  try {
    server = new URL(raw ?? '/', specUrl ?? undefined);
  } catch {
    throw new Unsupported(
      specUrl
        ? `its server URL "${String(raw).slice(0, 100)}" is not a URL`
        : 'an inline spec needs an absolute URL in "servers" (where its API is)',
    );
  }
  if (server.protocol !== 'http:' && server.protocol !== 'https:') throw new Unsupported('its server URL is not http or https');
  server.search = '';
  server.hash = '';
  return server;
}

function operationDescription(op: Json, method: string, path: string): string {
  const text = [op.summary, op.description].find((value): value is string => typeof value === 'string' && value.trim() !== '');
  return (text ?? `${method.toUpperCase()} ${path}`).trim().slice(0, 1000);
}

/**
 * The check of an operation's arguments against `schema`, its validator compiled on the first call
 * (compiling is synchronous work on the event loop that grows with the schema: a run pays it only
 * for an operation the model calls, and once per cached document).
 */
function lazyCheck(schema: Json, newAjv: () => Ajv): Operation['check'] {
  let validate: ValidateFunction | undefined;
  return (args) => {
    if (validate === undefined) {
      try {
        validate = newAjv().compile(validationCopy(schema) as Json);
      } catch (error) {
        throw new ToolError(`the operation's schema is not valid JSON Schema (${(error as Error).message.slice(0, 120)})`);
      }
    }
    if (validate(args)) return [];
    return (validate.errors ?? [])
      .slice(0, 5)
      .map(
        (e) =>
          `${e.instancePath || 'arguments'} ${e.message ?? 'is invalid'}${e.params && 'additionalProperty' in e.params ? ` ("${String(e.params.additionalProperty).slice(0, 40)}")` : ''}`,
      );
  };
}

/** One operation as an Operation, or Unsupported saying why not; its schemas are counted against `budget`. */
function buildOperation(
  doc: Json,
  budget: SchemaBudget,
  newAjv: () => Ajv,
  path: string,
  method: string,
  op: Json,
  shared: unknown[],
): Operation {
  const operationId = typeof op.operationId === 'string' && op.operationId.trim() !== '' ? op.operationId : `${method}_${path}`;
  budget.startOperation(operationId);
  const byKey = new Map<string, Json>();
  for (const raw of [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
    const param = deref(doc, raw);
    if (!isObject(param) || typeof param.name !== 'string' || typeof param.in !== 'string')
      throw new Unsupported('a parameter has no name or location');
    byKey.set(`${param.in}:${param.name}`, param);
  }
  const parameters: Parameter[] = [];
  const properties: Json = {};
  const required: string[] = [];
  for (const param of byKey.values()) {
    const name = param.name as string;
    const where = param.in as string;
    if (where === 'cookie') {
      if (param.required === true) throw new Unsupported(`it needs the cookie parameter "${name}"`);
      continue;
    }
    if (where !== 'path' && where !== 'query' && where !== 'header')
      throw new Unsupported(`parameter "${name}" is in "${where.slice(0, 20)}"`);
    if (Object.hasOwn(properties, name)) throw new Unsupported(`it has two parameters named "${name}"`);
    const content = isObject(param.content) ? Object.values(param.content).find(isObject) : undefined;
    budget.text += name.length;
    const schema = cleanSchema(doc, param.schema ?? content?.schema ?? {}, new Set(), 1, budget) as Json;
    if (typeof param.description === 'string' && schema.description === undefined) schema.description = param.description.slice(0, 500);
    properties[name] = schema;
    const isRequired = where === 'path' || param.required === true;
    if (isRequired) required.push(name);
    parameters.push({ name, in: where, required: isRequired });
  }
  const pathParameters = new Set(parameters.filter((p) => p.in === 'path').map((p) => p.name));
  for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
    if (!pathParameters.has(name)) throw new Unsupported(`its path variable "${name}" is not declared`);
  }
  let bodyField: string | undefined;
  const body = deref(doc, op.requestBody);
  if (isObject(body) && isObject(body.content)) {
    const jsonType = Object.keys(body.content).find((type) => /^application\/(.+\+)?json(;|$)/i.test(type.trim()));
    if (jsonType === undefined) {
      if (body.required === true)
        throw new Unsupported(`its request body is not JSON (${Object.keys(body.content).join(', ').slice(0, 80)})`);
    } else {
      bodyField = Object.hasOwn(properties, 'body') ? 'requestBody' : 'body';
      if (Object.hasOwn(properties, bodyField)) throw new Unsupported('it has parameters named both "body" and "requestBody"');
      const media = body.content[jsonType];
      const schema = cleanSchema(doc, isObject(media) ? (media.schema ?? {}) : {}, new Set(), 1, budget) as Json;
      if (typeof body.description === 'string' && schema.description === undefined) schema.description = body.description.slice(0, 500);
      properties[bodyField] = schema;
      if (body.required === true) required.push(bodyField);
    }
  }
  const schema: Json = { type: 'object', properties, required, additionalProperties: false };
  return {
    operationId,
    method,
    path,
    description: operationDescription(op, method, path),
    parameters,
    bodyField,
    schema,
    check: lazyCheck(schema, newAjv),
  };
}

/**
 * Reads a parsed document: its server and its first 32 supported operations; throws Unsupported for
 * a document that cannot be used at all. `strict` (a tool being saved): an operation over
 * SCHEMA_LIMITS throws OverLimit instead of being skipped.
 */
function readOpenApiDocument(doc: Json, specUrl: URL | null, libs: Libraries, strict = false): OpenApiService {
  if (typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3.')) {
    const what = typeof doc.swagger === 'string' ? `Swagger ${doc.swagger}` : 'not an OpenAPI document (no "openapi" field)';
    throw new Unsupported(`the spec is ${what}; only OpenAPI 3.x is supported`);
  }
  const server = serverOf(doc, specUrl);
  // One validator instance per document, made when its first operation is called.
  let ajv: Ajv | undefined;
  const newAjv = () => (ajv ??= libs.newAjv());
  const budget = new SchemaBudget();
  const operations: Operation[] = [];
  const warnings: string[] = [];
  let beyond = 0;
  for (const [path, rawItem] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    let item: unknown;
    try {
      item = deref(doc, rawItem);
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error;
      warnings.push(`path ${path.slice(0, 100)} was skipped: ${error.message}`);
      continue;
    }
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      if (operations.length >= MAX_OPERATIONS) {
        beyond += 1;
        continue;
      }
      const id = typeof op.operationId === 'string' ? op.operationId : `${method.toUpperCase()} ${path}`;
      try {
        operations.push(buildOperation(doc, budget, newAjv, path, method, op, shared));
      } catch (error) {
        if (!(error instanceof Unsupported)) throw error;
        if (error instanceof OverLimit && (strict || error.scope === 'document')) {
          throw error.scope === 'document' ? error : new OverLimit(`operation ${id.slice(0, 100)}: ${error.message}`, 'operation');
        }
        warnings.push(`operation ${id.slice(0, 100)} was skipped: ${error.message}`);
      }
    }
  }
  if (beyond > 0) warnings.push(`${beyond} operation(s) beyond the first ${MAX_OPERATIONS} were not offered`);
  return { server, operations, warnings };
}

const hasInlineSpec = (metadata: Json) => metadata.spec !== undefined && metadata.spec !== null && metadata.spec !== '';

/** The document in `spec` (`metadata.spec`, or the text fetched from `metadata.url`): an object, or JSON or YAML text. */
async function documentOf(spec: unknown, signal?: AbortSignal): Promise<Json> {
  if (isObject(spec)) return checkDepth(spec);
  if (typeof spec === 'string') return checkDepth(await parseSpecText(spec, signal));
  throw new Unsupported('metadata.spec must be the OpenAPI document, as an object or as JSON or YAML text');
}

/**
 * The spec a tool's metadata names, as given: `metadata.spec` (text or object), or the text of the
 * document at `metadata.url`. A failure to fetch it is not remembered (a server may be down for a moment).
 */
async function fetchSpec(
  metadata: Json,
  http: ToolHttp,
  signal: AbortSignal,
  deadline: number,
): Promise<{ spec: unknown; specUrl: URL | null }> {
  if (hasInlineSpec(metadata)) return { spec: metadata.spec, specUrl: null };
  if (typeof metadata.url !== 'string' || metadata.url === '')
    throw new Unsupported('metadata.url (where the OpenAPI spec is) or metadata.spec is missing');
  let specUrl: URL;
  try {
    specUrl = new URL(metadata.url);
  } catch {
    throw new Unsupported('metadata.url is not an absolute URL');
  }
  if (specUrl.protocol !== 'http:' && specUrl.protocol !== 'https:') throw new Unsupported('metadata.url must be an http or https URL');
  let answer;
  try {
    // The spec is fetched without metadata.headers: they are meant for the API, and the spec may live elsewhere.
    answer = await callHttp(
      { url: specUrl, method: 'GET' },
      { fetch: http.fetch, signal, deadline, maxBytes: SPEC_MAX_BYTES, timeoutMs: SPEC_TIMEOUT_MS },
    );
  } catch (error) {
    if (error instanceof ToolError) throw new Unsupported(`its spec could not be fetched: ${error.message}`);
    throw error;
  }
  if (answer.truncated) throw new Unsupported(`its spec is larger than ${SPEC_MAX_BYTES / 1024 / 1024} MiB`);
  return { spec: answer.text, specUrl };
}

/** What a tool's spec was read as: its service, or why it cannot be offered (Unsupported). */
const cache = new Map<string, { key: string; expires: number; read: OpenApiService | Unsupported }>();
const CACHE_ENTRIES = 200;

/** The tool's document, loaded (or from the cache of the last few minutes), or Unsupported. */
export async function loadOpenApiService(tool: ToolRecord, http: ToolHttp, signal: AbortSignal, deadline: number): Promise<OpenApiService> {
  const key = JSON.stringify([tool.metadata.url ?? null, tool.metadata.spec ?? null]);
  const hit = cache.get(tool.id);
  if (hit && hit.key === key && hit.expires > Date.now()) {
    if (hit.read instanceof Unsupported) throw hit.read;
    return hit.read;
  }
  const libs = await loadLibraries();
  const { spec, specUrl } = await fetchSpec(tool.metadata, http, signal, deadline);
  // A spec that cannot be read or offered is remembered like one that can: each run does not read it again.
  let read: OpenApiService | Unsupported;
  try {
    read = readOpenApiDocument(await documentOf(spec, signal), specUrl, libs);
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
    read = error;
  }
  cache.delete(tool.id);
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(tool.id, { key, expires: Date.now() + SPEC_CACHE_MS, read });
  if (read instanceof Unsupported) throw read;
  return read;
}

/**
 * Why a tool's inline `metadata.spec` cannot be saved (said of the field), or undefined: a spec that
 * cannot be read, or is over SCHEMA_LIMITS, is refused when the tool is created or changed, before
 * any run pays for it. (A spec by URL is read at run time, where the same reasons leave it or its
 * operations out with a warning.)
 */
export async function inlineSpecProblem(metadata: Json): Promise<string | undefined> {
  if (!hasInlineSpec(metadata)) return undefined;
  const libs = await loadLibraries();
  try {
    readOpenApiDocument(await documentOf(metadata.spec), null, libs, true);
  } catch (error) {
    if (error instanceof OverLimit) return `is too large to offer: ${error.message}`;
    if (error instanceof Unreadable) return `cannot be read: ${error.message}`;
    // Anything else a spec may lack is said in the run's warnings, as for a spec by URL.
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
  return undefined;
}

/** Forgets every cached spec (tests). */
export function clearOpenApiCache(): void {
  cache.clear();
}

/** `value` as it goes into a path, query or header: strings as they are, anything else as JSON. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The request an operation makes for validated `args`: always at the service's server. */
export function requestFor(
  service: OpenApiService,
  op: Operation,
  args: Json,
): { url: URL; headers: Record<string, string>; json?: unknown } {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = asText(args[name]);
    if (value === '.' || value === '..') throw new ToolError(`invalid arguments: "${name}" cannot be "${value}"`);
    return encodeURIComponent(value);
  });
  const base = service.server.href.replace(/\/$/, '');
  const url = new URL(base + (path.startsWith('/') ? path : `/${path}`));
  if (url.origin !== service.server.origin || !url.pathname.startsWith(service.server.pathname.replace(/\/$/, ''))) {
    throw new ToolError("invalid arguments: they would leave the API's server");
  }
  const headers: Record<string, string> = {};
  for (const param of op.parameters) {
    const value = args[param.name];
    if (value === undefined || param.in === 'path') continue;
    if (param.in === 'query') {
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(param.name, asText(item));
    } else {
      const text = asText(value);
      if (/[\r\n\0]/.test(text)) throw new ToolError(`invalid arguments: header "${param.name}" holds a line break`);
      headers[param.name] = text;
    }
  }
  return { url, headers, json: op.bodyField === undefined ? undefined : args[op.bodyField] };
}

/** The functions of an OPENAPI tool (named by `name`), or why it cannot be offered; `warnings` lists skipped operations. */
export async function openApiTools(
  tool: ToolRecord,
  name: (text: string) => string,
  http: ToolHttp,
  signal: AbortSignal,
  deadline: number,
): Promise<Built> {
  const headers = headersFromMetadata(tool.metadata);
  if (!headers.ok) return headers;
  let service: OpenApiService;
  try {
    service = await loadOpenApiService(tool, http, signal, deadline);
  } catch (error) {
    if (error instanceof Unsupported) return { ok: false, reason: error.message };
    throw error;
  }
  if (service.operations.length === 0)
    return {
      ok: false,
      reason: 'its spec has no operation that can be offered' + (service.warnings.length ? ` (${service.warnings[0]})` : ''),
    };
  const functions = service.operations.map((op): ToolFunction => ({
    name: name(`${tool.name}_${op.operationId}`),
    description: tool.description ? `${tool.description}: ${op.description}` : op.description,
    parameters: op.schema,
    toolId: tool.id,
    toolName: tool.name,
    async call(rawArgs, context) {
      const args = rawArgs === undefined || rawArgs === null ? {} : rawArgs;
      const problems = op.check(args);
      if (problems.length > 0) throw new ToolError(`invalid arguments: ${problems.join('; ')}`);
      const request = requestFor(service, op, args as Json);
      const answer = await callHttp(
        { url: request.url, method: op.method.toUpperCase(), headers: { ...request.headers, ...headers.value }, json: request.json },
        { ...http, ...context },
      );
      return answer.text;
    },
  }));
  return { ok: true, value: { functions, warnings: service.warnings.map((warning) => `tool "${tool.name}": ${warning}`) } };
}
