// Carrying an agent: GET /agents/{id}/export answers one file without secrets, POST /agents/import
// creates it all again in another account (a dry run changes nothing; twice makes two copies),
// files that are not ours or are newer are refused naming what is wrong, and Letta's Agent File is
// read as far as this service has counterparts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { startService, type Json, type SignedUp, type TestService } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { standaloneJsonSchema } from '../src/openapi/document.js';
import { AgentExportSchema } from '../src/agents/carry/format.js';

const LLM_KEY = 'sk-agent-llm-key-5521';
const HEADER_SECRET = 'Bearer tool-header-secret-8812';
const TOKEN_SECRET = 'tool-api-token-secret-7734';
const NESTED_SECRET = 'nested-password-6601';
const DOC_SECRET = 'doc-credential-4409';
const SECRETS = [LLM_KEY, HEADER_SECRET, TOKEN_SECRET, NESTED_SECRET, DOC_SECRET];

const TABLES = [
  'agents',
  'prompts',
  'tags',
  'tools',
  'documents',
  'document_files',
  'document_file_parts',
  'agent_tools',
  'agent_documents',
  'agent_sessions',
  'agent_messages',
];

let service: TestService;
let alice: SignedUp;
let bob: SignedUp;
let agent: Json;

const api = (token: string, method: string, path: string, body?: unknown) => service.request(method, `/api/v1${path}`, { token, body });

/** How many rows each table holds: what an import may or may not change. */
const counts = () =>
  Object.fromEntries(TABLES.map((table) => [table, service.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number]));

/** A tool's stored settings (sealed in the database). */
const storedMetadata = (toolId: string) =>
  JSON.parse(service.unseal(service.db.prepare(`SELECT metadata FROM tools WHERE id = ?`).pluck().get(toolId) as string));

/** Everything an agent is made of, as the API shows it, without ids and times: two copies compare equal. */
async function describeAgent(token: string, agentId: string): Promise<Json> {
  const got = await api(token, 'GET', `/agents/${agentId}`);
  assert.equal(got.status, 200);
  const a = got.body.data;
  const prompt = a.promptId ? (await api(token, 'GET', `/prompts/${a.promptId}`)).body.data : null;
  const toolLinks = await service.listAll(token, `/agent-tools?agentId=${agentId}`);
  const documentLinks = await service.listAll(token, `/agent-documents?agentId=${agentId}`);
  const documentOf = (d: Json) => ({
    name: d.name,
    type: d.type,
    url: d.url,
    from_page: d.from_page,
    to_page: d.to_page,
    splitter: d.splitter,
    metadata: d.metadata,
    status: d.status,
  });
  return {
    name: a.name,
    description: a.description,
    avatarUrl: a.avatarUrl,
    type: a.type,
    hasMemory: a.hasMemory,
    llm: { model: a.llm.model, provider: a.llm.provider, baseUrl: a.llm.baseUrl },
    prompt: prompt && { name: prompt.name, template: prompt.template, input_variables: prompt.input_variables },
    tags: a.tags.map((tag: Json) => ({ name: tag.name, color: tag.color })),
    document: a.document.id ? documentOf(a.document) : null,
    tools: toolLinks.map((link) => ({
      name: link.tool.name,
      type: link.tool.type,
      description: link.tool.description,
      requiresApproval: link.requiresApproval,
      metadata: storedMetadata(link.tool.id),
    })),
    documents: documentLinks.map((link) => documentOf(link.document)),
  };
}

{
  service = await startService();
  alice = await service.signUp('Alice');
  bob = await service.signUp('Bob');
  const prompt = await service.createPrompt(alice.token, {
    name: 'Support',
    template: 'Help {customer} kindly. Braces: {{x}}.',
    input_variables: ['customer'],
  });
  const vip = await service.createTag(alice.token, { name: 'vip', color: '#ff0000' });
  const beta = await service.createTag(alice.token, { name: 'beta', color: '#00ff00' });
  const handbook = await service.createDocument(alice.token, {
    name: 'Handbook',
    type: 'PDF',
    url: 'https://docs.example.com/handbook.pdf',
    from_page: 2,
    to_page: 9,
    authorization: { headers: { Authorization: DOC_SECRET } },
    metadata: { team: 'support' },
  });
  const faq = await service.createDocument(alice.token, {
    name: 'FAQ',
    type: 'TXT',
    url: 'https://docs.example.com/faq.txt',
    splitter: { type: 'recursive', chunk_size: 500, chunk_overlap: 50 },
  });
  agent = await service.createAgent(alice.token, {
    name: 'Helpdesk',
    description: 'Answers customers',
    avatarUrl: 'https://img.example.com/helpdesk.png',
    type: 'VENDOR_A',
    hasMemory: true,
    llm: { model: 'gpt-4o-mini', provider: 'openai-compatible', baseUrl: 'https://models.example.com/v1', apiKey: LLM_KEY },
    promptId: prompt.id,
    documentId: handbook.id,
    tags: [vip.id, beta.id],
  });
  const search = await service.createTool(alice.token, {
    name: 'Web search',
    type: 'SEARCH',
    description: 'Searches the web',
    metadata: { url: 'https://search.example.com', headers: { Authorization: HEADER_SECRET }, api_token: TOKEN_SECRET, region: 'eu' },
  });
  const mcp = await service.createTool(alice.token, {
    name: 'CRM',
    type: 'MCP',
    metadata: { url: 'https://crm.example.com/mcp', tools: ['find_customer'], options: { password: NESTED_SECRET, retries: 2 } },
  });
  const self = await service.createTool(alice.token, { name: 'Ask myself', type: 'AGENT', metadata: { agentId: agent.id } });
  for (const [tool, requiresApproval] of [
    [search, false],
    [mcp, true],
    [self, false],
  ] as const) {
    assert.equal((await api(alice.token, 'POST', '/agent-tools', { agentId: agent.id, toolId: tool.id, requiresApproval })).status, 201);
  }
  for (const document of [handbook, faq]) {
    assert.equal((await api(alice.token, 'POST', '/agent-documents', { agentId: agent.id, documentId: document.id })).status, 201);
  }
}

describe('GET /agents/{id}/export', () => {
  it('answers one file of the documented format, marking what needs a secret and holding none', async () => {
    const reply = await api(alice.token, 'GET', `/agents/${agent.id}/export`);
    assert.equal(reply.status, 200);
    assert.match(reply.headers.get('content-disposition') ?? '', /^attachment; filename="Helpdesk\.agent\.json"$/);
    for (const secret of SECRETS) assert.ok(!reply.text.includes(secret), `the export holds no secret (${secret})`);
    const file = reply.body;
    assert.equal(file.format, 'agent-service.agent');
    assert.equal(file.version, 1);
    assert.deepEqual(file.agent.llm, {
      model: 'gpt-4o-mini',
      provider: 'openai-compatible',
      baseUrl: 'https://models.example.com/v1',
      apiKeyNeeded: true,
    });
    assert.deepEqual(
      file.tools.map((tool: Json) => [tool.name, tool.secretFields, tool.metadata, tool.callsThisAgent, tool.requiresApproval]),
      [
        ['Web search', ['headers', 'api_token'], { url: 'https://search.example.com', region: 'eu' }, false, false],
        [
          'CRM',
          ['options.password'],
          { url: 'https://crm.example.com/mcp', tools: ['find_customer'], options: { retries: 2 } },
          false,
          true,
        ],
        ['Ask myself', [], {}, true, false],
      ],
    );
    assert.deepEqual(
      file.documents.map((d: Json) => [d.name, d.authorizationNeeded, d.isAgentDocument, d.linked, 'file' in d]),
      [
        ['Handbook', true, true, true, false],
        ['FAQ', false, false, true, false],
      ],
    );
    assert.equal(file.sessions, undefined, 'sessions only when asked for');
  });

  it("answers 404 for another user's agent, and for no agent", async () => {
    assert.equal((await api(bob.token, 'GET', `/agents/${agent.id}/export`)).status, 404);
    assert.equal((await api(alice.token, 'GET', `/agents/00000000-0000-0000-0000-000000000000/export`)).status, 404);
  });

  it('the JSON Schema in docs/ is the one the code checks imports with', () => {
    const written = JSON.parse(readFileSync(new URL('../docs/agent-export.schema.json', import.meta.url), 'utf8'));
    assert.deepEqual(written, standaloneJsonSchema(AgentExportSchema), 'run: node --import tsx scripts/agent-export-schema.ts');
  });
});

describe('POST /agents/import', () => {
  it('recreates the agent, prompt, tags, tools, links and documents in another account, secrets marked as needed', async () => {
    const file = (await api(alice.token, 'GET', `/agents/${agent.id}/export`)).body;
    await service.createTag(bob.token, { name: 'VIP', color: '#123456' });
    const reply = await api(bob.token, 'POST', '/agents/import', file);
    assert.equal(reply.status, 200, reply.text);
    const result = reply.body.data;
    assert.equal(result.dryRun, false);
    assert.equal(result.source, 'agent-service');
    assert.deepEqual(result.creates, {
      agent: 'Helpdesk',
      prompt: true,
      tags: { existing: ['vip'], new: ['beta'] },
      tools: ['Web search', 'CRM', 'Ask myself'],
      documents: ['Handbook', 'FAQ'],
      sessions: 0,
      messages: 0,
    });
    assert.deepEqual(
      result.secretsNeeded.map((need: Json) => need.path),
      [
        'agent.llm.apiKey',
        'tools.0.metadata.headers',
        'tools.0.metadata.api_token',
        'tools.1.metadata.options.password',
        'documents.0.authorization',
      ],
    );
    assert.deepEqual(result.skipped, []);

    const original = await describeAgent(alice.token, agent.id);
    const copy = await describeAgent(bob.token, result.agentId);
    const withoutSecrets = {
      ...original,
      // Bob's existing tag of that name is used, with its colour.
      tags: [
        { name: 'VIP', color: '#123456' },
        { name: 'beta', color: '#00ff00' },
      ],
      tools: [
        { ...original.tools[0], metadata: { url: 'https://search.example.com', region: 'eu' } },
        { ...original.tools[1], metadata: { url: 'https://crm.example.com/mcp', tools: ['find_customer'], options: { retries: 2 } } },
        // The AGENT tool that called the original calls the copy.
        { ...original.tools[2], metadata: { agentId: result.agentId } },
      ],
    };
    assert.deepEqual(copy, withoutSecrets);
    const copied = (await api(bob.token, 'GET', `/agents/${result.agentId}`)).body.data;
    assert.equal(copied.llm.hasApiKey, false);
    assert.equal(copied.isListed, false);
    assert.equal(copied.document.hasAuthorization, false);
    assert.equal(copied.document.status, 'pending', 'documents are queued for ingestion');
  });

  it('an agent on a connection carries the server the connection stands for, not the connection', async () => {
    const connection = await api(alice.token, 'POST', '/connections', {
      name: 'Home box',
      provider: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-connection-key-3310',
    });
    assert.equal(connection.status, 201, JSON.stringify(connection.body));
    const onConnection = await api(alice.token, 'POST', '/agents', {
      name: 'On a connection',
      type: 'VENDOR_A',
      llm: { model: 'm', connectionId: connection.body.data.id },
    });
    assert.equal(onConnection.status, 201, JSON.stringify(onConnection.body));
    const exported = await api(alice.token, 'GET', `/agents/${onConnection.body.data.id}/export`);
    assert.equal(exported.status, 200);
    assert.deepEqual(exported.body.agent.llm, {
      model: 'm',
      provider: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKeyNeeded: true,
    });
    assert.ok(!JSON.stringify(exported.body).includes('sk-connection-key-3310'));
    assert.ok(exported.body.omitted.some((note: string) => note.includes('llm.connectionId')));
    const imported = await api(bob.token, 'POST', '/agents/import', exported.body);
    assert.equal(imported.status, 200, JSON.stringify(imported.body));
    const copy = (await api(bob.token, 'GET', `/agents/${imported.body.data.agentId}`)).body.data;
    assert.equal(copy.llm.baseUrl, 'http://127.0.0.1:9/v1');
    assert.equal(copy.llm.connectionId, undefined, "Alice's connection is not Bob's");
  });

  it('with ?dryRun=true answers the same summary and changes nothing', async () => {
    const file = (await api(alice.token, 'GET', `/agents/${agent.id}/export`)).body;
    const before = counts();
    const reply = await api(bob.token, 'POST', '/agents/import?dryRun=true', file);
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.data.dryRun, true);
    assert.equal(reply.body.data.agentId, null);
    assert.deepEqual(reply.body.data.creates.tools, ['Web search', 'CRM', 'Ask myself']);
    assert.equal(reply.body.data.secretsNeeded.length, 5);
    assert.deepEqual(counts(), before);
  });

  it('importing the same file twice makes two copies, the first untouched', async () => {
    const file = (await api(alice.token, 'GET', `/agents/${agent.id}/export`)).body;
    const first = (await api(alice.token, 'POST', '/agents/import', file)).body.data.agentId;
    const firstBefore = await describeAgent(alice.token, first);
    const second = (await api(alice.token, 'POST', '/agents/import', file)).body.data.agentId;
    assert.notEqual(first, second);
    assert.deepEqual(await describeAgent(alice.token, first), firstBefore);
    assert.deepEqual(await describeAgent(alice.token, second), {
      ...firstBefore,
      tools: firstBefore.tools.map((tool: Json) => (tool.type === 'AGENT' ? { ...tool, metadata: { agentId: second } } : tool)),
    });
    // The tags matched by name are not duplicated.
    const tags = await service.listAll(alice.token, '/tags');
    assert.deepEqual(tags.map((tag) => tag.name).sort(), ['beta', 'vip']);
  });

  it('carries sessions and their messages with ?sessions=true', async () => {
    const talker = await service.createAgent(alice.token, {
      name: 'Talker',
      type: 'VENDOR_A',
      hasMemory: true,
      llm: { model: 'any', provider: 'echo' },
    });
    const first = await api(alice.token, 'POST', `/agents/${talker.id}/invoke`, { input: 'Hello there', sessionId: 'chat-1' });
    assert.equal(first.status, 200, first.text);
    assert.equal((await api(alice.token, 'POST', `/agents/${talker.id}/invoke`, { input: 'Again', sessionId: 'chat-1' })).status, 200);
    assert.equal((await api(alice.token, 'POST', `/agents/${talker.id}/invoke`, { input: 'Other', sessionId: 'chat-2' })).status, 200);
    const file = (await api(alice.token, 'GET', `/agents/${talker.id}/export?sessions=true`)).body;
    const result = (await api(bob.token, 'POST', '/agents/import', file)).body.data;
    assert.equal(result.creates.sessions, 2);
    assert.equal(result.creates.messages, 6);
    for (const sessionId of ['chat-1', 'chat-2']) {
      const original = await service.listAll(alice.token, `/agents/${talker.id}/sessions/${sessionId}/messages`);
      const copy = await service.listAll(bob.token, `/agents/${result.agentId}/sessions/${sessionId}/messages`);
      assert.deepEqual(
        copy.map((m) => [m.role, m.content]),
        original.map((m) => [m.role, m.content]),
      );
    }
  });

  it("replays an imported session as whole turns: the model gets questions and answers in turn, whatever the file's order", async () => {
    const fake = await startFakeOpenAI(); // closed when this test ends
    const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url };
    const source = await service.createAgent(alice.token, { name: 'Strict template', type: 'VENDOR_A', hasMemory: true, llm });
    const file = (await api(alice.token, 'GET', `/agents/${source.id}/export`)).body;
    const said = (role: 'user' | 'assistant', content: string) => ({ role, content });
    // As a chat app or another service may leave a conversation: no role strictly in turn.
    const messages = [
      said('assistant', 'Welcome back.'),
      said('user', 'My order is late.'),
      said('user', 'It is order 42.'),
      said('assistant', 'Order 42 shipped on Monday.'),
      said('assistant', 'It should arrive tomorrow.'),
      said('user', 'Are you still there?'),
    ];
    const imported = await api(bob.token, 'POST', '/agents/import', { ...file, sessions: [{ id: 'imported', messages }] });
    assert.equal(imported.status, 200, imported.text);
    const { agentId } = imported.body.data;
    // The session's messages are kept as they came ...
    const stored = await service.listAll(bob.token, `/agents/${agentId}/sessions/imported/messages`);
    assert.deepEqual(
      stored.map((m) => [m.role, m.content]),
      messages.map((m) => [m.role, m.content]),
    );
    // ... and the model is given them in turns, ending with the new question.
    fake.reply({ text: 'It arrives tomorrow.' });
    const run = await api(bob.token, 'POST', `/agents/${agentId}/invoke`, { input: 'When will it arrive?', sessionId: 'imported' });
    assert.equal(run.status, 200, run.text);
    const sent = fake.requests.at(-1)!.body.messages as { role: string; content: string }[];
    assert.deepEqual(
      sent.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]),
      [
        ['user', 'My order is late.\n\nIt is order 42.'],
        ['assistant', 'Order 42 shipped on Monday.\n\nIt should arrive tomorrow.'],
        ['user', 'When will it arrive?'],
      ],
    );
    // The next run replays the imported turn and the run's own, still in turn.
    fake.reply({ text: 'You are welcome.' });
    assert.equal((await api(bob.token, 'POST', `/agents/${agentId}/invoke`, { input: 'Thanks!', sessionId: 'imported' })).status, 200);
    const roles = (fake.requests.at(-1)!.body.messages as { role: string }[]).filter((m) => m.role !== 'system').map((m) => m.role);
    assert.deepEqual(roles, ['user', 'assistant', 'user', 'assistant', 'user']);
  });

  it('refuses files that are not ours, newer, or of the wrong shape with a 422 naming the field, storing nothing', async () => {
    const file = (await api(alice.token, 'GET', `/agents/${agent.id}/export`)).body;
    const cases: [unknown, string, RegExp][] = [
      [{ hello: 'world' }, '', /neither an agent export of this service .* nor a Letta agent file/],
      [{ ...file, format: 'other-service.agent' }, 'format', /not an agent export of this service/],
      [{ ...file, version: 2 }, 'version', /is 2, newer than this service reads \(1\)/],
      [{ ...file, version: '1' }, 'version', /must be 1/],
      [{ ...file, tools: 'many' }, 'tools', /must be an array of tools/],
      [{ ...file, tools: Array.from({ length: 101 }, () => file.tools[0]) }, 'tools', /at most 100 tools/],
      [{ ...file, agent: { ...file.agent, type: 'OTHER' } }, 'agent.type', /must be one of/],
      [{ ...file, tags: [{ name: 'x', color: 'red' }] }, 'tags.0.color', /must be a hex colour/],
      [{ ...file, prompt: { ...file.prompt, input_variables: ['not a name'] } }, 'prompt.input_variables.0', /must be a variable name/],
      [{ ...file, sessions: [{ id: 'a\u0001b', messages: [] }] }, 'sessions.0.id', /control characters/],
      [
        { ...file, tools: [{ ...file.tools[0], metadata: { headers: 'x' } }] },
        'tools.0.metadata.headers',
        /must be an object of header names/,
      ],
      // Refused inside the transaction, after the agent was created: nothing is left behind.
      [
        { ...file, tools: [{ ...file.tools[2], callsThisAgent: false, metadata: { agentId: agent.id } }] },
        'tools.0.metadata.agentId',
        /No agent with this id/,
      ],
      [
        { ...file, prompt: { ...file.prompt, template: 'Hi {name}' } },
        'prompt.input_variables',
        /the template uses {name} but input_variables does not list it/,
      ],
      [
        { ...file, sessions: [{ id: 's', messages: [{ role: 'system', content: 'x' }] }] },
        'sessions.0.messages.0.role',
        /user or assistant/,
      ],
    ];
    const before = counts();
    for (const [body, path, message] of cases) {
      const reply = await api(bob.token, 'POST', '/agents/import', body);
      assert.equal(reply.status, 422, `${path}: ${reply.text}`);
      const issue = reply.body.error.details.find((detail: Json) => detail.path === path || detail.path.endsWith(`.${path}`));
      assert.ok(issue, `an issue at ${path}: ${JSON.stringify(reply.body.error.details)}`);
      assert.match(issue.message, message);
    }
    assert.deepEqual(counts(), before, 'a refused import stores nothing, even one refused after the agent was created');
  });
});

/** Uploads `content` as a document of `token`'s, as a browser's FormData would. */
async function upload(token: string, content: string, filename: string, type = 'text/plain'): Promise<Json> {
  const form = new FormData();
  form.append('file', new Blob([content], { type }), filename);
  const response = await fetch(`${service.url}/api/v1/documents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
    body: form,
  });
  const body = (await response.json()) as Json;
  assert.equal(response.status, 201, JSON.stringify(body));
  return body.data;
}

/** A document's file as GET /documents/{id}/file answers it to `token`. */
async function fileOf(token: string, id: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${service.url}/api/v1/documents/${id}/file`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, text: await response.text() };
}

describe('uploaded documents in an export', () => {
  const NOTES = 'Axolotls regrow their limbs.\nThey live in Lake Xochimilco.\n';

  it("carry their bytes, not this service's file URL; the import makes a real upload that only its owner reads", async () => {
    const notes = await upload(alice.token, NOTES, 'notes.txt');
    const fetched = await service.createDocument(alice.token, { name: 'Site', type: 'URL', url: 'https://docs.example.com/site' });
    const owner = await service.createAgent(alice.token, { name: 'Carrier', type: 'VENDOR_A', documentId: notes.id });
    for (const document of [notes, fetched]) {
      assert.equal((await api(alice.token, 'POST', '/agent-documents', { agentId: owner.id, documentId: document.id })).status, 201);
    }
    const file = (await api(alice.token, 'GET', `/agents/${owner.id}/export`)).body;
    assert.equal(JSON.stringify(file).includes('/file'), false, 'no own-service file URL in the export');
    assert.equal(file.omitted, undefined);
    assert.deepEqual(
      file.documents.map((d: Json) => [d.name, d.url, d.file && { ...d.file, base64: Buffer.from(d.file.base64, 'base64').toString() }]),
      [
        ['notes.txt', null, { name: 'notes.txt', contentType: 'text/plain', base64: NOTES }],
        ['Site', 'https://docs.example.com/site', undefined],
      ],
    );

    const before = counts();
    const dry = await api(bob.token, 'POST', '/agents/import?dryRun=true', file);
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body.data.creates.documents, ['notes.txt', 'Site']);
    assert.deepEqual(dry.body.data.skipped, []);
    assert.deepEqual(counts(), before, 'a dry run stores no document and no file');

    const reply = await api(bob.token, 'POST', '/agents/import', file);
    assert.equal(reply.status, 200, reply.text);
    assert.deepEqual(reply.body.data.skipped, []);
    const copy = (await api(bob.token, 'GET', `/agents/${reply.body.data.agentId}`)).body.data;
    const copyId = copy.document.id;
    assert.notEqual(copyId, notes.id);
    assert.equal(copy.document.url, `${service.url}/api/v1/documents/${copyId}/file`);
    const links = await service.listAll(bob.token, `/agent-documents?agentId=${copy.id}`);
    assert.deepEqual(
      links.map((link) => [link.document.name, link.document.url]),
      [
        ['notes.txt', `${service.url}/api/v1/documents/${copyId}/file`],
        ['Site', 'https://docs.example.com/site'],
      ],
    );
    assert.deepEqual(await fileOf(bob.token, copyId), { status: 200, text: NOTES });
    assert.equal((await fileOf(alice.token, copyId)).status, 404, "another user's copy is not served");
    // Queued for ingestion as an upload is, from its stored file (ingestion is off in this file; uploads.test.ts ingests one).
    assert.equal(copy.document.status, 'pending');
    assert.deepEqual(service.db.prepare(`SELECT filename, content_type, size FROM document_files WHERE document_id = ?`).get(copyId), {
      filename: 'notes.txt',
      content_type: 'text/plain',
      size: Buffer.byteLength(NOTES),
    });
    // The original is untouched.
    assert.deepEqual(await fileOf(alice.token, notes.id), { status: 200, text: NOTES });
  });

  it('leave a file over the limit out, and say so in omitted', async () => {
    const big = await upload(alice.token, 'a'.repeat(5 * 1024 * 1024 + 1), 'big.txt');
    const small = await upload(alice.token, NOTES, 'small.txt');
    const owner = await service.createAgent(alice.token, { name: 'Heavy', type: 'VENDOR_A' });
    for (const document of [big, small]) {
      assert.equal((await api(alice.token, 'POST', '/agent-documents', { agentId: owner.id, documentId: document.id })).status, 201);
    }
    const file = (await api(alice.token, 'GET', `/agents/${owner.id}/export`)).body;
    assert.deepEqual(
      file.documents.map((d: Json) => [d.name, Buffer.from(d.file.base64, 'base64').toString()]),
      [['small.txt', NOTES]],
    );
    assert.equal(file.omitted.length, 1);
    assert.match(file.omitted[0], /^document "big\.txt": its uploaded file \(5242881 bytes\) is over the limit of 5242880 bytes a file/);
  });

  it('carry files while they fit 20 MiB in all: one that would pass it is left out and named, a later one that fits is carried', async () => {
    const MiB = 1024 * 1024;
    // Each file of one repeated letter, so that the bytes carried can be told apart cheaply.
    const sized: [string, number, string][] = [
      ['a.txt', 5 * MiB, 'a'],
      ['b.txt', 5 * MiB, 'b'],
      ['c.txt', 5 * MiB, 'c'],
      ['d.txt', 4 * MiB, 'd'],
      ['e.txt', 2 * MiB, 'e'], // 19 MiB carried so far: this one would make 21
      ['f.txt', 1 * MiB, 'f'], // exactly 20 MiB in all with it
    ];
    const uploaded = [];
    for (const [name, size, letter] of sized) uploaded.push(await upload(alice.token, letter.repeat(size), name));
    const site = await service.createDocument(alice.token, { name: 'Site', type: 'URL', url: 'https://docs.example.com/site' });
    const owner = await service.createAgent(alice.token, { name: 'Hoarder', type: 'VENDOR_A' });
    for (const document of [...uploaded, site]) {
      assert.equal((await api(alice.token, 'POST', '/agent-documents', { agentId: owner.id, documentId: document.id })).status, 201);
    }
    const reply = await api(alice.token, 'GET', `/agents/${owner.id}/export`);
    assert.equal(reply.status, 200);
    const file = reply.body;
    assert.deepEqual(
      file.documents.map((d: Json) => {
        const bytes = d.file && Buffer.from(d.file.base64, 'base64');
        return [
          d.name,
          d.url,
          bytes && [bytes.length, bytes.toString('latin1', 0, 1), bytes.toString('latin1').replaceAll(bytes.toString('latin1', 0, 1), '')],
        ];
      }),
      [
        ['a.txt', null, [5 * MiB, 'a', '']],
        ['b.txt', null, [5 * MiB, 'b', '']],
        ['c.txt', null, [5 * MiB, 'c', '']],
        ['d.txt', null, [4 * MiB, 'd', '']],
        ['f.txt', null, [1 * MiB, 'f', '']],
        ['Site', 'https://docs.example.com/site', undefined],
      ],
    );
    assert.deepEqual(file.omitted, [
      `document "e.txt": its uploaded file (${2 * MiB} bytes) is over the limit of ${5 * MiB} bytes a file and ${20 * MiB} bytes in all`,
    ]);
  });

  it('refuses a file whose content does not match its type, or that is not base64, with a 422 naming the field, storing nothing', async () => {
    const notes = await upload(alice.token, NOTES, 'notes.txt');
    const owner = await service.createAgent(alice.token, { name: 'Checked', type: 'VENDOR_A', documentId: notes.id });
    const file = (await api(alice.token, 'GET', `/agents/${owner.id}/export`)).body;
    const withDocument = (change: Json) => ({ ...file, documents: [{ ...file.documents[0], ...change }] });
    const cases: [unknown, string, RegExp][] = [
      [withDocument({ type: 'PDF' }), 'documents.0.file.base64', /does not match the type PDF: the file is not a PDF/],
      [
        withDocument({ file: { ...file.documents[0].file, base64: Buffer.from('%PDF-1.4 not text').toString('base64') } }),
        'documents.0.file.base64',
        /does not match the type TXT: the file is a PDF/,
      ],
      [withDocument({ file: { ...file.documents[0].file, base64: 'QUJD=' } }), 'documents.0.file.base64', /must be base64/],
      [withDocument({ file: { ...file.documents[0].file, base64: '' } }), 'documents.0.file.base64', /is empty/],
      [withDocument({ file: undefined }), 'documents.0.url', /must be a URL/],
    ];
    const before = counts();
    for (const dryRun of [false, true]) {
      for (const [body, path, message] of cases) {
        const reply = await api(bob.token, 'POST', `/agents/import?dryRun=${dryRun}`, body);
        assert.equal(reply.status, 422, `${path}: ${reply.text}`);
        assert.equal(reply.body.error.details.length, 1, reply.text);
        assert.equal(reply.body.error.details[0].path, path);
        assert.match(reply.body.error.details[0].message, message);
      }
    }
    assert.deepEqual(counts(), before);
  });
});

describe("Letta's Agent File (.af)", () => {
  const af = JSON.parse(readFileSync(new URL('./fixtures/letta-agent.af', import.meta.url), 'utf8'));

  it('imports the name, system prompt with its memory blocks, model, tags, MCP tools and messages; lists the rest as skipped', async () => {
    const dry = await api(bob.token, 'POST', '/agents/import?dryRun=true', af);
    assert.equal(dry.status, 200, dry.text);
    const reply = await api(bob.token, 'POST', '/agents/import', af);
    assert.equal(reply.status, 200, reply.text);
    const result = reply.body.data;
    assert.deepEqual({ ...dry.body.data, dryRun: false, agentId: result.agentId }, result, 'the dry run answered the same');
    assert.equal(result.source, 'letta');
    assert.deepEqual(result.creates.tools, ['crm']);
    assert.deepEqual(result.creates.tags, { existing: [], new: ['support', 'letta'] });
    assert.deepEqual(
      result.secretsNeeded.map((need: Json) => need.path),
      ['agent.llm.apiKey', 'tools.0.metadata.headers'],
    );
    assert.deepEqual(
      result.skipped.map((skip: Json) => skip.path),
      ['agents.0.memory blocks', 'tools.0', 'tools.1', 'agents.0.messages'],
    );
    assert.match(result.skipped[1].reason, /"conversation_search": a Letta built-in/);
    assert.match(result.skipped[2].reason, /"check_order_status": Python source/);

    const copy = await describeAgent(bob.token, result.agentId);
    assert.equal(copy.name, 'support_agent');
    assert.equal(copy.description, 'A small customer support agent');
    assert.deepEqual(copy.llm, { model: 'gpt-4o-mini', provider: 'openai', baseUrl: null });
    assert.equal(copy.hasMemory, true);
    assert.equal(copy.prompt.input_variables.length, 0);
    assert.equal(
      copy.prompt.template,
      'You are a support agent. Answer in JSON like {{"answer": "..."}}.\n\n<persona>\nI am Sam, a patient support agent.\n</persona>\n\n<human>\nThe customer is Chad.\n</human>',
    );
    assert.deepEqual(copy.tools, [
      {
        name: 'crm',
        type: 'MCP',
        description: null,
        requiresApproval: false,
        metadata: { url: 'https://crm.example.com/mcp', tools: ['find_customer'] },
      },
    ]);
    const messages = await service.listAll(bob.token, `/agents/${result.agentId}/sessions/letta/messages`);
    assert.deepEqual(
      messages.map((m) => [m.role, m.content]),
      [
        ['user', 'Where is my order 42?'],
        ['assistant', 'Your order 42 has shipped.'],
      ],
    );
  });

  it("reads Letta's earlier layout (one agent at the top) too", async () => {
    const legacy = {
      name: 'old_agent',
      system: 'Be brief.',
      llm_config: { model: 'llama3', model_endpoint_type: 'ollama', model_endpoint: 'http://localhost:11434' },
      core_memory: [{ label: 'persona', value: 'Terse.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [{ name: 'send_message', tool_type: 'letta_core' }],
      tags: [{ tag: 'old' }],
      version: '0.6.0',
    };
    const reply = await api(bob.token, 'POST', '/agents/import', legacy);
    assert.equal(reply.status, 200, reply.text);
    const copy = await describeAgent(bob.token, reply.body.data.agentId);
    assert.deepEqual(copy.llm, { model: 'llama3', provider: 'ollama', baseUrl: null });
    assert.equal(copy.prompt.template, 'Be brief.\n\n<persona>\nTerse.\n</persona>');
    assert.deepEqual(copy.tags, [{ name: 'old', color: '#0e8a16' }]);
    assert.deepEqual(reply.body.data.secretsNeeded, []);
  });

  it('refuses a Letta file of the wrong shape with a 422 naming the field', async () => {
    const reply = await api(bob.token, 'POST', '/agents/import', { agents: [{ name: 'x', llm_config: { model: 7 } }] });
    assert.equal(reply.status, 422);
    assert.deepEqual(
      reply.body.error.details.map((d: Json) => d.path),
      ['agents.0.llm_config.model'],
    );
  });
});
