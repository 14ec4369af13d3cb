// Edges of input validation, through HTTP: object keys that JavaScript objects also carry
// (`constructor`, `prototype`) are kept like any other key; a token's `expiresAt` must be a date on
// the calendar; names and descriptions refuse control characters that could drive a terminal; and
// the admin scripts print stored control characters escaped, whatever a row holds.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertInvalid, startService, type Json } from './helpers.js';
import { runScript } from './run-script.js';

const service = await startService();
const alice = await service.signUp('Alice');

const api = (method: string, path: string, body?: unknown, token = alice.token) =>
  service.request(method, `/api/v1${path}`, { token, body });

/** A tool's metadata as stored (unsealed). */
const storedMetadata = (toolId: string): Json =>
  JSON.parse(service.unseal(service.db.prepare(`SELECT metadata FROM tools WHERE id = ?`).pluck().get(toolId) as string));

const tokenCount = () => service.db.prepare(`SELECT count(*) FROM api_tokens`).pluck().get() as number;

describe('keys named constructor and prototype', () => {
  test('are prompt variables like any other: invoke and predict fill them', async () => {
    const prompt = await service.createPrompt(alice.token, {
      template: 'Hello {constructor} and {prototype}',
      input_variables: ['constructor', 'prototype'],
    });
    const agent = await service.createAgent(alice.token, { llm: { provider: 'echo', model: 'echo' }, promptId: prompt.id });
    // Long values: the prompt's estimated size (about four characters a token) shows that they filled it.
    const long = 'x'.repeat(4000);
    const invoked = await api('POST', `/agents/${agent.id}/invoke`, { input: 'hi', variables: { constructor: long, prototype: long } });
    assert.equal(invoked.status, 200, invoked.text);
    assert.equal(invoked.body.data.output, 'hi');
    assert.ok(invoked.body.data.usage.promptTokens >= 2000, JSON.stringify(invoked.body.data.usage));

    const predicted = await api('POST', `/agents/${agent.id}/predict`, { input: { input: 'hi', constructor: 'A', prototype: 'B' } });
    assert.equal(predicted.status, 200, predicted.text);
    assert.deepEqual(predicted.body, { success: true, data: 'hi' });

    // Still a variable that must be given.
    const missing = await api('POST', `/agents/${agent.id}/invoke`, { input: 'hi', variables: { constructor: 'A' } });
    assertInvalid(missing, 'variables.prototype');
  });

  test('are kept in metadata as sent: stored, exported and imported again; nothing is polluted', async () => {
    const metadata = { url: 'https://example.com', constructor: 'keep me', prototype: { a: 1 }, other: 1 };
    const tool = await service.createTool(alice.token, { type: 'SEARCH', metadata });
    assert.deepEqual(storedMetadata(tool.id), metadata);

    const agent = await service.createAgent(alice.token, { llm: { provider: 'echo', model: 'echo' } });
    await service.create(alice.token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
    const exported = await api('GET', `/agents/${agent.id}/export`);
    assert.equal(exported.status, 200, exported.text);
    assert.deepEqual(exported.body.tools[0].metadata, metadata);

    const imported = await api('POST', '/agents/import', exported.body);
    assert.equal(imported.status, 200, imported.text);
    const importedTool = service.db
      .prepare(`SELECT id FROM tools WHERE user_id = ? AND id != ? ORDER BY seq DESC`)
      .pluck()
      .get(alice.user.id, tool.id);
    assert.deepEqual(storedMetadata(importedTool as string), metadata);

    const changed = await api('PATCH', `/tools/${tool.id}`, { metadata: { url: 'https://example.com', constructor: 'changed' } });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(storedMetadata(tool.id), { url: 'https://example.com', constructor: 'changed' });

    // A document answers its metadata.
    const document = await service.createDocument(alice.token, { metadata: { constructor: 'c', prototype: 'p' } });
    assert.deepEqual(document.metadata, { constructor: 'c', prototype: 'p' });

    const plain: Json = {};
    assert.equal(plain.a, undefined);
    assert.equal(plain.constructor, Object);
  });
});

describe('expiresAt of a new API token', () => {
  test('a day that is not on the calendar is a 422 naming the field, and no token is made', async () => {
    const before = tokenCount();
    for (const expiresAt of ['2999-02-30T00:00:00Z', '2999-04-31T12:00:00Z', '2100-02-29T00:00:00Z', '2999-02-29T00:00:00+01:00']) {
      const error = assertInvalid(await api('POST', '/api-tokens', { expiresAt }), 'expiresAt', expiresAt);
      assert.match(error.details![0].message, /date that exists/, expiresAt);
    }
    // Offsets the format allows but no date parser reads, and the year 10000 in UTC.
    assertInvalid(await api('POST', '/api-tokens', { expiresAt: '2999-01-31T12:00:00+01' }), 'expiresAt');
    assertInvalid(await api('POST', '/api-tokens', { expiresAt: '9999-12-31T23:00:00-02:00' }), 'expiresAt');
    assert.equal(tokenCount(), before);
  });

  test('the last day of February in a leap year, and of a 31-day month, are kept as given', async () => {
    for (const [expiresAt, stored] of [
      ['2400-02-29T00:00:00Z', '2400-02-29T00:00:00.000000+00:00'],
      ['2999-12-31T23:59:59Z', '2999-12-31T23:59:59.000000+00:00'],
      ['2999-03-31T01:00:00+02:00', '2999-03-30T23:00:00.000000+00:00'],
    ]) {
      const reply = await api('POST', '/api-tokens', { expiresAt });
      assert.equal(reply.status, 201, reply.text);
      assert.equal(reply.body.data.expiresAt, stored);
    }
  });
});

describe('control characters in names and descriptions', () => {
  test('a name holding a control character or a line break is a 422, wherever names are given', async () => {
    const before = service.db.prepare(`SELECT count(*) FROM users`).pluck().get();
    for (const name of [
      'evil\u001b[2J\u001b[31mFAKE\nroot  admin@corp  line',
      'a\tb',
      'bell\u0007',
      'del\u007f',
      'csi\u009b31m',
      'next\u0085line',
      'line\u2028sep',
    ]) {
      const signUp = await service.request('POST', '/api/v1/auth/sign-up', {
        body: { name, email: `mallory.${Math.random()}@example.com`, password: 'correct horse battery' },
      });
      assertInvalid(signUp, 'name', JSON.stringify(name));
    }
    assert.equal(service.db.prepare(`SELECT count(*) FROM users`).pluck().get(), before);

    assertInvalid(await api('PATCH', '/auth/me', { name: 'Alice\r\nroot' }), 'name');
    assert.equal((await api('GET', '/auth/me')).body.data.name, 'Alice');
    assertInvalid(await api('POST', '/agents', { name: 'x\u001b', type: 'REACT', llm: { provider: 'echo', model: 'm' } }), 'name');
    // Trimmed first: line breaks around a name are not part of it; other Unicode is fine.
    const agent = await service.createAgent(alice.token, { name: '\n  Zażółć 😀 \u202eevil\t\n' });
    assert.equal(agent.name, 'Zażółć 😀 \u202eevil');
  });

  test('a description keeps tabs and line breaks, and refuses other control characters', async () => {
    const multiLine = 'line 1\n\tline 2\r\nline 3';
    const token = await service.create(alice.token, '/api-tokens', { description: multiLine });
    assert.equal(token.description, multiLine);
    const before = tokenCount();
    for (const description of ['\u001b[2Jcleared', 'nul\u0000', 'bs\u0008', 'del\u007f', 'csi\u009b2J']) {
      assertInvalid(await api('POST', '/api-tokens', { description }), 'description', JSON.stringify(description));
    }
    assert.equal(tokenCount(), before);
    assertInvalid(await api('PATCH', `/api-tokens/${token.id}`, { description: 'bell\u0007' }), 'description');
    assert.equal((await api('GET', `/api-tokens/${token.id}`)).body.data.description, multiLine);
  });
});

describe('the admin scripts print stored user text escaped', () => {
  // Rows written before the service refused control characters: set here past the API.
  const evilName = 'evil\u001b[2J\u001b[31mFAKE\nroot  admin@corp  line\u009b\u2028';
  const evilDescription = 'ok\u001b]0;title\u0007\r\nforged row';
  const env = { DATABASE_PATH: service.config.databasePath };
  /** Control characters other than the line feeds that end lines. */
  const RAW_CONTROL = /[^\P{Cc}\n]|[\u2028\u2029]/u;

  test('user:list, as a table and as JSON', async () => {
    const mallory = await service.signUp('Mallory');
    service.db.prepare(`UPDATE users SET name = ? WHERE id = ?`).run(evilName, mallory.user.id);

    const table = await runScript('scripts/admin-user-list.ts', [], env);
    assert.equal(table.code, 0, table.stderr);
    assert.doesNotMatch(table.stdout, RAW_CONTROL);
    const users = service.db.prepare(`SELECT count(*) FROM users`).pluck().get() as number;
    assert.equal(table.stdout.split('\n').length, users + 2, 'a header, a line per user, and the final line break');
    const row = table.stdout.split('\n').find((line) => line.includes(mallory.email));
    assert.ok(row?.includes('evil\\u001b[2J\\u001b[31mFAKE\\nroot  admin@corp  line\\u009b\\u2028'), table.stdout);

    const json = await runScript('scripts/admin-user-list.ts', ['--json'], env);
    assert.equal(json.code, 0, json.stderr);
    assert.doesNotMatch(json.stdout, RAW_CONTROL);
    const listed = (JSON.parse(json.stdout) as { email: string; name: string }[]).find((user) => user.email === mallory.email);
    assert.equal(listed?.name, evilName, 'the JSON holds the name as stored');
  });

  test('token:revoke, listing the tokens and revoking one', async () => {
    const bob = await service.signUp('Bob');
    const token = await service.create(bob.token, '/api-tokens', { description: 'plain' });
    service.db.prepare(`UPDATE api_tokens SET description = ? WHERE id = ?`).run(evilDescription, token.id);

    const listed = await runScript('scripts/admin-token-revoke.ts', ['--email', bob.email], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.doesNotMatch(listed.stdout, RAW_CONTROL);
    assert.match(listed.stdout, new RegExp(`^${token.id} .* ok\\\\u001b\\]0;title\\\\u0007\\\\r\\\\nforged row$`, 'm'));

    const revoked = await runScript('scripts/admin-token-revoke.ts', ['--id', token.id], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, `revoked token ${token.id} ("ok\\u001b]0;title\\u0007\\r\\nforged row") of ${bob.email}\n`);
  });
});
