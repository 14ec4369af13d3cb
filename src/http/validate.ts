// Validation of everything a client sends (body, query, path parameters) with valibot, and the
// schemas several resources share. A failure is a 422 with one entry per bad field.
import * as v from 'valibot';
import type { Context } from 'koa';
import { validationFailed, type FieldIssue } from './errors.js';
import type { PageRequest } from '../lib/paging.js';

export type AnySchema = v.GenericSchema<unknown, unknown>;

/** Parses `input` with `schema`, or throws a 422 naming each bad field (its first problem only). */
export function parse<S extends AnySchema>(schema: S, input: unknown, prefix = ''): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  throw invalidFields(result.issues, prefix);
}

/** `parse` for a schema with asynchronous checks. */
export async function parseAsync<S extends v.GenericSchema | v.GenericSchemaAsync>(
  schema: S,
  input: unknown,
  prefix = '',
): Promise<v.InferOutput<S>> {
  const result = await v.safeParseAsync(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  throw invalidFields(result.issues, prefix);
}

/** The 422 for valibot's `issues`: one entry per field, its first problem. */
function invalidFields(issues: readonly v.BaseIssue<unknown>[], prefix: string) {
  const byPath = new Map<string, FieldIssue>();
  for (const issue of issues) {
    const path = [prefix, v.getDotPath(issue)].filter(Boolean).join('.');
    if (!byPath.has(path)) byPath.set(path, { path, message: issue.message });
  }
  return validationFailed([...byPath.values()]);
}

/** The request body, which must be a JSON object (a missing body counts as `{}`). */
export function parseBody<S extends AnySchema>(ctx: Context, schema: S): v.InferOutput<S> {
  const body = ctx.request.body === undefined ? {} : ctx.request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationFailed([{ path: '', message: 'The request body must be a JSON object.' }]);
  }
  return parse(schema, body);
}

// ---- Shared schemas -------------------------------------------------------------------------------

/** An opaque record id as clients send it, in a path or a body. */
export const IdSchema = v.pipe(
  v.string('must be a string id'),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(64, 'is too long to be an id'),
);

/**
 * A display name: trimmed, 1-200 characters, one line without control characters (C0, DEL, C1, the
 * Unicode line and paragraph separators): names are shown in lists and in the operator's terminal,
 * where such characters would move the cursor, recolour the screen or forge extra lines.
 */
export const NameSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(200, 'must be at most 200 characters'),
  v.regex(/^[^\p{Cc}\u2028\u2029]*$/u, 'must not hold control characters or line breaks'),
);

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    // Credentials belong in a sealed field (never returned), not in the URL (returned as is).
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** An absolute http(s) URL without credentials; `credentials` says where those go instead. */
export function httpUrlSchema(credentials: string) {
  return v.pipe(
    v.string('must be a string'),
    v.trim(),
    v.maxLength(2048, 'must be at most 2048 characters'),
    v.check(isHttpUrl, `must be an absolute http(s) URL without credentials (${credentials})`),
  );
}

/**
 * Free text such as a token description (trimmed, at most 1000 characters). It may run over several
 * lines (tabs, line feeds and carriage returns are kept); other control characters (C0, DEL, C1),
 * which no one types and which would drive a terminal the text is printed on, are refused.
 */
export const DescriptionSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(1000, 'must be at most 1000 characters'),
  v.regex(/^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$/, 'must not hold control characters other than tabs and line breaks'),
);

const MAX_JSON_OBJECT_BYTES = 64 * 1024;
export const MAX_JSON_DEPTH = 32;

/**
 * How deeply `value` nests, counting up to `limit + 1` at most. Iterative, so a hostile
 * 100,000-level body cannot overflow the stack (JSON.stringify and SQLite's json() would).
 */
export function jsonDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * `schema` (an object schema) refusing arrays with its own message. valibot's object() and
 * looseObject() accept an array (it is an object to JavaScript); the schema is otherwise unchanged,
 * so the OpenAPI document still sees its fields.
 */
export function noArrays<const S extends v.GenericSchema>(schema: S): S {
  return {
    ...schema,
    '~run'(dataset, config) {
      // Handed `undefined` instead, the object schema reports its usual "must be an object" issue.
      return schema['~run'](Array.isArray(dataset.value) ? { ...dataset, value: undefined } : dataset, config);
    },
  };
}

/**
 * A JSON object of settings or values (metadata, credentials, prompt variables): at most 32 levels
 * deep and 64 KiB serialised. It passes on as parsed, every key kept: valibot's record() would drop
 * `constructor` and `prototype` (and `__proto__`, which the body reader drops already, so no key
 * here can reach a prototype), and would turn an array into an object.
 */
export const JsonObjectSchema = v.pipe(
  v.custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'must be an object'),
  v.check((value) => jsonDepth(value) <= MAX_JSON_DEPTH, `must be nested at most ${MAX_JSON_DEPTH} levels deep`),
  v.check(
    (value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_JSON_OBJECT_BYTES,
    `must be at most ${MAX_JSON_OBJECT_BYTES} bytes as JSON`,
  ),
);

/** A `?limit=` query parameter: a whole number from 1 to `max`, `fallback` when absent. */
export function limitSchema(max: number, fallback: number) {
  const message = `must be a whole number from 1 to ${max}`;
  return v.optional(
    v.pipe(
      v.string('must be given once'),
      v.regex(/^\d+$/, message),
      v.transform(Number),
      v.minValue(1, message),
      v.maxValue(max, message),
    ),
    String(fallback),
  );
}

/** The query of every list: `limit` (1-1000, default 100) and `after` (the last id of the previous page). */
export const ListQuerySchema = v.object({ limit: limitSchema(1000, 100), after: v.optional(IdSchema) });

/**
 * The page a list query asks for. `seqOf` finds the caller's row named by `after`; an `after` that
 * is not one of the caller's rows is a 422.
 */
export function pageRequest(query: { limit: number; after?: string }, seqOf: (id: string) => number | undefined): PageRequest {
  if (query.after === undefined) return { limit: query.limit, afterSeq: 0 };
  const afterSeq = seqOf(query.after);
  if (afterSeq === undefined) throw validationFailed([{ path: 'after', message: 'No record with this id in this list.' }]);
  return { limit: query.limit, afterSeq };
}
