// The benchmark's open-loop load generator (scripts/bench/paced-client.ts), in its child process:
// it sends every request of the settling and the measured seconds, its bodies whole, and reports
// only the measured ones, sorted by whether the answer had the expected status.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pacedClientInChild } from '../scripts/bench/processes.js';

test('the paced client sends the settling and the measured requests and reports the measured ones', async () => {
  const received: { method: string; url: string; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (part: string) => (body += part));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, body });
      res.statusCode = req.url === '/fails' ? 500 : 200;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
  const { port } = server.address() as AddressInfo;

  const generator = await pacedClientInChild({
    url: `http://127.0.0.1:${port}`,
    requests: [
      { method: 'GET', path: '/ok' },
      { method: 'POST', path: '/ok', headers: { 'content-type': 'application/json' }, body: '{"name":"é"}' },
      { method: 'GET', path: '/fails' },
    ],
    expectStatus: 200,
    rate: 300,
    seconds: 0.5,
    settleSeconds: 0.2,
  });
  let measuringAt: number | undefined;
  const outcome = await generator.run(() => (measuringAt = received.length));

  // 60 settling requests (0.2 s at 300/s), then 150 measured: indexes 60-209, a third of them /fails.
  assert.equal(received.length, 210);
  assert.equal(outcome.latencies.length + outcome.non2xx, 150);
  assert.equal(outcome.non2xx, 50);
  assert.equal(outcome.errors, 0);
  assert.ok(
    outcome.latencies.every((ms) => ms > 0 && ms < 5_000),
    'every latency is a duration in ms',
  );
  // Told during the run (the server in this process sees some requests before and after it).
  assert.ok(
    measuringAt !== undefined && measuringAt > 0 && measuringAt < 210,
    `told when the measured part began (after ${measuringAt} requests)`,
  );
  assert.ok(outcome.endedAt - outcome.startedAt >= 450, 'the measured part lasts its 0.5 s');
  assert.deepEqual(
    received.find((r) => r.method === 'POST'),
    { method: 'POST', url: '/ok', body: '{"name":"é"}' },
  );
});

test('a paced run with no measured request is refused instead of never finishing', { timeout: 10_000 }, async () => {
  const job = { url: 'http://127.0.0.1:9', requests: [{ method: 'GET', path: '/' }], expectStatus: 200, rate: 100, settleSeconds: 0.2 };
  for (const seconds of [0, 0.004]) {
    await assert.rejects(
      pacedClientInChild({ ...job, seconds }).then((g) => g.run(() => {})),
      /at least one measured request/,
    );
  }
});
