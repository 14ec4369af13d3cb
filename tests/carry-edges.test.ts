// Carrying an agent, at its edges: an OpenAPI document travels whole in an export (names in it
// that look like credentials are its own), and tags named alike in an import file become one tag.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startService, type Json } from './helpers.js';

const service = await startService();
const HEADER_SECRET = 'Bearer openapi-header-secret-3391';
const TOKEN_SECRET = 'openapi-api-token-5517';

const api = (token: string, method: string, path: string, body?: unknown) => service.request(method, `/api/v1${path}`, { token, body });

/** A small API whose paths, properties and schemas are named like credentials. */
const SPEC = {
  openapi: '3.0.0',
  info: { title: 'Accounts', version: '1' },
  servers: [{ url: 'https://api.example.com' }],
  paths: {
    '/oauth/token': {
      post: {
        operationId: 'getToken',
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/TokenRequest' } } } },
      },
    },
    '/users': {
      post: {
        operationId: 'createUser',
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { name: { type: 'string' }, password: { type: 'string' } },
                required: ['name', 'password'],
              },
            },
          },
        },
      },
    },
  },
  components: { schemas: { TokenRequest: { type: 'object', properties: { grant_type: { type: 'string' } } } } },
};

/** The functions a tool offers, as names and parameters (what a copy must offer alike). */
async function functionsOf(token: string, toolId: string): Promise<Json[]> {
  const reply = await api(token, 'GET', `/tools/${toolId}/functions`);
  assert.equal(reply.status, 200, reply.text);
  return reply.body.data.functions.map(({ name, parameters }: Json) => ({ name, parameters }));
}

/** A bare export file of one agent, with `tags`. */
const exportWithTags = (tags: { name: string; color: string }[]) => ({
  format: 'agent-service.agent',
  version: 1,
  exportedAt: '2024-01-01T00:00:00.000Z',
  agent: {
    name: 'Tagged',
    description: null,
    avatarUrl: null,
    type: 'REACT',
    hasMemory: false,
    llm: { model: 'm', provider: 'echo', baseUrl: null, apiKeyNeeded: false },
  },
  prompt: null,
  tags,
  tools: [],
  documents: [],
});

describe('an OPENAPI tool with an inline spec in an export', () => {
  it('carries the document whole, its credential-named paths, properties and schemas kept; the copy offers the same functions', async () => {
    const alice = await service.signUp();
    const bob = await service.signUp();
    const agent = await service.createAgent(alice.token, { name: 'Accounts', type: 'VENDOR_A', llm: { model: 'm', provider: 'echo' } });
    const tool = await service.createTool(alice.token, {
      name: 'api',
      type: 'OPENAPI',
      metadata: { spec: SPEC, headers: { Authorization: HEADER_SECRET }, api_token: TOKEN_SECRET },
    });
    assert.equal((await api(alice.token, 'POST', '/agent-tools', { agentId: agent.id, toolId: tool.id })).status, 201);
    const before = await functionsOf(alice.token, tool.id);
    assert.equal(before.length, 2);

    const exported = await api(alice.token, 'GET', `/agents/${agent.id}/export`);
    assert.equal(exported.status, 200);
    for (const secret of [HEADER_SECRET, TOKEN_SECRET]) assert.ok(!exported.text.includes(secret), 'the secrets stay behind');
    const [carried] = exported.body.tools;
    assert.deepEqual(carried.secretFields, ['headers', 'api_token']);
    assert.deepEqual(carried.metadata, { spec: SPEC });

    const imported = await api(bob.token, 'POST', '/agents/import', exported.body);
    assert.equal(imported.status, 200, imported.text);
    const [link] = await service.listAll(bob.token, `/agent-tools?agentId=${imported.body.data.agentId}`);
    assert.deepEqual(await functionsOf(bob.token, link.tool.id), before);
  });
});

describe('tags named alike in an import file', () => {
  it('become one tag on the agent, named as the service compares names (case aside); an existing one is used', async () => {
    const { token } = await service.signUp();
    const tagsOf = async (agentId: string) =>
      (await api(token, 'GET', `/agents/${agentId}`)).body.data.tags.map((tag: Json) => [tag.name, tag.color]);

    const twice = await api(
      token,
      'POST',
      '/agents/import',
      exportWithTags([
        { name: 'x', color: '#ffffff' },
        { name: 'x', color: '#000000' },
      ]),
    );
    assert.equal(twice.status, 200, twice.text);
    assert.deepEqual(twice.body.data.creates.tags, { existing: [], new: ['x'] });
    assert.deepEqual(await tagsOf(twice.body.data.agentId), [['x', '#ffffff']]);

    const cased = exportWithTags([
      { name: 'Tag', color: '#ffffff' },
      { name: 'x', color: '#123456' },
      { name: 'tag', color: '#000000' },
      { name: 'X', color: '#654321' },
    ]);
    const dry = await api(token, 'POST', '/agents/import?dryRun=true', cased);
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body.data.creates.tags, { existing: ['x'], new: ['Tag'] });
    const reply = await api(token, 'POST', '/agents/import', cased);
    assert.equal(reply.status, 200, reply.text);
    assert.deepEqual(reply.body.data.creates.tags, { existing: ['x'], new: ['Tag'] });
    assert.deepEqual(await tagsOf(reply.body.data.agentId), [
      ['Tag', '#ffffff'],
      ['x', '#ffffff'],
    ]);

    const letta = await api(token, 'POST', '/agents/import', {
      agents: [{ name: 'L', llm_config: { model: 'm', model_endpoint_type: 'ollama' }, tags: ['Foo', 'foo', 'TAG'] }],
    });
    assert.equal(letta.status, 200, letta.text);
    assert.deepEqual(
      (await tagsOf(letta.body.data.agentId)).map(([name]: string[]) => name),
      ['Foo', 'Tag'],
    );
    const names = (await service.listAll(token, '/tags')).map((tag) => tag.name).sort();
    assert.deepEqual(names, ['Foo', 'Tag', 'x'], 'one tag of each name');
  });

  it("a Letta agent's name and tags are made names the service takes: one line, cut between characters", async () => {
    const { token } = await service.signUp();
    const long = `${'x'.repeat(199)}\u{1F600}tail`;
    const reply = await api(token, 'POST', '/agents/import', {
      agents: [{ name: long, llm_config: { model: 'm', model_endpoint_type: 'ollama' }, tags: ['two\nlines', long], system: 'Be brief.' }],
    });
    assert.equal(reply.status, 200, reply.text);
    const agent = (await api(token, 'GET', `/agents/${reply.body.data.agentId}`)).body.data;
    assert.equal(agent.name, 'x'.repeat(199), 'the emoji that did not fit is left out whole');
    assert.deepEqual(agent.tags.map((tag: Json) => tag.name).sort(), ['two lines', 'x'.repeat(199)].sort());
    const renamed = await api(token, 'PATCH', `/agents/${agent.id}`, { name: agent.name });
    assert.equal(renamed.status, 200, 'the name it shows can be given back');
  });
});
