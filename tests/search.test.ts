// Search through HTTP finds other forms of a word (the index stems words), names each hit's
// document, never finds another user's chunks, and ranks without regard to other users' data; a
// run's document context is found and ranked the same way.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startService, testConfig } from './helpers.js';

const texts: Record<string, string> = {
  '/otters.txt': 'The otters of the bay hold hands while they sleep.',
  '/herons.txt': 'Herons wade slowly through the shallow marsh.',
  '/other.txt': 'Otters and herons share the river with kingfishers.',
  '/orchard.txt': ['kiwi fruit fruit', 'kiwi, kiwi, fruit', 'melon grape', 'plum pear', 'fig date', 'lime lemon'].join('\n\n'),
  '/market.txt': Array.from({ length: 40 }, (_, i) => `fruit stall ${i}`).join('\n\n'),
  '/lake-1.txt': 'Grebes dive for minnows near the lakeshore reeds.',
  '/lake-2.txt': 'A grebe carries its striped chicks on its back across the lake.',
  '/lake-3.txt': 'Grebes dance on the water, heads shaking, every spring.',
  '/lake-4.txt': 'Old ferry timetables and a grebe feather lie in the boathouse.',
  '/many.txt': Array.from({ length: 30 }, (_, i) => `swift number ${i}`).join('\n\n'),
  '/grove.txt': [
    'kiwi fruit fruit',
    'melon grape',
    'kiwi, kiwi, fruit',
    'fruit kiwi tart',
    'plum pear',
    'kiwi fruit salad',
    'fruit of a kiwi vine',
    'kiwi jam, fruit jam',
  ].join('\n\n'),
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
  const created = await service.request('POST', '/api/v1/documents', {
    token,
    body: { name, type: 'TXT', url: `${origin}${path}`, splitter },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const document = (await service.request('GET', `/api/v1/documents/${created.body.data.id}?wait=10`, { token })).body.data;
    if (document.status === 'ready') return document.id;
    assert.notEqual(document.status, 'failed', document.error);
    assert.ok(Date.now() < deadline, `still ${document.status}`);
  }
}

interface Hit {
  chunkId: string;
  documentId: string;
  documentName: string;
  position: number;
  score: number;
  snippet: string;
}

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
  assert.deepEqual(
    otter.map((hit) => hit.documentId),
    [ottersId],
  );
  assert.match(otter[0].snippet, /<mark>otters<\/mark>/);
  const heron = await search(alice.token, 'heron');
  assert.deepEqual(
    heron.map((hit) => hit.documentId),
    [heronsId],
  );
  assert.match(heron[0].snippet, /<mark>Herons<\/mark> wade/);
  // The other direction, and other endings of the same stem.
  assert.deepEqual(
    (await search(alice.token, 'sleeping')).map((hit) => hit.documentId),
    [ottersId],
  );
  assert.deepEqual(
    (await search(alice.token, 'wading')).map((hit) => hit.documentId),
    [heronsId],
  );
  // Every word must still match.
  assert.deepEqual(await search(alice.token, 'otter marsh'), []);
});

test('each hit names its document, as it is named now', async () => {
  const [hit] = await search(alice.token, 'heron');
  assert.equal(hit.documentName, 'Marsh diary');
  assert.equal(hit.position, 0);
  const renamed = await service.request('PATCH', `/api/v1/documents/${heronsId}`, {
    token: alice.token,
    body: { name: 'Marsh diary, 2026' },
  });
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
  assert.equal((await search(alice.token, 'herons'))[0].documentName, 'Marsh diary, 2026');
});

test("another user's chunks are never found, in either direction", async () => {
  // Bob's only chunk holds both words and "kingfishers"; Alice's searches never reach it.
  assert.ok((await search(alice.token, 'otters')).every((hit) => hit.documentId !== bobsId));
  assert.deepEqual(await search(alice.token, 'kingfisher'), []);
  const bobs = await search(bob.token, 'otter heron');
  assert.deepEqual(
    bobs.map((hit) => [hit.documentId, hit.documentName]),
    [[bobsId, "Bob's river log"]],
  );
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
  // In Carol's chunks "fruit" and "kiwi" are equally rare, so the chunk with "fruit" twice ranks first
  // (it is shorter than "kiwi, kiwi, fruit"). Dave's forty chunks saying "fruit" make it common across
  // all users: a ranking over everyone's chunks would now put "kiwi, kiwi" first.
  assert.match(before[0].snippet, /fruit<\/mark> <mark>fruit/);
  await ready(dave.token, 'Market', '/market.txt', splitter);
  const after = await search(carol.token, 'kiwi fruit');
  assert.deepEqual(after, before);
});

test("every hit's snippet comes from its own chunk, not the first hit's", async () => {
  const erin = await service.signUp();
  const paths = ['/lake-1.txt', '/lake-2.txt', '/lake-3.txt', '/lake-4.txt'];
  const ids = new Map<string, string>();
  for (const [i, path] of paths.entries()) ids.set(await ready(erin.token, `Lake ${i + 1}`, path), texts[path]);
  const hits = await search(erin.token, 'grebes');
  assert.deepEqual(hits.map((hit) => hit.documentId).sort(), [...ids.keys()].sort());
  for (const hit of hits) {
    const chunk = (await service.request('GET', `/api/v1/documents/${hit.documentId}/chunks`, { token: erin.token })).body.data.find(
      (candidate: { id: string }) => candidate.id === hit.chunkId,
    );
    assert.ok(chunk, `hit ${hit.chunkId} is a chunk of ${hit.documentId}`);
    assert.equal(chunk.content, ids.get(hit.documentId));
    // The snippet is the chunk's own text (each is short enough to be shown whole), the matches marked.
    const text = hit.snippet.replace(/<\/?mark>/g, '');
    assert.equal(text, chunk.content, `the snippet of ${hit.documentName}`);
    assert.match(hit.snippet, /<mark>grebes?<\/mark>/i);
  }
  // Narrowed to one document, the snippet is still that document's.
  for (const [id, content] of ids) {
    const reply = await service.request('GET', `/api/v1/documents/search?q=grebe&documentId=${id}`, { token: erin.token });
    assert.deepEqual(
      reply.body.data.map((hit: Hit) => hit.snippet.replace(/<\/?mark>/g, '')),
      [content],
    );
  }
});

test('scores read as relevance from 0 to 1, best first; limit gives more than the first 20 hits', async () => {
  const frank = await service.signUp();
  await ready(frank.token, 'Swifts', '/many.txt', { chunk_size: 20, chunk_overlap: 0 });
  await ready(frank.token, 'Swift notes', '/otters.txt');
  const first = await search(frank.token, 'swift');
  assert.equal(first.length, 20, 'twenty hits unless asked for more');
  const reply = await service.request('GET', '/api/v1/documents/search?q=swift&limit=100', { token: frank.token });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const all: Hit[] = reply.body.data;
  assert.equal(all.length, 30);
  for (const hit of all) {
    assert.ok(hit.score > 0.1 && hit.score < 1, `score ${hit.score} reads as relevance`);
    assert.equal(hit.snippet.replace(/<\/?mark>/g, ''), `swift number ${hit.position}`);
  }
  for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].score >= all[i].score, 'best first');
  const tooMany = await service.request('GET', '/api/v1/documents/search?q=swift&limit=101', { token: frank.token });
  assert.equal(tooMany.status, 422, JSON.stringify(tooMany.body));
  // A search of two words, one in every chunk, still scores what matches well higher.
  const herons = await search(alice.token, 'herons wade');
  assert.equal(herons.length, 1);
  assert.ok(herons[0].score > 0.1 && herons[0].score < 1, `score ${herons[0].score}`);
});

test("a run's document context holds the search's best hits for its input, in the same order", async () => {
  const gina = await service.signUp();
  const hank = await service.signUp();
  const splitter = { chunk_size: 20, chunk_overlap: 0 };
  const groveId = await ready(gina.token, 'Grove', '/grove.txt', splitter);
  await ready(gina.token, 'Orchard', '/orchard.txt', splitter); // Gina's too, but not the agent's
  // Hank's forty chunks saying "fruit" make it common across all users (not in Gina's chunks).
  await ready(hank.token, 'Market', '/market.txt', splitter);
  const agent = await service.create(gina.token, '/agents', {
    name: 'Grover',
    type: 'VENDOR_A',
    llm: { provider: 'echo', model: 'parrot-1' },
    documentId: groveId,
  });

  const reply = await service.request('GET', `/api/v1/documents/search?q=kiwi%20fruit&agentId=${agent.id}&limit=100`, {
    token: gina.token,
  });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const hits: Hit[] = reply.body.data;
  assert.equal(hits.length, 6, 'every chunk of the grove holding the words');
  const run = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token: gina.token, body: { input: 'kiwi fruit' } });
  assert.equal(run.status, 200, JSON.stringify(run.body));
  const sources = run.body.data.sources as {
    chunkId: string;
    documentId: string;
    documentName: string;
    position: number;
    snippet: string;
  }[];
  assert.equal(sources.length, 4, 'a run takes the best four');
  sources.forEach((source, i) => {
    const hit = hits[i];
    assert.deepEqual(
      [source.chunkId, source.documentId, source.documentName, source.position],
      [hit.chunkId, hit.documentId, hit.documentName, hit.position],
      `source ${i + 1} is the search's hit ${i + 1}`,
    );
    // Each chunk is short enough to be its own snippet: plain in the run, marked in the search.
    assert.equal(source.snippet, hit.snippet.replace(/<\/?mark>/g, ''));
  });
  // "fruit" is as rare as "kiwi" in Gina's chunks, so the shorter chunk with "fruit" twice is first.
  assert.equal(sources[0].snippet, 'kiwi fruit fruit');
});
