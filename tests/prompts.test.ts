// `/prompts`: create as original clients do, and the added get, list, PATCH and DELETE.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertDeletes, assertHiddenFrom, assertInvalid, assertNotFound, errorOf, startService, TIMESTAMP, type Reply } from './helpers.js';

const service = await startService();
const { request, createPrompt } = service;

const BASE = { name: 'Summary', template: 'Summarise {text} in {words} words.', input_variables: ['text', 'words'] };

/** Asserts a 422 `validation_failed` whose message or details mention `word`. */
function assertInvalidNaming(reply: Reply, word: string): void {
  assert.equal(reply.status, 422, JSON.stringify(reply.body));
  const error = errorOf(reply);
  assert.equal(error.code, 'validation_failed');
  const text = [error.message, ...(error.details ?? []).map((issue) => issue.message)].join(' ');
  assert.ok(text.includes(word), `the error names ${word}: ${text}`);
}

describe('POST /prompts', () => {
  test('201 with name, template and input_variables echoed', async () => {
    const { token } = await service.signUp();
    const reply = await request('POST', '/api/v1/prompts', { token, body: BASE });
    assert.equal(reply.status, 201);
    assert.equal(reply.body.success, true);
    const prompt = reply.body.data;
    assert.equal(typeof prompt.id, 'string');
    assert.ok(prompt.id.length > 0);
    assert.equal(prompt.name, 'Summary');
    assert.equal(prompt.template, 'Summarise {text} in {words} words.');
    assert.deepEqual(prompt.input_variables, ['text', 'words']);
    assert.match(prompt.createdAt, TIMESTAMP);
    assert.match(prompt.updatedAt, TIMESTAMP);
  });

  test('{{ and }} are literal braces, not placeholders', async () => {
    const { token } = await service.signUp();
    const prompt = await createPrompt(token, { template: 'Reply as JSON {{"answer": "{question}"}}', input_variables: ['question'] });
    assert.equal(prompt.template, 'Reply as JSON {{"answer": "{question}"}}');
    assert.deepEqual(prompt.input_variables, ['question']);
    const literal = await createPrompt(token, { template: 'Only {{literal}} braces', input_variables: [] });
    assert.deepEqual(literal.input_variables, []);
  });

  test('input_variables [] is allowed with a template without placeholders', async () => {
    const { token } = await service.signUp();
    const prompt = await createPrompt(token, { template: 'Say hello.', input_variables: [] });
    assert.deepEqual(prompt.input_variables, []);
  });

  test('a placeholder not listed in input_variables is 422 naming it', async () => {
    const { token } = await service.signUp();
    assertInvalidNaming(
      await request('POST', '/api/v1/prompts', {
        token,
        body: { ...BASE, template: 'Summarise {text} for {audience}.', input_variables: ['text'] },
      }),
      'audience',
    );
    assertInvalidNaming(
      await request('POST', '/api/v1/prompts', { token, body: { ...BASE, template: 'Hello {recipient}', input_variables: [] } }),
      'recipient',
    );
  });

  test('a listed variable the template does not use is 422 naming it', async () => {
    const { token } = await service.signUp();
    assertInvalidNaming(
      await request('POST', '/api/v1/prompts', {
        token,
        body: { ...BASE, template: 'Summarise {text}.', input_variables: ['text', 'tone'] },
      }),
      'tone',
    );
    assertInvalidNaming(
      await request('POST', '/api/v1/prompts', { token, body: { ...BASE, template: 'Only {{tone}} literal', input_variables: ['tone'] } }),
      'tone',
    );
  });

  test('an unmatched { or } is 422 at path template', async () => {
    const { token } = await service.signUp();
    for (const template of ['Summarise {text', 'Summarise text}', 'Summarise {text} }', '{ {text}']) {
      assertInvalid(
        await request('POST', '/api/v1/prompts', { token, body: { ...BASE, template, input_variables: ['text'] } }),
        'template',
      );
    }
  });

  test('duplicates in input_variables are 422 at path input_variables', async () => {
    const { token } = await service.signUp();
    assertInvalid(
      await request('POST', '/api/v1/prompts', { token, body: { ...BASE, template: 'Hi {who}', input_variables: ['who', 'who'] } }),
      'input_variables',
    );
  });

  test('__proto__ cannot be a variable (no object could carry its value to the MCP tools): 422 naming it', async () => {
    const { token } = await service.signUp();
    const body = { ...BASE, template: 'Hi {__proto__}', input_variables: ['__proto__'] };
    const refused = assertInvalid(await request('POST', '/api/v1/prompts', { token, body }), 'input_variables.0');
    assert.match(refused.details![0].message, /cannot be __proto__/);
    assert.equal((await request('GET', '/api/v1/prompts', { token })).body.data.length, 0, 'nothing was stored');
  });

  test('name, template and input_variables are required', async () => {
    const { token } = await service.signUp();
    for (const field of ['name', 'template', 'input_variables'] as const) {
      const body: Record<string, unknown> = { ...BASE };
      delete body[field];
      assertInvalid(await request('POST', '/api/v1/prompts', { token, body }), field);
    }
    assertInvalid(await request('POST', '/api/v1/prompts', { token, body: { ...BASE, input_variables: 'text' } }), 'input_variables');
  });

  test('nothing is stored when validation fails', async () => {
    const { token } = await service.signUp();
    await request('POST', '/api/v1/prompts', { token, body: { ...BASE, input_variables: ['text'] } });
    const list = await request('GET', '/api/v1/prompts', { token });
    assert.deepEqual(list.body.data, []);
  });
});

describe('GET /prompts/{id}', () => {
  test('the prompt as created', async () => {
    const { token } = await service.signUp();
    const prompt = await createPrompt(token);
    const reply = await request('GET', `/api/v1/prompts/${prompt.id}`, { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.deepEqual(reply.body.data, prompt);
  });

  test('an unknown id is 404', async () => {
    const { token } = await service.signUp();
    assertNotFound(await request('GET', `/api/v1/prompts/${randomUUID()}`, { token }), 'unknown id');
  });
});

describe('GET /prompts', () => {
  test("an array of the caller's prompts, oldest first", async () => {
    const { token } = await service.signUp();
    const other = await service.signUp();
    const first = await createPrompt(token, { name: 'first' });
    await createPrompt(other.token, { name: 'not mine' });
    const second = await createPrompt(token, { name: 'second', template: 'Plain', input_variables: [] });

    const reply = await request('GET', '/api/v1/prompts', { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.deepEqual(
      reply.body.data.map((prompt: { id: string }) => prompt.id),
      [first.id, second.id],
    );
    assert.deepEqual(reply.body.data, [first, second]);
    assert.equal(reply.headers.get('link'), null);
  });
});

describe('PATCH /prompts/{id}', () => {
  test('changing only the template away from the stored variables is 422; the prompt is unchanged', async () => {
    const { token } = await service.signUp();
    const prompt = await createPrompt(token);
    assertInvalidNaming(
      await request('PATCH', `/api/v1/prompts/${prompt.id}`, { token, body: { template: 'Summarise {text} for {audience}.' } }),
      'audience',
    );
    assertInvalidNaming(
      await request('PATCH', `/api/v1/prompts/${prompt.id}`, { token, body: { template: 'Summarise {text}.' } }),
      'words',
    );
    const read = await request('GET', `/api/v1/prompts/${prompt.id}`, { token });
    assert.deepEqual(read.body.data, prompt);
  });

  test('changing only input_variables away from the stored template is 422', async () => {
    const { token } = await service.signUp();
    const prompt = await createPrompt(token);
    assertInvalidNaming(await request('PATCH', `/api/v1/prompts/${prompt.id}`, { token, body: { input_variables: ['text'] } }), 'words');
    const read = await request('GET', `/api/v1/prompts/${prompt.id}`, { token });
    assert.deepEqual(read.body.data, prompt);
  });

  test('changing template and input_variables together is 200 and moves updatedAt', async () => {
    const { token } = await service.signUp();
    const prompt = await createPrompt(token);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const reply = await request('PATCH', `/api/v1/prompts/${prompt.id}`, {
      token,
      body: { template: 'Translate {text} into {language}.', input_variables: ['text', 'language'] },
    });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.equal(reply.body.data.id, prompt.id);
    assert.equal(reply.body.data.name, prompt.name);
    assert.equal(reply.body.data.template, 'Translate {text} into {language}.');
    assert.deepEqual(reply.body.data.input_variables, ['text', 'language']);
    assert.equal(reply.body.data.createdAt, prompt.createdAt);
    assert.ok(reply.body.data.updatedAt > prompt.updatedAt, 'updatedAt moves forward');
    const read = await request('GET', `/api/v1/prompts/${prompt.id}`, { token });
    assert.deepEqual(read.body.data, reply.body.data);
  });

  test('a rename alone keeps template and variables', async () => {
    const { token } = await service.signUp();
    const prompt = await createPrompt(token);
    const reply = await request('PATCH', `/api/v1/prompts/${prompt.id}`, { token, body: { name: 'Renamed' } });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.data.name, 'Renamed');
    assert.equal(reply.body.data.template, prompt.template);
    assert.deepEqual(reply.body.data.input_variables, prompt.input_variables);
  });

  test('an unknown id is 404', async () => {
    const { token } = await service.signUp();
    assertNotFound(await request('PATCH', `/api/v1/prompts/${randomUUID()}`, { token, body: { name: 'x' } }), 'unknown id');
  });
});

describe('DELETE /prompts/{id}', () => {
  test('200 with data null; the prompt is gone afterwards', async () => {
    const { token } = await service.signUp();
    const prompt = await createPrompt(token);
    const keep = await createPrompt(token, { name: 'keep' });
    await assertDeletes(service, `/api/v1/prompts/${prompt.id}`, token);
    const list = await request('GET', '/api/v1/prompts', { token });
    assert.deepEqual(
      list.body.data.map((item: { id: string }) => item.id),
      [keep.id],
    );
  });
});

describe("another user's prompt", () => {
  test('is 404 on GET, PATCH and DELETE, and stays unchanged', async () => {
    const owner = await service.signUp();
    const stranger = await service.signUp();
    const prompt = await createPrompt(owner.token);
    await assertHiddenFrom(service, `/api/v1/prompts/${prompt.id}`, { record: prompt, owner: owner.token, stranger: stranger.token });
    const strangerList = await request('GET', '/api/v1/prompts', { token: stranger.token });
    assert.deepEqual(strangerList.body.data, []);
  });
});
