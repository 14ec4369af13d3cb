// What a model (or a tool's server) controls is hostile in size and shape: the service reads it in
// time proportional to its length, keeps `/healthz` answering while it does, and bounds what a run
// keeps. The model is the fake OpenAI server or a raw fixture server on 127.0.0.1.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { startRecordingServer } from './fixtures/recording-server.js';
import { startService, type Json } from './helpers.js';

const fake = await startFakeOpenAI();
const service = await startService({
  runs: { openaiBaseUrl: fake.url, openaiApiKey: 'operator-key', ollamaBaseUrl: fake.url, timeoutMs: 60_000, concurrencyPerUser: 4, maxSteps: 4 },
});
// A tool a REACT agent is offered (never called by these tests' models).
const toolServer = await startRecordingServer((_req, res) => res.end('tool answer'));
after(() => {
  toolServer.server.closeAllConnections();
  toolServer.server.close();
});
const { token } = await service.signUp();

/** An agent of `type` whose model is `baseUrl` (the fake model by default), with one plain HTTP tool. */
async function agent(type: 'VENDOR_A' | 'REACT', baseUrl = fake.url): Promise<Json> {
  const created = await service.create(token, '/agents', { name: `${type} agent`, type, llm: { provider: 'openai-compatible', model: 'm', baseUrl } });
  const tool = await service.create(token, '/tools', { name: 'Helper', type: 'HOSTED_MODEL', description: 'Helps.', metadata: { url: `${toolServer.base}/help` } });
  await service.create(token, '/agent-tools', { agentId: created.id, toolId: tool.id });
  return created;
}

/** Asks /healthz every 50 ms until `work` settles; what `work` resolved with and the slowest answer in ms. */
async function whileProbing<T>(work: Promise<T>): Promise<{ result: T; slowestMs: number }> {
  let settled = false;
  const done = work.finally(() => (settled = true));
  let slowestMs = 0;
  while (!settled) {
    const started = performance.now();
    const health = await fetch(`${service.url}/healthz`);
    await health.arrayBuffer();
    slowestMs = Math.max(slowestMs, performance.now() - started);
    assert.equal(health.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { result: await done, slowestMs };
}

/** A model server that streams one line without a break, 1 KiB per write, until `bytes` or the client goes. */
async function endlessLineModel(bytes: number): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"index":0,"delta":{"content":"');
      const piece = 'y'.repeat(1024);
      for (let sent = 0; sent < bytes && !res.destroyed; sent += piece.length) {
        if (!res.write(piece)) await new Promise((resolve) => res.once('drain', resolve));
        else await new Promise((resolve) => setImmediate(resolve));
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** A streamed invoke read whole: its named events in order. */
async function invokeStreamed(agentId: string, input: string): Promise<{ event: string; data: Json }[]> {
  const response = await fetch(`${service.url}/api/v1/agents/${agentId}/invoke`, {
    method: 'POST',
    headers: { Autorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input, stream: true }),
  });
  assert.equal(response.status, 200);
  return (await response.text()).split('\n\n').flatMap((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
    return event ? [{ event, data: JSON.parse(data) }] : [];
  });
}

const invoke = (agentId: string, body: Json) => service.request('POST', `/api/v1/agents/${agentId}/invoke`, { token, body });

describe('the ReAct loop reading a large adversarial answer', () => {
  it('keeps /healthz answering within 1 s while it reads 160 KiB of "Action:" twice', async () => {
    const react = await agent('REACT');
    // No "Action Input:" ever follows: a backtracking parser searches the rest of the text from each "Action:".
    const text = 'Thought: x '.concat('Action:'.repeat(160 * 1024 / 7));
    fake.reply({ text }, { text });
    const { result, slowestMs } = await whileProbing(invoke(react.id, { input: 'go' }));
    assert.equal(result.status, 200, result.text.slice(0, 500));
    assert.ok(slowestMs < 1000, `/healthz took ${Math.round(slowestMs)} ms`);
  });
});

describe('a streamed model answer without line breaks', () => {
  it('is cut with a clear failure once its line passes 4 Mi characters, /healthz answering within 1 s meanwhile', async () => {
    const model = await agent('VENDOR_A', await endlessLineModel(24 * 1024 * 1024));
    const { result: events, slowestMs } = await whileProbing(invokeStreamed(model.id, 'go'));
    assert.deepEqual(events.map((e) => e.event), ['run', 'error']);
    assert.equal(events[1].data.code, 'upstream_error');
    assert.match(events[1].data.message, /streamed an event \(or a line\) longer than 4 Mi characters; the run was stopped/);
    assert.ok(slowestMs < 1000, `/healthz took ${Math.round(slowestMs)} ms`);
    const run = await service.request('GET', `/api/v1/runs/${events[0].data.runId}`, { token });
    assert.equal(run.body.data.status, 'failed');
    assert.match(run.body.data.error, /longer than 4 Mi characters/);
  });
});
