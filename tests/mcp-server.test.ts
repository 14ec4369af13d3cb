// `/mcp`: the caller's agents as an MCP server, driven by the official clients of both lines — the
// 2.x `@modelcontextprotocol/client` (protocol 2026-07-28, negotiated) and the 1.x
// `@modelcontextprotocol/sdk` client (the 2025 versions, initialize first). The agents' model is
// the fake OpenAI server.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startService, waitFor, type Json } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { MCP_PAGE_SIZE } from '../src/mcp/tools.js';

const fake = await startFakeOpenAI();
const service = await startService();
const alice = await service.signUp('Alice');
const bob = await service.signUp('Bob');
const mcpUrl = new URL(`${service.url}/mcp`);

const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: 'sk-mcp-test-key-123456' };
const createAgent = (token: string, body: Json) => service.create(token, '/agents', { type: 'VENDOR_A', llm, ...body });

/** A connected client of the 2.x line (negotiates 2026-07-28) or of the 1.x line (2025, initialize). */
async function connect(line: '2.x' | '1.x', token: string): Promise<Client | Client1> {
  const requestInit = { headers: { Authorization: `Bearer ${token}` } };
  if (line === '2.x') {
    const client = new Client({ name: 'test-host', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit }));
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28', 'the 2.x client speaks the current, stateless protocol');
    return client;
  }
  const client = new Client1({ name: 'test-host-1', version: '1.0.0' });
  await client.connect(new Transport1(mcpUrl, { requestInit }));
  assert.match(client.getServerCapabilities() ? 'initialized' : '', /initialized/);
  return client;
}

const prompt = await service.create(alice.token, '/prompts', {
  name: 'Translator',
  template: 'Translate into {language}. {input}',
  input_variables: ['language', 'input'],
});
const translator = await createAgent(alice.token, { name: 'Translator (FR)!', description: 'Translates text.', promptId: prompt.id });
await createAgent(alice.token, { name: 'translator fr' });
const longName = 'A'.repeat(30) + ' ' + 'b'.repeat(30);
await createAgent(alice.token, { name: longName });
await createAgent(bob.token, { name: 'Bob secret agent', description: 'Only Bob sees this.' });

for (const line of ['2.x', '1.x'] as const) {
  describe(`/mcp with the ${line} client`, () => {
    test("tools/list: one tool per agent of the caller, named as the spec says, and search_documents; no one else's agents", async () => {
      const client = await connect(line, alice.token);
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ['translator_fr', 'translator_fr_2', `${'a'.repeat(30)}_${'b'.repeat(17)}`, 'search_documents'],
      );
      const [first, other, cut, search] = tools;
      assert.equal(first.description, 'Translates text.');
      assert.deepEqual(first.inputSchema.required, ['input', 'language']);
      assert.deepEqual(Object.keys(first.inputSchema.properties ?? {}).sort(), ['input', 'language', 'sessionId']);
      assert.match(other.description ?? '', /translator fr/);
      assert.deepEqual(other.inputSchema.required, ['input']);
      assert.equal(cut.name.length, 48);
      assert.match(cut.description ?? '', new RegExp(longName));
      assert.deepEqual(search.inputSchema.required, ['query']);
      await client.close();

      const bobs = await connect(line, bob.token);
      assert.deepEqual(
        (await bobs.listTools()).tools.map((tool) => tool.name),
        ['bob_secret_agent', 'search_documents'],
      );
      const refused = await bobs.callTool({ name: 'translator_fr', arguments: { input: 'x', language: 'fr' } }).then(
        () => 'answered',
        (error: Error) => error.message,
      );
      assert.match(refused, /no tool named "translator_fr"/, "Alice's agent is no tool of Bob's");
      await bobs.close();
    });

    test('tools/call runs the agent as an ordinary recorded run: text, structuredContent, the prompt filled', async () => {
      const client = await connect(line, alice.token);
      fake.reply({ text: 'Bonjour !' });
      const before = fake.requests.length;
      const result = (await client.callTool({ name: 'translator_fr', arguments: { input: 'Hello!', language: 'French' } })) as Json;
      assert.equal(result.isError ?? false, false, JSON.stringify(result));
      assert.deepEqual(result.content, [{ type: 'text', text: 'Bonjour !' }]);
      const { runId, sessionId, output, sources } = result.structuredContent;
      assert.deepEqual({ sessionId, output, sources }, { sessionId: null, output: 'Bonjour !', sources: [] });
      const sent = fake.requests[before].body.messages;
      assert.equal(sent[0].content, 'Translate into French. Hello!');
      const run = await service.request('GET', `/api/v1/runs/${runId}`, { token: alice.token });
      assert.equal(run.status, 200);
      assert.equal(run.body.data.agentId, translator.id);
      assert.equal(run.body.data.status, 'succeeded');
      assert.equal(run.body.data.input, 'Hello!');
      await client.close();
    });

    test('a failed run is an isError result in words; bad arguments too; the connection goes on', async () => {
      const client = await connect(line, alice.token);
      fake.reply({ status: 500, message: 'model exploded' });
      const failed = (await client.callTool({ name: 'translator_fr_2', arguments: { input: 'Hi' } })) as Json;
      assert.equal(failed.isError, true);
      assert.match(failed.content[0].text, /^The run failed: /);
      const run = await service.request('GET', `/api/v1/runs/${failed.structuredContent.runId}`, { token: alice.token });
      assert.equal(run.body.data.status, 'failed');

      const missing = (await client.callTool({ name: 'translator_fr', arguments: { input: 'Hi' } })) as Json;
      assert.equal(missing.isError, true);
      assert.match(missing.content[0].text, /Invalid arguments: language/);

      fake.reply({ text: 'still here' });
      const after = (await client.callTool({ name: 'translator_fr_2', arguments: { input: 'Hi' } })) as Json;
      assert.equal(after.content[0].text, 'still here');
      await client.close();
    });

    test('search_documents: the hits in text and as /documents/search shows them', async () => {
      const client = await connect(line, alice.token);
      const result = (await client.callTool({ name: 'search_documents', arguments: { query: 'otters' } })) as Json;
      assert.equal(result.isError ?? false, false);
      assert.deepEqual(result.structuredContent, { hits: [] });
      assert.equal(result.content[0].text, 'No documents match.');
      const empty = (await client.callTool({ name: 'search_documents', arguments: { query: '!!' } })) as Json;
      assert.equal(empty.isError, true);
      await client.close();
    });
  });
}

describe('/mcp and prompt variables named like its arguments', () => {
  test('{sessionId} is filled by the sessionId argument (then required), {input} by the input', async () => {
    const carol = await service.signUp('Carol');
    const odd = await service.create(carol.token, '/prompts', {
      name: 'Odd names',
      template: 'Session {sessionId}, topic {topic}: {input}',
      input_variables: ['sessionId', 'topic', 'input'],
    });
    await createAgent(carol.token, { name: 'Odd', hasMemory: true, promptId: odd.id });
    const client = await connect('2.x', carol.token);
    const [tool] = (await client.listTools()).tools;
    assert.equal(tool.name, 'odd');
    assert.deepEqual(tool.inputSchema.required, ['input', 'sessionId', 'topic']);
    assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}).sort(), ['input', 'sessionId', 'topic']);
    fake.reply({ text: 'Understood.' });
    const before = fake.requests.length;
    const result = (await client.callTool({ name: 'odd', arguments: { input: 'Hi', sessionId: 's-1', topic: 'birds' } })) as Json;
    assert.equal(result.isError ?? false, false, JSON.stringify(result));
    assert.equal(result.structuredContent.sessionId, 's-1');
    assert.equal(fake.requests[before].body.messages[0].content, 'Session s-1, topic birds: Hi');
    const missing = (await client.callTool({ name: 'odd', arguments: { input: 'Hi' } })) as Json;
    assert.equal(missing.isError, true);
    assert.equal(missing.content[0].text, 'Invalid arguments: sessionId: must be a string; topic: must be a string.');
    await client.close();
  });
});

describe('/mcp authentication', () => {
  test('without a valid token: 401 with WWW-Authenticate: Bearer; a revoked token stops at once', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const none = await service.request('POST', '/mcp', { body });
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    const wrong = await service.request('POST', '/mcp', { body, token: 'not-a-token', header: 'Authorization' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('www-authenticate'), 'Bearer');

    const token = await service.create(alice.token, '/api-tokens', {});
    const client = await connect('1.x', token.token);
    assert.equal((await client.listTools()).tools.length, 4);
    const revoked = await service.request('DELETE', `/api/v1/api-tokens/${token.id}`, { token: alice.token });
    assert.equal(revoked.status, 200);
    await assert.rejects(client.listTools(), /401|nauthorized/);
  });

  test('the tool list follows the agents as they change', async () => {
    const client = await connect('2.x', bob.token);
    const agent = await createAgent(bob.token, { name: 'Newcomer' });
    await waitFor('the new agent listed', async () =>
      (await client.listTools()).tools.some((tool) => tool.name === 'newcomer') ? true : undefined,
    );
    await service.request('DELETE', `/api/v1/agents/${agent.id}`, { token: bob.token });
    assert.ok(!(await client.listTools()).tools.some((tool) => tool.name === 'newcomer'));
    await client.close();
  });
});

describe('/mcp tools/list in pages', () => {
  test(`a caller with more than ${MCP_PAGE_SIZE} agents gets pages joined by nextCursor, read whole by both clients; an unknown cursor is refused`, async () => {
    const carol = await service.signUp('Carol');
    const count = 2 * MCP_PAGE_SIZE + 5;
    for (let i = 0; i < count; i++) await createAgent(carol.token, { name: `Helper ${i}` });
    const helpers = Array.from({ length: count }, (_, i) => `helper_${i}`);
    // search_documents ends the first page: a host that reads only that page still has it.
    const expected = [...helpers.slice(0, MCP_PAGE_SIZE), 'search_documents', ...helpers.slice(MCP_PAGE_SIZE)];

    // The 1.x client asks page by page.
    const client1 = await connect('1.x', carol.token);
    const names: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await client1.listTools(cursor === undefined ? undefined : { cursor });
      names.push(...page.tools.map((tool) => tool.name));
      sizes.push(page.tools.length);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    assert.deepEqual(sizes, [MCP_PAGE_SIZE + 1, MCP_PAGE_SIZE, 5]);
    assert.deepEqual(names, expected, 'every agent once, in creation order, search_documents after the first page of them');
    await assert.rejects(client1.listTools({ cursor: 'bm90LWEtY3Vyc29y' }), /Unknown cursor/);
    await client1.close();

    // The 2.x client follows the cursors itself.
    const client2 = await connect('2.x', carol.token);
    assert.deepEqual(
      (await client2.listTools()).tools.map((tool) => tool.name),
      expected,
    );
    await assert.rejects(client2.listTools({ cursor: 'bm90LWEtY3Vyc29y' }), /Unknown cursor/);
    await client2.close();
  });
});
