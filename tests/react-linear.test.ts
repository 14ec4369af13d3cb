// The ReAct parser reads the model's text in time proportional to its length: 1 MiB of each
// adversarial shape (tests/fixtures/react-adversary.ts) is read within a generous bound. The shapes
// run in a worker thread, so a parser that backtracks is stopped and reported instead of hanging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';

/** Far above what a linear reading of 1 MiB takes (milliseconds), far below a quadratic one (hours); generous, as the machine may be busy with other work. */
const BOUND_MS = 10_000;

test('1 MiB of adversarial ReAct text is parsed (whole and streamed) in linear time', async () => {
  // A worker does not inherit the test's TypeScript loader: it registers it before importing the shapes.
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const shapes = JSON.stringify(new URL('./fixtures/react-adversary.ts', import.meta.url).href);
  const worker = new Worker(`import(${tsx}).then((api) => { api.register(); return import(${shapes}); })`, { eval: true });
  const timings: { name: string; ms: number }[] = [];
  const finished = await new Promise<boolean>((resolve, reject) => {
    const timer = setTimeout(() => resolve(false), BOUND_MS * 4);
    worker.on('message', (message: { name: string; ms: number } | { done: true }) => {
      if ('done' in message) {
        clearTimeout(timer);
        resolve(true);
      } else timings.push(message);
    });
    worker.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  await worker.terminate();
  assert.ok(finished, `the parser did not finish; read in time: ${JSON.stringify(timings)}`);
  assert.equal(timings.length, 7);
  for (const { name, ms } of timings) assert.ok(ms < BOUND_MS, `${name}: ${Math.round(ms)} ms`);
});
