// Link records: agent documents (also created by POST /agents with `{ agentId, documentId }`, as
// original clients do) and agent tools, with their lists, filters, conflicts and reference checks.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertConflict, assertNotFound, errorOf, startService, TIMESTAMP, type Json, type Reply } from './helpers.js';

const service = await startService();
const { request, create, createAgent, createDocument } = service;

const TOOL_SECRET = 'tool-secret';
/** Every tool of this file has a secret in its metadata, which a link must never echo. */
const createTool = (token: string) => service.createTool(token, { metadata: { api_key: TOOL_SECRET } });

const ids = (reply: Reply) => {
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.success, true);
  assert.ok(Array.isArray(reply.body.data));
  return reply.body.data.map((row: Json) => row.id);
};

function assertNamesField(reply: Reply, field: string): void {
  assert.equal(reply.status, 422, JSON.stringify(reply.body));
  const error = errorOf(reply);
  assert.equal(error.code, 'validation_failed');
  const paths = (error.details ?? []).map((issue) => issue.path);
  assert.ok(paths.includes(field), `expected a detail for ${field}, got ${JSON.stringify(paths)}`);
}

/** The shape of an agent-document link. */
function assertAgentDocument(link: Json, userId: string, agent: Json, document: Json): void {
  assert.equal(typeof link.id, 'string');
  assert.ok(link.id.length > 0);
  assert.equal(typeof link.user, 'object');
  assert.equal(link.user.id, userId);
  assert.ok(!('password' in link.user));
  assert.equal(link.agentId, agent.id);
  assert.equal(link.agent.id, agent.id);
  assert.equal(link.agent.name, agent.name);
  assert.equal(link.documentId, document.id);
  assert.equal(link.document.id, document.id);
  assert.equal(link.document.url, document.url);
}

function assertAgentTool(link: Json, userId: string, agent: Json, tool: Json): void {
  assert.equal(typeof link.id, 'string');
  assert.ok(link.id.length > 0);
  assert.equal(link.user.id, userId);
  assert.ok(!('password' in link.user));
  assert.equal(link.agentId, agent.id);
  assert.equal(link.agent.id, agent.id);
  assert.equal(link.toolId, tool.id);
  assert.equal(link.tool.id, tool.id);
  assert.equal(link.tool.name, tool.name);
  assert.equal(link.tool.type, 'SEARCH');
  assert.ok(!JSON.stringify(link).includes(TOOL_SECRET), 'tool metadata is never echoed');
}

describe('agent documents', () => {
  test('POST /agent-documents → 201 with id, user, agent, agentId, document, documentId', async () => {
    const { token, user } = await service.signUp();
    const agent = await createAgent(token);
    const document = await createDocument(token);
    const reply = await request('POST', '/api/v1/agent-documents', { token, body: { agentId: agent.id, documentId: document.id } });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    assert.equal(reply.body.success, true);
    assertAgentDocument(reply.body.data, user.id, agent, document);
    assert.match(reply.body.data.createdAt, TIMESTAMP);
  });

  test('POST /agents with {agentId, documentId} creates a link, not an agent', async () => {
    const { token, user } = await service.signUp();
    const agent = await createAgent(token);
    const document = await createDocument(token);
    const reply = await request('POST', '/api/v1/agents', { token, body: { agentId: agent.id, documentId: document.id } });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    assert.equal(reply.body.success, true);
    assertAgentDocument(reply.body.data, user.id, agent, document);

    assert.deepEqual(ids(await request('GET', '/api/v1/agents', { token })), [agent.id], 'no new agent');
    const read = await request('GET', `/api/v1/agent-documents/${reply.body.data.id}`, { token });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.data, reply.body.data);
  });

  test('the same pair twice → 409 conflict, through either path', async () => {
    const { token } = await service.signUp();
    const agent = await createAgent(token);
    const first = await createDocument(token);
    const second = await createDocument(token);
    const pairOne = { agentId: agent.id, documentId: first.id };
    const pairTwo = { agentId: agent.id, documentId: second.id };

    await create(token, '/agent-documents', pairOne);
    assertConflict(await request('POST', '/api/v1/agent-documents', { token, body: pairOne }));
    assertConflict(await request('POST', '/api/v1/agents', { token, body: pairOne }));

    await create(token, '/agents', pairTwo);
    assertConflict(await request('POST', '/api/v1/agents', { token, body: pairTwo }));
    assertConflict(await request('POST', '/api/v1/agent-documents', { token, body: pairTwo }));

    assert.equal(ids(await request('GET', '/api/v1/agent-documents', { token })).length, 2, 'no duplicates stored');
  });

  test('GET /agent-documents/{id} returns the link as created', async () => {
    const { token, user } = await service.signUp();
    const agent = await createAgent(token);
    const document = await createDocument(token);
    const link = await create(token, '/agent-documents', { agentId: agent.id, documentId: document.id });
    const reply = await request('GET', `/api/v1/agent-documents/${link.id}`, { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.equal(reply.body.data.id, link.id);
    assertAgentDocument(reply.body.data, user.id, agent, document);
    assert.deepEqual(reply.body.data, link);
    assertNotFound(await request('GET', `/api/v1/agent-documents/${randomUUID()}`, { token }));
  });

  test('GET /agent-documents lists all, oldest first; ?agentId= and ?documentId= filter', async () => {
    const { token } = await service.signUp();
    const [agentA, agentB] = [await createAgent(token), await createAgent(token)];
    const [docX, docY] = [await createDocument(token), await createDocument(token)];
    const ax = await create(token, '/agent-documents', { agentId: agentA.id, documentId: docX.id });
    const ay = await create(token, '/agent-documents', { agentId: agentA.id, documentId: docY.id });
    const bx = await create(token, '/agent-documents', { agentId: agentB.id, documentId: docX.id });

    const all = await request('GET', '/api/v1/agent-documents', { token });
    assert.deepEqual(ids(all), [ax.id, ay.id, bx.id]);
    assert.deepEqual(all.body.data[0], ax);
    assert.deepEqual(ids(await request('GET', `/api/v1/agent-documents?agentId=${agentA.id}`, { token })), [ax.id, ay.id]);
    assert.deepEqual(ids(await request('GET', `/api/v1/agent-documents?agentId=${agentB.id}`, { token })), [bx.id]);
    assert.deepEqual(ids(await request('GET', `/api/v1/agent-documents?documentId=${docX.id}`, { token })), [ax.id, bx.id]);
    assert.deepEqual(ids(await request('GET', `/api/v1/agent-documents?documentId=${docY.id}`, { token })), [ay.id]);
    assert.deepEqual(ids(await request('GET', `/api/v1/agent-documents?agentId=${agentB.id}&documentId=${docY.id}`, { token })), []);
  });

  test('DELETE /agent-documents/{id} → 200 data null; gone from get and list; the pair may be linked again', async () => {
    const { token } = await service.signUp();
    const agent = await createAgent(token);
    const document = await createDocument(token);
    const other = await createDocument(token);
    const link = await create(token, '/agent-documents', { agentId: agent.id, documentId: document.id });
    const kept = await create(token, '/agent-documents', { agentId: agent.id, documentId: other.id });

    const reply = await request('DELETE', `/api/v1/agent-documents/${link.id}`, { token });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, { success: true, data: null });
    assertNotFound(await request('GET', `/api/v1/agent-documents/${link.id}`, { token }));
    assertNotFound(await request('DELETE', `/api/v1/agent-documents/${link.id}`, { token }));
    assert.deepEqual(ids(await request('GET', '/api/v1/agent-documents', { token })), [kept.id]);
    assert.equal((await request('GET', `/api/v1/agents/${agent.id}`, { token })).status, 200, 'the agent stays');
    assert.equal((await request('GET', `/api/v1/documents/${document.id}`, { token })).status, 200, 'the document stays');

    const again = await request('POST', '/api/v1/agent-documents', { token, body: { agentId: agent.id, documentId: document.id } });
    assert.equal(again.status, 201);
    assert.notEqual(again.body.data.id, link.id);
  });

  test('missing ids → 422 naming them', async () => {
    const { token } = await service.signUp();
    const agent = await createAgent(token);
    const document = await createDocument(token);
    assertNamesField(await request('POST', '/api/v1/agent-documents', { token, body: { documentId: document.id } }), 'agentId');
    assertNamesField(await request('POST', '/api/v1/agent-documents', { token, body: { agentId: agent.id } }), 'documentId');
    const neither = await request('POST', '/api/v1/agent-documents', { token, body: {} });
    assertNamesField(neither, 'agentId');
    assertNamesField(neither, 'documentId');
    assertNamesField(
      await request('POST', '/api/v1/agent-documents', { token, body: { agentId: '', documentId: document.id } }),
      'agentId',
    );
    const viaAgents = await request('POST', '/api/v1/agents', { token, body: { agentId: agent.id } });
    assert.equal(viaAgents.status, 422, JSON.stringify(viaAgents.body));
    assert.equal(errorOf(viaAgents).code, 'validation_failed');
    assert.deepEqual(ids(await request('GET', '/api/v1/agent-documents', { token })), []);
    assert.deepEqual(ids(await request('GET', '/api/v1/agents', { token })), [agent.id]);
  });

  test("another user's (or a nonexistent) agent or document → 422 naming the field", async () => {
    const { token } = await service.signUp();
    const stranger = await service.signUp();
    const agent = await createAgent(token);
    const document = await createDocument(token);
    const theirAgent = await createAgent(stranger.token);
    const theirDocument = await createDocument(stranger.token);

    for (const path of ['/api/v1/agent-documents', '/api/v1/agents']) {
      assertNamesField(await request('POST', path, { token, body: { agentId: theirAgent.id, documentId: document.id } }), 'agentId');
      assertNamesField(await request('POST', path, { token, body: { agentId: agent.id, documentId: theirDocument.id } }), 'documentId');
      assertNamesField(await request('POST', path, { token, body: { agentId: randomUUID(), documentId: document.id } }), 'agentId');
      assertNamesField(await request('POST', path, { token, body: { agentId: agent.id, documentId: randomUUID() } }), 'documentId');
    }
    assert.deepEqual(ids(await request('GET', '/api/v1/agent-documents', { token })), []);
    assert.deepEqual(ids(await request('GET', '/api/v1/agent-documents', { token: stranger.token })), []);
  });
});

describe('agent tools', () => {
  test('POST /agent-tools → 201 with user, agent, agentId, tool, toolId', async () => {
    const { token, user } = await service.signUp();
    const agent = await createAgent(token);
    const tool = await createTool(token);
    const reply = await request('POST', '/api/v1/agent-tools', { token, body: { agentId: agent.id, toolId: tool.id } });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    assert.equal(reply.body.success, true);
    assertAgentTool(reply.body.data, user.id, agent, tool);
    assert.match(reply.body.data.createdAt, TIMESTAMP);
  });

  test('the same pair twice → 409 conflict', async () => {
    const { token } = await service.signUp();
    const agent = await createAgent(token);
    const tool = await createTool(token);
    await create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
    assertConflict(await request('POST', '/api/v1/agent-tools', { token, body: { agentId: agent.id, toolId: tool.id } }));
    assert.equal(ids(await request('GET', '/api/v1/agent-tools', { token })).length, 1);
  });

  test('GET /agent-tools/{id} returns the link as created', async () => {
    const { token, user } = await service.signUp();
    const agent = await createAgent(token);
    const tool = await createTool(token);
    const link = await create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
    const reply = await request('GET', `/api/v1/agent-tools/${link.id}`, { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assertAgentTool(reply.body.data, user.id, agent, tool);
    assert.deepEqual(reply.body.data, link);
    assertNotFound(await request('GET', `/api/v1/agent-tools/${randomUUID()}`, { token }));
  });

  test('GET /agent-tools lists all, oldest first; ?agentId= and ?toolId= filter', async () => {
    const { token } = await service.signUp();
    const [agentA, agentB] = [await createAgent(token), await createAgent(token)];
    const [toolX, toolY] = [await createTool(token), await createTool(token)];
    const ax = await create(token, '/agent-tools', { agentId: agentA.id, toolId: toolX.id });
    const bx = await create(token, '/agent-tools', { agentId: agentB.id, toolId: toolX.id });
    const ay = await create(token, '/agent-tools', { agentId: agentA.id, toolId: toolY.id });

    const all = await request('GET', '/api/v1/agent-tools', { token });
    assert.deepEqual(ids(all), [ax.id, bx.id, ay.id]);
    assert.deepEqual(all.body.data[2], ay);
    assert.deepEqual(ids(await request('GET', `/api/v1/agent-tools?agentId=${agentA.id}`, { token })), [ax.id, ay.id]);
    assert.deepEqual(ids(await request('GET', `/api/v1/agent-tools?toolId=${toolX.id}`, { token })), [ax.id, bx.id]);
    assert.deepEqual(ids(await request('GET', `/api/v1/agent-tools?toolId=${toolY.id}`, { token })), [ay.id]);
    assert.deepEqual(ids(await request('GET', `/api/v1/agent-tools?agentId=${agentB.id}&toolId=${toolX.id}`, { token })), [bx.id]);
  });

  test('DELETE /agent-tools/{id} → 200 data null; gone from get and list', async () => {
    const { token } = await service.signUp();
    const agent = await createAgent(token);
    const tool = await createTool(token);
    const other = await createTool(token);
    const link = await create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
    const kept = await create(token, '/agent-tools', { agentId: agent.id, toolId: other.id });

    const reply = await request('DELETE', `/api/v1/agent-tools/${link.id}`, { token });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, { success: true, data: null });
    assertNotFound(await request('GET', `/api/v1/agent-tools/${link.id}`, { token }));
    assertNotFound(await request('DELETE', `/api/v1/agent-tools/${link.id}`, { token }));
    assert.deepEqual(ids(await request('GET', '/api/v1/agent-tools', { token })), [kept.id]);
    assert.equal((await request('GET', `/api/v1/tools/${tool.id}`, { token })).status, 200, 'the tool stays');
    assert.equal((await request('GET', `/api/v1/agents/${agent.id}`, { token })).status, 200, 'the agent stays');
  });

  test('missing ids → 422 naming them', async () => {
    const { token } = await service.signUp();
    const agent = await createAgent(token);
    const tool = await createTool(token);
    assertNamesField(await request('POST', '/api/v1/agent-tools', { token, body: { toolId: tool.id } }), 'agentId');
    assertNamesField(await request('POST', '/api/v1/agent-tools', { token, body: { agentId: agent.id } }), 'toolId');
    assertNamesField(await request('POST', '/api/v1/agent-tools', { token, body: { agentId: agent.id, toolId: 7 } }), 'toolId');
    assert.deepEqual(ids(await request('GET', '/api/v1/agent-tools', { token })), []);
  });

  test("another user's (or a nonexistent) agent or tool → 422 naming the field", async () => {
    const { token } = await service.signUp();
    const stranger = await service.signUp();
    const agent = await createAgent(token);
    const tool = await createTool(token);
    const theirAgent = await createAgent(stranger.token);
    const theirTool = await createTool(stranger.token);
    assertNamesField(await request('POST', '/api/v1/agent-tools', { token, body: { agentId: theirAgent.id, toolId: tool.id } }), 'agentId');
    assertNamesField(await request('POST', '/api/v1/agent-tools', { token, body: { agentId: agent.id, toolId: theirTool.id } }), 'toolId');
    assertNamesField(await request('POST', '/api/v1/agent-tools', { token, body: { agentId: randomUUID(), toolId: tool.id } }), 'agentId');
    assertNamesField(await request('POST', '/api/v1/agent-tools', { token, body: { agentId: agent.id, toolId: randomUUID() } }), 'toolId');
    assert.deepEqual(ids(await request('GET', '/api/v1/agent-tools', { token })), []);
    assert.deepEqual(ids(await request('GET', '/api/v1/agent-tools', { token: stranger.token })), []);
  });
});

describe("the original API's `expand` on the link lists", () => {
  test('GET /agent-documents?expand=true and /agent-tools?expand=true, as its v0 SDK sends them, answer every link with its document or tool', async () => {
    const { token, user } = await service.signUp();
    const agent = await createAgent(token);
    const documents = [await createDocument(token), await createDocument(token)];
    const tools = [await createTool(token), await createTool(token)];
    for (const document of documents) await create(token, '/agent-documents', { agentId: agent.id, documentId: document.id });
    for (const tool of tools) await create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
    for (const expand of ['true', 'false', 'True', '1']) {
      const linkedDocuments = await request('GET', `/api/v1/agent-documents?expand=${expand}`, { token });
      assert.deepEqual(ids(linkedDocuments).length, documents.length, `expand=${expand}`);
      linkedDocuments.body.data.forEach((link: Json, i: number) => assertAgentDocument(link, user.id, agent, documents[i]));
      const linkedTools = await request('GET', `/api/v1/agent-tools?expand=${expand}`, { token });
      assert.deepEqual(ids(linkedTools).length, tools.length, `expand=${expand}`);
      linkedTools.body.data.forEach((link: Json, i: number) => assertAgentTool(link, user.id, agent, tools[i]));
    }
    // With the other parameters too.
    const filtered = await request('GET', `/api/v1/agent-documents?expand=true&agentId=${agent.id}&limit=1`, { token });
    assert.equal(ids(filtered).length, 1);
  });

  test('a bad `expand` is a 422 naming it, and other unknown parameters stay refused', async () => {
    const { token } = await service.signUp();
    for (const path of ['/api/v1/agent-documents', '/api/v1/agent-tools']) {
      assertNamesField(await request('GET', `${path}?expand=maybe`, { token }), 'expand');
      assertNamesField(await request('GET', `${path}?expand=true&expand=false`, { token }), 'expand');
      assertNamesField(await request('GET', `${path}?expand=true&include=all`, { token }), 'query.include');
    }
    // Lists the original API had no `expand` on keep refusing it.
    assertNamesField(await request('GET', '/api/v1/agents?expand=true', { token }), 'query.expand');
  });
});
