// A run's slot: given back as soon as its end is recorded (readers see it ended), while the run
// stays admitted until its end is on disk, so a shutdown still waits for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRunSlots } from '../src/runs/slots.js';

const LATER = Date.now() + 60_000;

test('freeSlot gives the user its slot back at once; the run stays admitted until release', async () => {
  const freed: string[] = [];
  const slots = createRunSlots(1, (userId) => freed.push(userId));
  const admission = slots.admit('u1', LATER);
  assert.equal(slots.hasRoom('u1'), false);
  assert.throws(() => slots.admit('u1', LATER), /Too many runs at once/);

  admission.freeSlot();
  assert.equal(slots.hasRoom('u1'), true, 'the slot is free once the end is recorded');
  assert.deepEqual(freed, ['u1'], 'the next queued run is told');
  const next = slots.admit('u1', LATER);

  let stopped = false;
  const stopping = slots.shutdown().then(() => (stopped = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(stopped, false, 'a shutdown waits for the run whose slot was freed');
  admission.release();
  admission.freeSlot();
  next.release();
  await stopping;
  assert.deepEqual(freed, ['u1'], 'the slot is given back once, and not to a service that is stopping');
});
