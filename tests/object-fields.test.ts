// An array is not an object: every object-typed body field (a document's splitter, metadata and
// authorization, a tool's metadata, an agent's llm and tag objects) answers 422 for `[]`, as for any
// other non-object. valibot's object(), looseObject() and record() all accept arrays by themselves.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { assertInvalid, startService } from './helpers.js';
type AnySchema = any;

/** The schema under optional()/nullable() wrappers. */
function unwrap(schema: AnySchema): AnySchema {
  while (schema.wrapped !== undefined) schema = schema.wrapped;
  return schema;
}

/** The entries of an object schema, looking through a pipe (the object may come after a guard). */
function entriesOf(schema: AnySchema): Record<string, AnySchema> | undefined {
  const inner = unwrap(schema);
  if (inner.entries !== undefined) return inner.entries;
  for (const item of inner.pipe ?? []) if (item !== inner && item.kind === 'schema' && item.entries !== undefined) return item.entries;
  return undefined;
}

/** Every field, nested ones included, as [dotted path, schema]. */
function fieldsOf(schema: AnySchema, prefix = ''): [string, AnySchema][] {
  return Object.entries(entriesOf(schema) ?? {}).flatMap(([key, entry]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return [[path, entry] as [string, AnySchema], ...fieldsOf(entry, path)];
  });
}

const service = await startService();
/** The body schema of every mounted route, by `METHOD path`. */
const BODY_SCHEMAS = Object.fromEntries(
  service.app.routes
    .filter((route) => route.body !== undefined)
    .map((route) => [`${route.method.toUpperCase()} ${route.path}`, route.body]),
);

describe('no body field but an array field accepts an array', () => {
  test("every field of every mounted route's body schema (walked, so new endpoints and fields are covered)", () => {
    assert.ok(Object.keys(BODY_SCHEMAS).length >= 15, Object.keys(BODY_SCHEMAS).join(', '));
    const holes: string[] = [];
    let objectFields = 0;
    for (const [name, schema] of Object.entries(BODY_SCHEMAS)) {
      for (const [path, field] of fieldsOf(schema)) {
        if (unwrap(field).type === 'array') continue;
        // A field that is a string or an array (the OpenAI API's `stop`), or an empty array only (its refused `tools`), is an array field too.
        if (
          unwrap(field).type === 'union' &&
          unwrap(field).options.some((option: AnySchema) => unwrap(option).type === 'array' || option.pipe?.[0]?.type === 'array')
        )
          continue;
        if (entriesOf(field) !== undefined || unwrap(field).type === 'custom') objectFields += 1;
        if (v.safeParse(field, []).success) holes.push(`${name} ${path}`);
      }
    }
    assert.deepEqual(holes, []);
    assert.ok(objectFields >= 8, `found ${objectFields} object-typed fields: the walk sees them`);
  });
});

describe('over HTTP: [] where an object belongs is a 422 naming the field, and nothing is stored', () => {
  test('POST and PATCH /documents with splitter, metadata or authorization []', async () => {
    const { token } = await service.signUp();
    const document = { name: 'doc', type: 'TXT', url: 'https://example.com/a.txt' };
    for (const field of ['splitter', 'metadata', 'authorization']) {
      assertInvalid(await service.request('POST', '/api/v1/documents', { token, body: { ...document, [field]: [] } }), field);
    }
    const list = await service.request('GET', '/api/v1/documents', { token });
    assert.deepEqual(list.body.data, [], 'nothing stored');
    const created = await service.create(token, '/documents', document);
    for (const field of ['splitter', 'metadata', 'authorization']) {
      assertInvalid(await service.request('PATCH', `/api/v1/documents/${created.id}`, { token, body: { [field]: [] } }), field);
    }
  });

  test('tools metadata [], agents llm [] and a tag given as []', async () => {
    const { token } = await service.signUp();
    assertInvalid(await service.request('POST', '/api/v1/tools', { token, body: { name: 't', type: 'SEARCH', metadata: [] } }), 'metadata');
    const llm = { model: 'gpt-4o', provider: 'openai' };
    assertInvalid(await service.request('POST', '/api/v1/agents', { token, body: { name: 'a', type: 'REACT', llm: [] } }), 'llm');
    assertInvalid(
      await service.request('POST', '/api/v1/agents', { token, body: { name: 'a', type: 'REACT', llm, tags: [[]] } }),
      'tags.0',
    );
  });
});
