// Strings that are not well-formed Unicode (a lone UTF-16 surrogate such as "a\ud800b" in a JSON
// body, or percent-encoded bytes that are not UTF-8 in a query) are refused with a 422 naming the
// field, before anything is stored: SQLite would otherwise keep invalid UTF-8 and hand back U+FFFD.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertInvalid, errorOf, startService } from './helpers.js';

const service = await startService();
const { request } = service;
let token: string;

before(async () => {
  ({ token } = await service.signUp('Unicode'));
});

/** How many rows the table holds (nothing may be stored on a 422). */
const countOf = (table: string) => service.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

describe('strings that are not well-formed Unicode', () => {
  test('a lone surrogate in a top-level field is 422 naming the field; nothing is stored', async () => {
    const before = countOf('prompts');
    for (const bad of ['a\ud800b', '\udfff', 'x\udc00\ud800y', 'end\ud83d']) {
      const reply = await request('POST', '/api/v1/prompts', {
        token,
        raw: JSON.stringify({ name: bad, template: 'Hello', input_variables: [] }),
      });
      const error = assertInvalid(reply, 'name', JSON.stringify(bad));
      assert.match(error.details![0].message, /not well-formed Unicode/);
    }
    assert.equal(countOf('prompts'), before);
  });

  test('the JSON escape spelling (\\ud800) is refused the same way', async () => {
    const reply = await request('POST', '/api/v1/prompts', { token, raw: '{"name":"ok","template":"a\\ud800b","input_variables":[]}' });
    assertInvalid(reply, 'template');
  });

  test('every spelling of a surrogate escape (either case, high or low) is refused', async () => {
    const before = countOf('prompts');
    for (const escape of ['\\uD800', '\\uDBFF', '\\uDc00', '\\udfff', 'x\\uD83Dy']) {
      const reply = await request('POST', '/api/v1/prompts', { token, raw: `{"name":"ok","template":"${escape}","input_variables":[]}` });
      assertInvalid(reply, 'template', escape);
    }
    assert.equal(countOf('prompts'), before);
  });

  test('nested strings, array items and object keys are named by their path', async () => {
    const tool = { name: 'Search', type: 'SEARCH', metadata: { headers: { 'x-key': ['fine', 'bad\ud800'] } } };
    assertInvalid(await request('POST', '/api/v1/tools', { token, raw: JSON.stringify(tool) }), 'metadata.headers.x-key.1');
    const badKey = { name: 'Search', type: 'SEARCH', metadata: { ['k\udfff']: 1 } };
    const error = assertInvalid(await request('POST', '/api/v1/tools', { token, raw: JSON.stringify(badKey) }), 'metadata');
    assert.match(error.details![0].message, /key/);
  });

  test('on a PATCH the stored record stays as it was', async () => {
    const prompt = await service.create(token, '/prompts', { name: 'Kept', template: 'Hello', input_variables: [] });
    const reply = await request('PATCH', `/api/v1/prompts/${prompt.id}`, { token, raw: JSON.stringify({ name: 'a\ud800b' }) });
    assertInvalid(reply, 'name');
    const read = await request('GET', `/api/v1/prompts/${prompt.id}`, { token });
    assert.equal(read.body.data.name, 'Kept');
  });

  test('well-formed text, surrogate pairs (emoji) and U+FFFD itself are stored and returned intact', async () => {
    const name = 'Zażółć 😀 \ufffd \u{10ffff}';
    const prompt = await service.create(token, '/prompts', { name, template: 'Hi 👩‍👩‍👧', input_variables: [] });
    const read = await request('GET', `/api/v1/prompts/${prompt.id}`, { token });
    assert.equal(read.body.data.name, name);
    assert.equal(read.body.data.template, 'Hi 👩‍👩‍👧');
  });

  test('a query value whose percent-encoding is not UTF-8 is 422 naming the parameter', async () => {
    for (const bad of ['%ED%A0%80', '%FF', 'a%C3', '%C0%AF']) {
      const reply = await request('GET', `/api/v1/prompts?after=${bad}`, { token });
      const error = assertInvalid(reply, 'after', bad);
      assert.match(error.details![0].message, /not well-formed Unicode/);
    }
    // A bad parameter name is named as best it can be: the query itself.
    const reply = await request('GET', '/api/v1/prompts?%FF=1', { token });
    assert.equal(reply.status, 422);
    assert.equal(errorOf(reply).code, 'validation_failed');
  });

  test('well-formed percent-encoded query values still work', async () => {
    const reply = await request('GET', `/api/v1/prompts?limit=%31`, { token });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
  });
});
