// Webhook deliveries end to end: real runs against the fake model and a receiver on 127.0.0.1; every
// delivery verified with the `standardwebhooks` package (the reference implementation), retries,
// the delivery log, and one user's dead endpoint never delaying another's.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { startService, testConfig, waitFor, type Json, type TestService } from './helpers.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

/** A receiver on 127.0.0.1: answers each request with the next scripted status (then 200), records them all. */
async function startReceiver() {
  /** `socket`: which of the receiver's connections the request came on (1, 2, …). */
  const seen: { path: string; headers: Record<string, string>; body: string; at: number; socket: number }[] = [];
  const sockets = new WeakMap<object, number>();
  let connections = 0;
  const script: (number | 'hang' | { redirect: string })[] = [];
  const server = http.createServer((req, res) => {
    if (!sockets.has(req.socket)) sockets.set(req.socket, ++connections);
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.method === 'GET') {
        // Documents to ingest, for the document events.
        if (req.url === '/doc.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('Aardvarks dig burrows at night.');
        else res.writeHead(404).end('not here');
        return;
      }
      seen.push({
        path: req.url ?? '',
        headers: req.headers as Record<string, string>,
        body,
        at: Date.now(),
        socket: sockets.get(req.socket)!,
      });
      const next = script.shift() ?? 200;
      if (next === 'hang') return;
      if (typeof next === 'object') {
        res.writeHead(302, { location: next.redirect }).end();
        return;
      }
      res.writeHead(next).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, script, server };
}

const fake = await startFakeOpenAI();
const receiver = await startReceiver();
// Retries come quickly here; the service's schedule is about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h.
const service: TestService = await startService({}, undefined, { webhookRetryDelaysMs: [100, 100] });
const llm = { provider: 'openai-compatible', model: 'fake-model', baseUrl: fake.url, apiKey: 'sk-fake' };

async function subscribe(token: string, events: string[], path = '/hooks', url = receiver.url) {
  const reply = await service.request('POST', '/api/v1/webhooks', { token, body: { url: `${url}${path}`, events } });
  assert.equal(reply.status, 201, JSON.stringify(reply.body));
  return reply.body.data as Json;
}

/** The requests the receiver got at `path`, once there are `count`; each verified with the reference implementation. */
async function received(path: string, secret: string, count = 1) {
  const got = await waitFor(`${count} request(s) at ${path}`, () => {
    const at = receiver.seen.filter((request) => request.path === path);
    return at.length >= count ? at : undefined;
  });
  return got.map((request) => ({ ...request, event: new StandardWebhook(secret).verify(request.body, request.headers) as Json }));
}

const deliveriesOf = async (token: string, webhookId: string) =>
  (await service.request('GET', `/api/v1/webhooks/${webhookId}/deliveries`, { token })).body.data as Json[];

const runOf = async (token: string, runId: string) => (await service.request('GET', `/api/v1/runs/${runId}`, { token })).body.data;

describe('run events', () => {
  test('run.succeeded: signed as Standard Webhooks says, data exactly as GET /runs/{id}; delivered once', async () => {
    const user = await service.signUp();
    const webhook = await subscribe(user.token, ['run.succeeded'], '/succeeded');
    const agent = await service.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm });
    fake.reply({ text: 'Done.' });
    const invoke = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'go' } });
    assert.equal(invoke.status, 200, JSON.stringify(invoke.body));
    const [request] = await received('/succeeded', webhook.secret);
    const runId = invoke.body.data.runId ?? invoke.body.data.id;
    assert.deepEqual(Object.keys(request.event).sort(), ['data', 'timestamp', 'type']);
    assert.equal(request.event.type, 'run.succeeded');
    assert.deepEqual(request.event.data, await runOf(user.token, request.event.data.id));
    assert.equal(request.event.data.output, 'Done.');
    if (typeof runId === 'string') assert.equal(request.event.data.id, runId);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.match(request.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
    assert.ok(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
    assert.throws(
      () => new StandardWebhook(webhook.secret).verify(request.body.replace('Done.', 'Dome.'), request.headers),
      'a changed body fails',
    );

    const [delivery] = await waitFor('the delivery recorded as delivered', async () => {
      const log = await deliveriesOf(user.token, webhook.id);
      return log[0]?.status === 'delivered' ? log : undefined;
    });
    assert.equal(delivery.id, request.headers['webhook-id']);
    assert.equal(delivery.event, 'run.succeeded');
    assert.equal(delivery.attempts, 1);
    assert.equal(delivery.lastStatusCode, 200);
    assert.equal(delivery.lastError, null);
    assert.equal(delivery.nextAttemptAt, null);
    assert.ok(delivery.deliveredAt);
  });

  test('run.failed, and a webhook not subscribed to an event gets no delivery of it', async () => {
    const user = await service.signUp();
    const failed = await subscribe(user.token, ['run.failed'], '/failed');
    const other = await subscribe(user.token, ['document.ready', 'run.cancelled'], '/never');
    const agent = await service.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm });
    fake.reply({ status: 500, message: 'the model fell over' });
    const invoke = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'go' } });
    assert.equal(invoke.status, 502);
    const [request] = await received('/failed', failed.secret);
    assert.equal(request.event.type, 'run.failed');
    assert.equal(request.event.data.status, 'failed');
    assert.deepEqual(request.event.data, await runOf(user.token, request.event.data.id));
    assert.deepEqual(await deliveriesOf(user.token, other.id), []);
    assert.equal(receiver.seen.filter((seen) => seen.path === '/never').length, 0);
  });

  test('deliveries one after another to one receiver share a kept-alive connection', async () => {
    const user = await service.signUp();
    const webhook = await subscribe(user.token, ['run.succeeded'], '/kept');
    const agent = await service.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm });
    for (let k = 1; k <= 3; k++) {
      fake.reply({ text: `Done ${k}.` });
      const invoke = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: user.token, body: { input: 'go' } });
      assert.equal(invoke.status, 200, JSON.stringify(invoke.body));
      await received('/kept', webhook.secret, k);
      await waitFor(`delivery ${k} recorded`, async () =>
        (await deliveriesOf(user.token, webhook.id)).filter((d) => d.status === 'delivered').length === k ? true : undefined,
      );
    }
    const requests = receiver.seen.filter((request) => request.path === '/kept');
    assert.equal(requests.length, 3);
    assert.deepEqual(
      requests.map((request) => request.socket),
      requests.map(() => requests[0].socket),
      'all three on the connection of the first',
    );
  });

  test('run.cancelled: a streamed run whose client disconnects', async () => {
    const user = await service.signUp();
    const webhook = await subscribe(user.token, ['*'], '/cancelled');
    const agent = await service.create(user.token, '/agents', { name: 'a', type: 'VENDOR_A', llm });
    fake.reply({ hangAfter: ['thinking '] });
    const controller = new AbortController();
    const response = await fetch(`${service.url}/api/v1/agents/${agent.id}/invoke`, {
      method: 'POST',
      headers: { Autorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'long', stream: true }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes('event: token')) text += Buffer.from((await reader.read()).value!).toString();
    controller.abort();
    const [request] = await received('/cancelled', webhook.secret);
    assert.equal(request.event.type, 'run.cancelled');
    assert.deepEqual(request.event.data, await runOf(user.token, request.event.data.id));
    assert.equal(request.event.data.status, 'cancelled');
  });
});

describe('retries and failures', () => {
  test('500 then 200: the same webhook-id twice, the log shows both attempts', async () => {
    const user = await service.signUp();
    const webhook = await subscribe(user.token, ['*'], '/flaky');
    receiver.script.push(500);
    assert.equal((await service.request('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: user.token })).status, 202);
    const [first, second] = await received('/flaky', webhook.secret, 2);
    assert.equal(first.headers['webhook-id'], second.headers['webhook-id']);
    assert.equal(first.body, second.body, 'the same body on every attempt');
    assert.equal(second.event.type, 'webhook.test');
    const [delivery] = await waitFor('delivered', async () => {
      const log = await deliveriesOf(user.token, webhook.id);
      return log[0]?.status === 'delivered' ? log : undefined;
    });
    assert.equal(delivery.id, first.headers['webhook-id']);
    assert.equal(delivery.attempts, 2);
    assert.equal(delivery.lastStatusCode, 200);
  });

  test('a receiver that keeps failing: tried once plus once per delay, then failed with the last error', async () => {
    const user = await service.signUp();
    const webhook = await subscribe(user.token, ['*'], '/down');
    receiver.script.push(503, 503, 503);
    await service.request('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: user.token });
    const [delivery] = await waitFor('failed', async () => {
      const log = await deliveriesOf(user.token, webhook.id);
      return log[0]?.status === 'failed' ? log : undefined;
    });
    assert.equal(delivery.attempts, 3);
    assert.equal(delivery.lastStatusCode, 503);
    assert.equal(delivery.lastError, 'the receiver answered 503');
    assert.equal(delivery.nextAttemptAt, null);
    assert.equal(delivery.deliveredAt, null);
    assert.equal(receiver.seen.filter((seen) => seen.path === '/down').length, 3);
  });

  test('a pending delivery shows when it is tried next; a refused connection is its error', async () => {
    const slow = await startService({}, undefined, { webhookRetryDelaysMs: [60_000] });
    const user = await slow.signUp();
    const reply = await slow.request('POST', '/api/v1/webhooks', {
      token: user.token,
      body: { url: 'http://127.0.0.1:9/closed', events: ['*'] },
    });
    await slow.request('POST', `/api/v1/webhooks/${reply.body.data.id}/test`, { token: user.token });
    const [delivery] = await waitFor('one failed attempt', async () => {
      const log = (await slow.request('GET', `/api/v1/webhooks/${reply.body.data.id}/deliveries`, { token: user.token })).body.data;
      return log[0]?.attempts === 1 ? log : undefined;
    });
    assert.equal(delivery.status, 'pending');
    assert.equal(delivery.lastStatusCode, null);
    assert.match(delivery.lastError, /could not connect to 127\.0\.0\.1:9: connection refused/);
    const wait = Date.parse(delivery.nextAttemptAt) - Date.now();
    assert.ok(wait > 50_000 && wait <= 60_000, `tried again in about 60 s: ${wait}`);
  });

  test('a redirect is not followed: the attempt fails', async () => {
    const user = await service.signUp();
    const webhook = await subscribe(user.token, ['*'], '/moved');
    receiver.script.push({ redirect: '/elsewhere' }, { redirect: '/elsewhere' }, { redirect: '/elsewhere' });
    await service.request('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: user.token });
    const [delivery] = await waitFor('failed', async () => {
      const log = await deliveriesOf(user.token, webhook.id);
      return log[0]?.status === 'failed' ? log : undefined;
    });
    assert.equal(delivery.lastStatusCode, 302);
    assert.match(delivery.lastError, /redirect, which is not followed/);
    assert.equal(receiver.seen.filter((seen) => seen.path === '/elsewhere').length, 0);
  });

  test('a webhook whose deliveries all failed for 5 days is disabled and says why; enabling it clears that', async () => {
    const user = await service.signUp();
    const webhook = await subscribe(user.token, ['*'], '/dead');
    receiver.script.push(500);
    service.db.prepare('UPDATE webhooks SET failing_since = ? WHERE id = ?').run(Date.now() - 5 * 86_400_000 - 1000, webhook.id);
    await service.request('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: user.token });
    const disabled = await waitFor('disabled', async () => {
      const read = (await service.request('GET', `/api/v1/webhooks/${webhook.id}`, { token: user.token })).body.data;
      return read.enabled ? undefined : read;
    });
    assert.match(disabled.disabledReason, /every delivery failed for 5 days/);
    const [delivery] = await deliveriesOf(user.token, webhook.id);
    assert.equal(delivery.status, 'pending', 'kept, and sent once the webhook is enabled again');
    const enabled = await service.request('PATCH', `/api/v1/webhooks/${webhook.id}`, { token: user.token, body: { enabled: true } });
    assert.equal(enabled.body.data.enabled, true);
    assert.equal(enabled.body.data.disabledReason, null);
    await waitFor('delivered after enabling', async () => {
      const log = await deliveriesOf(user.token, webhook.id);
      return log[0]?.status === 'delivered' ? log : undefined;
    });
  });
});

test("one user's dead endpoint never delays another user's deliveries", async () => {
  const dead = await startReceiver();
  const stuck = await service.signUp();
  const deadHook = (
    await service.request('POST', '/api/v1/webhooks', { token: stuck.token, body: { url: `${dead.url}/dead`, events: ['*'] } })
  ).body.data;
  for (let i = 0; i < 40; i++) dead.script.push('hang');
  for (let i = 0; i < 40; i++) await service.request('POST', `/api/v1/webhooks/${deadHook.id}/test`, { token: stuck.token });
  await waitFor('the dead endpoint holding requests', () => (dead.seen.length >= 2 ? true : undefined));

  const other = await service.signUp();
  const webhook = await subscribe(other.token, ['*'], '/lively');
  const sent = Date.now();
  await service.request('POST', `/api/v1/webhooks/${webhook.id}/test`, { token: other.token });
  const [request] = await received('/lively', webhook.secret);
  // The dead endpoint's attempts each wait 10 s; this one is not behind them.
  assert.ok(request.at - sent < 2000, `delivered after ${request.at - sent} ms`);
  assert.ok(dead.seen.length < 40, 'the dead endpoint was not sent everything at once');
});

describe('document events', () => {
  test('document.ready and document.failed, with data exactly as GET /documents/{id}', async () => {
    const ingesting = await startService({ ingestion: testConfig({ INGEST: 'on', INGEST_TIMEOUT_MS: '5000' }).ingestion });
    const user = await ingesting.signUp();
    const reply = await ingesting.request('POST', '/api/v1/webhooks', {
      token: user.token,
      body: { url: `${receiver.url}/documents`, events: ['document.ready', 'document.failed'] },
    });
    const secret = reply.body.data.secret;
    const ready = await ingesting.create(user.token, '/documents', { name: 'notes', type: 'TXT', url: `${receiver.url}/doc.txt` });
    const [first] = await received('/documents', secret);
    assert.equal(first.event.type, 'document.ready');
    assert.equal(first.event.data.id, ready.id);
    assert.equal(first.event.data.status, 'ready');
    assert.deepEqual(first.event.data, (await ingesting.request('GET', `/api/v1/documents/${ready.id}`, { token: user.token })).body.data);

    const failed = await ingesting.create(user.token, '/documents', { name: 'gone', type: 'TXT', url: `${receiver.url}/missing.txt` });
    const [, second] = await received('/documents', secret, 2);
    assert.equal(second.event.type, 'document.failed');
    assert.equal(second.event.data.id, failed.id);
    assert.match(second.event.data.error, /404/);
    assert.deepEqual(
      second.event.data,
      (await ingesting.request('GET', `/api/v1/documents/${failed.id}`, { token: user.token })).body.data,
    );
  });
});
