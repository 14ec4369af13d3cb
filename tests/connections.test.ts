// `/connections`: a model server set up once (its key sealed, shown only as hasApiKey), named by
// agents' `llm.connectionId`; the operator's servers as read-only built-in connections; the server's
// model list (cached) and "test connection"; and the refusals of bad input.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertConflict,
  assertDeletes,
  assertHiddenFrom,
  assertInvalid,
  assertNotFound,
  errorOf,
  startService,
  testConfig,
  TIMESTAMP,
  type Json,
  type Reply,
} from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

const OPERATOR_KEY = 'sk-operator-secret-4242';
const KEY = 'sk-connection-key-1111';
const NEW_KEY = 'sk-connection-key-2222';

const fake = await startFakeOpenAI();
const operatorFake = await startFakeOpenAI();
const defaults = testConfig();
const service = await startService({ runs: { ...defaults.runs, openaiBaseUrl: operatorFake.url, openaiApiKey: OPERATOR_KEY } });
const { request } = service;

const createConnection = (token: string, body: Json = {}) =>
  request('POST', '/api/v1/connections', {
    token,
    body: { name: 'My server', provider: 'openai-compatible', baseUrl: fake.url, apiKey: KEY, ...body },
  });
const createAgent = (token: string, llm: Json, name = 'Agent') =>
  request('POST', '/api/v1/agents', { token, body: { name, type: 'VENDOR_A', llm } });
const invoke = (token: string, agentId: string) => request('POST', `/api/v1/agents/${agentId}/invoke`, { token, body: { input: 'Hello' } });

function assertNoKey(reply: Reply, ...keys: string[]): void {
  const text = JSON.stringify(reply.body);
  for (const key of keys) assert.ok(!text.includes(key), `a key leaked: ${text}`);
}

const BUILTIN_IDS = ['builtin-openai', 'builtin-ollama'];

describe('create, list, get, PATCH, delete', () => {
  test('201 with the connection: the key stored sealed, shown only as hasApiKey', async () => {
    const { token, user } = await service.signUp();
    const reply = await createConnection(token, { provider: 'OpenAI-Compatible' });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    const created = reply.body.data;
    assert.deepEqual(Object.keys(created).sort(), [
      'baseUrl',
      'builtIn',
      'createdAt',
      'hasApiKey',
      'id',
      'name',
      'provider',
      'updatedAt',
      'userId',
    ]);
    assert.equal(created.userId, user.id);
    assert.equal(created.name, 'My server');
    assert.equal(created.provider, 'openai-compatible');
    assert.equal(created.baseUrl, fake.url);
    assert.equal(created.hasApiKey, true);
    assert.equal(created.builtIn, false);
    assert.match(created.createdAt, TIMESTAMP);
    assertNoKey(reply, KEY);
    const stored = service.db.prepare('SELECT api_key FROM connections WHERE id = ?').pluck().get(created.id) as string;
    assert.ok(!stored.includes(KEY), 'the key is not stored in the clear');
    assert.equal(service.unseal(stored), KEY);

    const got = await request('GET', `/api/v1/connections/${created.id}`, { token });
    assert.deepEqual(got.body.data, created);
    const keyless = await createConnection(token, { name: 'Ollama box', provider: 'ollama', apiKey: undefined });
    assert.equal(keyless.body.data.hasApiKey, false);
  });

  test('the list holds the built-in connections first, then the caller’s own, every one checked; paging goes through both', async () => {
    const { token, user } = await service.signUp();
    const first = (await createConnection(token, { name: 'one' })).body.data;
    const second = (await createConnection(token, { name: 'two', provider: 'ollama', apiKey: null })).body.data;
    const list = await request('GET', '/api/v1/connections', { token });
    assert.equal(list.status, 200);
    assertNoKey(list, KEY, OPERATOR_KEY);
    const rows = list.body.data as Json[];
    assert.deepEqual(
      rows.map((row) => row.id),
      [...BUILTIN_IDS, first.id, second.id],
    );
    for (const row of rows.slice(0, 2)) {
      assert.equal(row.builtIn, true);
      assert.equal(row.userId, null);
      assert.equal(row.baseUrl, null, "the operator's server is not shown");
    }
    assert.deepEqual(
      rows.slice(0, 2).map((row) => [row.provider, row.hasApiKey]),
      [
        ['openai', true],
        ['ollama', false],
      ],
    );
    assert.deepEqual(rows.slice(2), [first, second]);
    for (const row of rows.slice(2)) assert.equal(row.userId, user.id);

    // One row a page: the built-in ones, then the caller's, each once.
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 6; page += 1) {
      const reply = await request('GET', `/api/v1/connections?limit=1${after ? `&after=${after}` : ''}`, { token });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      seen.push(...reply.body.data.map((row: Json) => row.id));
      after = seen.at(-1);
      if (!reply.headers.get('link')) break;
    }
    assert.deepEqual(seen, [...BUILTIN_IDS, first.id, second.id]);
  });

  test('PATCH changes what it names; a baseUrl on another origin drops the key unless one is sent; apiKey null clears it', async () => {
    const { token } = await service.signUp();
    const created = (await createConnection(token)).body.data;
    const path = `/api/v1/connections/${created.id}`;
    const renamed = await request('PATCH', path, { token, body: { name: 'Renamed' } });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.deepEqual({ ...renamed.body.data, updatedAt: null }, { ...created, name: 'Renamed', updatedAt: null });
    const samePlace = await request('PATCH', path, { token, body: { baseUrl: `${fake.url}/` } });
    assert.equal(samePlace.body.data.hasApiKey, true, 'the same origin keeps the key');
    const moved = await request('PATCH', path, { token, body: { baseUrl: 'http://93.184.216.34/v1' } });
    assert.equal(moved.body.data.hasApiKey, false, 'another origin drops it');
    const keyed = await request('PATCH', path, { token, body: { baseUrl: fake.url, apiKey: NEW_KEY } });
    assert.equal(keyed.body.data.hasApiKey, true);
    assertNoKey(keyed, NEW_KEY);
    const cleared = await request('PATCH', path, { token, body: { apiKey: null } });
    assert.equal(cleared.body.data.hasApiKey, false);
    await assertDeletes(service, path, token);
  });

  test('bad bodies: 422 naming the field, nothing stored', async () => {
    const { token } = await service.signUp();
    assertInvalid(await createConnection(token, { name: '' }), 'name');
    assertInvalid(await createConnection(token, { provider: 'echo' }), 'provider');
    assertInvalid(await createConnection(token, { provider: 7 }), 'provider');
    assertInvalid(await createConnection(token, { baseUrl: 'not a url' }), 'baseUrl');
    assertInvalid(await createConnection(token, { baseUrl: 'http://user:pw@models.example.com/v1' }), 'baseUrl');
    assertInvalid(await createConnection(token, { apiKey: '' }), 'apiKey');
    const list = await request('GET', '/api/v1/connections', { token });
    assert.deepEqual(
      list.body.data.map((row: Json) => row.id),
      BUILTIN_IDS,
    );
  });

  test("another user's connection is a 404, as a missing one; its models and test too", async () => {
    const owner = await service.signUp();
    const stranger = await service.signUp();
    const record = (await createConnection(owner.token)).body.data;
    const path = `/api/v1/connections/${record.id}`;
    await assertHiddenFrom(service, path, { record, owner: owner.token, stranger: stranger.token });
    assertNotFound(await request('GET', `${path}/models`, { token: stranger.token }));
    assertNotFound(await request('POST', `${path}/test`, { token: stranger.token, body: {} }));
    const theirs = await request('GET', '/api/v1/connections', { token: stranger.token });
    assert.deepEqual(
      theirs.body.data.map((row: Json) => row.id),
      BUILTIN_IDS,
    );
  });

  test('built-in connections are read-only: PATCH and DELETE are 403; everyone may read them', async () => {
    const { token } = await service.signUp();
    for (const id of BUILTIN_IDS) {
      const got = await request('GET', `/api/v1/connections/${id}`, { token });
      assert.equal(got.status, 200);
      assert.equal(got.body.data.builtIn, true);
      const patch = await request('PATCH', `/api/v1/connections/${id}`, { token, body: { name: 'mine now' } });
      assert.equal(patch.status, 403, JSON.stringify(patch.body));
      assert.equal(errorOf(patch).code, 'forbidden');
      const deleted = await request('DELETE', `/api/v1/connections/${id}`, { token });
      assert.equal(deleted.status, 403);
    }
  });
});

describe('the SSRF guard', () => {
  test('a baseUrl the guard refuses is a 422 at baseUrl with the reason, on create and PATCH; nothing stored', async () => {
    const strictConfig = testConfig({ ALLOW_PRIVATE_NETWORKS: 'off' });
    const strict = await startService({ allowPrivateNetworks: false, runs: strictConfig.runs });
    const { token } = await strict.signUp();
    for (const baseUrl of ['http://127.0.0.1:11434/v1', 'http://10.0.0.5/v1', 'http://[::1]:8000/v1', 'http://localhost:8000/v1']) {
      const reply = await strict.request('POST', '/api/v1/connections', {
        token,
        body: { name: 'internal', provider: 'ollama', baseUrl },
      });
      const error = assertInvalid(reply, 'baseUrl', baseUrl);
      assert.match(error.details![0].message, /refused: .*(loopback|private)/, baseUrl);
    }
    const list = await strict.request('GET', '/api/v1/connections', { token });
    assert.deepEqual(
      list.body.data.map((row: Json) => row.id),
      BUILTIN_IDS,
    );
    const created = await strict.request('POST', '/api/v1/connections', {
      token,
      body: { name: 'public', provider: 'openai', baseUrl: 'http://93.184.216.34/v1' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const path = `/api/v1/connections/${created.body.data.id}`;
    assertInvalid(await strict.request('PATCH', path, { token, body: { baseUrl: 'http://169.254.169.254/v1' } }), 'baseUrl');
    const after = await strict.request('GET', path, { token });
    assert.equal(after.body.data.baseUrl, 'http://93.184.216.34/v1', 'the refused PATCH changed nothing');
  });
});

describe('agents on a connection', () => {
  test('llm.connectionId: the connection supplies provider, server and key; the agent keeps its model', async () => {
    const { token } = await service.signUp();
    const connection = (await createConnection(token, { provider: 'ollama' })).body.data;
    const reply = await createAgent(token, { model: 'llama3', connectionId: connection.id });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    assert.deepEqual(reply.body.data.llm, {
      model: 'llama3',
      provider: 'ollama',
      baseUrl: null,
      hasApiKey: false,
      connectionId: connection.id,
    });
    // A provider change on the connection reaches the agent.
    await request('PATCH', `/api/v1/connections/${connection.id}`, { token, body: { provider: 'openai-compatible' } });
    const agent = await request('GET', `/api/v1/agents/${reply.body.data.id}`, { token });
    assert.equal(agent.body.data.llm.provider, 'openai-compatible');
    // An agent without a connection answers as before: no connectionId key at all.
    const plain = await createAgent(token, { model: 'm', provider: 'openai', apiKey: 'sk-own' });
    assert.deepEqual(plain.body.data.llm, { model: 'm', provider: 'openai', baseUrl: null, hasApiKey: true });
    // PATCH: leaving the connection for a server of its own, and back.
    const path = `/api/v1/agents/${reply.body.data.id}`;
    const own = await request('PATCH', path, { token, body: { llm: { baseUrl: fake.url, apiKey: 'sk-own' } } });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body.data.llm.connectionId, undefined);
    assert.equal(own.body.data.llm.baseUrl, fake.url);
    const back = await request('PATCH', path, { token, body: { llm: { connectionId: connection.id } } });
    assert.deepEqual(back.body.data.llm, {
      model: 'llama3',
      provider: 'openai-compatible',
      baseUrl: null,
      hasApiKey: false,
      connectionId: connection.id,
    });
  });

  test("a missing or another user's connection, or one beside baseUrl/apiKey, is a 422 at llm.connectionId; nothing stored", async () => {
    const owner = await service.signUp();
    const stranger = await service.signUp();
    const theirs = (await createConnection(owner.token)).body.data;
    assertInvalid(await createAgent(stranger.token, { model: 'm', connectionId: theirs.id }), 'llm.connectionId');
    assertInvalid(await createAgent(stranger.token, { model: 'm', connectionId: 'no-such-connection' }), 'llm.connectionId');
    assertInvalid(await createAgent(owner.token, { model: 'm', connectionId: theirs.id, apiKey: 'sk-x' }), 'llm.connectionId');
    assertInvalid(await createAgent(owner.token, { model: 'm', connectionId: theirs.id, baseUrl: fake.url }), 'llm.connectionId');
    assertInvalid(await createAgent(owner.token, { model: 'm' }), 'llm.provider');
    const agent = (await createAgent(stranger.token, { model: 'm', provider: 'openai' })).body.data;
    assertInvalid(
      await request('PATCH', `/api/v1/agents/${agent.id}`, { token: stranger.token, body: { llm: { connectionId: theirs.id } } }),
      'llm.connectionId',
    );
    for (const { token } of [owner, stranger]) {
      const agents = await request('GET', '/api/v1/agents', { token });
      assert.deepEqual(
        agents.body.data.map((row: Json) => row.llm.connectionId ?? null),
        token === owner.token ? [] : [null],
      );
    }
  });

  test('deleting a connection is refused with 409 while agents use it, naming how many', async () => {
    const { token } = await service.signUp();
    const connection = (await createConnection(token)).body.data;
    const path = `/api/v1/connections/${connection.id}`;
    const agents = [];
    for (const name of ['a', 'b']) agents.push((await createAgent(token, { model: 'm', connectionId: connection.id }, name)).body.data);
    const refused = await request('DELETE', path, { token });
    assertConflict(refused);
    assert.match(errorOf(refused).message, /^2 agents use this connection/);
    await request('DELETE', `/api/v1/agents/${agents[0].id}`, { token });
    assert.match(errorOf(await request('DELETE', path, { token })).message, /^1 agent uses this connection/);
    await request('PATCH', `/api/v1/agents/${agents[1].id}`, { token, body: { llm: { connectionId: null, provider: 'openai' } } });
    await assertDeletes(service, path, token);
  });

  test("a run sends the connection's key to its server; rotating the key on the connection reaches all its agents", async () => {
    const { token } = await service.signUp();
    const connection = (await createConnection(token)).body.data;
    const agents = [];
    for (const name of ['a', 'b'])
      agents.push((await createAgent(token, { model: 'fake-model', connectionId: connection.id }, name)).body.data);
    fake.requireKey(KEY);
    try {
      for (const agent of agents) {
        const before = fake.requests.length;
        const reply = await invoke(token, agent.id);
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        assertNoKey(reply, KEY);
        const sent = fake.requests[before];
        assert.equal(sent.path, '/v1/chat/completions');
        assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
        assert.equal(sent.body.model, 'fake-model');
      }
      const rotated = await request('PATCH', `/api/v1/connections/${connection.id}`, { token, body: { apiKey: NEW_KEY } });
      assert.equal(rotated.status, 200);
      fake.requireKey(NEW_KEY);
      for (const agent of agents) {
        const before = fake.requests.length;
        const reply = await invoke(token, agent.id);
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        assert.equal(fake.requests[before].headers.authorization, `Bearer ${NEW_KEY}`);
      }
    } finally {
      fake.requireKey(undefined);
    }
  });

  test("an agent on a built-in connection runs on the operator's server with the operator's key, never shown", async () => {
    const { token } = await service.signUp();
    const reply = await createAgent(token, { model: 'gpt-op', connectionId: 'builtin-openai' });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    assert.deepEqual(reply.body.data.llm, {
      model: 'gpt-op',
      provider: 'openai',
      baseUrl: null,
      hasApiKey: false,
      connectionId: 'builtin-openai',
    });
    const before = operatorFake.requests.length;
    const run = await invoke(token, reply.body.data.id);
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assertNoKey(run, OPERATOR_KEY);
    assert.equal(operatorFake.requests[before].headers.authorization, `Bearer ${OPERATOR_KEY}`);
    assert.equal(operatorFake.requests[before].body.model, 'gpt-op');
  });
});

describe('models and test connection', () => {
  test("GET /models answers the server's model ids, asked with the key, cached until a PATCH", async () => {
    const { token } = await service.signUp();
    fake.setModels(['llama3', 'qwen2.5']);
    const connection = (await createConnection(token)).body.data;
    const path = `/api/v1/connections/${connection.id}/models`;
    const asked = () => fake.requests.filter((r) => r.method === 'GET' && r.path === '/v1/models').length;
    const before = asked();
    const reply = await request('GET', path, { token });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.deepEqual(reply.body.data, { models: ['llama3', 'qwen2.5'] });
    assert.equal(fake.requests.at(-1)!.headers.authorization, `Bearer ${KEY}`);
    fake.setModels(['mistral']);
    assert.deepEqual((await request('GET', path, { token })).body.data, { models: ['llama3', 'qwen2.5'] }, 'cached');
    assert.equal(asked(), before + 1);
    await request('PATCH', `/api/v1/connections/${connection.id}`, { token, body: { name: 'changed' } });
    assert.deepEqual((await request('GET', path, { token })).body.data, { models: ['mistral'] }, 'the PATCH forgot the cached list');
    assert.equal(asked(), before + 2);
    fake.setModels(['fake-model']);
    // The built-in ones ask the operator's server with the operator's key.
    const builtin = await request('GET', '/api/v1/connections/builtin-openai/models', { token });
    assert.deepEqual(builtin.body.data, { models: ['fake-model'] });
    assert.equal(operatorFake.requests.at(-1)!.headers.authorization, `Bearer ${OPERATOR_KEY}`);
    assertNoKey(builtin, OPERATOR_KEY);
  });

  test('GET /models of a server that cannot be asked is a 502 saying why', async () => {
    const { token } = await service.signUp();
    const down = (await createConnection(token, { baseUrl: 'http://127.0.0.1:9/v1' })).body.data;
    const reply = await request('GET', `/api/v1/connections/${down.id}/models`, { token });
    assert.equal(reply.status, 502, JSON.stringify(reply.body));
    assert.equal(errorOf(reply).code, 'upstream_error');
    assert.match(errorOf(reply).message, /unreachable/);
  });

  test('test connection: 200 { ok, message } saying in words what works or what is wrong', async () => {
    const { token } = await service.signUp();
    fake.setModels(['llama3', 'fake-model']);
    const good = (await createConnection(token)).body.data;
    const down = (await createConnection(token, { baseUrl: 'http://127.0.0.1:9/v1' })).body.data;
    const notAnApi = (await createConnection(token, { baseUrl: fake.url.replace(/\/v1$/, '/nothing') })).body.data;
    const testOf = async (id: string, body: Json = {}) => {
      const reply = await request('POST', `/api/v1/connections/${id}/test`, { token, body });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      assertNoKey(reply, KEY, NEW_KEY);
      return reply.body.data as { ok: boolean; message: string };
    };
    assert.deepEqual(await testOf(good.id), { ok: true, message: 'Connected: the server lists 2 models.' });
    assert.deepEqual(await testOf(good.id, { model: 'llama3' }), { ok: true, message: 'Connected: the server offers the model "llama3".' });
    const noModel = await testOf(good.id, { model: 'gpt-5' });
    assert.equal(noModel.ok, false);
    assert.match(noModel.message, /no model "gpt-5"; it offers "llama3", "fake-model"/);
    const unreachable = await testOf(down.id);
    assert.equal(unreachable.ok, false);
    assert.match(unreachable.message, /^127\.0\.0\.1:9 is unreachable/);
    const wrongPath = await testOf(notAnApi.id);
    assert.equal(wrongPath.ok, false);
    assert.match(wrongPath.message, /answered HTTP 404 to GET \/models/);
    fake.requireKey(NEW_KEY);
    try {
      const badKey = await testOf(good.id);
      assert.equal(badKey.ok, false);
      assert.match(badKey.message, /refused the key \(HTTP 401\)/);
    } finally {
      fake.requireKey(undefined);
    }
    assertInvalid(await request('POST', `/api/v1/connections/${good.id}/test`, { token, body: { model: 7 } }), 'model');
    fake.setModels(['fake-model']);
  });
});
