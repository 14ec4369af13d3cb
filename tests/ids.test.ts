// Record ids: UUID v7 (the time first, then random), so that ids made later sort later.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../src/lib/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('an id is a UUID v7 whose first 48 bits are the time it was made', () => {
  const before = Date.now();
  const id = newId();
  const after = Date.now();
  assert.match(id, V7);
  const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  assert.ok(ms >= before && ms <= after, `${ms} within ${before}..${after}`);
});

test('ids are all different, and those of a later millisecond sort after the earlier ones', async () => {
  const first = Array.from({ length: 10_000 }, newId);
  assert.equal(new Set(first).size, first.length);
  for (const id of first) assert.match(id, V7);
  const startedAt = Date.now();
  while (Date.now() === startedAt) await new Promise((resolve) => setTimeout(resolve, 1));
  const later = newId();
  for (const id of first) assert.ok(id < later, `${id} sorts before ${later}`);
});
