// Durable runs survive a crash: the real process is killed with SIGKILL while 50 background runs
// are under way (about half streaming slowly, the rest queued behind RUN_CONCURRENCY_PER_USER), and
// a few more wait for a tool call's approval. Started again on the same file, no run is left
// `queued` or `running` (each ended `failed`, interrupted), every run's log ends with its end event
// (`error` for those), the waiting runs still wait and finish once approved, and SQLite finds the
// file intact.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { LOST_EVENTS_GAP } from '../src/runs/event-log.js';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { waitFor, type Json } from './helpers.js';
import { startServiceProcess, type ServiceProcess } from './run-script.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-durable-runs-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const databasePath = join(dir, 'service.db');
const env = {
  DATABASE_PATH: databasePath,
  ALLOW_PRIVATE_NETWORKS: 'on',
  PASSWORD_HASH_COST: 'test',
  NODE_ENV: 'test',
  RUN_CONCURRENCY_PER_USER: '12',
};

/** Runs per user, and users: 50 runs, 24 of them running (12 a user), the others queued. */
const RUNS_PER_USER = 25;
const USERS = 2;
const WAITING = 3;

const fake = await startFakeOpenAI();
// Every run streams slowly: a piece every 300 ms, far longer than the test lets it run.
const slowChunks = Array.from({ length: 60 }, (_, k) => `piece ${k} `);
fake.setDefault({ text: slowChunks.join(''), chunks: slowChunks, chunkDelayMs: 300 });

// What the search tool of the waiting runs answers once approved.
const searchServer = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ results: [{ title: 'WAL', url: 'https://example.com/wal', content: 'Write-ahead logging.' }] }));
});
await new Promise<void>((resolve) => searchServer.listen(0, '127.0.0.1', resolve));
after(() => searchServer.close());

interface SseEvent {
  id: number;
  event: string;
  data: Json;
}

/** A run's whole log (GET /runs/{id}/events, which ends once the run has ended). */
async function eventsOf(service: ServiceProcess, token: string, runId: string): Promise<SseEvent[]> {
  const response = await fetch(`${service.url}/api/v1/runs/${runId}/events`, { headers: { Autorization: `Bearer ${token}` } });
  assert.equal(response.status, 200);
  return (await response.text())
    .split('\n\n')
    .filter((block) => block.includes('event: '))
    .map((block) => ({
      id: Number(/^id: (\d+)$/m.exec(block)?.[1]),
      event: /^event: (.*)$/m.exec(block)![1],
      data: JSON.parse(
        block
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .join('\n'),
      ),
    }));
}

const runOf = async (service: ServiceProcess, token: string, runId: string) =>
  (await service.request('GET', `/api/v1/runs/${runId}`, { token })).body.data;

/** An agent of the user's on the fake model. */
const agentFor = (service: ServiceProcess, token: string, name: string) =>
  service.create(token, '/agents', {
    name,
    type: 'VENDOR_A',
    llm: { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: 'sk-durable-0123456789' },
    hasMemory: false,
  });

const backgroundInvoke = async (service: ServiceProcess, token: string, agentId: string, input: string) => {
  const reply = await service.request('POST', `/api/v1/agents/${agentId}/invoke`, { token, body: { input, background: true } });
  assert.equal(reply.status, 202, JSON.stringify(reply.body));
  return reply.body.data as { runId: string; status: string };
};

test('SIGKILL during 50 background runs: after a restart none is left queued or running, every log ends, the file is intact', async () => {
  const first = await startServiceProcess(env);
  // A few runs waiting for approval of a search call, on a user of their own.
  const approver = await first.signUp();
  const waiting: string[] = [];
  const agent = await agentFor(first, approver.token, 'Careful searcher');
  const tool = await first.create(approver.token, '/tools', {
    name: 'Web search',
    type: 'SEARCH',
    metadata: { url: `http://127.0.0.1:${(searchServer.address() as AddressInfo).port}` },
  });
  await first.create(approver.token, '/agent-tools', { agentId: agent.id, toolId: tool.id, requiresApproval: true });
  for (let k = 0; k < WAITING; k++) {
    fake.reply({ toolCalls: [{ id: `search-${k}`, name: 'web_search', arguments: '{"query":"sqlite wal"}' }] });
    const { runId } = await backgroundInvoke(first, approver.token, agent.id, `Look it up (${k})`);
    await waitFor('the run to wait for approval', async () =>
      (await runOf(first, approver.token, runId)).status === 'requires_action' ? true : undefined,
    );
    waiting.push(runId);
  }

  // 50 background runs: 12 a user start streaming, the others wait queued.
  const users = await Promise.all(Array.from({ length: USERS }, () => first.signUp()));
  const started: { runId: string; token: string; status: string }[] = [];
  const requestsBefore = fake.requests.length;
  for (const [u, user] of users.entries()) {
    const agent = await agentFor(first, user.token, `Storyteller ${u}`);
    for (let k = 0; k < RUNS_PER_USER; k++) {
      const { runId, status } = await backgroundInvoke(first, user.token, agent.id, `Tell story ${k}`);
      started.push({ runId, token: user.token, status });
    }
  }
  assert.equal(started.length, 50);
  assert.equal(started.filter((run) => run.status === 'queued').length, 26, 'beyond 12 a user, runs wait queued');
  // Every running run is streaming, and its first pieces are written to its log (written every 200 ms).
  await fake.waitForRequests(requestsBefore + 24);
  await new Promise((resolve) => setTimeout(resolve, 800));
  const before = await Promise.all(started.map((run) => runOf(first, run.token, run.runId)));
  assert.deepEqual(
    before.map((run) => run.status).sort(),
    [...Array(26).fill('queued'), ...Array(24).fill('running')],
    'half running, half queued at the kill',
  );

  first.child.kill('SIGKILL');
  await first.exited;
  assert.equal(first.child.signalCode, 'SIGKILL');

  const second = await startServiceProcess(env);
  const unended: string[] = [];
  for (const [k, run] of started.entries()) {
    const now = await runOf(second, run.token, run.runId);
    if (now.status !== 'failed' || !/interrupted/.test(now.error ?? '')) unended.push(`${run.runId}: ${now.status} ${now.error}`);
    const events = await eventsOf(second, run.token, run.runId);
    // Numbered 1, 2, 3 … up to its end, which is numbered past LOST_EVENTS_GAP: events the crash kept
    // from the file may have reached a follower, who must still get the end after them.
    assert.deepEqual(
      events.slice(0, -1).map((e) => e.id),
      events.slice(0, -1).map((_, n) => n + 1),
      'the log is numbered 1, 2, 3 …',
    );
    assert.equal(events.at(-1)?.id, events.length + LOST_EVENTS_GAP, 'the end is numbered past the events a crash may have lost');
    const end = events.at(-1);
    assert.equal(end?.event, 'error', `the log of run ${run.runId} ends with its error`);
    assert.equal(end?.data.code, 'interrupted');
    assert.equal(events.filter((e) => ['done', 'error', 'requires_action'].includes(e.event)).length, 1, 'one end event');
    // A run that was streaming kept what its log had written before the kill.
    if (before[k].status === 'running') {
      assert.equal(events[0].event, 'run', `run ${run.runId} starts with its run event`);
      const text = events
        .filter((e) => e.event === 'token')
        .map((e) => e.data.text)
        .join('');
      assert.ok(text.startsWith('piece 0 '), `run ${run.runId} kept its first pieces: ${JSON.stringify(text)}`);
    }
  }
  assert.deepEqual(unended, [], 'every run left queued or running ended failed, interrupted');

  // The runs waiting for approval still wait, and finish once approved.
  for (const runId of waiting) {
    const run = await runOf(second, approver.token, runId);
    assert.equal(run.status, 'requires_action', `run ${runId} still waits after the restart`);
    assert.equal(run.actions.length, 1);
    fake.reply({ text: 'WAL is write-ahead logging.' });
    const answered = await second.request('POST', `/api/v1/runs/${runId}/actions`, {
      token: approver.token,
      body: { actions: [{ id: run.actions[0].id, approve: true }] },
    });
    assert.equal(answered.status, 202, JSON.stringify(answered.body));
    const done = await waitFor('the approved run to finish', async () => {
      const now = await runOf(second, approver.token, runId);
      return ['succeeded', 'failed', 'cancelled'].includes(now.status) ? now : undefined;
    });
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.output, 'WAL is write-ahead logging.');
    const events = await eventsOf(second, approver.token, runId);
    const names = events.map((e) => e.event);
    assert.equal(names.at(-1), 'done');
    assert.ok(names.includes('requires_action'), 'the log passes the wait and goes on');
    assert.ok(names.indexOf('tool_result') > names.indexOf('requires_action'), 'the approved call was made after the wait');
  }

  assert.equal(await second.stop(), 0, second.stderrText());
  const db = new Database(databasePath, { readonly: true });
  try {
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  } finally {
    db.close();
  }
});
