// The delete rules, seen through HTTP: deleting an agent, document or tool
// deletes its link records; deleting a document clears `documentId` on agents; deleting a prompt
// clears `promptId`; deleting a tag removes it from agents' `tags`; a deleted API token stops working.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNotFound, errorOf, startService, type Json, type Reply } from './helpers.js';

const service = await startService();
const { request, create, createAgent, createDocument, createPrompt, createTag, createTool } = service;

async function get(token: string, path: string): Promise<Json> {
  const reply = await request('GET', `/api/v1${path}`, { token });
  assert.equal(reply.status, 200, `GET ${path}: ${JSON.stringify(reply.body)}`);
  assert.equal(reply.body.success, true);
  return reply.body.data;
}

async function listIds(token: string, path: string): Promise<string[]> {
  const data = await get(token, path);
  assert.ok(Array.isArray(data));
  return data.map((row: Json) => row.id);
}

async function remove(token: string, path: string): Promise<Reply> {
  const reply = await request('DELETE', `/api/v1${path}`, { token });
  assert.equal(reply.status, 200, `DELETE ${path}: ${JSON.stringify(reply.body)}`);
  assert.equal(reply.body.success, true);
  return reply;
}

describe('deleting an agent', () => {
  test('removes its agent-document and agent-tool links, and only those', async () => {
    const { token } = await service.signUp();
    const doomed = await createAgent(token);
    const survivor = await createAgent(token);
    const document = await createDocument(token);
    const tool = await createTool(token);
    const doomedDoc = await create(token, '/agent-documents', { agentId: doomed.id, documentId: document.id });
    const doomedTool = await create(token, '/agent-tools', { agentId: doomed.id, toolId: tool.id });
    const keptDoc = await create(token, '/agent-documents', { agentId: survivor.id, documentId: document.id });
    const keptTool = await create(token, '/agent-tools', { agentId: survivor.id, toolId: tool.id });

    await remove(token, `/agents/${doomed.id}`);

    assert.deepEqual(await listIds(token, '/agent-documents'), [keptDoc.id]);
    assert.deepEqual(await listIds(token, '/agent-tools'), [keptTool.id]);
    assert.deepEqual(await listIds(token, `/agent-documents?documentId=${document.id}`), [keptDoc.id]);
    assert.deepEqual(await listIds(token, `/agent-tools?toolId=${tool.id}`), [keptTool.id]);
    assertNotFound(await request('GET', `/api/v1/agent-documents/${doomedDoc.id}`, { token }));
    assertNotFound(await request('GET', `/api/v1/agent-tools/${doomedTool.id}`, { token }));
    assert.equal((await get(token, `/documents/${document.id}`)).id, document.id, 'the document stays');
    assert.equal((await get(token, `/tools/${tool.id}`)).id, tool.id, 'the tool stays');
  });
});

describe('deleting a document', () => {
  test('removes its links and clears it on agents that used it: they show their linked document, or none', async () => {
    const { token } = await service.signUp();
    const doomed = await createDocument(token);
    const kept = await createDocument(token);
    const user = await createAgent(token, { documentId: doomed.id });
    const other = await createAgent(token, { documentId: kept.id });
    assert.equal(user.documentId, doomed.id);
    const doomedLink = await create(token, '/agent-documents', { agentId: other.id, documentId: doomed.id });
    const keptLink = await create(token, '/agent-documents', { agentId: user.id, documentId: kept.id });

    await remove(token, `/documents/${doomed.id}`);

    // The agent's own document is gone: it shows the document it is still linked to.
    const agentAfter = await get(token, `/agents/${user.id}`);
    assert.equal(agentAfter.documentId, kept.id);
    assert.equal(agentAfter.document.id, kept.id);
    const otherAfter = await get(token, `/agents/${other.id}`);
    assert.equal(otherAfter.documentId, kept.id, 'an agent using another document keeps it');
    assert.equal(otherAfter.document.id, kept.id);
    const listed = (await get(token, '/agents')).find((agent: Json) => agent.id === user.id);
    assert.equal(listed.documentId, kept.id);

    assert.deepEqual(await listIds(token, '/agent-documents'), [keptLink.id]);
    assertNotFound(await request('GET', `/api/v1/agent-documents/${doomedLink.id}`, { token }));
    assert.deepEqual(await listIds(token, '/agents'), [user.id, other.id], 'the agents stay');

    // With no link left either, it shows none.
    await remove(token, `/agent-documents/${keptLink.id}`);
    const bare = await get(token, `/agents/${user.id}`);
    assert.equal(bare.documentId, null);
    assert.deepEqual(bare.document, {});
  });
});

describe('deleting a tool', () => {
  test('removes its agent-tool links, and only those', async () => {
    const { token } = await service.signUp();
    const agent = await createAgent(token);
    const doomed = await createTool(token);
    const kept = await createTool(token);
    const doomedLink = await create(token, '/agent-tools', { agentId: agent.id, toolId: doomed.id });
    const keptLink = await create(token, '/agent-tools', { agentId: agent.id, toolId: kept.id });

    await remove(token, `/tools/${doomed.id}`);

    assert.deepEqual(await listIds(token, '/agent-tools'), [keptLink.id]);
    assert.deepEqual(await listIds(token, `/agent-tools?agentId=${agent.id}`), [keptLink.id]);
    assertNotFound(await request('GET', `/api/v1/agent-tools/${doomedLink.id}`, { token }));
    assert.equal((await get(token, `/agents/${agent.id}`)).id, agent.id, 'the agent stays');
  });
});

describe('deleting a prompt', () => {
  test('clears promptId on agents that used it', async () => {
    const { token } = await service.signUp();
    const doomed = await createPrompt(token);
    const kept = await createPrompt(token);
    const user = await createAgent(token, { promptId: doomed.id });
    const other = await createAgent(token, { promptId: kept.id });
    assert.equal(user.promptId, doomed.id);

    await remove(token, `/prompts/${doomed.id}`);

    assert.equal((await get(token, `/agents/${user.id}`)).promptId, null);
    assert.equal((await get(token, `/agents/${other.id}`)).promptId, kept.id);
    const listed = await get(token, '/agents');
    assert.deepEqual(
      listed.map((agent: Json) => agent.promptId),
      [null, kept.id],
    );
  });
});

describe('deleting a tag', () => {
  test("removes it from agents' tags, keeping the others in order", async () => {
    const { token } = await service.signUp();
    const first = await createTag(token);
    const doomed = await createTag(token);
    const last = await createTag(token);
    const agent = await createAgent(token, { tags: [first.id, doomed.id, last.id] });
    const onlyDoomed = await createAgent(token, { tags: [doomed.id] });
    assert.equal(agent.tags.length, 3);

    const reply = await remove(token, `/tags/${doomed.id}`);
    assert.equal(reply.body.data, null);

    assert.deepEqual(
      (await get(token, `/agents/${agent.id}`)).tags.map((tag: Json) => tag.id),
      [first.id, last.id],
    );
    assert.deepEqual((await get(token, `/agents/${onlyDoomed.id}`)).tags, []);
    const listed = await get(token, '/agents');
    assert.deepEqual(
      listed.map((row: Json) => row.tags.map((tag: Json) => tag.id)),
      [[first.id, last.id], []],
    );
  });
});

describe('deleting an api token', () => {
  test('makes it 401 (with either header spelling); other tokens keep working', async () => {
    const { token } = await service.signUp();
    const record = await create(token, '/api-tokens', { description: 'to revoke' });
    assert.equal((await request('GET', '/api/v1/agents', { token: record.token })).status, 200);

    const reply = await remove(token, `/api-tokens/${record.id}`);
    assert.equal(reply.body.data.id, record.id);

    for (const header of ['Autorization', 'Authorization'] as const) {
      const denied = await request('GET', '/api/v1/agents', { token: record.token, header });
      assert.equal(denied.status, 401, header);
      assert.equal(errorOf(denied).code, 'unauthorized');
    }
    assert.equal((await request('GET', '/api/v1/agents', { token })).status, 200);
    assert.ok(!(await listIds(token, '/api-tokens')).includes(record.id));
  });
});
