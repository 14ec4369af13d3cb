// The ingestion queue is shared fairly between users: waiting documents are taken round-robin by
// user, and one user never holds more than max(1, INGEST_CONCURRENCY - 1) of the running jobs, so
// documents whose URLs never answer cannot hold up another user's document.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startService, type TestService } from './helpers.js';

// ---- A fixture server: /hang/* never answers, /held/<name> answers when the test says ------------

/** The /held/ and /hang/ names in the order their requests arrived. */
const arrivals: string[] = [];
/** The /hang/ names whose requests the client gave up (closed the connection). */
const abandoned: string[] = [];
const held = new Map<string, ServerResponse>();
const fixture = createServer((request, response) => {
  const url = request.url ?? '';
  if (url.startsWith('/hang/') || url.startsWith('/held/')) arrivals.push(url.slice(6));
  if (url.startsWith('/hang/')) return void response.on('close', () => abandoned.push(url.slice(6))); // never answers
  if (url.startsWith('/held/')) return void held.set(url.slice(6), response);
  response.writeHead(200, { 'content-type': 'text/plain' });
  response.end('Quick document about wombats.');
});
await new Promise<void>((resolve) => fixture.listen(0, '127.0.0.1', resolve));
after(() => {
  fixture.closeAllConnections();
  fixture.close();
});
const origin = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;

/** Answers the held request for `name` (waits until it has arrived). */
async function answer(name: string): Promise<void> {
  await until(() => held.has(name), `${name} fetched`);
  held.get(name)!.writeHead(200, { 'content-type': 'text/plain' }).end(`Held document ${name}.`);
  held.delete(name);
}

async function until(check: () => boolean, what: string, timeoutMs = 4000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    assert.ok(Date.now() < deadline, `${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function createDocument(service: TestService, token: string, name: string, url: string): Promise<string> {
  const reply = await service.request('POST', '/api/v1/documents', { token, body: { name, type: 'TXT', url } });
  assert.equal(reply.status, 201, JSON.stringify(reply.body));
  return reply.body.data.id;
}

const statusOf = async (service: TestService, token: string, id: string): Promise<string> =>
  (await service.request('GET', `/api/v1/documents/${id}`, { token })).body.data.status;

// A long fetch timeout: the hanging documents stay hung for the whole test.
const ingestion = (concurrency: number) => ({
  enabled: true,
  concurrency,
  maxBytes: 1024 * 1024,
  timeoutMs: 60_000,
  allowPrivateNetworks: true,
});

describe('a fair ingestion queue', () => {
  test("one user's documents that never answer do not hold up another user's document", async () => {
    const service = await startService({ ingestion: ingestion(2) });
    const hog = await service.signUp('Hog');
    const other = await service.signUp('Other');
    const hung: string[] = [];
    for (let i = 0; i < 8; i += 1) hung.push(await createDocument(service, hog.token, `hung ${i}`, `${origin}/hang/${i}`));
    const quick = await createDocument(service, other.token, 'quick', `${origin}/quick.txt`);
    let status = 'pending';
    const deadline = Date.now() + 3000;
    while (status !== 'ready' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = await statusOf(service, other.token, quick);
    }
    assert.equal(status, 'ready', "the other user's document was ingested while the hung ones wait");
    const statuses = await Promise.all(hung.map((id) => statusOf(service, hog.token, id)));
    assert.equal(statuses.filter((s) => s === 'processing').length, 1, `at most INGEST_CONCURRENCY - 1 of one user's run: ${statuses}`);
    assert.equal(statuses.filter((s) => s === 'pending').length, 7, String(statuses));
  });

  test('waiting documents are taken in turn by user, not in the order they were created', async () => {
    const service = await startService({ ingestion: ingestion(1) });
    const first = await service.signUp('First');
    const second = await service.signUp('Second');
    arrivals.length = 0;
    const ids = [];
    for (const name of ['a1', 'a2', 'a3']) ids.push(await createDocument(service, first.token, name, `${origin}/held/${name}`));
    await until(() => arrivals.length === 1, 'a1 fetched');
    for (const name of ['b1', 'b2']) ids.push(await createDocument(service, second.token, name, `${origin}/held/${name}`));
    for (const name of ['a1', 'b1', 'a2', 'b2', 'a3']) {
      await until(() => arrivals.includes(name), `${name} fetched (so far: ${arrivals})`);
      await answer(name);
    }
    assert.deepEqual(arrivals, ['a1', 'b1', 'a2', 'b2', 'a3']);
  });

  test('with INGEST_CONCURRENCY=1 a lone user still gets the one slot', async () => {
    const service = await startService({ ingestion: ingestion(1) });
    const { token } = await service.signUp('Alone');
    const id = await createDocument(service, token, 'alone', `${origin}/quick.txt`);
    const deadline = Date.now() + 3000;
    let status = 'pending';
    while (status !== 'ready' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = await statusOf(service, token, id);
    }
    assert.equal(status, 'ready');
  });
});

describe('a superseded run', () => {
  const documentOf = async (service: TestService, token: string, id: string) =>
    (await service.request('GET', `/api/v1/documents/${id}`, { token })).body.data;

  /** The document once ready or failed, waiting (generously) with ?wait=. */
  async function settled(service: TestService, token: string, id: string): Promise<any> {
    let document;
    for (let i = 0; i < 3; i += 1) {
      document = (await service.request('GET', `/api/v1/documents/${id}?wait=10`, { token })).body.data;
      if (document.status === 'ready' || document.status === 'failed') break;
    }
    return document;
  }

  test('stops its fetch and frees its slot: a new URL or a new request does not wait for one that never answers', async () => {
    const service = await startService({ ingestion: ingestion(1) }); // one slot in all
    const { token } = await service.signUp('Impatient');
    const id = await createDocument(service, token, 'stuck', `${origin}/hang/superseded-1`);
    await until(() => arrivals.includes('superseded-1'), 'the first URL fetched');

    // Asked again (same URL, which still never answers): the stuck fetch is given up, a new one made.
    const again = await service.request('POST', `/api/v1/documents/${id}/ingest`, { token });
    assert.equal(again.status, 202);
    await until(() => abandoned.includes('superseded-1'), 'the superseded fetch closed');
    await until(() => arrivals.filter((name) => name === 'superseded-1').length === 2, 'fetched again by the new run');

    // A new URL: the run stuck on the old one ends at once, and the new one runs in its slot.
    const patched = await service.request('PATCH', `/api/v1/documents/${id}`, { token, body: { url: `${origin}/quick.txt` } });
    assert.equal(patched.status, 200);
    const document = await settled(service, token, id);
    assert.equal(document.status, 'ready', `${document.status} ${document.error ?? ''}`);
    await until(() => abandoned.filter((name) => name === 'superseded-1').length === 2, 'the second stuck fetch closed');
  });

  test("ending after a newer run began, it leaves that run's progress alone", async () => {
    const service = await startService({ ingestion: ingestion(3) }); // room for both runs at once
    const { token } = await service.signUp('Progress');
    const id = await createDocument(service, token, 'moving', `${origin}/hang/progress-old`);
    await until(() => arrivals.includes('progress-old'), 'the old URL fetched');
    const patched = await service.request('PATCH', `/api/v1/documents/${id}`, { token, body: { url: `${origin}/hang/progress-new` } });
    assert.equal(patched.status, 200);
    await until(() => arrivals.includes('progress-new'), 'the new URL fetched');
    await until(() => abandoned.includes('progress-old'), 'the old run stopped');
    for (let i = 0; i < 5; i += 1) {
      const document = await documentOf(service, token, id);
      assert.equal(document.status, 'processing');
      assert.deepEqual(document.progress, { phase: 'fetching', chunksStored: 0, chunksTotal: null });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
});
