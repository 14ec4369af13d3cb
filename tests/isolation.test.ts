// Ownership: every record belongs to its creator. Another user's id behaves exactly
// like a missing id: 404 on a path (same body as a random id), 422 in a body or in `?after=`.
// User B walks every path with user A's ids, once with each header spelling; A's records survive.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { errorOf, startService, type Json, type Reply } from './helpers.js';

const service = await startService();
const { request, create } = service;

interface World {
  token: string;
  userId: string;
  apiToken: Json;
  tool: Json;
  document: Json;
  prompt: Json;
  tag: Json;
  agent: Json;
  agentDocument: Json;
  agentTool: Json;
  webhook: Json;
  connection: Json;
}

/** One of everything, owned by the holder of `token`. */
async function populate(token: string, userId: string, label: string): Promise<World> {
  const apiToken = await create(token, '/api-tokens', { description: `${label} token` });
  const tool = await service.createTool(token, { type: 'AUTOMATION_NLA', metadata: { automation_nla_api_key: `${label}-key` } });
  const document = await service.createDocument(token, { type: 'URL', url: `https://example.com/${label}` });
  const prompt = await service.createPrompt(token);
  const tag = await service.createTag(token, { color: '#336699' });
  const agent = await service.createAgent(token, { type: 'VENDOR_A', promptId: prompt.id, documentId: document.id, tags: [tag.id] });
  const agentDocument = await create(token, '/agent-documents', { agentId: agent.id, documentId: document.id });
  const agentTool = await create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
  const webhook = await create(token, '/webhooks', { url: `http://127.0.0.1:9/${label}`, events: ['*'] });
  const connection = await create(token, '/connections', {
    name: `${label} server`,
    provider: 'openai-compatible',
    baseUrl: 'http://127.0.0.1:9/v1',
    apiKey: `${label}-connection-key`,
  });
  return { token, userId, apiToken, tool, document, prompt, tag, agent, agentDocument, agentTool, webhook, connection };
}

/** Each resource path, the key of its record in a World, and a valid PATCH body (null: no PATCH). */
const RESOURCES: { path: string; key: keyof World; patch: Json | null }[] = [
  { path: '/api-tokens', key: 'apiToken', patch: { description: 'taken over' } },
  { path: '/tools', key: 'tool', patch: { name: 'taken over' } },
  { path: '/documents', key: 'document', patch: { name: 'taken over' } },
  { path: '/agents', key: 'agent', patch: { name: 'taken over' } },
  { path: '/prompts', key: 'prompt', patch: { name: 'taken over' } },
  { path: '/tags', key: 'tag', patch: { name: 'taken over' } },
  { path: '/agent-documents', key: 'agentDocument', patch: null },
  { path: '/agent-tools', key: 'agentTool', patch: { requiresApproval: true } },
  { path: '/webhooks', key: 'webhook', patch: { description: 'taken over' } },
  { path: '/connections', key: 'connection', patch: { name: 'taken over' } },
];

const idOf = (world: World, key: keyof World): string => (world[key] as Json).id;

let alice: World;
let bob: World;
/** A's records as A read them before B started. */
const snapshot = new Map<string, Json>();
const listSnapshot = new Map<string, Json>();

before(async () => {
  const a = await service.signUp('Alice');
  const b = await service.signUp('Bob');
  alice = await populate(a.token, a.user.id, 'alice');
  bob = await populate(b.token, b.user.id, 'bob');
  for (const { path, key } of RESOURCES) {
    const one = await request('GET', `/api/v1${path}/${idOf(alice, key)}`, { token: alice.token });
    assert.equal(one.status, 200, `A reads ${path}`);
    snapshot.set(path, one.body.data);
    const list = await request('GET', `/api/v1${path}`, { token: alice.token });
    assert.equal(list.status, 200);
    listSnapshot.set(path, list.body.data);
  }
});

for (const header of ['Autorization', 'Authorization'] as const) {
  describe(`user B with A's ids (header ${header})`, () => {
    /** A request as B, with this header spelling (`Autorization` is the helper's default). */
    const asB = (method: string, path: string, body?: unknown): Promise<Reply> =>
      request(method, `/api/v1${path}`, {
        token: bob.token,
        ...(header === 'Authorization' ? { header } : {}),
        ...(body === undefined ? {} : { body }),
      });

    function assertSameAsMissing(theirs: Reply, missing: Reply, what: string): void {
      assert.equal(theirs.status, missing.status, what);
      assert.deepEqual(theirs.body, missing.body, `${what}: same body as a random id`);
    }

    function assertRejectsField(reply: Reply, field: string, what: string): void {
      assert.equal(reply.status, 422, `${what}: ${JSON.stringify(reply.body)}`);
      const error = errorOf(reply);
      assert.equal(error.code, 'validation_failed', what);
      const paths = (error.details ?? []).map((issue) => issue.path);
      assert.ok(
        paths.some((path) => path === field || path.startsWith(`${field}.`)),
        `${what}: details ${JSON.stringify(paths)}`,
      );
    }

    test('B is authenticated with this header (its own records answer 200)', async () => {
      const me = await asB('GET', '/auth/me');
      assert.equal(me.status, 200);
      assert.equal(me.body.data.id, bob.userId);
      for (const { path, key } of RESOURCES) {
        assert.equal((await asB('GET', `${path}/${idOf(bob, key)}`)).status, 200, `B reads its own ${path}`);
      }
    });

    for (const { path, key, patch } of RESOURCES) {
      test(`GET, PATCH, DELETE ${path}/{A's id} answer exactly as a random id`, async () => {
        const theirs = `${path}/${idOf(alice, key)}`;
        const random = `${path}/${randomUUID()}`;

        const get = await asB('GET', theirs);
        assert.equal(get.status, 404, `GET ${theirs}: ${JSON.stringify(get.body)}`);
        assert.equal(errorOf(get).code, 'not_found');
        assertSameAsMissing(get, await asB('GET', random), 'GET');

        const patchBody = patch ?? { name: 'taken over' };
        const patched = await asB('PATCH', theirs, patchBody);
        if (patch !== null) {
          assert.equal(patched.status, 404, `PATCH ${theirs}: ${JSON.stringify(patched.body)}`);
          assert.equal(errorOf(patched).code, 'not_found');
        } else {
          // Agent-document links have no PATCH: the known path answers 405, whoever's id it names.
          assert.equal(patched.status, 405, `PATCH ${theirs}: ${JSON.stringify(patched.body)}`);
          assert.equal(errorOf(patched).code, 'method_not_allowed');
        }
        assertSameAsMissing(patched, await asB('PATCH', random, patchBody), 'PATCH');

        const deleted = await asB('DELETE', theirs);
        assert.equal(deleted.status, 404, `DELETE ${theirs}: ${JSON.stringify(deleted.body)}`);
        assert.equal(errorOf(deleted).code, 'not_found');
        assertSameAsMissing(deleted, await asB('DELETE', random), 'DELETE');
      });
    }

    test("B's lists hold only B's records, whatever the filter", async () => {
      const aliceIds = new Set(RESOURCES.map(({ key }) => idOf(alice, key)));
      for (const { path, key } of RESOURCES) {
        const reply = await asB('GET', path);
        assert.equal(reply.status, 200, path);
        assert.ok(Array.isArray(reply.body.data));
        const ids: string[] = reply.body.data.map((row: Json) => row.id);
        assert.ok(ids.includes(idOf(bob, key)), `${path} lists B's record`);
        assert.deepEqual(
          ids.filter((id) => aliceIds.has(id)),
          [],
          `${path} lists none of A's records`,
        );
        assert.ok(!JSON.stringify(reply.body).includes(alice.userId), `${path} never names A`);
      }
      const filters = [
        `/agent-documents?agentId=${alice.agent.id}`,
        `/agent-documents?documentId=${alice.document.id}`,
        `/agent-tools?agentId=${alice.agent.id}`,
        `/agent-tools?toolId=${alice.tool.id}`,
      ];
      for (const path of filters) {
        const reply = await asB('GET', path);
        // Filtering by someone else's id may be refused or answer an empty list; it never shows A's links.
        assert.ok(reply.status === 200 || reply.status === 422, `${path}: ${reply.status}`);
        if (reply.status === 200) assert.deepEqual(reply.body.data, [], path);
        else assert.equal(errorOf(reply).code, 'validation_failed');
      }
    });

    test("?after=<A's id> on B's lists → 422 naming after", async () => {
      for (const { path, key } of RESOURCES) {
        assertRejectsField(await asB('GET', `${path}?after=${idOf(alice, key)}`), 'after', path);
        assert.equal((await asB('GET', `${path}?after=${idOf(bob, key)}`)).status, 200, `${path} after B's own id`);
      }
    });

    test("creating or updating an agent with A's promptId, documentId or tag → 422 naming the field", async () => {
      const base = { name: 'B agent', type: 'REACT', llm: { model: 'm', provider: 'p' } };
      assertRejectsField(await asB('POST', '/agents', { ...base, promptId: alice.prompt.id }), 'promptId', 'create promptId');
      assertRejectsField(await asB('POST', '/agents', { ...base, documentId: alice.document.id }), 'documentId', 'create documentId');
      assertRejectsField(await asB('POST', '/agents', { ...base, tags: [alice.tag.id] }), 'tags', 'create tag id');
      assertRejectsField(await asB('POST', '/agents', { ...base, tags: [alice.tag] }), 'tags', 'create tag object');
      assertRejectsField(await asB('POST', '/agents', { ...base, tags: [bob.tag.id, alice.tag.id] }), 'tags', 'create mixed tags');

      const own = `/agents/${bob.agent.id}`;
      assertRejectsField(await asB('PATCH', own, { promptId: alice.prompt.id }), 'promptId', 'patch promptId');
      assertRejectsField(await asB('PATCH', own, { documentId: alice.document.id }), 'documentId', 'patch documentId');
      assertRejectsField(await asB('PATCH', own, { tags: [alice.tag] }), 'tags', 'patch tags');

      const agents = await asB('GET', '/agents');
      assert.deepEqual(
        agents.body.data.map((agent: Json) => agent.id),
        [bob.agent.id],
        'no agent was created',
      );
      assert.deepEqual(agents.body.data[0], bob.agent, "B's agent is unchanged");
    });

    test('linking across users → 422 naming the foreign id', async () => {
      for (const path of ['/agent-documents', '/agents']) {
        assertRejectsField(
          await asB('POST', path, { agentId: alice.agent.id, documentId: bob.document.id }),
          'agentId',
          `${path}: A's agent`,
        );
        assertRejectsField(
          await asB('POST', path, { agentId: bob.agent.id, documentId: alice.document.id }),
          'documentId',
          `${path}: A's document`,
        );
      }
      assertRejectsField(await asB('POST', '/agent-tools', { agentId: bob.agent.id, toolId: alice.tool.id }), 'toolId', "A's tool");
      assertRejectsField(await asB('POST', '/agent-tools', { agentId: alice.agent.id, toolId: bob.tool.id }), 'agentId', "A's agent");

      assert.deepEqual(
        (await asB('GET', '/agent-documents')).body.data.map((link: Json) => link.id),
        [bob.agentDocument.id],
      );
      assert.deepEqual(
        (await asB('GET', '/agent-tools')).body.data.map((link: Json) => link.id),
        [bob.agentTool.id],
      );
    });

    test("a tag posted with A's userId → 403, and A gets no tag", async () => {
      const reply = await asB('POST', '/tags', { name: 'planted', color: '#000000', userId: alice.userId });
      assert.equal(reply.status, 403, JSON.stringify(reply.body));
      assert.equal(errorOf(reply).code, 'forbidden');
    });
  });
}

describe("afterwards A's records are all there, unchanged", () => {
  test('GET one and list as A equal what A read before', async () => {
    for (const { path, key } of RESOURCES) {
      const one = await request('GET', `/api/v1${path}/${idOf(alice, key)}`, { token: alice.token });
      assert.equal(one.status, 200, path);
      assert.deepEqual(one.body.data, snapshot.get(path), path);
      const list = await request('GET', `/api/v1${path}`, { token: alice.token });
      assert.equal(list.status, 200, path);
      assert.deepEqual(list.body.data, listSnapshot.get(path), `${path} list`);
    }
    const agent = snapshot.get('/agents')!;
    assert.equal(agent.promptId, alice.prompt.id);
    assert.equal(agent.documentId, alice.document.id);
    assert.deepEqual(
      agent.tags.map((tag: Json) => tag.id),
      [alice.tag.id],
    );
  });

  test("A's extra API token still works", async () => {
    const me = await request('GET', '/api/v1/auth/me', { token: alice.apiToken.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.id, alice.userId);
  });
});
