// Search through HTTP finds other forms of a word (the index stems words), names each hit's
// document, never finds another user's chunks, and ranks without regard to other users' data.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startService, testConfig } from './helpers.js';

const texts: Record<string, string> = {
  '/otters.txt': 'The otters of the bay hold hands while they sleep.',
  '/herons.txt': 'Herons wade slowly through the shallow marsh.',
  '/other.txt': 'Otters and herons share the river with kingfishers.',
  '/orchard.txt': ['kiwi fruit fruit', 'kiwi kiwi fruit', 'melon grape', 'plum pear', 'fig date', 'lime lemon'].join('\n\n'),
  '/market.txt': Array.from({ length: 40 }, (_, i) => `fruit stall ${i}`).join('\n\n'),
};
const fixture = createServer((request, response) => {
  const text = texts[request.url ?? ''];
  response.writeHead(text === undefined ? 404 : 200, { 'content-type': 'text/plain; charset=utf-8' });
  response.end(text ?? 'not here');
});
await new Promise<void>((resolve) => fixture.listen(0, '127.0.0.1', resolve));
after(() => {
  fixture.closeAllConnections();
  fixture.close();
});
const origin = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;

const service = await startService({ ingestion: testConfig({ INGEST: 'on', INGEST_TIMEOUT_MS: '5000' }).ingestion });
const alice = await service.signUp();
const bob = await service.signUp();

/** Creates a document from a fixture path and waits until it is ready. */
async function ready(token: string, name: string, path: string, splitter?: object): Promise<string> {
  const created = await service.request('POST', '/api/v1/documents', { token, body: { name, type: 'TXT', url: `${origin}${path}`, splitter } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const document = (await service.request('GET', `/api/v1/documents/${created.body.data.id}?wait=10`, { token })).body.data;
    if (document.status === 'ready') return document.id;
    assert.notEqual(document.status, 'failed', document.error);
    assert.ok(Date.now() < deadline, `still ${document.status}`);
  }
}

interface Hit { chunkId: string; documentId: string; documentName: string; position: number; score: number; snippet: string }

async function search(token: string, q: string): Promise<Hit[]> {
  const reply = await service.request('GET', `/api/v1/documents/search?q=${encodeURIComponent(q)}`, { token });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.data;
}

const ottersId = await ready(alice.token, 'Bay field notes', '/otters.txt');
const heronsId = await ready(alice.token, 'Marsh diary', '/herons.txt');
const bobsId = await ready(bob.token, "Bob's river log", '/other.txt');

test('a word finds its other forms: otter → "otters", heron → "Herons", and back', async () => {
  const otter = await search(alice.token, 'otter');
  assert.deepEqual(otter.map((hit) => hit.documentId), [ottersId]);
  assert.match(otter[0].snippet, /<mark>otters<\/mark>/);
  const heron = await search(alice.token, 'heron');
  assert.deepEqual(heron.map((hit) => hit.documentId), [heronsId]);
  assert.match(heron[0].snippet, /<mark>Herons<\/mark> wade/);
  // The other direction, and other endings of the same stem.
  assert.deepEqual((await search(alice.token, 'sleeping')).map((hit) => hit.documentId), [ottersId]);
  assert.deepEqual((await search(alice.token, 'wading')).map((hit) => hit.documentId), [heronsId]);
  // Every word must still match.
  assert.deepEqual(await search(alice.token, 'otter marsh'), []);
});

test("each hit names its document, as it is named now", async () => {
  const [hit] = await search(alice.token, 'heron');
  assert.equal(hit.documentName, 'Marsh diary');
  assert.equal(hit.position, 0);
  const renamed = await service.request('PATCH', `/api/v1/documents/${heronsId}`, { token: alice.token, body: { name: 'Marsh diary, 2026' } });
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
  assert.equal((await search(alice.token, 'herons'))[0].documentName, 'Marsh diary, 2026');
});

test("another user's chunks are never found, in either direction", async () => {
  // Bob's only chunk holds both words and "kingfishers"; Alice's searches never reach it.
  assert.ok((await search(alice.token, 'otters')).every((hit) => hit.documentId !== bobsId));
  assert.deepEqual(await search(alice.token, 'kingfisher'), []);
  const bobs = await search(bob.token, 'otter heron');
  assert.deepEqual(bobs.map((hit) => [hit.documentId, hit.documentName]), [[bobsId, "Bob's river log"]]);
  assert.deepEqual(await search(bob.token, 'sleep'), []);
});

test("the ranking counts the caller's own chunks only: other users' data changes neither order nor scores", async () => {
  const carol = await service.signUp();
  const dave = await service.signUp();
  const splitter = { chunk_size: 20, chunk_overlap: 0 };
  await ready(carol.token, 'Orchard', '/orchard.txt', splitter);
  const before = await search(carol.token, 'kiwi fruit');
  assert.equal(before.length, 2);
  assert.ok(before[0].score > before[1].score && before[1].score > 0, JSON.stringify(before));
  // In Carol's chunks "fruit" and "kiwi" are equally rare, so the chunk with "fruit" twice (and shorter
  // words) ranks first. Dave's forty chunks saying "fruit" make it common across all users: a
  // ranking over everyone's chunks would now put "kiwi kiwi" first.
  assert.match(before[0].snippet, /fruit<\/mark> <mark>fruit/);
  await ready(dave.token, 'Market', '/market.txt', splitter);
  const after = await search(carol.token, 'kiwi fruit');
  assert.deepEqual(after, before);
});
