// `/agents`: creating, reading and listing agents as original clients do, and the agent rules
// (defaults, references, tags as ids or objects, llm secrets never echoed, `document`, PATCH and DELETE).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { errorOf, startService, TIMESTAMP, type Json, type Reply } from './helpers.js';

const service = await startService();
const { request, create, createDocument, createPrompt, createTag } = service;

const SECRET = 'sk-agent-secret-do-not-echo-7f3a9c';
const OTHER_SECRET = 'sk-agent-second-secret-b81e22';

function agentBody(extra: Json = {}): Json {
  return {
    name: 'Helper',
    type: 'REACT',
    llm: { model: 'model-x', provider: 'provider-y', api_key: SECRET },
    ...extra,
  };
}

/** The validation failure's field paths. */
function pathsOf(reply: Reply): string[] {
  assert.equal(reply.status, 422, JSON.stringify(reply.body));
  const error = errorOf(reply);
  assert.equal(error.code, 'validation_failed');
  assert.ok(Array.isArray(error.details), 'details list the bad fields');
  return error.details!.map((issue) => issue.path);
}

function assertNamesField(reply: Reply, field: string): void {
  const paths = pathsOf(reply);
  assert.ok(
    paths.some((path) => path === field || path.startsWith(`${field}.`)),
    `expected a detail for ${field}, got ${JSON.stringify(paths)}`,
  );
}

function assertNoSecret(reply: Reply): void {
  const text = JSON.stringify(reply.body);
  assert.ok(!text.includes(SECRET), 'the llm api key is never in a response');
  assert.ok(!text.includes(OTHER_SECRET), 'the llm api key is never in a response');
}

const tagSummary = (tags: Json[]) => tags.map((tag) => ({ id: tag.id, name: tag.name, color: tag.color }));

describe('POST /agents', () => {
  test('201 with the full agent: tags, llm {model, provider}, document, promptId', async () => {
    const { token, user } = await service.signUp('Agent Owner');
    const prompt = await createPrompt(token);
    const document = await createDocument(token, { type: 'URL', url: 'https://example.com/handbook' });
    const red = await createTag(token, { color: '#ff0000' });
    const blue = await createTag(token, { color: '#0000ff' });

    const reply = await request('POST', '/api/v1/agents', {
      token,
      body: agentBody({
        name: 'Researcher',
        type: 'VENDOR_A',
        hasMemory: true,
        promptId: prompt.id,
        documentId: document.id,
        tags: [red.id, blue.id],
      }),
    });
    assert.equal(reply.status, 201);
    assert.equal(reply.body.success, true);
    const agent = reply.body.data;
    assert.equal(typeof agent.id, 'string');
    assert.ok(agent.id.length > 0);
    assert.equal(agent.userId, user.id);
    assert.equal(agent.user.id, user.id);
    assert.ok(!('password' in agent.user), 'the nested user never carries the hash');
    assert.equal(agent.name, 'Researcher');
    assert.equal(agent.type, 'VENDOR_A');
    assert.deepEqual(agent.llm, { model: 'model-x', provider: 'provider-y', baseUrl: null, hasApiKey: true });
    assert.equal(agent.hasMemory, true);
    assert.deepEqual(agent.AgentMemory, { sessions: 0, messages: 0 }, 'an agent with memory counts what it holds');
    assert.equal(agent.promptId, prompt.id);
    assert.equal(agent.documentId, document.id);
    assert.equal(agent.document.id, document.id);
    assert.equal(agent.document.name, document.name);
    assert.equal(agent.document.url, 'https://example.com/handbook');
    assert.equal(agent.document.type, 'URL');
    assert.ok(Array.isArray(agent.tags));
    assert.deepEqual(tagSummary(agent.tags), [
      { id: red.id, name: red.name, color: '#ff0000' },
      { id: blue.id, name: blue.name, color: '#0000ff' },
    ]);
    assert.match(agent.createdAt, TIMESTAMP);
    assert.match(agent.updatedAt, TIMESTAMP);
    assertNoSecret(reply);
  });

  test('defaults: hasMemory false, promptId null, tags [], documentId null with document {}', async () => {
    const { token } = await service.signUp();
    const reply = await request('POST', '/api/v1/agents', { token, body: agentBody() });
    assert.equal(reply.status, 201);
    const agent = reply.body.data;
    assert.equal(agent.hasMemory, false);
    assert.equal(agent.promptId, null);
    assert.deepEqual(agent.tags, []);
    assert.equal(agent.documentId, null);
    assert.deepEqual(agent.document, {});
    assert.equal(agent.AgentMemory, null);
    assertNoSecret(reply);
  });

  test('tags may be given as tag objects {id, ...}, the shape agents return them in', async () => {
    const { token } = await service.signUp();
    const green = await createTag(token, { color: '#00ff00' });
    const plain = await createTag(token, { color: '#123456' });
    const reply = await request('POST', '/api/v1/agents', {
      token,
      body: agentBody({ tags: [green, { id: plain.id }] }),
    });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    assert.deepEqual(tagSummary(reply.body.data.tags), [
      { id: green.id, name: green.name, color: '#00ff00' },
      { id: plain.id, name: plain.name, color: '#123456' },
    ]);
  });

  describe('validation → 422 with the bad field in details', () => {
    const cases: [string, (body: Json) => Json, string][] = [
      ['missing name', ({ name: _, ...rest }) => rest, 'name'],
      ['missing type', ({ type: _, ...rest }) => rest, 'type'],
      ['missing llm', ({ llm: _, ...rest }) => rest, 'llm'],
      ['unknown type', (body) => ({ ...body, type: 'WIZARD' }), 'type'],
      ['llm without model', (body) => ({ ...body, llm: { provider: 'provider-y' } }), 'llm.model'],
      ['llm.model empty', (body) => ({ ...body, llm: { model: '', provider: 'provider-y' } }), 'llm.model'],
      ['hasMemory not boolean', (body) => ({ ...body, hasMemory: 'yes' }), 'hasMemory'],
      ['tags not an array', (body) => ({ ...body, tags: 'urgent' }), 'tags'],
    ];
    for (const [title, change, field] of cases) {
      test(title, async () => {
        const { token } = await service.signUp();
        const reply = await request('POST', '/api/v1/agents', { token, body: change(agentBody()) });
        assert.ok(pathsOf(reply).includes(field), `details name ${field}: ${JSON.stringify(reply.body)}`);
        assertNoSecret(reply);
        assert.deepEqual((await request('GET', '/api/v1/agents', { token })).body.data, [], 'nothing stored');
      });
    }
  });

  describe("a reference that is not one of the caller's → 422 naming the field", () => {
    test("promptId: nonexistent, or another user's", async () => {
      const { token } = await service.signUp();
      const stranger = await service.signUp();
      const theirs = await createPrompt(stranger.token);
      assertNamesField(await request('POST', '/api/v1/agents', { token, body: agentBody({ promptId: randomUUID() }) }), 'promptId');
      assertNamesField(await request('POST', '/api/v1/agents', { token, body: agentBody({ promptId: theirs.id }) }), 'promptId');
      assert.deepEqual((await request('GET', '/api/v1/agents', { token })).body.data, []);
    });

    test("documentId: nonexistent, or another user's", async () => {
      const { token } = await service.signUp();
      const stranger = await service.signUp();
      const theirs = await createDocument(stranger.token);
      assertNamesField(await request('POST', '/api/v1/agents', { token, body: agentBody({ documentId: randomUUID() }) }), 'documentId');
      assertNamesField(await request('POST', '/api/v1/agents', { token, body: agentBody({ documentId: theirs.id }) }), 'documentId');
      assert.deepEqual((await request('GET', '/api/v1/agents', { token })).body.data, []);
    });

    test("a tag id: nonexistent, or another user's (as id or as object), even beside an own tag", async () => {
      const { token } = await service.signUp();
      const stranger = await service.signUp();
      const mine = await createTag(token);
      const theirs = await createTag(stranger.token);
      for (const tags of [[randomUUID()], [theirs.id], [theirs], [mine.id, theirs.id]]) {
        assertNamesField(await request('POST', '/api/v1/agents', { token, body: agentBody({ tags }) }), 'tags');
      }
      assert.deepEqual((await request('GET', '/api/v1/agents', { token })).body.data, []);
    });
  });
});

describe('GET /agents and GET /agents/{agentId}', () => {
  test('both show tags and document, as create returned them; no llm secret', async () => {
    const { token, user } = await service.signUp();
    const document = await createDocument(token);
    const tag = await createTag(token, { color: '#abcdef' });
    const plainReply = await request('POST', '/api/v1/agents', { token, body: agentBody({ name: 'Plain' }) });
    const richReply = await request('POST', '/api/v1/agents', {
      token,
      body: agentBody({ name: 'Rich', documentId: document.id, tags: [tag.id] }),
    });
    const plain = plainReply.body.data;
    const rich = richReply.body.data;

    const one = await request('GET', `/api/v1/agents/${rich.id}`, { token });
    assert.equal(one.status, 200);
    assert.equal(one.body.success, true);
    assert.deepEqual(one.body.data, rich);
    assert.equal(one.body.data.document.id, document.id);
    assert.deepEqual(tagSummary(one.body.data.tags), [{ id: tag.id, name: tag.name, color: '#abcdef' }]);
    assert.equal(one.body.data.userId, user.id);
    assertNoSecret(one);

    const list = await request('GET', '/api/v1/agents', { token });
    assert.equal(list.status, 200);
    assert.equal(list.body.success, true);
    assert.ok(Array.isArray(list.body.data));
    assert.deepEqual(
      list.body.data.map((agent: Json) => agent.id),
      [plain.id, rich.id],
      'oldest first',
    );
    assert.deepEqual(list.body.data[0], plain);
    assert.deepEqual(list.body.data[1], rich);
    assert.deepEqual(list.body.data[0].document, {});
    assert.deepEqual(list.body.data[0].tags, []);
    assert.equal(list.body.data[1].documentId, document.id);
    assert.equal(list.body.data[1].document.id, document.id);
    assert.equal(list.body.data[1].tags[0].id, tag.id);
    assertNoSecret(list);
  });

  test('an unknown id is 404 not_found', async () => {
    const { token } = await service.signUp();
    const reply = await request('GET', `/api/v1/agents/${randomUUID()}`, { token });
    assert.equal(reply.status, 404);
    assert.equal(errorOf(reply).code, 'not_found');
  });

  test('without a credential it is 401', async () => {
    const reply = await request('GET', '/api/v1/agents');
    assert.equal(reply.status, 401);
    assert.equal(errorOf(reply).code, 'unauthorized');
  });
});

describe('PATCH /agents/{agentId}', () => {
  test('partial: tags replaced, promptId set to null, llm replaced, updatedAt moves; the rest kept', async () => {
    const { token } = await service.signUp();
    const prompt = await createPrompt(token);
    const document = await createDocument(token);
    const first = await createTag(token, { color: '#111111' });
    const second = await createTag(token, { color: '#222222' });
    const third = await createTag(token, { color: '#333333' });
    const agent = await create(
      token,
      '/agents',
      agentBody({
        name: 'Before',
        type: 'VENDOR_A',
        hasMemory: true,
        promptId: prompt.id,
        documentId: document.id,
        tags: [first.id, second.id],
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));

    const reply = await request('PATCH', `/api/v1/agents/${agent.id}`, {
      token,
      body: {
        tags: [{ id: third.id }, first.id],
        promptId: null,
        llm: { model: 'model-2', provider: 'provider-2', api_key: OTHER_SECRET },
      },
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.success, true);
    const updated = reply.body.data;
    assert.equal(updated.id, agent.id);
    assert.deepEqual(tagSummary(updated.tags), [
      { id: third.id, name: third.name, color: '#333333' },
      { id: first.id, name: first.name, color: '#111111' },
    ]);
    assert.equal(updated.promptId, null);
    assert.deepEqual(updated.llm, { model: 'model-2', provider: 'provider-2', baseUrl: null, hasApiKey: true });
    assert.equal(updated.name, 'Before');
    assert.equal(updated.type, 'VENDOR_A');
    assert.equal(updated.hasMemory, true);
    assert.equal(updated.documentId, document.id);
    assert.equal(updated.document.id, document.id);
    assert.equal(updated.createdAt, agent.createdAt);
    assert.match(updated.updatedAt, TIMESTAMP);
    assert.ok(updated.updatedAt > agent.updatedAt, `${updated.updatedAt} after ${agent.updatedAt}`);
    assertNoSecret(reply);

    const read = await request('GET', `/api/v1/agents/${agent.id}`, { token });
    assert.deepEqual(read.body.data, updated, 'the change is stored');
    assertNoSecret(read);
  });

  test('only the name: everything else kept', async () => {
    const { token } = await service.signUp();
    const tag = await createTag(token);
    const agent = await create(token, '/agents', agentBody({ tags: [tag.id], hasMemory: true }));
    const reply = await request('PATCH', `/api/v1/agents/${agent.id}`, { token, body: { name: '  Renamed  ' } });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.data.name, 'Renamed');
    assert.deepEqual(reply.body.data.tags, agent.tags);
    assert.deepEqual(reply.body.data.llm, agent.llm);
    assert.equal(reply.body.data.hasMemory, true);
    assertNoSecret(reply);
  });

  test('llm merges: the key stays when only the model changes; apiKey null clears it', async () => {
    const { token } = await service.signUp();
    const agent = await create(token, '/agents', agentBody({ llm: { model: 'm1', provider: 'openai', apiKey: SECRET, temperature: 0.2 } }));
    assert.deepEqual(agent.llm, { model: 'm1', provider: 'openai', baseUrl: null, hasApiKey: true });
    const path = `/api/v1/agents/${agent.id}`;
    const storedKey = () => service.db.prepare('SELECT llm_api_key FROM agents WHERE id = ?').pluck().get(agent.id) as string | null;
    // Keys of the llm the service does not use are accepted and not kept (nothing would read them).
    const storedExtra = () => service.db.prepare('SELECT llm_extra FROM agents WHERE id = ?').pluck().get(agent.id);
    assert.equal(storedExtra(), '{}');

    const model = await request('PATCH', path, { token, body: { llm: { model: 'm2' } } });
    assert.equal(model.status, 200, JSON.stringify(model.body));
    assert.deepEqual(model.body.data.llm, { model: 'm2', provider: 'openai', baseUrl: null, hasApiKey: true });
    assert.equal(service.unseal(storedKey()!), SECRET, 'a change of the model keeps the stored key');
    assertNoSecret(model);

    const cleared = await request('PATCH', path, { token, body: { llm: { apiKey: null, temperature: null } } });
    assert.deepEqual(cleared.body.data.llm, { model: 'm2', provider: 'openai', baseUrl: null, hasApiKey: false });
    assert.equal(storedKey(), null);
    assert.equal(storedExtra(), '{}');
  });

  test('a provider change without a baseUrl moves to another server: the stored key is dropped', async () => {
    const { token } = await service.signUp();
    const agent = await create(token, '/agents', agentBody({ llm: { model: 'm', provider: 'openai', apiKey: SECRET } }));
    const same = await request('PATCH', `/api/v1/agents/${agent.id}`, { token, body: { llm: { provider: 'OpenAI' } } });
    assert.equal(same.body.data.llm.hasApiKey, true, 'the same provider in another case is the same server');
    const moved = await request('PATCH', `/api/v1/agents/${agent.id}`, { token, body: { llm: { provider: 'ollama' } } });
    assert.equal(moved.body.data.llm.hasApiKey, false, "an OpenAI key must not go to the operator's Ollama");
  });

  test('llm.baseUrl on another origin drops a stored key not sent again; the same origin keeps it', async () => {
    const { token } = await service.signUp();
    const llm = { model: 'llama3', provider: 'openai-compatible', baseUrl: 'http://models.example.com:8000/v1', api_key: SECRET };
    const agent = await create(token, '/agents', agentBody({ llm }));
    assert.deepEqual(agent.llm, {
      model: 'llama3',
      provider: 'openai-compatible',
      baseUrl: 'http://models.example.com:8000/v1',
      hasApiKey: true,
    });
    const path = `/api/v1/agents/${agent.id}`;

    const samePlace = await request('PATCH', path, { token, body: { llm: { baseUrl: 'http://models.example.com:8000/v2' } } });
    assert.equal(samePlace.body.data.llm.hasApiKey, true, 'another path on the same origin keeps the key');

    const elsewhere = await request('PATCH', path, { token, body: { llm: { baseUrl: 'https://collector.example.net/v1' } } });
    assert.equal(elsewhere.status, 200);
    assert.deepEqual(elsewhere.body.data.llm, {
      model: 'llama3',
      provider: 'openai-compatible',
      baseUrl: 'https://collector.example.net/v1',
      hasApiKey: false,
    });
    assert.equal(service.db.prepare('SELECT llm_api_key FROM agents WHERE id = ?').pluck().get(agent.id), null);

    const withKey = await request('PATCH', path, {
      token,
      body: { llm: { base_url: 'https://other.example.org/v1', apiKey: OTHER_SECRET } },
    });
    assert.equal(withKey.body.data.llm.hasApiKey, true, 'a key sent with the new URL is kept');
    const toDefault = await request('PATCH', path, { token, body: { llm: { provider: 'openai', baseUrl: null } } });
    assert.deepEqual(
      toDefault.body.data.llm,
      { model: 'llama3', provider: 'openai', baseUrl: null, hasApiKey: false },
      "back to the operator's default is another origin too",
    );
    assertNoSecret(toDefault);
    assertNamesField(await request('PATCH', path, { token, body: { llm: { baseUrl: 'ftp://x.example/v1' } } }), 'llm.baseUrl');
    assertNamesField(await request('PATCH', path, { token, body: { llm: { baseUrl: 'https://user:pw@x.example/v1' } } }), 'llm.baseUrl');
  });

  test('same validation as create', async () => {
    const { token } = await service.signUp();
    const agent = await create(token, '/agents', agentBody());
    const path = `/api/v1/agents/${agent.id}`;
    assert.ok(pathsOf(await request('PATCH', path, { token, body: { type: 'WIZARD' } })).includes('type'));
    assert.ok(pathsOf(await request('PATCH', path, { token, body: { hasMemory: 1 } })).includes('hasMemory'));
    assert.ok(pathsOf(await request('PATCH', path, { token, body: { llm: { model: '', provider: 'p' } } })).includes('llm.model'));
    assert.ok(pathsOf(await request('PATCH', path, { token, body: { tags: {} } })).includes('tags'));
    assert.deepEqual((await request('GET', path, { token })).body.data, agent, 'nothing changed');
  });

  test("another user's tag (or prompt, or document) → 422 and nothing stored changes", async () => {
    const { token } = await service.signUp();
    const stranger = await service.signUp();
    const mine = await createTag(token);
    const theirTag = await createTag(stranger.token);
    const theirPrompt = await createPrompt(stranger.token);
    const theirDocument = await createDocument(stranger.token);
    const agent = await create(token, '/agents', agentBody({ name: 'Keep', tags: [mine.id] }));
    const path = `/api/v1/agents/${agent.id}`;

    assertNamesField(await request('PATCH', path, { token, body: { name: 'Changed', tags: [mine.id, theirTag.id] } }), 'tags');
    assertNamesField(await request('PATCH', path, { token, body: { name: 'Changed', promptId: theirPrompt.id } }), 'promptId');
    assertNamesField(await request('PATCH', path, { token, body: { name: 'Changed', documentId: theirDocument.id } }), 'documentId');

    const read = await request('GET', path, { token });
    assert.deepEqual(read.body.data, agent);
    assert.equal(read.body.data.name, 'Keep');
    assert.deepEqual(
      read.body.data.tags.map((tag: Json) => tag.id),
      [mine.id],
    );
  });

  test('an unknown id is 404 not_found', async () => {
    const { token } = await service.signUp();
    const reply = await request('PATCH', `/api/v1/agents/${randomUUID()}`, { token, body: { name: 'x' } });
    assert.equal(reply.status, 404);
    assert.equal(errorOf(reply).code, 'not_found');
  });
});

describe('an llm no run could use is refused when the agent is saved', () => {
  const NEEDS_BASE_URL = 'is required for provider "openai-compatible": the URL of its OpenAI-compatible API, e.g. http://host:8000/v1';
  const llmOf = (llm: Json) => ({ name: 'Model', type: 'VENDOR_A', llm });

  test('openai-compatible without a baseUrl: 422 on create and PATCH, nothing changes; openai, ollama and other providers need none', async () => {
    const { token } = await service.signUp();
    for (const provider of ['openai-compatible', 'OpenAI-Compatible']) {
      const refused = await request('POST', '/api/v1/agents', { token, body: llmOf({ provider, model: 'm' }) });
      assertNamesField(refused, 'llm.baseUrl');
      assert.equal(errorOf(refused).details![0].message, NEEDS_BASE_URL);
    }
    assert.deepEqual((await request('GET', '/api/v1/agents', { token })).body.data, []);
    for (const provider of ['openai', 'ollama', 'openai-chat', 'provider-of-another-service']) {
      assert.equal((await request('POST', '/api/v1/agents', { token, body: llmOf({ provider, model: 'm' }) })).status, 201, provider);
    }

    const agent = await create(token, '/agents', llmOf({ provider: 'openai', model: 'm' }));
    const path = `/api/v1/agents/${agent.id}`;
    const switched = await request('PATCH', path, { token, body: { name: 'changed', llm: { provider: 'openai-compatible' } } });
    assertNamesField(switched, 'llm.baseUrl');
    assert.deepEqual((await request('GET', path, { token })).body.data, agent, 'nothing changed');
    const withBase = await request('PATCH', path, {
      token,
      body: { llm: { provider: 'openai-compatible', baseUrl: 'http://models.example.com:8000/v1' } },
    });
    assert.equal(withBase.status, 200);
    assertNamesField(await request('PATCH', path, { token, body: { llm: { baseUrl: null } } }), 'llm.baseUrl');
    assert.equal(
      (await request('PATCH', path, { token, body: { llm: { model: 'm2' } } })).body.data.llm.baseUrl,
      'http://models.example.com:8000/v1',
    );
  });

  test('a baseUrl at an internal IP address: 422 on create and PATCH unless ALLOW_PRIVATE_NETWORKS is on; a host name is checked when the agent runs', async () => {
    const guarded = await startService({ allowPrivateNetworks: false });
    const { token } = await guarded.signUp();
    const hint = ' (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)';
    for (const [baseUrl, message] of [
      ['http://127.0.0.1:11434/v1', `refused: 127.0.0.1 is a loopback address${hint}`],
      ['http://10.1.2.3/v1', `refused: 10.1.2.3 is a private address${hint}`],
      ['http://[fe80::1]/v1', `refused: fe80::1 is a link-local address${hint}`],
    ]) {
      const refused = await guarded.request('POST', '/api/v1/agents', { token, body: llmOf({ provider: 'ollama', model: 'm', baseUrl }) });
      assertNamesField(refused, 'llm.baseUrl');
      assert.equal(errorOf(refused).details![0].message, message);
    }
    const agent = await guarded.create(
      token,
      '/agents',
      llmOf({ provider: 'openai-compatible', model: 'm', baseUrl: 'http://models.example.com/v1' }),
    );
    assertNamesField(
      await guarded.request('PATCH', `/api/v1/agents/${agent.id}`, { token, body: { llm: { baseUrl: 'http://192.168.0.10/v1' } } }),
      'llm.baseUrl',
    );
    assert.equal(
      (await guarded.request('GET', `/api/v1/agents/${agent.id}`, { token })).body.data.llm.baseUrl,
      'http://models.example.com/v1',
    );
    // The test service allows private networks, as an operator may.
    assert.equal(
      (
        await request('POST', '/api/v1/agents', {
          token: (await service.signUp()).token,
          body: llmOf({ provider: 'ollama', model: 'm', baseUrl: 'http://127.0.0.1:11434/v1' }),
        })
      ).status,
      201,
    );
  });
});

describe('DELETE /agents/{agentId}', () => {
  test('200 with data null; then it is gone', async () => {
    const { token } = await service.signUp();
    const keep = await create(token, '/agents', agentBody({ name: 'Keep' }));
    const gone = await create(token, '/agents', agentBody({ name: 'Gone' }));
    const reply = await request('DELETE', `/api/v1/agents/${gone.id}`, { token });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, { success: true, data: null });

    const read = await request('GET', `/api/v1/agents/${gone.id}`, { token });
    assert.equal(read.status, 404);
    assert.equal(errorOf(read).code, 'not_found');
    const again = await request('DELETE', `/api/v1/agents/${gone.id}`, { token });
    assert.equal(again.status, 404);
    assert.deepEqual(
      (await request('GET', '/api/v1/agents', { token })).body.data.map((agent: Json) => agent.id),
      [keep.id],
    );
  });
});

describe("an agent's `document`: the one set on it, else its first linked document", () => {
  /** The agent as get, list and the link's nested agent show it: [documentId, document.id]. */
  async function shown(token: string, agentId: string): Promise<[string | null, string | null]> {
    const one = await request('GET', `/api/v1/agents/${agentId}`, { token });
    assert.equal(one.status, 200, JSON.stringify(one.body));
    const listed = (await request('GET', '/api/v1/agents', { token })).body.data.find((agent: Json) => agent.id === agentId);
    assert.deepEqual(listed, one.body.data, 'the list shows the agent as get does');
    const { documentId, document } = one.body.data;
    assert.equal(document.id ?? null, documentId, 'document is the one documentId names, or {}');
    if (documentId === null) assert.deepEqual(document, {});
    return [documentId, document.id ?? null];
  }
  const link = async (token: string, agentId: string, documentId: string, path = '/api/v1/agent-documents') => {
    const reply = await request('POST', path, { token, body: { agentId, documentId } });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    return reply.body.data;
  };

  test('linked through POST /agent-documents (or the link form of POST /agents), the agent shows the document', async () => {
    const { token } = await service.signUp();
    const agent = await create(token, '/agents', agentBody());
    const first = await createDocument(token);
    const second = await createDocument(token);
    assert.deepEqual(await shown(token, agent.id), [null, null]);
    const firstLink = await link(token, agent.id, first.id);
    assert.equal(firstLink.agent.documentId, first.id, "the link's agent shows it too");
    assert.deepEqual(await shown(token, agent.id), [first.id, first.id]);
    // A second link leaves the first shown; the link form of POST /agents links the same way.
    const secondLink = await link(token, agent.id, second.id, '/api/v1/agents');
    assert.equal(secondLink.agent.documentId, first.id);
    assert.deepEqual(await shown(token, agent.id), [first.id, first.id]);
    // Unlinking the first shows the next; unlinking every one shows none.
    assert.equal((await request('DELETE', `/api/v1/agent-documents/${firstLink.id}`, { token })).status, 200);
    assert.deepEqual(await shown(token, agent.id), [second.id, second.id]);
    assert.equal((await request('DELETE', `/api/v1/agent-documents/${secondLink.id}`, { token })).status, 200);
    assert.deepEqual(await shown(token, agent.id), [null, null]);
  });

  test('the linked document it shows deleted, the agent shows its next linked one, then none', async () => {
    const { token } = await service.signUp();
    const agent = await create(token, '/agents', agentBody());
    const first = await createDocument(token);
    const second = await createDocument(token);
    await link(token, agent.id, first.id);
    const secondLink = await link(token, agent.id, second.id);
    assert.deepEqual(await shown(token, agent.id), [first.id, first.id]);
    assert.equal((await request('DELETE', `/api/v1/documents/${first.id}`, { token })).status, 200);
    assert.deepEqual(await shown(token, agent.id), [second.id, second.id]);
    const nested = await request('GET', `/api/v1/agent-documents/${secondLink.id}`, { token });
    assert.equal(nested.body.data.agent.documentId, second.id, "the link's agent shows it too");
    assert.equal((await request('DELETE', `/api/v1/documents/${second.id}`, { token })).status, 200);
    assert.deepEqual(await shown(token, agent.id), [null, null]);
  });

  test('a document set on the agent wins over its links; cleared or deleted, the first link shows', async () => {
    const { token } = await service.signUp();
    const own = await createDocument(token);
    const linked = await createDocument(token);
    const agent = await create(token, '/agents', agentBody({ documentId: own.id }));
    await link(token, agent.id, linked.id);
    assert.deepEqual(await shown(token, agent.id), [own.id, own.id]);
    // A PATCH of something else keeps the agent's own document (the linked one is not copied into it).
    const renamed = await request('PATCH', `/api/v1/agents/${agent.id}`, { token, body: { name: 'Renamed' } });
    assert.equal(renamed.body.data.documentId, own.id);
    // Cleared by PATCH: the linked document shows, and a PATCH after that does not make it the agent's own.
    const cleared = await request('PATCH', `/api/v1/agents/${agent.id}`, { token, body: { documentId: null } });
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.equal(cleared.body.data.documentId, linked.id);
    assert.deepEqual(await shown(token, agent.id), [linked.id, linked.id]);
    await request('PATCH', `/api/v1/agents/${agent.id}`, { token, body: { name: 'Again' } });
    const linkId = (await request('GET', `/api/v1/agent-documents?agentId=${agent.id}`, { token })).body.data[0].id;
    assert.equal((await request('DELETE', `/api/v1/agent-documents/${linkId}`, { token })).status, 200);
    assert.deepEqual(await shown(token, agent.id), [null, null], 'the link was the only document: none is left');
    // Set again, then the document deleted: the agent falls back to its links (here: none).
    await request('PATCH', `/api/v1/agents/${agent.id}`, { token, body: { documentId: own.id } });
    await link(token, agent.id, linked.id);
    assert.equal((await request('DELETE', `/api/v1/documents/${own.id}`, { token })).status, 200);
    assert.deepEqual(await shown(token, agent.id), [linked.id, linked.id]);
    assert.equal((await request('DELETE', `/api/v1/documents/${linked.id}`, { token })).status, 200);
    assert.deepEqual(await shown(token, agent.id), [null, null]);
  });
});
