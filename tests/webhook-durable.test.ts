// A run's end reaches a webhook receiver only once it is on disk: the end is committed without an
// fsync and synced on the thread pool, and its deliveries are held until that sync has finished, so
// they neither compete with it nor tell a receiver of an end a power cut could still take back —
// even when the dispatcher is woken meanwhile for another reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { closeDatabase, openDatabase, walSyncer } from '../src/db.js';
import { createStores } from '../src/stores.js';
import { createRunStore } from '../src/runs/store.js';
import { createSealer } from '../src/lib/secrets.js';
import { silentLogger } from '../src/lib/log.js';
import { CreateAgentSchema } from '../src/agents/schema.js';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.js';
import { subscribeWebhookEvents } from '../src/webhooks/events.js';
import { succeededEnd } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-webhook-durable-'));
const db = openDatabase(join(dir, 'webhooks.db'));
const stores = createStores(db, createSealer(randomBytes(32)), { allowPrivateNetworks: true });
test.after(() => {
  closeDatabase(db);
  rmSync(dir, { recursive: true, force: true });
});

/** A user with an agent and a webhook on every event. */
function subscribedUser(email: string) {
  const user = stores.users.create({ email, name: email.split('@')[0], passwordHash: 'x' });
  const agent = stores.agents.create(
    user.id,
    v.parse(CreateAgentSchema, { name: 'worker', type: 'VENDOR_A', llm: { provider: 'openai', model: 'gpt-4o-mini' } }),
  );
  stores.webhooks.create(user.id, { url: 'http://127.0.0.1:9/hook', events: ['*'], description: 'receiver' });
  return { user, agent };
}

const endOf = (status: 'succeeded' | 'failed') =>
  status === 'succeeded' ? succeededEnd('done') : { ...succeededEnd(''), status, output: null };

test("a run's end's deliveries are held while the end is committed but not synced, and released after", async () => {
  const { user, agent } = subscribedUser('durable@example.com');
  const held = new Set<string>();
  let releases = 0;
  const runs = createRunStore(db, stores.memory);
  subscribeWebhookEvents({
    ...stores,
    runs,
    outbox: {
      wake: () => {},
      hold: (ids) => ids.forEach((id) => held.add(id)),
      release: (ids) => {
        ids.forEach((id) => held.delete(id));
        releases += 1;
      },
    },
  });

  for (const status of ['succeeded', 'failed'] as const) {
    const started = runs.startRun({ userId: user.id, agentId: agent.id, parentRunId: null, sessionId: null, input: 'hi', model: 'm' });
    assert.ok(started);
    const before = releases;
    let heldWhenCommitted = 0;
    let releasesWhenCommitted = -1;
    const changed = await runs.finishRunSoon(started.id, endOf(status), null, () => {
      heldWhenCommitted = held.size;
      releasesWhenCommitted = releases;
    });
    assert.equal(changed, true);
    assert.equal(heldWhenCommitted, 1, `run.${status}: its delivery is held while the end is committed but not yet synced`);
    assert.equal(releasesWhenCommitted, before, `run.${status}: not released before the sync`);
    assert.equal(releases, before + 1, `run.${status}: released once the end is on disk`);
    assert.equal(held.size, 0);
    assert.equal(stores.webhooks.pendingUsers().filter((p) => p.userId === user.id).length, 1, 'the delivery is in the outbox');
  }
});

test('a dispatcher woken while an end waits for its sync does not send that end, and sends it after the sync', async () => {
  const { user, agent } = subscribedUser('gated@example.com');
  // The WAL sync of the run store waits for the test to open the gate.
  const sync = walSyncer(db);
  let openGate = () => {};
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  const runs = createRunStore(db, stores.memory, () => gate.then(sync));
  const sent: string[] = [];
  const dispatcher = new WebhookDispatcher({
    store: stores.webhooks,
    log: silentLogger,
    allowPrivateNetworks: true,
    fetch: async (_url, init) => {
      sent.push((JSON.parse(String(init?.body)) as { data: { id: string } }).data.id);
      return new Response(null, { status: 204 });
    },
  });
  subscribeWebhookEvents({ ...stores, runs, outbox: dispatcher });
  dispatcher.start();
  try {
    const started = runs.startRun({ userId: user.id, agentId: agent.id, parentRunId: null, sessionId: null, input: 'hi', model: 'm' });
    assert.ok(started);
    let committed = false;
    const ended = runs.finishRunSoon(started.id, endOf('succeeded'), null, () => (committed = true));
    while (!committed) await new Promise((resolve) => setImmediate(resolve));
    // Woken for something else (a webhook enabled again, a document's ingestion) while the end waits for the disk.
    dispatcher.wake();
    await new Promise((resolve) => setTimeout(resolve, 50));
    // (What the first test left in the outbox is sent meanwhile: the dispatcher was woken.)
    assert.ok(!sent.includes(started.id), 'nothing is sent of an end not yet on disk');

    openGate();
    assert.equal(await ended, true);
    const deadline = Date.now() + 5_000;
    while (!sent.includes(started.id) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(sent.filter((id) => id === started.id).length, 1, 'sent once the end is on disk');
  } finally {
    await dispatcher.stop();
  }
});
