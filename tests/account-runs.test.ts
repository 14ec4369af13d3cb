// The runs of an account that is deleted or disabled stop with it: they no longer call the model
// server (with the account's API key) or its tools. Deleting the account through the API stops its
// runs at once; an account disabled (or deleted) by an admin script, another process, stops its
// runs at their next step, and its queued runs never start. A stopped run ends `cancelled` saying
// why, and its event log ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startService, testConfig, waitFor, type Json, type TestService } from './helpers.js';
import { startFakeOpenAI, type FakeOpenAI } from './fixtures/fake-openai.js';
import { runScript } from './run-script.js';
import type { ToolProvider } from '../src/lib/tool-contract.js';

const KEY = 'sk-account-runs-0123456789';

/** `promise`, or a failure naming `what` once `ms` have passed (so a wait that never ends fails the test). */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** A service running at most `running` runs per user (then `queued`), and an agent of a new user on the fake model. */
async function setUp(fake: FakeOpenAI, running: number, toolProvider?: ToolProvider) {
  const runs = { ...testConfig().runs, concurrencyPerUser: running, queuePerUser: 4 };
  const service = await startService({ runs }, undefined, toolProvider ? { toolProvider } : {});
  const owner = await service.signUp();
  const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: KEY };
  const agent = await service.create(owner.token, '/agents', { name: 'Busy', type: 'VENDOR_A', llm });
  const invoke = async (): Promise<Json> => {
    const reply = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, {
      token: owner.token,
      body: { input: 'work for a while', background: true },
    });
    assert.equal(reply.status, 202, JSON.stringify(reply.body));
    return reply.body.data;
  };
  return { service, owner, invoke };
}

/** Opens GET /runs/{id}/events; what it returns reads the stream to its end (failing past `ms`). */
async function openLog(service: TestService, token: string, runId: string, ms = 5000): Promise<() => Promise<string>> {
  const response = await fetch(`${service.url}/api/v1/runs/${runId}/events`, {
    headers: { Authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(ms + 3000),
  });
  assert.equal(response.status, 200);
  return () => within(ms, `the end of the log of run ${runId}`, response.text());
}

/** The `error` event that ends a log read to its end. */
function errorEnd(log: string): { code: string; message: string } {
  const blocks = log.split('\n\n').filter((block) => block.includes('data: '));
  const last = blocks.at(-1) ?? '';
  assert.match(last, /^event: error$/m, `the log ends with an error event: ${log}`);
  return JSON.parse(/^data: (.*)$/m.exec(last)![1]);
}

test('deleting the account through the API stops its running runs at once, and its queued runs never start', async () => {
  const fake = await startFakeOpenAI();
  fake.setDefault({ hang: true }); // the model never answers: only a stop ends a call
  const { service, owner, invoke } = await setUp(fake, 2);
  // The runs' logs go with the account, so nobody can read them over HTTP afterwards: what ends
  // each is seen where the event log sees it.
  const ends = new Map<string, Json>();
  service.app.runs.observe((run, event) => {
    if (event.name === 'done' || event.name === 'error') ends.set(run.runId, { name: event.name, ...event.data });
  });
  const started = [await invoke(), await invoke(), await invoke(), await invoke()];
  assert.deepEqual(
    started.map((run) => run.status),
    ['running', 'running', 'queued', 'queued'],
  );
  await within(5000, 'the two model calls', fake.waitForRequests(2));
  const calls = fake.requests.filter((request) => request.path.endsWith('/chat/completions'));
  assert.equal(calls.length, 2);
  assert.ok(calls.every((call) => call.headers.authorization === `Bearer ${KEY}`));

  const removal = await service.request('DELETE', '/api/v1/auth/me', { token: owner.token, body: { password: owner.password } });
  assert.equal(removal.status, 200, JSON.stringify(removal.body));
  // The model server sees both calls closed: the runs no longer use the account's key.
  await within(5000, 'the model calls closed', Promise.all(calls.map((call) => fake.waitForAbort(call))));
  // Their event logs end, the running runs' and the queued runs' alike, saying why.
  await waitFor('the end of every run', () => ends.size === started.length);
  for (const run of started) {
    const end = ends.get(run.runId)!;
    assert.equal(end.name, 'error', JSON.stringify(end));
    assert.equal(end.code, 'cancelled');
    assert.match(end.message, /account was deleted/);
  }
  // The slots the stopped runs gave back start nothing: the queued runs were ended with them.
  assert.equal((await service.request('GET', '/healthz')).status, 200);
  assert.equal(fake.requests.filter((request) => request.path.endsWith('/chat/completions')).length, 2);
  assert.equal(service.db.prepare('SELECT count(*) FROM agent_runs').pluck().get(), 0, 'the runs went with the account');
});

test('an account disabled by user:disable (another process) stops its runs at their next step; its queued runs never start', async () => {
  const fake = await startFakeOpenAI();
  // The run's first model call asks for the tool; what would come next is never asked for.
  fake.reply({ toolCalls: [{ name: 'wait_here', arguments: '{}' }] });
  fake.setDefault({ text: 'the run went on' });
  // A tool that holds the run's step until the test lets it go.
  let toolReached!: () => void;
  const reached = new Promise<void>((resolve) => (toolReached = resolve));
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => (letGo = resolve));
  let toolCalls = 0;
  const toolProvider: ToolProvider = async () => ({
    warnings: [],
    tools: [
      {
        name: 'wait_here',
        description: 'Waits until the test lets it go.',
        parameters: { type: 'object', properties: {} },
        toolId: 'wait-tool',
        toolName: 'Wait here',
        async call() {
          toolCalls += 1;
          toolReached();
          await held;
          return 'waited';
        },
      },
    ],
  });
  const { service, owner, invoke } = await setUp(fake, 1, toolProvider);
  const started = [await invoke(), await invoke(), await invoke()];
  assert.deepEqual(
    started.map((run) => run.status),
    ['running', 'queued', 'queued'],
  );
  await within(5000, 'the tool call', reached);
  const env = { DATABASE_PATH: service.config.databasePath };

  const disabled = await runScript('scripts/admin-user-disable.ts', ['--email', owner.email], env);
  assert.equal(disabled.code, 0, disabled.stderr);
  const modelCalls = fake.requests.length;
  letGo();
  const ids = started.map((run) => run.runId);
  const status = service.db.prepare(`SELECT status FROM agent_runs WHERE id = ?`).pluck();
  await waitFor('every run to end', () => ids.every((id) => !['queued', 'running'].includes(status.get(id) as string)), 10_000);
  assert.equal(fake.requests.length, modelCalls, 'no model call was made after the account was disabled');
  assert.equal(toolCalls, 1, 'no tool call either');

  // Enabled again, the owner reads what happened.
  const enabled = await runScript('scripts/admin-user-enable.ts', ['--email', owner.email], env);
  assert.equal(enabled.code, 0, enabled.stderr);
  for (const id of ids) {
    const run = (await service.request('GET', `/api/v1/runs/${id}`, { token: owner.token })).body.data;
    assert.equal(run.status, 'cancelled', JSON.stringify(run));
    assert.match(run.error, /account was disabled/);
    const end = errorEnd(await (await openLog(service, owner.token, id))());
    assert.equal(end.code, 'cancelled');
    assert.equal(end.message, run.error);
  }
});

test('a queued run of a disabled account does not start when a slot frees: it ends cancelled', async () => {
  const fake = await startFakeOpenAI();
  fake.setDefault({ hang: true });
  const { service, owner, invoke } = await setUp(fake, 1);
  const running = await invoke();
  const queued = await invoke();
  assert.deepEqual([running.status, queued.status], ['running', 'queued']);
  await within(5000, 'the model call', fake.waitForRequests(1));
  const env = { DATABASE_PATH: service.config.databasePath };
  const disabled = await runScript('scripts/admin-user-disable.ts', ['--email', owner.email], env);
  assert.equal(disabled.code, 0, disabled.stderr);
  // The running run's call takes no further step that would notice; stopping it (the disabled owner
  // cannot, so the engine is asked here) frees the slot the queued run waits for.
  assert.equal(await service.app.runs.cancel(owner.user.id, running.runId), 'cancelled');
  const status = service.db.prepare(`SELECT status FROM agent_runs WHERE id = ?`).pluck();
  await waitFor('the queued run to leave the queue', () => status.get(queued.runId) !== 'queued');
  assert.equal(fake.requests.length, 1, 'the queued run never called the model');

  assert.equal((await runScript('scripts/admin-user-enable.ts', ['--email', owner.email], env)).code, 0);
  const run = (await service.request('GET', `/api/v1/runs/${queued.runId}`, { token: owner.token })).body.data;
  assert.equal(run.status, 'cancelled', JSON.stringify(run));
  assert.match(run.error, /account was disabled/);
  const end = errorEnd(await (await openLog(service, owner.token, queued.runId))());
  assert.equal(end.code, 'cancelled');
});
