// Webhook deliveries survive a SIGKILL: with the receiver down (it takes connections and never
// answers, so no attempt ends before the kill and none is put off by the schedule's 5 min second
// retry however slow the machine), 200 runs of the real service process finish (each one's delivery
// written in the transaction that ends it), the process is killed, the receiver comes up, and the
// restarted process delivers every one of the 200. Then a receiver that
// answers 500 and then 200 gets the same `webhook-id` twice, 5 s apart, and the log shows both.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { waitFor, type Json } from './helpers.js';
import { startServiceProcess } from './run-script.js';

const RUNS = 200;
const CLIENTS = 4; // a user runs at most 4 at once by default

const dir = mkdtempSync(join(tmpdir(), 'ams-webhook-crash-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const env = { DATABASE_PATH: join(dir, 'service.db'), ALLOW_PRIVATE_NETWORKS: 'on', NODE_ENV: 'test', PASSWORD_HASH_COST: 'test' };

/** A receiver that is down: it takes connections and never answers. Its port, and how to close it. */
async function deadReceiver(): Promise<{ port: number; close(): Promise<void> }> {
  const dead = http.createServer(() => {});
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
  return {
    port: (dead.address() as AddressInfo).port,
    close: async () => {
      dead.closeAllConnections();
      await new Promise((resolve) => dead.close(resolve));
    },
  };
}

test(`every one of ${RUNS} deliveries written while the receiver was down arrives after a SIGKILL and a restart`, async (t) => {
  const dead = await deadReceiver();
  const { port } = dead;
  const first = await startServiceProcess(env);
  const { token } = await first.signUp();
  const webhook = await first.create(token, '/webhooks', { url: `http://127.0.0.1:${port}/hook`, events: ['run.succeeded'] });
  const agent = await first.create(token, '/agents', { name: 'echo', type: 'VENDOR_A', llm: { provider: 'echo', model: 'parrot' } });

  const runIds: string[] = [];
  let next = 0;
  const client = async () => {
    while (next < RUNS) {
      const n = next++;
      const reply = await first.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token, body: { input: `run ${n}` } });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      runIds.push(reply.body.data.runId);
    }
  };
  const runsStarted = Date.now();
  await Promise.all(Array.from({ length: CLIENTS }, client));
  t.diagnostic(`${RUNS} runs took ${Date.now() - runsStarted} ms`);
  assert.equal(new Set(runIds).size, RUNS);
  first.child.kill('SIGKILL');
  await first.exited;
  assert.equal(first.child.signalCode, 'SIGKILL');
  await dead.close();

  // The receiver comes up. `failFirst`: ids whose first attempt it answers 500.
  const attemptsById = new Map<string, { body: string; headers: Record<string, string> }[]>();
  const failFirst = new Set<string>();
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const seen = attemptsById.get(id) ?? [];
      seen.push({ body, headers: req.headers as Record<string, string> });
      attemptsById.set(id, seen);
      res.writeHead(failFirst.has(id) && seen.length === 1 ? 500 : 200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve));
  after(() => {
    receiver.closeAllConnections();
    receiver.close();
  });

  const second = await startServiceProcess(env);
  await waitFor(`${RUNS} deliveries`, () => (attemptsById.size >= RUNS ? true : undefined), 60_000).catch(async (error) => {
    const rows = await second.listAll(token, `/webhooks/${webhook.id}/deliveries?limit=1000`);
    t.diagnostic(JSON.stringify({ arrived: attemptsById.size, rows: rows.length, sample: rows.slice(0, 2) }));
    throw error;
  });

  const verifier = new StandardWebhook(webhook.secret);
  const delivered = new Set<string>();
  for (const attempts of attemptsById.values()) {
    const events = attempts.map((attempt) => verifier.verify(attempt.body, attempt.headers) as Json);
    assert.ok(events.every((event) => event.type === 'run.succeeded' && event.data.id === events[0].data.id));
    delivered.add(events[0].data.id);
  }
  assert.deepEqual([...delivered].sort(), [...runIds].sort(), 'every run that finished was delivered, and nothing else');
  assert.equal(attemptsById.size, RUNS, 'one webhook-id per run');

  const log = await waitFor('the log to show them all delivered', async () => {
    const rows = await second.listAll(token, `/webhooks/${webhook.id}/deliveries?limit=1000`);
    return rows.length === RUNS && rows.every((row) => row.status === 'delivered') ? rows : undefined;
  });
  for (const delivery of log) {
    assert.ok(attemptsById.has(delivery.id), `${delivery.id} reached the receiver`);
    assert.equal(delivery.lastStatusCode, 200);
  }
  t.diagnostic(`attempts that timed out before the kill: ${log.reduce((sum, row) => sum + row.attempts - 1, 0)}`);

  // 500, then 200 at the first retry (about 5 s later): the same webhook-id twice, both in the log.
  const test = await second.request('POST', `/api/v1/webhooks/${webhook.id}/test`, { token });
  assert.equal(test.status, 202);
  failFirst.add(test.body.data.id);
  const [firstTry, retry] = await waitFor(
    'two attempts of the test event',
    () => {
      const attempts = attemptsById.get(test.body.data.id);
      return attempts && attempts.length >= 2 ? attempts : undefined;
    },
    20_000,
  );
  assert.equal(firstTry.headers['webhook-id'], retry.headers['webhook-id']);
  assert.equal(firstTry.body, retry.body);
  const [testDelivery] = await waitFor('the test delivery recorded', async () => {
    const rows = (await second.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries?limit=1`, { token })).body.data;
    return rows[0]?.status === 'delivered' ? rows : undefined;
  });
  assert.equal(testDelivery.id, test.body.data.id);
  assert.equal(testDelivery.attempts, 2);
  assert.equal(testDelivery.lastStatusCode, 200);
  assert.equal(await second.stop(), 0, `stderr: ${second.stderrText()}`);
});
