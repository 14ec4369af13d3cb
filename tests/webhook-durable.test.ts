// A run's end reaches the webhook dispatcher once it is on disk: the end is committed without an
// fsync and synced on the thread pool, and the delivery waits for that sync, so it neither competes
// with it nor tells a receiver of an end a power cut could still take back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { closeDatabase, openDatabase } from '../src/db.js';
import { createStores } from '../src/stores.js';
import { createSealer } from '../src/lib/secrets.js';
import { CreateAgentSchema } from '../src/agents/schema.js';
import { subscribeWebhookEvents } from '../src/webhooks/events.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-webhook-durable-'));
const db = openDatabase(join(dir, 'webhooks.db'));
const stores = createStores(db, createSealer(randomBytes(32)), { allowPrivateNetworks: true });
test.after(() => {
  closeDatabase(db);
  rmSync(dir, { recursive: true, force: true });
});

test("a run's end wakes the dispatcher after its sync, not when it is committed", async () => {
  const user = stores.users.create({ email: 'durable@example.com', name: 'durable', passwordHash: 'x' });
  const agent = stores.agents.create(
    user.id,
    v.parse(CreateAgentSchema, { name: 'worker', type: 'VENDOR_A', llm: { provider: 'openai', model: 'gpt-4o-mini' } }),
  );
  stores.webhooks.create(user.id, { url: 'http://127.0.0.1:9/hook', events: ['*'], description: 'receiver' });
  let wakes = 0;
  subscribeWebhookEvents({ ...stores, wake: () => (wakes += 1) });

  for (const status of ['succeeded', 'failed'] as const) {
    const started = stores.runs.startRun({
      userId: user.id,
      agentId: agent.id,
      parentRunId: null,
      sessionId: null,
      input: 'hi',
      model: 'm',
    });
    assert.ok(started);
    const before = wakes;
    let wakesWhenCommitted = -1;
    const end = {
      status,
      output: status === 'succeeded' ? 'done' : null,
      error: null,
      steps: [],
      sources: [],
      warnings: [],
      usage: null,
      ms: 1,
    };
    const changed = await stores.runs.finishRunSoon(started.id, end, null, () => (wakesWhenCommitted = wakes));
    assert.equal(changed, true);
    assert.equal(wakesWhenCommitted, before, `run.${status}: not woken while the end is committed but not yet synced`);
    assert.equal(wakes, before + 1, `run.${status}: woken once the end is on disk`);
    assert.equal(stores.webhooks.pendingUsers().length, 1, 'the delivery is in the outbox');
  }
});
