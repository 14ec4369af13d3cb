// What a model (or a tool's server) controls is hostile in size and shape: the service reads it in
// time proportional to its length, keeps `/healthz` answering while it does, and bounds what a run
// keeps. The model is the fake OpenAI server or a raw fixture server on 127.0.0.1.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { startRecordingServer } from './fixtures/recording-server.js';
import { newId, timestamp } from '../src/lib/ids.js';
import { startService, type Json } from './helpers.js';

const fake = await startFakeOpenAI();
const MIB = 1024 * 1024;
// The default answer bound (1 MiB); tool calls and memory bounded lower than their defaults, so a test stays small.
const service = await startService({
  runs: {
    openaiBaseUrl: fake.url,
    openaiApiKey: 'operator-key',
    ollamaBaseUrl: fake.url,
    timeoutMs: 60_000,
    concurrencyPerUser: 4,
    maxSteps: 4,
    backgroundTimeoutMs: 1_800_000,
    queuePerUser: 100,
    approvalTtlMs: 86_400_000,
    eventsRetentionDays: 30,
  },
  runBounds: { answerMaxBytes: MIB, maxToolCalls: 40, memoryMaxBytes: 64 * 1024 },
});
// A tool the agents are offered. At /echo it answers its request's X-Api-Key header so that its
// `keep` first characters sit right before the 64 KiB cap, as a service echoing the request would:
// the whole header (`part=0`), or only those characters (`part=1`: the cut then falls on the end of them).
const toolServer = await startRecordingServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname !== '/echo') return res.end('tool answer');
  const keep = Number(url.searchParams.get('keep'));
  const secret = String(req.headers['x-api-key']);
  res.end(`${'p'.repeat(64 * 1024 - keep)}${url.searchParams.get('part') === '1' ? secret.slice(0, keep) : secret}${'q'.repeat(100)}`);
});
after(() => {
  toolServer.server.closeAllConnections();
  toolServer.server.close();
});
const { token } = await service.signUp();

/** An agent of `type` whose model is `baseUrl` (the fake model by default), with one plain HTTP tool. */
async function agent(type: 'VENDOR_A' | 'REACT', baseUrl = fake.url): Promise<Json> {
  const created = await service.create(token, '/agents', {
    name: `${type} agent`,
    type,
    llm: { provider: 'openai-compatible', model: 'm', baseUrl },
  });
  const tool = await service.create(token, '/tools', {
    name: 'Helper',
    type: 'HOSTED_MODEL',
    description: 'Helps.',
    metadata: { url: `${toolServer.base}/help` },
  });
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
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6))
      .join('\n');
    return event ? [{ event, data: JSON.parse(data) }] : [];
  });
}

const invoke = (agentId: string, body: Json) => service.request('POST', `/api/v1/agents/${agentId}/invoke`, { token, body });

describe('the ReAct loop reading a large adversarial answer', () => {
  it('keeps /healthz answering within 3 s while it reads 160 KiB of "Action:" twice', async () => {
    const react = await agent('REACT');
    // No "Action Input:" ever follows: a backtracking parser searches the rest of the text from each "Action:".
    const text = 'Thought: x '.concat('Action:'.repeat((160 * 1024) / 7));
    fake.reply({ text }, { text });
    const { result, slowestMs } = await whileProbing(invoke(react.id, { input: 'go' }));
    assert.equal(result.status, 200, result.text.slice(0, 500));
    assert.ok(slowestMs < 3000, `/healthz took ${Math.round(slowestMs)} ms`);
  });
});

describe('a streamed model answer without line breaks', () => {
  it('is cut with a clear failure once its line passes 4 Mi characters, /healthz answering within 3 s meanwhile', async () => {
    const model = await agent('VENDOR_A', await endlessLineModel(24 * 1024 * 1024));
    const { result: events, slowestMs } = await whileProbing(invokeStreamed(model.id, 'go'));
    assert.deepEqual(
      events.map((e) => e.event),
      ['run', 'error'],
    );
    assert.equal(events[1].data.code, 'upstream_error');
    assert.match(events[1].data.message, /streamed an event \(or a line\) longer than 4 Mi characters; the run was stopped/);
    assert.ok(slowestMs < 3000, `/healthz took ${Math.round(slowestMs)} ms`);
    const run = await service.request('GET', `/api/v1/runs/${events[0].data.runId}`, { token });
    assert.equal(run.body.data.status, 'failed');
    assert.match(run.body.data.error, /longer than 4 Mi characters/);
  });
});

describe('the bounds of a run', () => {
  const bytes = (text: string) => Buffer.byteLength(text);

  it('keeps at most RUN_ANSWER_MAX_BYTES of a 5 MiB answer, plain or streamed, and says so', async () => {
    const plain = await agent('VENDOR_A');
    const answer = 'é'.repeat(2.5 * MIB); // 5 MiB of two-byte characters: a cut must not split one
    fake.reply(
      { text: answer },
      { text: answer, chunks: Array.from({ length: 80 }, (_, i) => answer.slice(i * 32 * 1024, (i + 1) * 32 * 1024)) },
    );
    const warning = "The model's answer was longer than 1024 KiB; it was cut there (RUN_ANSWER_MAX_BYTES).";
    const result = await invoke(plain.id, { input: 'long' });
    assert.equal(result.status, 200);
    assert.equal(result.body.data.output, 'é'.repeat(MIB / 2));
    assert.deepEqual(result.body.data.warnings, [warning]);
    const stored = (await service.request('GET', `/api/v1/runs/${result.body.data.runId}`, { token })).body.data;
    assert.equal(stored.output, 'é'.repeat(MIB / 2));
    assert.deepEqual(stored.warnings, [warning]);

    const events = await invokeStreamed(plain.id, 'long');
    const streamed = events
      .filter((e) => e.event === 'token')
      .map((e) => e.data.text)
      .join('');
    assert.equal(streamed, 'é'.repeat(MIB / 2), 'the tokens sent stop at the bound too');
    const done = events.at(-1)!;
    assert.equal(done.event, 'done');
    assert.ok(bytes(done.data.output) <= MIB);
    assert.deepEqual(done.data.warnings, [warning]);
  });

  it('runs at most 32 tool calls of one reply and RUN_MAX_TOOL_CALLS of a run, telling the model and the run', async () => {
    const caller = await agent('VENDOR_A');
    const many = {
      toolCalls: Array.from({ length: 3000 }, (_, i) => ({ id: `c${i}`, name: 'helper', arguments: '{"input":"x"}' })),
      pieceSize: 64,
    };
    const before = fake.requests.length;
    const seenBefore = toolServer.seen.length;
    fake.reply(many, many, { text: 'done' });
    const result = await invoke(caller.id, { input: 'call everything' });
    assert.equal(result.status, 200, result.text.slice(0, 500));
    assert.equal(result.body.data.output, 'done');
    assert.equal(toolServer.seen.length - seenBefore, 40, "the tool ran 32 times, then 8 until the run's 40");
    const run = (await service.request('GET', `/api/v1/runs/${result.body.data.runId}`, { token })).body.data;
    assert.equal(run.steps.length, 40);
    for (const step of run.steps) assert.deepEqual([step.function, step.output], ['helper', 'tool answer']);
    assert.deepEqual(run.warnings, [
      'The model asked for 3000 tool calls in one reply; only the first 32 were run.',
      'The run reached its limit of 40 tool calls (RUN_MAX_TOOL_CALLS); later calls were refused, and the model was told.',
    ]);

    // What the model was given back: one result per call it was told about, the note after the last.
    const second = fake.requests[before + 1].body.messages;
    assert.equal(second.at(-33).tool_calls.length, 32);
    const results = second.slice(-32);
    for (const message of results) assert.equal(message.role, 'tool');
    assert.match(
      results.at(-1).content,
      /^tool answer\n\n\[Note: The model asked for 3000 tool calls in one reply; only the first 32 were run\. Ask for at most 32 at once\.\]$/,
    );
    const third = fake.requests[before + 2].body.messages.slice(-32);
    assert.deepEqual(
      third.map((m: Json) => m.content.startsWith('Error: Refused: this run has made its 40 tool calls.')),
      [...Array(8).fill(false), ...Array(23).fill(true), true],
    );
  });

  it('replays only the newest turns of a session that fit in RUN_MEMORY_MAX_BYTES', async () => {
    const remembering = await service.create(token, '/agents', {
      name: 'memory',
      type: 'VENDOR_A',
      hasMemory: true,
      llm: { provider: 'openai-compatible', model: 'm', baseUrl: fake.url },
    });
    const sessionId = 'long-talk';
    for (const turn of ['one', 'two', 'three']) {
      fake.reply({ text: `${turn}:${'m'.repeat(30 * 1024)}` });
      assert.equal((await invoke(remembering.id, { input: `turn ${turn}`, sessionId })).status, 200);
    }
    const before = fake.requests.length;
    fake.reply({ text: 'four' });
    assert.equal((await invoke(remembering.id, { input: 'turn four', sessionId })).status, 200);
    // Two turns of ~30 KiB fit in 64 KiB, three do not: the oldest is left out, whole.
    const replayed = fake.requests[before].body.messages.slice(1).map((m: Json) => `${m.role}:${m.content.slice(0, 10)}`);
    assert.deepEqual(replayed, ['user:turn two', 'assistant:two:mmmmmm', 'user:turn three', 'assistant:three:mmmm', 'user:turn four']);
  });

  it('lists runs with their long parts cut, in a page that stays small; GET /runs/{id} has the whole run', async () => {
    const listed = await agent('VENDOR_A');
    // A run recorded before the bounds: a 5 MiB answer and 500 steps of 8 KiB outputs, as the database holds it.
    const runId = newId();
    const steps = Array.from({ length: 500 }, (_, i) => ({
      tool: 'Helper',
      toolId: newId(),
      function: 'helper',
      input: { input: 'i'.repeat(i % 2 ? 10 : 5000) },
      output: 'o'.repeat(8 * 1024),
      ms: 1,
    }));
    service.db
      .prepare(
        `INSERT INTO agent_runs (id, user_id, agent_id, session_id, status, input, output, model, steps, sources, warnings, started_at, finished_at, ms)
       VALUES (?, ?, ?, NULL, 'succeeded', ?, ?, 'm', ?, '[]', '[]', ?, ?, 5)`,
      )
      .run(
        runId,
        (await service.request('GET', '/api/v1/auth/me', { token })).body.data.id,
        listed.id,
        'q'.repeat(100_000),
        'a'.repeat(5 * MIB),
        JSON.stringify(steps),
        timestamp(),
        timestamp(),
      );
    // And runs of today's bounds: 1 MiB answers.
    for (let i = 0; i < 4; i++) {
      fake.reply({ text: 'b'.repeat(MIB) });
      assert.equal((await invoke(listed.id, { input: 'big' })).status, 200);
    }
    fake.reply({ text: 'short answer' });
    assert.equal((await invoke(listed.id, { input: 'small' })).status, 200);

    for (const path of [`/api/v1/agents/${listed.id}/runs`, '/api/v1/traces?limit=1000']) {
      const page = await service.request('GET', path, { token });
      assert.equal(page.status, 200);
      const mine = page.body.data.filter((run: Json) => run.agentId === listed.id);
      assert.equal(mine.length, 6, path);
      assert.ok(bytes(page.text) < 256 * 1024, `${path}: ${bytes(page.text)} bytes`);
      for (const run of mine) {
        assert.deepEqual(Object.keys(run), [
          'id',
          'agentId',
          'parentRunId',
          'sessionId',
          'status',
          'background',
          'input',
          'output',
          'error',
          'model',
          'steps',
          'sources',
          'warnings',
          'usage',
          'actions',
          'startedAt',
          'finishedAt',
          'ms',
          'truncated',
        ]);
        if (run.output === 'short answer') {
          assert.equal(run.truncated, false);
          assert.equal(run.input, 'small');
          continue;
        }
        assert.equal(run.truncated, true, run.id);
        assert.ok(run.output.length === 1001 && run.output.endsWith('…'), `${run.id}: output of ${run.output.length}`);
        assert.ok(run.input.length <= 1001);
        assert.ok(run.steps.length <= 10);
        for (const step of run.steps) {
          assert.deepEqual(Object.keys(step), ['tool', 'toolId', 'function', 'input', 'output', 'ms']);
          assert.ok(step.output.length === 201 && step.output.endsWith('…'));
          assert.ok(
            typeof step.input === 'string'
              ? step.input.length === 201 && step.input.startsWith('{"input":"iii')
              : step.input.input === 'i'.repeat(10),
          );
        }
      }
      assert.equal(mine.find((run: Json) => run.id === runId).steps.length, 10);
    }
    const whole = await service.request('GET', `/api/v1/runs/${runId}`, { token });
    assert.equal(whole.body.data.output.length, 5 * MIB);
    assert.equal(whole.body.data.steps.length, 500);
    assert.equal(whole.body.data.truncated, undefined);
  });
});

describe('a tool that echoes its header secret across the 64 KiB cap', () => {
  const SECRET = 'sk-header-secret-0123456789abcdef';
  const NOTE = '\n[the answer was cut at 64 KiB]';

  for (const [keep, part] of [
    [8, 0],
    [20, 0],
    [SECRET.length - 1, 0],
    [8, 1],
    [20, 1],
  ]) {
    it(`leaves none of it where the cut falls after its first ${keep} characters (${part ? 'only they were sent' : 'the whole secret was sent'})`, async () => {
      const echoing = await service.create(token, '/agents', {
        name: 'echo',
        type: 'VENDOR_A',
        llm: { provider: 'openai-compatible', model: 'm', baseUrl: fake.url },
      });
      const tool = await service.create(token, '/tools', {
        name: 'Echo',
        type: 'HOSTED_MODEL',
        metadata: { url: `${toolServer.base}/echo?keep=${keep}&part=${part}`, headers: { 'X-Api-Key': SECRET } },
      });
      await service.create(token, '/agent-tools', { agentId: echoing.id, toolId: tool.id });
      const before = fake.requests.length;
      fake.reply({ toolCalls: [{ name: 'echo', arguments: '{"input":"x"}' }] }, { text: 'done' });
      const result = await invoke(echoing.id, { input: 'echo' });
      assert.equal(result.status, 200, result.text.slice(0, 300));
      const run = (await service.request('GET', `/api/v1/runs/${result.body.data.runId}`, { token })).body.data;
      const toModel = fake.requests[before + 1].body.messages.at(-1).content as string;
      for (const [where, output] of [
        ['the step', run.steps[0].output as string],
        ['the model', toModel],
      ] as const) {
        assert.ok(output.endsWith(NOTE), where);
        const body = output.slice(0, -NOTE.length);
        assert.ok(body.length <= 64 * 1024 + '[redacted]'.length, `${where}: ${body.length} characters`);
        // Redacted before the cut: where the secret stood (whole, or its beginning at the cut) reads [redacted].
        assert.ok(part ? body.endsWith('[redacted]') : body.includes('[redacted]'), `${where}: …${JSON.stringify(body.slice(-40))}`);
        for (let at = 0; at + 8 <= SECRET.length; at++)
          assert.ok(!body.includes(SECRET.slice(at, at + 8)), `${where} holds "${SECRET.slice(at, at + 8)}"`);
      }
    });
  }
});

describe('a prompt that repeats a large variable', () => {
  it('is refused (422 naming variables) before it is filled past a million characters', async () => {
    const prompt = await service.create(token, '/prompts', {
      name: 'repeats',
      template: '{topic}'.repeat(2000),
      input_variables: ['topic'],
    });
    const agent = await service.create(token, '/agents', {
      name: 'repeater',
      type: 'VENDOR_A',
      llm: { provider: 'echo', model: 'echo' },
      promptId: prompt.id,
    });
    const refused = await invoke(agent.id, { input: 'go', variables: { topic: 'x'.repeat(60_000) } });
    assert.equal(refused.status, 422, refused.text.slice(0, 300));
    assert.equal(refused.body.error.details[0].path, 'variables');
    assert.match(refused.body.error.details[0].message, /longer than 1000000 characters/);
    const fits = await invoke(agent.id, { input: 'go', variables: { topic: 'x'.repeat(400) } });
    assert.equal(fits.status, 200, fits.text.slice(0, 300));
  });
});
