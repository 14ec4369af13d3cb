// `/webhooks`: create (the secret shown once), list, get, PATCH, delete, rotate-secret, and the
// refusals of bad input; the secret sealed at rest and never answered again.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import {
  assertDeletes,
  assertHiddenFrom,
  assertInvalid,
  assertNotFound,
  startService,
  TIMESTAMP,
  type Json,
  type Reply,
} from './helpers.js';
import { startRecordingServer } from './fixtures/recording-server.js';

const service = await startService();
const { request } = service;
const receiver = await startRecordingServer((_req, res) => res.end('ok'));
const URL_OF_RECEIVER = `${receiver.base}/hooks`;
after(() => {
  receiver.server.closeAllConnections();
  receiver.server.close();
});

const createWebhook = (token: string, body: Record<string, unknown> = {}) =>
  request('POST', '/api/v1/webhooks', { token, body: { url: URL_OF_RECEIVER, events: ['*'], ...body } });

/** The stored (sealed) secret column of a webhook. */
const storedSecret = (id: string) => service.db.prepare('SELECT secret FROM webhooks WHERE id = ?').pluck().get(id) as string;

function assertNoSecret(reply: Reply, secret: string): void {
  const text = JSON.stringify(reply.body);
  assert.ok(!text.includes(secret), `the secret leaked: ${text}`);
  assert.ok(!text.includes(secret.slice(6)), `the secret's key leaked: ${text}`);
}

describe('POST /webhooks', () => {
  test('201 with the webhook and its secret, shown this once; stored sealed', async () => {
    const { token, user } = await service.signUp();
    const reply = await createWebhook(token, { events: ['run.succeeded', 'document.ready'], description: 'CI' });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    const created = reply.body.data;
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.equal(Buffer.from(created.secret.slice(6), 'base64').length, 24);
    assert.deepEqual(Object.keys(created).sort(), [
      'createdAt',
      'description',
      'disabledReason',
      'enabled',
      'events',
      'id',
      'previousSecretExpiresAt',
      'secret',
      'updatedAt',
      'url',
      'userId',
    ]);
    assert.equal(created.userId, user.id);
    assert.equal(created.url, URL_OF_RECEIVER);
    assert.deepEqual(created.events, ['run.succeeded', 'document.ready']);
    assert.equal(created.description, 'CI');
    assert.equal(created.enabled, true);
    assert.equal(created.disabledReason, null);
    assert.equal(created.previousSecretExpiresAt, null);
    assert.match(created.createdAt, TIMESTAMP);

    const stored = storedSecret(created.id);
    assert.ok(!stored.includes(created.secret) && stored.startsWith('v1:'), 'sealed at rest');
    assert.equal(service.unseal(stored), created.secret);

    const read = await request('GET', `/api/v1/webhooks/${created.id}`, { token });
    assert.equal(read.status, 200);
    const { secret, ...withoutSecret } = created;
    assert.deepEqual(read.body.data, withoutSecret);
    assertNoSecret(read, secret);
    const list = await request('GET', '/api/v1/webhooks', { token });
    assert.deepEqual(list.body.data, [withoutSecret]);
    assertNoSecret(list, secret);
  });

  test('repeated events are kept once; description defaults to ""', async () => {
    const { token } = await service.signUp();
    const reply = await createWebhook(token, { events: ['run.failed', 'run.failed', '*'] });
    assert.equal(reply.status, 201);
    assert.deepEqual(reply.body.data.events, ['run.failed', '*']);
    assert.equal(reply.body.data.description, '');
  });

  test('an unknown event is 422 naming it; an empty list, no list and a non-list are 422', async () => {
    const { token } = await service.signUp();
    const unknown = assertInvalid(await createWebhook(token, { events: ['run.succeeded', 'run.exploded'] }), 'events.1');
    assert.match(unknown.details![0].message, /unknown event "run\.exploded"/);
    assert.match(assertInvalid(await createWebhook(token, { events: [] }), 'events').details![0].message, /at least one event/);
    assertInvalid(await request('POST', '/api/v1/webhooks', { token, body: { url: URL_OF_RECEIVER } }), 'events');
    assertInvalid(await createWebhook(token, { events: 'run.failed' }), 'events');
    assert.deepEqual((await request('GET', '/api/v1/webhooks', { token })).body.data, [], 'nothing was stored');
  });

  test('a URL that is not http(s), is relative or carries credentials is 422 at url', async () => {
    const { token } = await service.signUp();
    for (const url of ['ftp://127.0.0.1/hook', 'javascript:alert(1)', '/relative', 'http://user:pw@127.0.0.1/hook', '', 42]) {
      assertInvalid(await createWebhook(token, { url }), 'url', String(url));
    }
    assert.deepEqual((await request('GET', '/api/v1/webhooks', { token })).body.data, []);
  });

  test('a URL the SSRF guard refuses is 422 with the reason, at create and at PATCH', async () => {
    const guarded = await startService({ allowPrivateNetworks: false }, undefined, {
      resolveHost: async (host) =>
        host === 'inside.example' ? [{ address: '10.1.2.3', family: 4 }] : [{ address: '93.184.216.34', family: 4 }],
    });
    const { token } = await guarded.signUp();
    const create = (url: string) => guarded.request('POST', '/api/v1/webhooks', { token, body: { url, events: ['*'] } });
    const loopback = assertInvalid(await create('http://127.0.0.1:8080/hook'), 'url');
    assert.match(loopback.details![0].message, /refused: 127\.0\.0\.1 is a loopback address/);
    const resolved = assertInvalid(await create('https://inside.example/hook'), 'url');
    assert.match(resolved.details![0].message, /inside\.example resolves to a private address 10\.1\.2\.3/);
    assertInvalid(await create('http://[::1]/hook'), 'url');

    const ok = await create('https://hooks.example/hook');
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const patched = await guarded.request('PATCH', `/api/v1/webhooks/${ok.body.data.id}`, {
      token,
      body: { url: 'http://169.254.169.254/' },
    });
    assert.match(assertInvalid(patched, 'url').details![0].message, /refused: 169\.254\.169\.254/);
    const read = await guarded.request('GET', `/api/v1/webhooks/${ok.body.data.id}`, { token });
    assert.equal(read.body.data.url, 'https://hooks.example/hook', 'the refused PATCH changed nothing');
  });
});

describe('PATCH /webhooks/{id}', () => {
  test('changes url, events, description and enabled; what it leaves out stays', async () => {
    const { token } = await service.signUp();
    const created = (await createWebhook(token, { events: ['run.failed'], description: 'first' })).body.data;
    const events = await request('PATCH', `/api/v1/webhooks/${created.id}`, {
      token,
      body: { events: ['document.failed', 'run.cancelled'] },
    });
    assert.equal(events.status, 200);
    assert.deepEqual(events.body.data.events, ['document.failed', 'run.cancelled']);
    assert.equal(events.body.data.description, 'first');
    const disabled = await request('PATCH', `/api/v1/webhooks/${created.id}`, {
      token,
      body: { enabled: false, url: `${receiver.base}/other`, description: 'second' },
    });
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.data.enabled, false);
    assert.equal(disabled.body.data.url, `${receiver.base}/other`);
    assert.equal(disabled.body.data.description, 'second');
    assert.deepEqual(disabled.body.data.events, ['document.failed', 'run.cancelled']);
    assert.ok(!('secret' in disabled.body.data));
    assertInvalid(await request('PATCH', `/api/v1/webhooks/${created.id}`, { token, body: { events: ['nope'] } }), 'events.0');
    assertInvalid(await request('PATCH', `/api/v1/webhooks/${created.id}`, { token, body: { events: [] } }), 'events');
    assertInvalid(await request('PATCH', `/api/v1/webhooks/${created.id}`, { token, body: { enabled: 'yes' } }), 'enabled');
    assertInvalid(await request('PATCH', `/api/v1/webhooks/${created.id}`, { token, body: { url: 'file:///etc/passwd' } }), 'url');
    const read = await request('GET', `/api/v1/webhooks/${created.id}`, { token });
    assert.deepEqual(read.body.data, disabled.body.data, 'the refused changes changed nothing');
  });
});

describe('ownership, paging and delete', () => {
  test("another user's webhook is 404 on GET, PATCH, DELETE, rotate-secret, test and deliveries", async () => {
    const owner = await service.signUp();
    const stranger = await service.signUp();
    const { secret, ...record } = (await createWebhook(owner.token)).body.data;
    const path = `/api/v1/webhooks/${record.id}`;
    await assertHiddenFrom(service, path, { record, owner: owner.token, stranger: stranger.token, patch: { description: 'mine' } });
    assertNotFound(await request('POST', `${path}/rotate-secret`, { token: stranger.token }));
    assertNotFound(await request('POST', `${path}/test`, { token: stranger.token }));
    assertNotFound(await request('GET', `${path}/deliveries`, { token: stranger.token }));
    assert.equal(storedSecret(record.id) !== undefined, true);
    assert.equal(service.unseal(storedSecret(record.id)), secret, 'the secret was not rotated by the stranger');
  });

  test('a list pages in creation order and holds every webhook of the caller', async () => {
    const { token } = await service.signUp();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createWebhook(token, { description: `hook ${i}` })).body.data.id);
    const all = await service.listAll(token, '/webhooks?limit=2');
    assert.deepEqual(
      all.map((webhook: Json) => webhook.id),
      ids,
    );
    for (const webhook of all) assert.ok(!('secret' in webhook));
  });

  test('DELETE answers null; then 404', async () => {
    const { token } = await service.signUp();
    const created = (await createWebhook(token)).body.data;
    await assertDeletes(service, `/api/v1/webhooks/${created.id}`, token);
  });
});

describe('POST /webhooks/{id}/rotate-secret', () => {
  test('answers a new secret; the old one keeps signing for 24 h beside it', async () => {
    const { token } = await service.signUp();
    const created = (await createWebhook(token)).body.data;
    const reply = await request('POST', `/api/v1/webhooks/${created.id}/rotate-secret`, { token });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const { secret, previousSecretExpiresAt } = reply.body.data;
    assert.match(secret, /^whsec_/);
    assert.notEqual(secret, created.secret);
    assert.match(previousSecretExpiresAt, TIMESTAMP);
    const hours = (Date.parse(previousSecretExpiresAt) - Date.now()) / 3_600_000;
    assert.ok(hours > 23.9 && hours <= 24, `about 24 h: ${hours}`);
    assert.equal(service.unseal(storedSecret(created.id)), secret);

    const read = await request('GET', `/api/v1/webhooks/${created.id}`, { token });
    assert.equal(read.body.data.previousSecretExpiresAt, previousSecretExpiresAt);
    assertNoSecret(read, secret);
    assertNoSecret(read, created.secret);

    // The test event is signed with both: a receiver holding either secret accepts it.
    const before = receiver.seen.length;
    assert.equal((await request('POST', `/api/v1/webhooks/${created.id}/test`, { token })).status, 202);
    const [sent] = await waitForSeen(before + 1);
    const headers = sent.headers as Record<string, string>;
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    for (const key of [secret, created.secret])
      assert.deepEqual((new StandardWebhook(key).verify(sent.body, headers) as Json).type, 'webhook.test');
    assertNotFound(await request('POST', `/api/v1/webhooks/${crypto.randomUUID()}/rotate-secret`, { token }));
  });
});

async function waitForSeen(count: number) {
  const deadline = Date.now() + 5000;
  while (receiver.seen.length < count) {
    if (Date.now() > deadline) assert.fail(`the receiver got ${receiver.seen.length} requests, not ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return receiver.seen.slice(count - 1);
}
