// src/lib/semaphore.ts: what keeps password hashing from taking every core (HASH_CONCURRENCY).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Semaphore } from '../src/lib/semaphore.js';

async function peakConcurrency(semaphore: Semaphore, tasks: number): Promise<{ peak: number; order: number[] }> {
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  await Promise.all(
    Array.from({ length: tasks }, (_, i) =>
      semaphore.run(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(i);
        running -= 1;
      }),
    ),
  );
  return { peak, order };
}

test('at most `limit` tasks run at once, in the order they asked', async () => {
  const one = await peakConcurrency(new Semaphore(1), 6);
  assert.equal(one.peak, 1);
  assert.deepEqual(one.order, [0, 1, 2, 3, 4, 5]);
  assert.equal((await peakConcurrency(new Semaphore(3), 9)).peak, 3);
});

test('a failing task frees its slot', async () => {
  const semaphore = new Semaphore(1);
  await assert.rejects(
    semaphore.run(async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(await semaphore.run(async () => 'next'), 'next');
});

test('setLimit raises the limit for waiting tasks', async () => {
  const semaphore = new Semaphore(1);
  semaphore.setLimit(4);
  assert.equal((await peakConcurrency(semaphore, 8)).peak, 4);
});

test('tasks given with behind wait until no other task waits', async () => {
  const semaphore = new Semaphore(1);
  const order: string[] = [];
  const task = (name: string) => async () => {
    order.push(name);
    await new Promise((resolve) => setTimeout(resolve, 2));
  };
  await Promise.all([
    semaphore.run(task('first')),
    semaphore.run(task('late 1'), { behind: true }),
    semaphore.run(task('late 2'), { behind: true }),
    semaphore.run(task('second')),
  ]);
  assert.deepEqual(order, ['first', 'second', 'late 1', 'late 2']);
  assert.equal(semaphore.waitingCount(true), 0);
});

test('waiting tasks are served round-robin by key, each key its own tasks in order', async () => {
  const semaphore = new Semaphore(1);
  const order: string[] = [];
  const task = (name: string) => async () => {
    order.push(name);
    await new Promise((resolve) => setTimeout(resolve, 2));
  };
  await Promise.all([
    semaphore.run(task('a1'), { key: 'a' }),
    semaphore.run(task('a2'), { key: 'a' }),
    semaphore.run(task('a3'), { key: 'a' }),
    semaphore.run(task('a4'), { key: 'a' }),
    semaphore.run(task('b1'), { key: 'b' }),
    semaphore.run(task('c1'), { key: 'c' }),
    semaphore.run(task('b2'), { key: 'b' }),
  ]);
  assert.deepEqual(order, ['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4']);
});

test('ahead: what a new task of a key waits for, its own key and the others apart', async () => {
  const semaphore = new Semaphore(1);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const tasks = [
    semaphore.run(() => held, { key: 'a' }), // runs
    ...['a', 'a', 'a', 'b', 'c'].map((key) => semaphore.run(() => held, { key })),
    semaphore.run(() => held, { key: 'a', behind: true }),
  ];
  assert.deepEqual(semaphore.ahead({ key: 'a' }), { own: 3, others: 2, otherTurns: 2 });
  assert.deepEqual(semaphore.ahead({ key: 'b' }), { own: 1, others: 3, otherTurns: 2 });
  assert.deepEqual(semaphore.ahead({ key: 'd' }), { own: 0, others: 3, otherTurns: 3 });
  // Behind: the whole first line first.
  assert.deepEqual(semaphore.ahead({ key: 'd', behind: true }), { own: 0, others: 6, otherTurns: 6 });
  release();
  await Promise.all(tasks);
});
