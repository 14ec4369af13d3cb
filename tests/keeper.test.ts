// The keeper of what a tool opened for one run and the next may use again (an MCP server's client).
import assert from 'node:assert/strict';
import { afterEach, beforeEach, mock, test } from 'node:test';
import { createKeeper, type KeeperOptions } from '../src/tools/runtime/keeper.js';

// The clock is the test's: `pass(ms)` moves it on and fires the timers due; `settled()` lets the closes (promises) run.
beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
afterEach(() => mock.timers.reset());
const pass = (ms: number) => mock.timers.tick(ms);
const settled = () => new Promise((resolve) => setImmediate(resolve));

/** A keeper, and the names of the things it closed, in order. */
function keeperOf(options: Partial<KeeperOptions> = {}) {
  const closed: string[] = [];
  const keeper = createKeeper({ idleMs: 60_000, maxAgeMs: 60_000, max: 8, ...options });
  const keep = (key: string, name = key) => keeper.keep(key, name, async () => void closed.push(name));
  return { keeper, keep, closed };
}

test('a thing given back is taken by the next run, and closed by no one meanwhile', () => {
  const { keeper, keep, closed } = keeperOf();
  assert.equal(keeper.take('a'), undefined, 'nothing kept yet');
  keep('a').release();
  const again = keeper.take<string>('a');
  assert.equal(again?.value, 'a');
  again.release();
  assert.equal(keeper.take('b'), undefined, 'another key has nothing');
  assert.deepEqual(closed, []);
});

test('several runs hold one thing at once: discarded, it is closed when the last gives it back, and taken by no one', async () => {
  const { keeper, keep, closed } = keeperOf();
  const first = keep('a');
  const second = keeper.take<string>('a')!;
  second.discard();
  assert.equal(keeper.take('a'), undefined, 'no run takes a discarded thing');
  first.release();
  assert.deepEqual(closed, [], 'still held');
  second.release();
  second.release();
  await settled();
  assert.deepEqual(closed, ['a'], 'closed once, when the last holder gave it back');
});

test('a thing idle for idleMs is closed; one taken again before that is not', async () => {
  const { keeper, keep, closed } = keeperOf({ idleMs: 50 });
  keep('a').release();
  keep('b').release();
  pass(30);
  keeper.take('a')!.release();
  pass(35);
  assert.deepEqual(closed, ['b'], 'b was idle 65 ms, a 35');
  pass(40);
  assert.deepEqual(closed, ['b', 'a']);
  assert.equal(keeper.take('a'), undefined);
});

test('a thing maxAgeMs old is handed out no more, and closed', async () => {
  const { keeper, keep, closed } = keeperOf({ maxAgeMs: 30 });
  const held = keep('a');
  pass(40);
  held.release();
  await settled();
  assert.deepEqual(closed, ['a'], 'given back too old: closed at once');
  keep('b').release();
  pass(40);
  assert.equal(keeper.take('b'), undefined, 'too old to be taken');
  await settled();
  assert.deepEqual(closed, ['a', 'b']);
});

test('past max things the least recently taken is closed; keeping under a key in use discards the one before', async () => {
  const { keeper, keep, closed } = keeperOf({ max: 2 });
  keep('a').release();
  keep('b').release();
  keeper.take('a')!.release();
  keep('c').release();
  await settled();
  assert.deepEqual(closed, ['b'], 'b was taken least recently');
  keep('a', 'a2').release();
  await settled();
  assert.deepEqual(closed, ['b', 'a'], 'the new one under a replaces the old');
  assert.equal(keeper.take<string>('a')?.value, 'a2');
});

test('closing the keeper closes what it keeps; a thing kept after is closed when given back', async () => {
  const { keeper, keep, closed } = keeperOf();
  keep('a').release();
  const held = keep('b');
  keeper.close();
  await settled();
  assert.deepEqual(closed, ['a'], 'b is still held');
  held.release();
  keep('c').release();
  await settled();
  assert.deepEqual(closed, ['a', 'b', 'c']);
  assert.equal(keeper.take('c'), undefined);
});
