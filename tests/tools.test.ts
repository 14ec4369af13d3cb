// `/tools`: create and read as original clients do, and the added list, PATCH and DELETE.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { deepSpecText, refChainSpec } from './fixtures/openapi-specs.js';
import { assertDeletes, assertHiddenFrom, assertInvalid, assertNotFound, errorOf, startService, TIMESTAMP, type Reply } from './helpers.js';

const service = await startService();
const { request, createTool } = service;

const TOOL_TYPES = ['SEARCH', 'ENGINE_ALPHA', 'HOSTED_MODEL', 'AUTOMATION_NLA', 'AGENT', 'OPENAPI'];
const SECRET = 'nla-secret-5c1f7e0b9a';

/**
 * The stored `metadata` column of a tool as kept in the database file. The service may seal it at
 * rest, so tests compare stored values rather than read them.
 */
function storedMetadata(id: string): string | null {
  return service.db.prepare('SELECT metadata FROM tools WHERE id = ?').pluck().get(id) as string | null;
}

/** Asserts neither the metadata key's value nor the metadata field appears in a response. */
function assertNoSecret(reply: Reply): void {
  const text = JSON.stringify(reply.body);
  assert.ok(!text.includes(SECRET), `the secret leaked: ${text}`);
  const records = Array.isArray(reply.body.data) ? reply.body.data : [reply.body.data];
  for (const record of records) assert.ok(!('metadata' in record), 'metadata is never echoed');
}

describe('POST /tools', () => {
  test('201 with id, name, type, userId, user and timestamps; metadata not echoed', async () => {
    const { token, user, email } = await service.signUp('Tool Owner');
    const reply = await request('POST', '/api/v1/tools', {
      token,
      body: { name: 'Zaps', type: 'AUTOMATION_NLA', metadata: { automation_nla_api_key: SECRET } },
    });
    assert.equal(reply.status, 201);
    assert.equal(reply.body.success, true);
    const tool = reply.body.data;
    assert.equal(typeof tool.id, 'string');
    assert.ok(tool.id.length > 0);
    assert.equal(tool.name, 'Zaps');
    assert.equal(tool.type, 'AUTOMATION_NLA');
    assert.equal(tool.userId, user.id);
    assert.equal(tool.user.id, user.id);
    assert.equal(tool.user.email, email);
    assert.equal(tool.user.name, 'Tool Owner');
    assert.ok(!('password' in tool.user), 'the nested user never carries the hash');
    assert.match(tool.createdAt, TIMESTAMP);
    assert.match(tool.updatedAt, TIMESTAMP);
    assertNoSecret(reply);
  });

  test('the metadata is kept (stored) though never shown', async () => {
    const { token } = await service.signUp();
    const tool = await createTool(token, { type: 'AUTOMATION_NLA', metadata: { automation_nla_api_key: SECRET } });
    const stored = storedMetadata(tool.id);
    assert.equal(typeof stored, 'string');
    assert.ok(stored!.length > 0);
    const renamed = await request('PATCH', `/api/v1/tools/${tool.id}`, { token, body: { name: 'renamed' } });
    assert.equal(renamed.status, 200);
    assert.equal(storedMetadata(tool.id), stored, 'a PATCH without metadata keeps it');
  });

  test('every tool type original clients send is accepted', async () => {
    const { token } = await service.signUp();
    for (const type of TOOL_TYPES) {
      const reply = await request('POST', '/api/v1/tools', { token, body: { name: `tool ${type}`, type } });
      assert.equal(reply.status, 201, type);
      assert.equal(reply.body.data.type, type);
    }
  });

  test('the name is trimmed; a name of exactly 200 characters is accepted', async () => {
    const { token } = await service.signUp();
    assert.equal((await createTool(token, { name: '  Search  ' })).name, 'Search');
    assert.equal((await createTool(token, { name: 'n'.repeat(200) })).name, 'n'.repeat(200));
  });

  test('an unknown type is 422 at path type', async () => {
    const { token } = await service.signUp();
    assertInvalid(await request('POST', '/api/v1/tools', { token, body: { name: 'x', type: 'BROWSER' } }), 'type');
    assertInvalid(await request('POST', '/api/v1/tools', { token, body: { name: 'x', type: 'search' } }), 'type');
    assertInvalid(await request('POST', '/api/v1/tools', { token, body: { name: 'x' } }), 'type');
  });

  test('a missing name is 422 at path name', async () => {
    const { token } = await service.signUp();
    assertInvalid(await request('POST', '/api/v1/tools', { token, body: { type: 'SEARCH' } }), 'name');
  });

  test('a name empty after trimming is 422 at path name', async () => {
    const { token } = await service.signUp();
    assertInvalid(await request('POST', '/api/v1/tools', { token, body: { name: '   ', type: 'SEARCH' } }), 'name');
    assertInvalid(await request('POST', '/api/v1/tools', { token, body: { name: '', type: 'SEARCH' } }), 'name');
  });

  test('a name over 200 characters is 422 at path name', async () => {
    const { token } = await service.signUp();
    assertInvalid(await request('POST', '/api/v1/tools', { token, body: { name: 'n'.repeat(201), type: 'SEARCH' } }), 'name');
  });

  test('metadata that is not an object (string, number, boolean, null) is 422 at path metadata', async () => {
    const { token } = await service.signUp();
    for (const metadata of ['key', 42, true, null]) {
      const reply = await request('POST', '/api/v1/tools', { token, body: { name: 'x', type: 'SEARCH', metadata } });
      assertInvalid(reply, 'metadata');
    }
  });

  test('metadata that is an array is 422 at path metadata (an array is not a JSON object)', async () => {
    const { token } = await service.signUp();
    for (const metadata of [[], [1, 2], [{ automation_nla_api_key: SECRET }]]) {
      const reply = await request('POST', '/api/v1/tools', { token, body: { name: 'x', type: 'SEARCH', metadata } });
      assertInvalid(reply, 'metadata');
    }
  });

  test('the keys a type reads must have their JSON types (422 at metadata.<key>); keys it does not read are kept as sent', async () => {
    const { token } = await service.signUp();
    const refused: [string, Record<string, unknown>, string][] = [
      ['SEARCH', { url: 42 }, 'metadata.url'],
      ['HOSTED_MODEL', { url: 'https://tool.example.com/run', headers: ['X-Key'] }, 'metadata.headers'],
      ['ENGINE_ALPHA', { url: 'https://tool.example.com/run', headers: { 'X-Key': { nested: SECRET } } }, 'metadata.headers.X-Key'],
      ['OPENAPI', { spec: 42 }, 'metadata.spec'],
      ['AGENT', { agentId: null }, 'metadata.agentId'],
    ];
    for (const [type, metadata, path] of refused) {
      const reply = await request('POST', '/api/v1/tools', { token, body: { name: 'x', type, metadata } });
      assertInvalid(reply, path);
      assert.ok(!JSON.stringify(reply.body).includes(SECRET), 'a refused value is not echoed');
    }
    assert.deepEqual((await request('GET', '/api/v1/tools', { token })).body.data, []);
    // What original clients send: settings of their own beside (or instead of) the keys a type reads.
    const accepted: [string, Record<string, unknown>][] = [
      ['SEARCH', { url: 'https://searx.example.org', headers: { 'X-Key': SECRET, 'X-Retries': 3 }, engines: ['ddg'] }],
      ['AUTOMATION_NLA', { automation_nla_api_key: SECRET }],
      ['OPENAPI', { url: 'https://api.example.com/openapi.json', headers: null, spec: null }],
      ['AGENT', { note: 'no agent yet' }],
    ];
    for (const [type, metadata] of accepted) {
      const tool = await createTool(token, { name: `ok ${type}`, type, metadata });
      assert.deepEqual(JSON.parse(service.unseal(storedMetadata(tool.id)!)), metadata, type);
    }
  });

  test('a PATCH of metadata alone is checked against the type the tool has', async () => {
    const { token } = await service.signUp();
    const tool = await createTool(token, { name: 'web', type: 'SEARCH', metadata: { url: 'https://searx.example.org' } });
    const before = storedMetadata(tool.id);
    assertInvalid(
      await request('PATCH', `/api/v1/tools/${tool.id}`, { token, body: { metadata: { url: ['https://a.example'] } } }),
      'metadata.url',
    );
    assert.equal(storedMetadata(tool.id), before);
    // SEARCH does not read `spec`: it is kept, not checked as an OPENAPI document.
    assert.equal(
      (await request('PATCH', `/api/v1/tools/${tool.id}`, { token, body: { metadata: { url: 'https://searx.example.org', spec: 42 } } }))
        .status,
      200,
    );
    assertInvalid(
      await request('PATCH', `/api/v1/tools/${tool.id}`, { token, body: { type: 'OPENAPI', metadata: { spec: 42 } } }),
      'metadata.spec',
    );
  });

  test('nothing is stored when validation fails', async () => {
    const { token } = await service.signUp();
    await request('POST', '/api/v1/tools', { token, body: { name: 'x', type: 'NOPE' } });
    const list = await request('GET', '/api/v1/tools', { token });
    assert.deepEqual(list.body.data, []);
  });
});

describe('GET /tools/{toolId}', () => {
  test('the tool with userId and user, as created; no metadata', async () => {
    const { token } = await service.signUp();
    const tool = await createTool(token, { type: 'AUTOMATION_NLA', metadata: { automation_nla_api_key: SECRET } });
    const reply = await request('GET', `/api/v1/tools/${tool.id}`, { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.deepEqual(reply.body.data, tool);
    assertNoSecret(reply);
  });

  test('an unknown id is 404', async () => {
    const { token } = await service.signUp();
    assertNotFound(await request('GET', `/api/v1/tools/${randomUUID()}`, { token }), 'unknown id');
  });
});

describe('GET /tools', () => {
  test("an array of the caller's tools, oldest first, without metadata", async () => {
    const { token } = await service.signUp();
    const other = await service.signUp();
    const first = await createTool(token, { name: 'first', type: 'AUTOMATION_NLA', metadata: { automation_nla_api_key: SECRET } });
    await createTool(other.token, { name: 'not mine' });
    const second = await createTool(token, { name: 'second', type: 'OPENAPI' });
    const third = await createTool(token, { name: 'third', type: 'AGENT' });

    const reply = await request('GET', '/api/v1/tools', { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.ok(Array.isArray(reply.body.data));
    assert.deepEqual(
      reply.body.data.map((tool: { id: string }) => tool.id),
      [first.id, second.id, third.id],
    );
    assert.deepEqual(reply.body.data[0], first);
    assert.equal(reply.headers.get('link'), null);
    assertNoSecret(reply);
  });

  test('a user with no tools gets an empty array', async () => {
    const { token } = await service.signUp();
    const reply = await request('GET', '/api/v1/tools', { token });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, { success: true, data: [] });
  });
});

describe('PATCH /tools/{toolId}', () => {
  test('metadata is replaced whole: headers stored for one url never follow a new url', async () => {
    const { token } = await service.signUp();
    const tool = await createTool(token, {
      type: 'HOSTED_MODEL',
      metadata: { url: 'https://tool.example.com/run', headers: { 'X-Key': SECRET } },
    });
    const moved = await request('PATCH', `/api/v1/tools/${tool.id}`, {
      token,
      body: { metadata: { url: 'https://collector.example.net/run' } },
    });
    assert.equal(moved.status, 200);
    assertNoSecret(moved);
    const stored = JSON.parse(service.unseal(storedMetadata(tool.id)!));
    assert.deepEqual(stored, { url: 'https://collector.example.net/run' }, 'the stored headers are gone');
  });

  test('a partial change keeps the other fields and moves updatedAt', async () => {
    const { token } = await service.signUp();
    const tool = await createTool(token, { name: 'before', type: 'SEARCH' });
    await new Promise((resolve) => setTimeout(resolve, 5));

    const renamed = await request('PATCH', `/api/v1/tools/${tool.id}`, { token, body: { name: 'after' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.success, true);
    assert.equal(renamed.body.data.id, tool.id);
    assert.equal(renamed.body.data.name, 'after');
    assert.equal(renamed.body.data.type, 'SEARCH');
    assert.equal(renamed.body.data.userId, tool.userId);
    assert.deepEqual(renamed.body.data.user, tool.user);
    assert.equal(renamed.body.data.createdAt, tool.createdAt);
    assert.match(renamed.body.data.updatedAt, TIMESTAMP);
    assert.ok(renamed.body.data.updatedAt > tool.updatedAt, 'updatedAt moves forward');

    const retyped = await request('PATCH', `/api/v1/tools/${tool.id}`, { token, body: { type: 'OPENAPI' } });
    assert.equal(retyped.status, 200);
    assert.equal(retyped.body.data.name, 'after');
    assert.equal(retyped.body.data.type, 'OPENAPI');

    const read = await request('GET', `/api/v1/tools/${tool.id}`, { token });
    assert.deepEqual(read.body.data, retyped.body.data);
  });

  test('metadata may be replaced, and is still never echoed', async () => {
    const { token } = await service.signUp();
    const tool = await createTool(token, { type: 'AUTOMATION_NLA', metadata: { automation_nla_api_key: 'old' } });
    const before = storedMetadata(tool.id);
    const reply = await request('PATCH', `/api/v1/tools/${tool.id}`, { token, body: { metadata: { automation_nla_api_key: SECRET } } });
    assert.equal(reply.status, 200);
    assertNoSecret(reply);
    const after = storedMetadata(tool.id);
    assert.equal(typeof after, 'string');
    assert.notEqual(after, before, 'the new metadata replaces the stored one');
  });

  test('the type is validated; the stored tool is unchanged after a 422', async () => {
    const { token } = await service.signUp();
    const tool = await createTool(token, { name: 'keep', type: 'SEARCH' });
    assertInvalid(await request('PATCH', `/api/v1/tools/${tool.id}`, { token, body: { name: 'changed', type: 'BROWSER' } }), 'type');
    assertInvalid(await request('PATCH', `/api/v1/tools/${tool.id}`, { token, body: { name: '  ' } }), 'name');
    assertInvalid(await request('PATCH', `/api/v1/tools/${tool.id}`, { token, body: { metadata: 'x' } }), 'metadata');
    const read = await request('GET', `/api/v1/tools/${tool.id}`, { token });
    assert.deepEqual(read.body.data, tool);
  });

  test('a new type alone is checked with the stored metadata, as a create of that type is; a 422 changes nothing', async () => {
    const { token } = await service.signUp();
    const bomb = refChainSpec(30, 32);
    // SEARCH does not read `spec`: the document is kept; as an OPENAPI tool it is over the limits.
    const search = await createTool(token, { name: 'web', type: 'SEARCH', metadata: { url: 'https://searx.example.org', spec: bomb } });
    const stored = storedMetadata(search.id);
    const toOpenApi = await request('PATCH', `/api/v1/tools/${search.id}`, { token, body: { type: 'OPENAPI' } });
    assert.match(assertInvalid(toOpenApi, 'metadata.spec').details![0].message, /^is too large to offer: /);
    assert.equal(storedMetadata(search.id), stored);
    assert.deepEqual((await request('GET', `/api/v1/tools/${search.id}`, { token })).body.data, search);

    // AGENT keeps any other key; MCP reads `url`, `headers` (sealed, checked too) and `tools`.
    const agentTool = await createTool(token, {
      name: 'ask',
      type: 'AGENT',
      metadata: { url: 'ftp://x', headers: { Host: 'evil', 'X-A': 'a\nb' }, tools: 'notalist' },
    });
    const toMcp = await request('PATCH', `/api/v1/tools/${agentTool.id}`, { token, body: { name: 'changed', type: 'MCP' } });
    assert.equal(toMcp.status, 422, JSON.stringify(toMcp.body));
    const paths = errorOf(toMcp).details!.map((issue) => issue.path);
    for (const path of ['metadata.url', 'metadata.headers', 'metadata.tools']) assert.ok(paths.includes(path), `${path} in ${paths}`);
    assert.ok(!JSON.stringify(toMcp.body).includes('evil'), "a header's value is never repeated");
    assert.deepEqual((await request('GET', `/api/v1/tools/${agentTool.id}`, { token })).body.data, agentTool);

    // The sealed headers of a plain HTTP tool are checked against MCP's rules.
    const hosted = await createTool(token, {
      name: 'model',
      type: 'HOSTED_MODEL',
      metadata: { url: 'https://tool.example.com/run', headers: { Host: SECRET } },
    });
    const sealed = await request('PATCH', `/api/v1/tools/${hosted.id}`, { token, body: { type: 'MCP' } });
    assertInvalid(sealed, 'metadata.headers');
    assert.ok(!JSON.stringify(sealed.body).includes(SECRET), "a header's value is never repeated");

    // What the new type can take is accepted, the stored metadata kept; so is a change that keeps the type.
    const fine = await createTool(token, {
      name: 'fine',
      type: 'HOSTED_MODEL',
      metadata: { url: 'https://mcp.example.com/mcp', headers: { 'X-Key': SECRET } },
    });
    const before = storedMetadata(fine.id);
    const toMcpOk = await request('PATCH', `/api/v1/tools/${fine.id}`, { token, body: { type: 'MCP' } });
    assert.equal(toMcpOk.status, 200, JSON.stringify(toMcpOk.body));
    assert.equal(toMcpOk.body.data.hasHeaders, true);
    assert.equal(storedMetadata(fine.id), before);
    assert.equal((await request('PATCH', `/api/v1/tools/${search.id}`, { token, body: { type: 'SEARCH', name: 'kept' } })).status, 200);
    // A new type with new metadata is checked with that metadata.
    const withMetadata = await request('PATCH', `/api/v1/tools/${agentTool.id}`, {
      token,
      body: { type: 'MCP', metadata: { url: 'https://mcp.example.com/mcp' } },
    });
    assert.equal(withMetadata.status, 200, JSON.stringify(withMetadata.body));
  });

  test('an unknown id is 404', async () => {
    const { token } = await service.signUp();
    assertNotFound(await request('PATCH', `/api/v1/tools/${randomUUID()}`, { token, body: { name: 'x' } }), 'unknown id');
    assertNotFound(await request('PATCH', `/api/v1/tools/${randomUUID()}`, { token, body: { type: 'MCP' } }), 'unknown id, new type');
  });
});

describe('DELETE /tools/{toolId}', () => {
  test('200 with data null; the tool is gone afterwards', async () => {
    const { token } = await service.signUp();
    const tool = await createTool(token);
    const keep = await createTool(token, { name: 'keep' });
    await assertDeletes(service, `/api/v1/tools/${tool.id}`, token);
    const list = await request('GET', '/api/v1/tools', { token });
    assert.deepEqual(
      list.body.data.map((item: { id: string }) => item.id),
      [keep.id],
    );
  });
});

describe("another user's tool", () => {
  test('is 404 on GET, PATCH and DELETE, and stays unchanged', async () => {
    const owner = await service.signUp();
    const stranger = await service.signUp();
    const tool = await createTool(owner.token, { name: 'private' });
    await assertHiddenFrom(service, `/api/v1/tools/${tool.id}`, { record: tool, owner: owner.token, stranger: stranger.token });
    const strangerList = await request('GET', '/api/v1/tools', { token: stranger.token });
    assert.deepEqual(strangerList.body.data, []);
  });

  test('without a credential it is 401', async () => {
    const reply = await request('GET', '/api/v1/tools');
    assert.equal(reply.status, 401);
    assert.equal(errorOf(reply).code, 'unauthorized');
  });
});

describe("AGENT tools name one of the caller's agents", () => {
  const agentBody = { name: 'Helper', type: 'REACT', llm: { provider: 'openai', model: 'gpt-4o-mini' }, hasMemory: false };

  test("create: the caller's agent is accepted; another user's or a missing one is a 422 and nothing is stored", async () => {
    const { token } = await service.signUp();
    const other = await service.signUp();
    const mine = await service.create(token, '/agents', agentBody);
    const theirs = await service.create(other.token, '/agents', agentBody);
    const ok = await request('POST', '/api/v1/tools', { token, body: { name: 'ask', type: 'AGENT', metadata: { agentId: mine.id } } });
    assert.equal(ok.status, 201);
    for (const agentId of [theirs.id, 'no-such-agent', 42]) {
      const reply = await request('POST', '/api/v1/tools', { token, body: { name: 'ask', type: 'AGENT', metadata: { agentId } } });
      assert.equal(reply.status, 422, JSON.stringify(reply.body));
      assert.equal(reply.body.error.details[0].path, 'metadata.agentId');
    }
    const list = await request('GET', '/api/v1/tools', { token });
    assert.equal(list.body.data.length, 1);
  });

  test('PATCH: new metadata or a change to AGENT is checked; a rename is not; a 422 changes nothing', async () => {
    const { token } = await service.signUp();
    const other = await service.signUp();
    const mine = await service.create(token, '/agents', agentBody);
    const theirs = await service.create(other.token, '/agents', agentBody);
    const agentTool = await createTool(token, { name: 'ask', type: 'AGENT', metadata: { agentId: mine.id } });
    const before = storedMetadata(agentTool.id);
    const bad = await request('PATCH', `/api/v1/tools/${agentTool.id}`, {
      token,
      body: { name: 'changed', metadata: { agentId: theirs.id } },
    });
    assert.equal(bad.status, 422);
    assert.equal(storedMetadata(agentTool.id), before);
    assert.equal((await request('GET', `/api/v1/tools/${agentTool.id}`, { token })).body.data.name, 'ask');
    assert.equal((await request('PATCH', `/api/v1/tools/${agentTool.id}`, { token, body: { name: 'renamed' } })).status, 200);

    const search = await createTool(token, { name: 'web', type: 'SEARCH', metadata: { agentId: theirs.id } });
    const toAgent = await request('PATCH', `/api/v1/tools/${search.id}`, { token, body: { type: 'AGENT' } });
    assert.equal(toAgent.status, 422, "the stored metadata names another user's agent");
    assert.equal((await request('GET', `/api/v1/tools/${search.id}`, { token })).body.data.type, 'SEARCH');
    const fixed = await request('PATCH', `/api/v1/tools/${search.id}`, { token, body: { type: 'AGENT', metadata: { agentId: mine.id } } });
    assert.equal(fixed.status, 200);
  });
});

describe('OPENAPI tools with an inline spec are bounded once their $refs are inlined', () => {
  test('a small spec whose $refs double at each level is a 422 on create and on PATCH, saying the limit; nothing is stored', async () => {
    const { token } = await service.signUp();
    // 30 levels: 2^30 parts if expanded; the count stops at the limit.
    const bomb = refChainSpec(30, 32);
    assert.ok(JSON.stringify(bomb).length < 10 * 1024, 'a few KiB of text');
    for (const spec of [bomb, JSON.stringify(bomb)]) {
      const reply = await request('POST', '/api/v1/tools', { token, body: { name: 'bomb', type: 'OPENAPI', metadata: { spec } } });
      const error = assertInvalid(reply, 'metadata.spec');
      assert.match(
        error.details![0].message,
        /^is too large to offer: operation op0: its schema comes to more than 1000 parts once \$refs are inlined/,
      );
    }
    // Many operations each under the limit for one, together over the limit for a spec.
    const wide = await request('POST', '/api/v1/tools', {
      token,
      body: { name: 'wide', type: 'OPENAPI', metadata: { spec: refChainSpec(7, 32) } },
    });
    assert.match(
      assertInvalid(wide, 'metadata.spec').details![0].message,
      /come to more than 10000 parts once \$refs are inlined \(the limit for a spec; passed at operation op\d+\)/,
    );
    assert.equal((await request('GET', '/api/v1/tools', { token })).body.data.length, 0);

    const fine = await createTool(token, { name: 'fine', type: 'OPENAPI', metadata: { spec: refChainSpec(3, 2) } });
    const before = storedMetadata(fine.id);
    const patched = await request('PATCH', `/api/v1/tools/${fine.id}`, { token, body: { name: 'changed', metadata: { spec: bomb } } });
    assertInvalid(patched, 'metadata.spec');
    assert.equal(storedMetadata(fine.id), before);
    assert.equal((await request('GET', `/api/v1/tools/${fine.id}`, { token })).body.data.name, 'fine');
    // A spec under the limits, a spec by URL (read when an agent runs) and other types are accepted.
    assert.equal(
      (await request('PATCH', `/api/v1/tools/${fine.id}`, { token, body: { metadata: { spec: refChainSpec(6, 2) } } })).status,
      200,
    );
    assert.equal(
      (await request('PATCH', `/api/v1/tools/${fine.id}`, { token, body: { metadata: { url: 'https://api.example.com/openapi.json' } } }))
        .status,
      200,
    );
    assert.equal(
      (await request('POST', '/api/v1/tools', { token, body: { name: 'web', type: 'SEARCH', metadata: { spec: bomb } } })).status,
      201,
    );
  });

  test('a deeply nested spec is a 422 on create, not a failure later', async () => {
    const { token } = await service.signUp();
    const reply = await request('POST', '/api/v1/tools', {
      token,
      body: { name: 'deep', type: 'OPENAPI', metadata: { spec: deepSpecText(20_000) } },
    });
    assert.match(
      assertInvalid(reply, 'metadata.spec').details![0].message,
      /^is too large to offer: the spec nests more than 64 levels deep$/,
    );
    // Shallow as written, deep once inlined: each level of the chain nests two deeper.
    const expanded = await request('POST', '/api/v1/tools', {
      token,
      body: { name: 'deep', type: 'OPENAPI', metadata: { spec: refChainSpec(40, 1) } },
    });
    assert.match(
      assertInvalid(expanded, 'metadata.spec').details![0].message,
      /its schema nests more than 64 levels deep once \$refs are inlined/,
    );
  });
});
