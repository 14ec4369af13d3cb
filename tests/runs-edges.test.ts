// Running agents at the edges: a DNS server that never answers the endpoint check, an agent
// deleted while its run is set up, waits for a slot or is about to wait for approval, a shutdown
// that meets a run past its checks, and a streamed client that stops reading; run ends committed
// together; the kept-alive fetch of the operator's model endpoints. DNS lookups of the endpoint
// check go through the service's test seam.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { assertNotFound, errorOf, startService, succeededEnd, testConfig, waitFor, type Json, type TestService } from './helpers.js';
import { startFakeOpenAI, type FakeOpenAI } from './fixtures/fake-openai.js';
import type { ResolvedAddress } from '../src/ingest/fetch.js';
import { createRunStore } from '../src/runs/store.js';
import { createMemoryStore, wholeTurns } from '../src/runs/memory-store.js';
import { createChatApi } from '../src/runs/chat-api.js';

const fake: FakeOpenAI = await startFakeOpenAI();

/** A DNS seam: hosts listed in `held` wait until the test answers them; others never answer. */
function heldResolver() {
  const waiting = new Map<string, (addresses: ResolvedAddress[]) => void>();
  const asked: string[] = [];
  return {
    asked,
    resolve: (host: string) =>
      new Promise<ResolvedAddress[]>((resolve) => {
        asked.push(host);
        waiting.set(host, resolve);
      }),
    answer(host: string) {
      waiting.get(host)?.([{ address: '127.0.0.1', family: 4 }]);
    },
  };
}

/** Rejects when `promise` has not settled within `ms` (a hang becomes a failure, not a stuck test). */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

const runsConfig = (extra: Record<string, number> = {}) => ({
  openaiBaseUrl: 'http://127.0.0.1:9/v1',
  ollamaBaseUrl: 'http://127.0.0.1:9/v1',
  timeoutMs: 5000,
  concurrencyPerUser: 4,
  maxSteps: 8,
  backgroundTimeoutMs: 1_800_000,
  queuePerUser: 100,
  approvalTtlMs: 86_400_000,
  eventsRetentionDays: 30,
  ...extra,
});

function events(text: string): { event: string | undefined; data: string }[] {
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((line) => line.startsWith('data: ')))
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1],
      data: block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n'),
    }));
}

const post = (service: TestService, path: string, token: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${service.url}/api/v1${path}`, {
    method: 'POST',
    headers: { Autorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

describe("the endpoint check has the run's deadline", () => {
  test('a DNS server that never answers is a 504 upstream_timeout within RUN_TIMEOUT_MS, and the slot is free again', async () => {
    const dns = heldResolver();
    const service = await startService({ runs: runsConfig({ timeoutMs: 300, concurrencyPerUser: 1 }) }, undefined, {
      resolveHost: dns.resolve,
    });
    const user = await service.signUp();
    const agent = await service.create(user.token, '/agents', {
      name: 'a',
      type: 'VENDOR_A',
      llm: { provider: 'openai-compatible', model: 'm', baseUrl: 'http://silent-dns.test:8000/v1' },
    });
    for (const stream of [false, true]) {
      const started = Date.now();
      const response = await post(service, `/agents/${agent.id}/invoke`, user.token, { input: 'hi', stream }, AbortSignal.timeout(3000));
      assert.equal(response.status, 504, `stream: ${stream}`);
      assert.match(response.headers.get('content-type') ?? '', /json/, 'decided before the run: JSON');
      const body = (await response.json()) as Json;
      assert.equal(body.error.code, 'upstream_timeout');
      assert.match(body.error.message, /RUN_TIMEOUT_MS/);
      assert.ok(Date.now() - started < 2000);
    }
    assert.equal(dns.asked.length, 2, 'the second invoke was not refused for want of a slot');
    const runs = await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: user.token });
    assert.deepEqual(runs.body.data, [], 'nothing was recorded');
  });
});

describe('an agent deleted while its run is set up', () => {
  test('deleted during the endpoint check: 404 like a missing agent (plain and streamed), and no run', async () => {
    const dns = heldResolver();
    const service = await startService({ runs: runsConfig() }, undefined, { resolveHost: dns.resolve });
    const user = await service.signUp();
    for (const stream of [false, true]) {
      const host = `deleted-${stream}.test`;
      const agent = await service.create(user.token, '/agents', {
        name: 'a',
        type: 'VENDOR_A',
        llm: { provider: 'openai-compatible', model: 'm', baseUrl: `http://${host}:8000/v1` },
      });
      const pending = service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'hi', stream } });
      await waitFor('the endpoint check', () => dns.asked.includes(host));
      assert.equal((await service.request('DELETE', `/api/v1/agents/${agent.id}`, { token: user.token })).status, 200);
      dns.answer(host);
      const reply = await pending;
      assertNotFound(reply, `stream: ${stream}`);
      assert.equal(errorOf(reply).message, 'Agent not found.');
    }
    const traces = await service.request('GET', '/api/v1/traces', { token: user.token });
    assert.deepEqual(traces.body.data, [], 'no run left behind');
  });

  test('deleted while the model answers: 404 (plain) or an error event (streamed), not a run id that 404s', async () => {
    const service = await startService({ runs: runsConfig() });
    const user = await service.signUp();
    const llm = { provider: 'openai-compatible', model: 'm', baseUrl: fake.url };

    const plain = await service.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm });
    fake.reply({ text: 'late answer', delayMs: 300 });
    const count = fake.requests.length;
    const pending = service.request('POST', `/api/v1/agents/${plain.id}/invoke`, { token: user.token, body: { input: 'hi' } });
    await waitFor('the model call', () => fake.requests.length > count);
    assert.equal((await service.request('DELETE', `/api/v1/agents/${plain.id}`, { token: user.token })).status, 200);
    assertNotFound(await pending);

    const streamed = await service.create(user.token, '/agents', { name: 'b', type: 'VENDOR_A', llm });
    fake.reply({ text: 'late answer', delayMs: 300 });
    const before = fake.requests.length;
    const response = post(service, `/agents/${streamed.id}/invoke`, user.token, { input: 'hi', stream: true });
    await waitFor('the model call', () => fake.requests.length > before);
    assert.equal((await service.request('DELETE', `/api/v1/agents/${streamed.id}`, { token: user.token })).status, 200);
    const got = events(await (await response).text());
    assert.equal(got[0].event, 'run');
    assert.equal(got.at(-1)!.event, 'error');
    assert.equal(JSON.parse(got.at(-1)!.data).code, 'not_found');
    const traces = await service.request('GET', '/api/v1/traces', { token: user.token });
    assert.deepEqual(traces.body.data, []);
  });
});

describe('shutdown', () => {
  test("a run past its checks whose tool waits on a nested agent's endpoint check is still ended, its stream and record marked", async () => {
    const dns = heldResolver();
    const service = await startService({ runs: runsConfig({ timeoutMs: 60_000 }) }, undefined, { resolveHost: dns.resolve });
    const user = await service.signUp();
    const child = await service.create(user.token, '/agents', {
      name: 'child',
      type: 'VENDOR_A',
      llm: { provider: 'openai-compatible', model: 'm', baseUrl: 'http://child-dns.test:8000/v1' },
    });
    const lead = await service.create(user.token, '/agents', {
      name: 'lead',
      type: 'VENDOR_A',
      llm: { provider: 'openai-compatible', model: 'm', baseUrl: fake.url },
    });
    const tool = await service.create(user.token, '/tools', { name: 'Ask child', type: 'AGENT', metadata: { agentId: child.id } });
    await service.create(user.token, '/agent-tools', { agentId: lead.id, toolId: tool.id });
    fake.reply({ toolCalls: [{ id: 'c1', name: 'ask_child', arguments: '{"query":"x"}' }] });
    const response = await post(service, `/agents/${lead.id}/invoke`, user.token, { input: 'go', stream: true });
    assert.equal(response.status, 200);
    await waitFor('the nested endpoint check', () => dns.asked.includes('child-dns.test'));

    await within(3000, 'shutdown', service.app.stopBackgroundWork());
    const got = events(await within(3000, 'the stream', response.text()));
    assert.equal(got[0].event, 'run');
    assert.equal(got.at(-1)!.event, 'error');
    assert.equal(JSON.parse(got.at(-1)!.data).code, 'unavailable');
    const runId = JSON.parse(got[0].data).runId;
    const row = service.db.prepare('SELECT status, error FROM agent_runs WHERE id = ?').get(runId) as { status: string; error: string };
    assert.equal(row.status, 'failed');
    assert.match(row.error, /shutting down/);
  });
});

describe('shutdown during the checks', () => {
  test('a run whose endpoint check waits on DNS is answered 503 at once, nothing recorded; new runs are refused', async () => {
    const dns = heldResolver();
    const service = await startService({ runs: runsConfig({ timeoutMs: 60_000 }) }, undefined, { resolveHost: dns.resolve });
    const user = await service.signUp();
    const agent = await service.create(user.token, '/agents', {
      name: 'a',
      type: 'VENDOR_A',
      llm: { provider: 'openai-compatible', model: 'm', baseUrl: 'http://slow-check.test:8000/v1' },
    });
    const pending = post(service, `/agents/${agent.id}/invoke`, user.token, { input: 'hi', stream: true }, AbortSignal.timeout(3000));
    await waitFor('the endpoint check', () => dns.asked.includes('slow-check.test'));
    const stopping = service.app.runs.shutdown();
    const response = await pending;
    assert.equal(response.status, 503);
    assert.equal(((await response.json()) as Json).error.code, 'unavailable');
    await within(3000, 'shutdown', stopping);
    const again = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'hi' } });
    assert.equal(again.status, 503);
    const runs = await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: user.token });
    assert.deepEqual(runs.body.data, []);
  });
});

describe('a streamed client that does not read', () => {
  test('is cut off after a bounded buffer: the run is cancelled, the model request aborted, the stream ends with an error event', async () => {
    // Answers as long as the one below are streamed whole (by default one is cut at 1 MiB).
    const service = await startService({ runs: runsConfig(), runBounds: { ...testConfig().runBounds, answerMaxBytes: 16 * 1024 * 1024 } });
    const user = await service.signUp();
    const agent = await service.create(user.token, '/agents', {
      name: 'a',
      type: 'VENDOR_A',
      llm: { provider: 'openai-compatible', model: 'm', baseUrl: fake.url },
    });
    // Far more than the kernel's socket buffers hold: the rest waits in the service unless it stops.
    const piece = 'x'.repeat(16 * 1024);
    fake.reply({ text: piece.repeat(1024), chunks: Array.from({ length: 1024 }, () => piece), chunkDelayMs: 1 });
    const count = fake.requests.length;
    const url = new URL(`${service.url}/api/v1/agents/${agent.id}/invoke`);
    const body = JSON.stringify({ input: 'flood', stream: true });
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const request = http.request(
        url,
        { method: 'POST', headers: { Autorization: `Bearer ${user.token}`, 'content-type': 'application/json' } },
        resolve,
      );
      request.on('error', reject);
      request.end(body);
    });
    assert.equal(response.statusCode, 200);
    response.pause(); // never read until the run ended

    const run = await waitFor(
      'the run to end',
      async () => {
        const list = await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: user.token });
        const first = list.body.data[0];
        return first && first.status !== 'running' ? first : undefined;
      },
      20_000,
    );
    assert.equal(run.status, 'cancelled', 'the run did not go on buffering the answer');
    assert.match(run.error, /did not read/);
    await fake.waitForAbort(fake.requests[count]);

    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.resume();
    await within(10_000, 'the rest of the stream', new Promise((resolve) => response.on('end', resolve)));
    const text = Buffer.concat(chunks).toString();
    assert.ok(text.length < 12 * 1024 * 1024, 'far less than the whole answer was kept');
    const last = events(text).at(-1)!;
    assert.equal(last.event, 'error');
    assert.equal(JSON.parse(last.data).code, 'cancelled');
  });
});

describe('ends of runs committed together', () => {
  test('one commit for the ends queued in a turn: each resolves with its own result, one that fails is rolled back alone', async () => {
    const service = await startService({ runs: runsConfig() });
    const user = await service.signUp();
    const agent = await service.create(user.token, '/agents', {
      name: 'a',
      type: 'VENDOR_A',
      llm: { provider: 'openai', model: 'm' },
      hasMemory: true,
    });
    const runs = createRunStore(service.db);
    const start = (input: string) =>
      runs.startRun({ userId: user.user.id, agentId: agent.id, parentRunId: null, sessionId: 's1', input, model: 'm' })!.id;
    const end = succeededEnd;
    const [a, b, c] = [start('one'), start('two'), start('three')];
    assert.equal(runs.finishRun(c, end('first end'), null), true);
    // A hook that throws fails that end after its UPDATE (and its turn) ran: the savepoint takes them back.
    runs.onChange(({ runId }) => {
      if (runId === b) throw new Error('refused by a hook');
    });
    const settled = await Promise.allSettled([
      runs.finishRunSoon(a, end('answer one'), { agentId: agent.id, sessionId: 's1' }),
      runs.finishRunSoon(b, end('never'), { agentId: agent.id, sessionId: 's1' }),
      runs.finishRunSoon(c, end('second end'), null),
    ]);
    assert.deepEqual(settled[0], { status: 'fulfilled', value: true });
    assert.equal(settled[1].status, 'rejected');
    assert.deepEqual(settled[2], { status: 'fulfilled', value: false }, 'the first end wins');
    const get = (id: string) => runs.getRun(user.user.id, id)!;
    assert.equal(get(a).status, 'succeeded');
    assert.equal(get(a).output, 'answer one');
    assert.equal(get(b).status, 'running', 'the failed end left nothing behind');
    assert.equal(get(c).output, 'first end');
    assert.deepEqual(
      createMemoryStore(service.db)
        .recentMessages(agent.id, 's1', 10)
        .map((m) => m.content),
      ['one', 'answer one'],
      'only the end that was written added its turn',
    );
  });
});

describe('an end committed: what goes with it being seen', () => {
  test('a hook that throws fails its own end only: the other ends of the batch are told and resolve', async () => {
    const service = await startService({ runs: runsConfig() });
    const user = await service.signUp();
    const agent = await service.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm: { provider: 'openai', model: 'm' } });
    const runs = createRunStore(service.db);
    const start = (input: string) =>
      runs.startRun({ userId: user.user.id, agentId: agent.id, parentRunId: null, sessionId: null, input, model: 'm' })!.id;
    const end = succeededEnd('ok');
    const [a, b] = [start('one'), start('two')];
    const told: string[] = [];
    const settled = await within(
      5_000,
      'both ends to settle',
      Promise.allSettled([
        runs.finishRunSoon(a, end, null, () => {
          throw new Error('hook failed');
        }),
        runs.finishRunSoon(b, end, null, () => told.push('b')),
      ]),
    );
    assert.equal(settled[0].status, 'rejected');
    assert.deepEqual(settled[1], { status: 'fulfilled', value: true });
    assert.deepEqual(told, ['b'], "the second end's hook ran after the first one threw");
    assert.equal(runs.getRun(user.user.id, a)!.status, 'succeeded', 'the end itself was committed');
  });
});

describe("the chat call to the operator's endpoints", () => {
  test('sends the call with its key, decodes a compressed answer, and reuses its connection', async () => {
    const ports: number[] = [];
    const seen: { body: string; auth: string | null }[] = [];
    const server = http.createServer((req, res) => {
      ports.push(req.socket.remotePort ?? 0);
      const parts: Buffer[] = [];
      req.on('data', (part: Buffer) => parts.push(part));
      req.on('end', () => {
        seen.push({ body: Buffer.concat(parts).toString('utf8'), auth: req.headers.authorization ?? null });
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'packed answer' } }] })));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const api = createChatApi({ allowPrivateNetworks: false });
      const endpoint = {
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        apiKey: 'k',
        model: 'm',
        userAimed: false,
      };
      for (let i = 0; i < 2; i++) {
        const completion = await api.complete(
          endpoint,
          { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
          new AbortController().signal,
        );
        assert.equal(completion.choices[0].message.content, 'packed answer', 'decoded');
      }
      assert.deepEqual(JSON.parse(seen[0].body), { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: false });
      assert.equal(seen[0].auth, 'Bearer k');
      assert.equal(ports.length, 2);
      assert.equal(ports[0], ports[1], 'the second call came over the same connection');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('turns kept on their runs', () => {
  /** A service, a user with two agents with memory, and the run and memory stores on its database. */
  async function setUp() {
    const service = await startService({ runs: runsConfig() });
    const user = await service.signUp();
    const agent = (name: string) =>
      service.create(user.token, '/agents', { name, type: 'VENDOR_A', llm: { provider: 'openai', model: 'm' }, hasMemory: true });
    const [first, second] = [await agent('first'), await agent('second')];
    const runs = createRunStore(service.db);
    const memory = createMemoryStore(service.db);
    const start = (agentId: string, sessionId: string, input: string) =>
      runs.startRun({ userId: user.user.id, agentId, parentRunId: null, sessionId, input, model: 'm' })!.id;
    const succeeded = succeededEnd;
    const contents = (agentId: string, sessionId: string, afterSeq = 0) =>
      memory.listMessages(agentId, sessionId, { afterSeq, limit: 100 }).rows.map((m) => m.content);
    return { service, user, first, second, runs, memory, start, succeeded, contents };
  }

  test('in the order they ended, not the order their runs began: a cursor handed out before a late end still sees it', async () => {
    const { first, runs, memory, start, succeeded, contents } = await setUp();
    const [early, late] = [start(first.id, 's', 'asked first'), start(first.id, 's', 'asked second')];
    assert.equal(runs.finishRun(late, succeeded('answered first'), { agentId: first.id, sessionId: 's' }), true);
    const [, lastSeen] = memory.listMessages(first.id, 's', { afterSeq: 0, limit: 100 }).rows;
    const cursor = memory.seqOfMessage(first.id, 's', lastSeen.id)!;
    // The run that began first ends last (say, after waiting for an approval).
    assert.equal(runs.finishRun(early, succeeded('answered second'), { agentId: first.id, sessionId: 's' }), true);
    assert.deepEqual(contents(first.id, 's'), ['asked second', 'answered first', 'asked first', 'answered second']);
    assert.deepEqual(contents(first.id, 's', cursor), ['asked first', 'answered second']);
    assert.deepEqual(
      memory.recentMessages(first.id, 's', 20).map((m) => m.content),
      ['asked second', 'answered first', 'asked first', 'answered second'],
    );
    assert.deepEqual(
      memory.recentMessages(first.id, 's', 3).map((m) => m.content),
      ['asked first', 'answered second'],
      'an odd limit replays whole turns, the newest',
    );
    assert.equal(memory.getSession(first.id, 's')?.title, 'asked second', "the title is the first turn's question");
  });

  test('the replay takes stored messages only once the run turns are all taken: an odd limit replays the newest whole turn', async () => {
    const { service, first, runs, memory, start, succeeded } = await setUp();
    // A session as an import leaves it (rows of its own, the last a question without its answer), then two run turns.
    const now = new Date().toISOString();
    const sessionSeq = service.db
      .prepare(`INSERT INTO agent_sessions (id, agent_id, created_at, updated_at) VALUES ('imported', ?, ?, ?) RETURNING seq`)
      .pluck()
      .get(first.id, now, now);
    service.db
      .prepare(
        `INSERT INTO agent_messages (id, session_seq, role, content, run_id, created_at) VALUES ('m-1', ?, 'user', 'dangling', NULL, ?)`,
      )
      .run(sessionSeq, now);
    for (const turn of ['one', 'two']) {
      const run = start(first.id, 'imported', `question ${turn}`);
      assert.equal(runs.finishRun(run, succeeded(`answer ${turn}`), { agentId: first.id, sessionId: 'imported' }), true);
    }
    const replayed = (limit: number) => memory.recentMessages(first.id, 'imported', limit).map((m) => m.content);
    assert.deepEqual(replayed(3), ['question two', 'answer two']);
    assert.deepEqual(replayed(5), ['question one', 'answer one', 'question two', 'answer two']);
    assert.deepEqual(
      replayed(6),
      ['question one', 'answer one', 'question two', 'answer two'],
      'the question left without its answer is not replayed: two questions in a row would follow',
    );
  });

  test('stored messages are replayed as whole turns: a role in a row joined, an answer first and a question last left out', () => {
    const m = (role: 'user' | 'assistant', content: string) => ({ role, content });
    assert.deepEqual(
      wholeTurns([
        m('assistant', 'an answer first'),
        m('assistant', 'and more of it'),
        m('user', 'one question'),
        m('user', 'and another'),
        m('assistant', 'an answer'),
        m('assistant', 'in two parts'),
        m('user', 'a question'),
        m('assistant', 'its answer'),
        m('user', 'never answered'),
        m('user', 'still not'),
      ]),
      [
        m('user', 'one question\n\nand another'),
        m('assistant', 'an answer\n\nin two parts'),
        m('user', 'a question'),
        m('assistant', 'its answer'),
      ],
    );
    assert.deepEqual(wholeTurns([m('user', 'only a question')]), []);
    assert.deepEqual(wholeTurns([m('assistant', 'only an answer')]), []);
    assert.deepEqual(wholeTurns([]), []);
  });

  test('an end that is not recorded adds no turn and no session', async () => {
    const { first, runs, memory, start, succeeded } = await setUp();
    const run = start(first.id, 'never', 'question');
    assert.equal(runs.finishRun(run, { ...succeeded(''), status: 'cancelled', output: null }, null), true);
    assert.equal(runs.finishRun(run, succeeded('too late'), { agentId: first.id, sessionId: 'never' }), false);
    assert.equal(memory.getSession(first.id, 'never'), undefined);
  });

  test("a deleted session's number, taken again by another agent's session, shows none of the old turns", async () => {
    const { first, second, runs, memory, start, succeeded, contents } = await setUp();
    const old = start(first.id, 'newest', 'old question');
    assert.equal(runs.finishRun(old, succeeded('old answer'), { agentId: first.id, sessionId: 'newest' }), true);
    const oldSeq = memory.seqOfSession(first.id, 'newest');
    assert.equal(memory.deleteSession(first.id, 'newest'), true);
    const fresh = start(second.id, 'fresh', 'new question');
    assert.equal(runs.finishRun(fresh, succeeded('new answer'), { agentId: second.id, sessionId: 'fresh' }), true);
    assert.equal(memory.seqOfSession(second.id, 'fresh'), oldSeq, 'SQLite gave the new session the deleted one’s number');
    assert.deepEqual(contents(second.id, 'fresh'), ['new question', 'new answer']);
    assert.deepEqual(memory.recentMessages(second.id, 'fresh', 20).length, 2);
    assert.equal(memory.getSession(second.id, 'fresh')?.messages, 2);
    assert.equal(memory.getSession(first.id, 'newest'), undefined);
  });
});

/** Opens GET /runs/{id}/events; what it returns reads the stream to its end (failing past `ms`) as its events. */
async function openLog(service: TestService, token: string, runId: string, ms = 5000) {
  const response = await fetch(`${service.url}/api/v1/runs/${runId}/events`, {
    headers: { Authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(ms + 3000),
  });
  assert.equal(response.status, 200);
  return () => within(ms, `the log of run ${runId}`, response.text()).then(events);
}

describe('a waiting run whose agent is deleted before its turn', () => {
  /** A service running one run at a time per user, its user, and `takeSlot`, which starts a run that holds the slot until it is freed. */
  async function oneSlot() {
    const service = await startService({ runs: runsConfig({ concurrencyPerUser: 1 }) });
    const user = await service.signUp();
    const llm = { provider: 'openai-compatible', model: 'm', baseUrl: fake.url };
    const busy = await service.create(user.token, '/agents', { name: 'busy', type: 'VENDOR_A', llm });
    async function takeSlot() {
      fake.reply({ hang: true });
      const count = fake.requests.length;
      const started = await service.request('POST', `/api/v1/agents/${busy.id}/invoke`, {
        token: user.token,
        body: { input: 'takes the slot', background: true },
      });
      assert.equal(started.body.data.status, 'running');
      await waitFor('the model call', () => fake.requests.length > count);
      // Cancelling it frees the slot: the turn of the run queued first comes.
      return async () =>
        assert.equal((await service.request('POST', `/api/v1/runs/${started.body.data.runId}/cancel`, { token: user.token })).status, 200);
    }
    return { service, user, llm, busy, takeSlot };
  }

  test('a queued background run: its follower is told not_found when its turn comes, and the log forgets it', async () => {
    const { service, user, llm, busy, takeSlot } = await oneSlot();
    const agent = await service.create(user.token, '/agents', { name: 'deleted', type: 'VENDOR_A', llm });
    const freeSlot = await takeSlot();
    const queued = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, {
      token: user.token,
      body: { input: 'waits', background: true },
    });
    assert.equal(queued.body.data.status, 'queued');
    const runId = queued.body.data.runId as string;
    const read = await openLog(service, user.token, runId);
    assert.equal((await service.request('DELETE', `/api/v1/agents/${agent.id}`, { token: user.token })).status, 200);
    await freeSlot();

    const got = await read();
    assert.deepEqual(
      got.map((event) => event.event),
      ['run', 'error'],
    );
    assert.equal(JSON.parse(got[1].data).code, 'not_found');
    assert.equal(service.app.eventLog.isLive(runId), false);
    // The slot it was given is free again.
    fake.reply({ text: 'next' });
    const next = await service.request('POST', `/api/v1/agents/${busy.id}/invoke`, { token: user.token, body: { input: 'next' } });
    assert.equal(next.status, 200, next.text);
  });

  test('an answered run queued for a slot: its follower is told not_found when its turn comes, and the log forgets it', async () => {
    const { service, user, llm, busy, takeSlot } = await oneSlot();
    const agent = await service.create(user.token, '/agents', { name: 'deleted', type: 'VENDOR_A', llm });
    const tool = await service.create(user.token, '/tools', {
      name: 'launch',
      type: 'HOSTED_MODEL',
      description: 'Never called: the run does not go on.',
      metadata: { url: 'http://127.0.0.1:9/launch' },
    });
    await service.create(user.token, '/agent-tools', { agentId: agent.id, toolId: tool.id, requiresApproval: true });
    fake.reply({ toolCalls: [{ id: 'call_1', name: tool.name, arguments: '{"input":"x"}' }] });
    const paused = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'go' } });
    assert.equal(paused.status, 202, paused.text);
    const runId = paused.body.data.runId as string;
    // Waiting, it gave up its slot; answered while another run holds it, it waits `queued`.
    const freeSlot = await takeSlot();
    const answered = await service.request('POST', `/api/v1/runs/${runId}/actions`, {
      token: user.token,
      body: { actions: [{ id: paused.body.data.actions[0].id, approve: true }] },
    });
    assert.equal(answered.body.data.status, 'queued');
    const read = await openLog(service, user.token, runId);
    assert.equal((await service.request('DELETE', `/api/v1/agents/${agent.id}`, { token: user.token })).status, 200);
    await freeSlot();

    const got = await read();
    assert.equal(got.at(-2)!.event, 'requires_action');
    assert.equal(got.at(-1)!.event, 'error');
    assert.equal(JSON.parse(got.at(-1)!.data).code, 'not_found');
    assert.equal(service.app.eventLog.isLive(runId), false);
    fake.reply({ text: 'next' });
    const next = await service.request('POST', `/api/v1/agents/${busy.id}/invoke`, { token: user.token, body: { input: 'next' } });
    assert.equal(next.status, 200, next.text);
  });
});

describe('an agent deleted while its run is about to wait for approval', () => {
  test('a plain invoke answers 404 as a run that succeeds after the deletion does, not 500; its log ends', async () => {
    // A tool that answers only when the test lets it: the agent is deleted while it works.
    const calls: (() => void)[] = [];
    const toolServer = http.createServer((req, res) => {
      req.resume();
      calls.push(() => res.end('done'));
    });
    await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve));
    after(() => toolServer.close());
    const url = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}/work`;

    const service = await startService({ runs: runsConfig() });
    const user = await service.signUp();
    const agent = await service.create(user.token, '/agents', {
      name: 'a',
      type: 'VENDOR_A',
      llm: { provider: 'openai-compatible', model: 'm', baseUrl: fake.url },
    });
    const tool = async (name: string, requiresApproval: boolean) => {
      const made = await service.create(user.token, '/tools', { name, type: 'HOSTED_MODEL', description: name, metadata: { url } });
      await service.create(user.token, '/agent-tools', { agentId: agent.id, toolId: made.id, requiresApproval });
      return made.name as string;
    };
    const [slow, guarded] = [await tool('slow', false), await tool('guarded', true)];
    fake.reply({
      toolCalls: [
        { id: 'call_1', name: slow, arguments: '{"input":"1"}' },
        { id: 'call_2', name: guarded, arguments: '{"input":"2"}' },
      ],
    });
    const pending = service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'go' } });
    await waitFor('the slow tool is called', () => calls.length > 0);
    const runId = (await service.request('GET', `/api/v1/agents/${agent.id}/runs`, { token: user.token })).body.data[0].id as string;
    assert.equal((await service.request('DELETE', `/api/v1/agents/${agent.id}`, { token: user.token })).status, 200);
    calls[0]();

    const reply = await pending;
    assertNotFound(reply);
    assert.equal(errorOf(reply).message, 'Agent not found.');
    assert.equal(service.app.eventLog.isLive(runId), false, 'its log, which said it waits, was ended');
  });
});
