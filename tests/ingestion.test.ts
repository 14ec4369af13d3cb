// Ingestion through HTTP: documents are fetched from a fixture server on loopback, ingested in the
// background (pending → processing → ready | failed), their chunks listed and searched.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makePdf } from './fixtures/ingest/pdf.js';
import { errorOf, startService, testConfig, type TestService } from './helpers.js';
import { createFileStore } from '../src/documents/file-store.js';
import { createIngestionStore } from '../src/documents/ingestion-store.js';
import { CHUNK_BATCH, IngestionQueue } from '../src/documents/ingestion.js';
import { createSealer } from '../src/lib/secrets.js';
import { randomBytes } from 'node:crypto';
import { SWEEP_INTERVAL_MS } from '../src/documents/chunk-sweeper.js';

// ---- The fixture server -----------------------------------------------------------------------

type Route = (request: IncomingMessage, response: ServerResponse) => void;
const routes = new Map<string, Route>();
const send =
  (type: string, body: string | Buffer): Route =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': type });
    response.end(body);
  };
const fixture = createServer((request, response) => {
  const route = routes.get(request.url ?? '');
  if (route) return route(request, response);
  response.writeHead(404, { 'content-type': 'text/plain' });
  response.end('not here');
});
await new Promise<void>((resolve) => fixture.listen(0, '127.0.0.1', resolve));
after(() => {
  fixture.closeAllConnections();
  fixture.close();
});
const origin = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;

routes.set('/notes.txt', send('text/plain; charset=utf-8', 'Aardvarks dig burrows at night.\n\nPangolins roll into armoured balls.'));
routes.set('/table.csv', send('text/csv', 'animal,habitat\nokapi,rainforest\nquokka,island\n'));
routes.set(
  '/page.html',
  send(
    'text/html',
    `<html><head><title>T</title><style>.x{color:red}</style><script>var hiddenscriptword = 1;</script></head>
     <body><nav>navigationlinkword</nav><h1>Narwhal facts</h1><p>The narwhal tusk is a tooth.</p></body></html>`,
  ),
);
routes.set(
  '/book.pdf',
  send('application/pdf', makePdf([['Chapter one about otters'], ['Chapter two about beavers'], ['Chapter three about herons']])),
);
routes.set(
  '/talk.vtt',
  send(
    'text/vtt',
    'WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nWelcome to the axolotl lecture.\n\n00:00:05.000 --> 00:00:07.000\n<v Speaker>They regrow limbs.</v>\n',
  ),
);
routes.set('/movie.mp4', send('video/mp4', Buffer.from([0, 0, 0, 24, 102, 116, 121, 112, 109, 112, 52, 50])));
routes.set('/big.txt', send('text/plain', 'x'.repeat(64 * 1024)));
routes.set('/silent.txt', () => {}); // never answers
routes.set('/secret.txt', (request, response) => {
  const ok = request.headers.authorization === 'Bearer fixture-token';
  response.writeHead(ok ? 200 : 401, { 'content-type': 'text/plain' });
  response.end(ok ? 'Classified capybara census.' : 'who are you');
});

// ---- Helpers ------------------------------------------------------------------------------------

const ingesting = testConfig({ INGEST: 'on', INGEST_TIMEOUT_MS: '5000' }).ingestion;
const service = await startService({ ingestion: ingesting });
const { token } = await service.signUp();

/**
 * Polls the document until ingestion has finished (ready or failed), as a client would. The
 * ceiling is generous: the first PDF of a test process loads pdf.js through the tsx loader, which
 * alone takes about 6 s on these machines (0.5 s in plain node, as in production).
 */
async function settled(svc: TestService, auth: string, id: string, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const document = (await svc.request('GET', `/api/v1/documents/${id}`, { token: auth })).body.data;
    if (document.status === 'ready' || document.status === 'failed') return document;
    if (Date.now() > deadline) throw new Error(`still ${document.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits (up to a few sweep intervals) until `check` holds. */
async function eventually(check: () => boolean, what: string, timeoutMs = 5 * SWEEP_INTERVAL_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    assert.ok(Date.now() < deadline, `${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function ingest(body: Record<string, unknown>, svc = service, auth = token): Promise<any> {
  const created = await svc.request('POST', '/api/v1/documents', { token: auth, body: { name: 'doc', ...body } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.ok(['pending', 'processing'].includes(created.body.data.status));
  return settled(svc, auth, created.body.data.id);
}

async function search(query: string, extra = '', auth = token) {
  const reply = await service.request('GET', `/api/v1/documents/search?q=${encodeURIComponent(query)}${extra}`, { token: auth });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.data as { chunkId: string; documentId: string; position: number; score: number; snippet: string }[];
}

// ---- Tests --------------------------------------------------------------------------------------

describe('each type ingests and its text is findable', () => {
  test('TXT: ready, with an index summary, chunks in order and a highlighted search hit', async () => {
    const document = await ingest({ type: 'TXT', url: `${origin}/notes.txt`, splitter: { chunk_size: 40, chunk_overlap: 0 } });
    assert.equal(document.status, 'ready', document.error);
    assert.equal(document.error, null);
    assert.equal(document.index.chunks, 2);
    assert.equal(document.index.characters, 'Aardvarks dig burrows at night.\n\nPangolins roll into armoured balls.'.length);
    assert.deepEqual(document.index.splitter, { type: 'character', chunk_size: 40, chunk_overlap: 0 });
    assert.match(document.index.ingestedAt, /\+00:00$/);

    const chunks = await service.request('GET', `/api/v1/documents/${document.id}/chunks`, { token });
    assert.deepEqual(
      chunks.body.data.map((chunk: { content: string }) => chunk.content),
      ['Aardvarks dig burrows at night.', 'Pangolins roll into armoured balls.'],
    );
    assert.deepEqual(
      chunks.body.data.map((chunk: { position: number }) => chunk.position),
      [0, 1],
    );

    const hits = await search('pangolins');
    assert.equal(hits.length, 1);
    assert.equal(hits[0].documentId, document.id);
    assert.equal(hits[0].chunkId, chunks.body.data[1].id);
    assert.ok(hits[0].score > 0);
    assert.match(hits[0].snippet, /<mark>Pangolins<\/mark> roll/);
  });

  test('CSV: each row rendered with its header names', async () => {
    const document = await ingest({ type: 'CSV', url: `${origin}/table.csv` });
    assert.equal(document.status, 'ready', document.error);
    const [chunk] = (await service.request('GET', `/api/v1/documents/${document.id}/chunks`, { token })).body.data;
    assert.match(chunk.content, /animal: okapi/);
    assert.match(chunk.content, /habitat: island/);
    assert.equal((await search('quokka island')).length, 1);
  });

  test('URL: HTML reduced to readable text; scripts, styles and navigation dropped', async () => {
    const document = await ingest({ type: 'URL', url: `${origin}/page.html` });
    assert.equal(document.status, 'ready', document.error);
    assert.equal((await search('narwhal tusk')).length, 1);
    assert.deepEqual(await search('hiddenscriptword'), []);
    assert.deepEqual(await search('navigationlinkword'), []);
  });

  test('PDF: only the page range is read (inclusive); the page count is recorded', async () => {
    const document = await ingest({ type: 'PDF', url: `${origin}/book.pdf`, from_page: 2, to_page: '3' });
    assert.equal(document.status, 'ready', document.error);
    assert.equal(document.index.pages, 3);
    assert.equal(document.index.pagesRead, 2);
    assert.equal((await search('beavers', `&documentId=${document.id}`)).length, 1);
    assert.equal((await search('herons', `&documentId=${document.id}`)).length, 1);
    assert.deepEqual(await search('otters', `&documentId=${document.id}`), []);
  });

  test('VIDEO: a WebVTT caption file becomes its text; any other video fails saying captions are needed', async () => {
    const captions = await ingest({ type: 'VIDEO', url: `${origin}/talk.vtt` });
    assert.equal(captions.status, 'ready', captions.error);
    assert.equal((await search('axolotl')).length, 1);
    const [chunk] = (await service.request('GET', `/api/v1/documents/${captions.id}/chunks`, { token })).body.data;
    assert.doesNotMatch(chunk.content, /-->|<v /);

    const movie = await ingest({ type: 'VIDEO', url: `${origin}/movie.mp4` });
    assert.equal(movie.status, 'failed');
    assert.match(movie.error, /caption/i);
    assert.equal(movie.index, null);
  });

  test('authorization is sent as the request credentials', async () => {
    const document = await ingest({ type: 'TXT', url: `${origin}/secret.txt`, authorization: { bearer: 'fixture-token' } });
    assert.equal(document.status, 'ready', document.error);
    assert.equal((await search('capybara')).length, 1);
  });
});

describe('failures end as failed with a reason', () => {
  test('a 404 URL', async () => {
    const document = await ingest({ type: 'TXT', url: `${origin}/missing.txt` });
    assert.equal(document.status, 'failed');
    assert.match(document.error, /404/);
  });

  test('a body over the size cap', async () => {
    const small = await startService({ ingestion: { ...ingesting, maxBytes: 1024 } });
    const user = await small.signUp();
    const document = await ingest({ type: 'TXT', url: `${origin}/big.txt` }, small, user.token);
    assert.equal(document.status, 'failed');
    assert.match(document.error, /larger than/);
  });

  test('a server that never answers times out', async () => {
    const impatient = await startService({ ingestion: { ...ingesting, timeoutMs: 1000 } });
    const user = await impatient.signUp();
    const document = await ingest({ type: 'TXT', url: `${origin}/silent.txt` }, impatient, user.token);
    assert.equal(document.status, 'failed');
    assert.match(document.error, /within|time/i);
  });

  test('a splitter that would make more than 10,000 chunks fails at once (no event-loop stall)', async () => {
    routes.set('/many.txt', send('text/plain', 'ab '.repeat(20_000)));
    const started = Date.now();
    const document = await ingest({
      type: 'TXT',
      url: `${origin}/many.txt`,
      splitter: { type: 'recursive', chunk_size: 1, chunk_overlap: 0 },
    });
    assert.equal(document.status, 'failed');
    assert.match(document.error, /more than 10000 chunks.*larger chunk_size/);
    assert.ok(Date.now() - started < 3000);
    assert.equal(service.db.prepare('SELECT count(*) FROM document_chunks WHERE document_id = ?').pluck().get(document.id), 0);
  });

  test('a web page given as TXT or CSV fails saying to use type URL; text served as text/plain stays text', async () => {
    const page = '<!DOCTYPE html><html><head><script>var trackingscriptword = 1;</script></head><body><p>Ibis notes</p></body></html>';
    routes.set('/page-as-text', send('text/html; charset=utf-8', page));
    routes.set('/page-unlabelled', send('application/octet-stream', `\n  ${page}`));
    for (const [type, path] of [
      ['TXT', '/page-as-text'],
      ['CSV', '/page-as-text'],
      ['TXT', '/page-unlabelled'],
      ['CSV', '/page-unlabelled'],
    ]) {
      const document = await ingest({ type, url: `${origin}${path}` });
      assert.equal(document.status, 'failed', `${type} ${path}`);
      assert.equal(document.error, 'the URL answered a web page (HTML); use the document type URL', `${type} ${path}`);
    }
    assert.deepEqual(await search('trackingscriptword'), [], 'nothing of the page was stored');
    // Served as plain text (the raw source of a page, say), HTML is taken as the text it is.
    routes.set('/page-source.txt', send('text/plain', page));
    const source = await ingest({ type: 'TXT', url: `${origin}/page-source.txt` });
    assert.equal(source.status, 'ready', source.error);
    // The same page as type URL is read as a web page, without its script.
    const asUrl = await ingest({ type: 'URL', url: `${origin}/page-as-text` });
    assert.equal(asUrl.status, 'ready', asUrl.error);
    const [chunk] = (await service.request('GET', `/api/v1/documents/${asUrl.id}/chunks`, { token })).body.data;
    assert.equal(chunk.content, 'Ibis notes');
  });

  test('with INGEST_ALLOW_PRIVATE_NETWORKS off, a loopback URL is refused (SSRF)', async () => {
    const guarded = await startService({ ingestion: { ...ingesting, allowPrivateNetworks: false } });
    const user = await guarded.signUp();
    const document = await ingest({ type: 'TXT', url: `${origin}/notes.txt` }, guarded, user.token);
    assert.equal(document.status, 'failed');
    assert.match(document.error, /refused/);
    assert.match(document.error, /127\.0\.0\.1/);
  });
});

describe('re-ingestion', () => {
  test('POST /documents/{id}/ingest re-runs it (202) and replaces the chunks', async () => {
    routes.set('/changing.txt', send('text/plain', 'First version mentions walruses.'));
    const document = await ingest({ type: 'TXT', url: `${origin}/changing.txt` });
    assert.equal((await search('walruses')).length, 1);

    routes.set('/changing.txt', send('text/plain', 'Second version mentions manatees.'));
    const again = await service.request('POST', `/api/v1/documents/${document.id}/ingest`, { token });
    assert.equal(again.status, 202);
    assert.ok(['pending', 'processing'].includes(again.body.data.status));
    assert.equal((await settled(service, token, document.id)).status, 'ready');
    assert.deepEqual(await search('walruses'), []);
    assert.equal((await search('manatees')).length, 1);
  });

  test('a document whose re-ingestion failed is neither searched nor read by runs (its previous chunks stay out)', async () => {
    routes.set('/fading.txt', send('text/plain', 'The wombats of the fjord sing at dawn.'));
    const document = await ingest({ type: 'TXT', url: `${origin}/fading.txt` });
    const agent = await service.create(token, '/agents', {
      name: 'Fjord guide',
      type: 'VENDOR_A',
      llm: { provider: 'echo', model: 'echo' },
      documentId: document.id,
    });
    const sourcesOf = async () =>
      (await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token, body: { input: 'wombats' } })).body.data.sources;
    assert.equal((await search('wombats')).length, 1);
    assert.equal((await sourcesOf()).length, 1);

    routes.delete('/fading.txt');
    assert.equal((await service.request('POST', `/api/v1/documents/${document.id}/ingest`, { token })).status, 202);
    assert.equal((await settled(service, token, document.id)).status, 'failed');
    assert.deepEqual(await search('wombats'), []);
    assert.deepEqual(await sourcesOf(), []);
  });

  test('a PATCH of the url ingests again; a PATCH of the name does not', async () => {
    const document = await ingest({ type: 'TXT', url: `${origin}/missing-at-first.txt` });
    assert.equal(document.status, 'failed');
    const renamed = await service.request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { name: 'renamed' } });
    assert.equal(renamed.body.data.status, 'failed');
    const moved = await service.request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { url: `${origin}/notes.txt` } });
    assert.ok(['pending', 'processing'].includes(moved.body.data.status));
    assert.equal((await settled(service, token, document.id)).status, 'ready');
  });

  test("another user's document: ingest and chunks are 404", async () => {
    const other = await service.signUp();
    const document = await ingest({ type: 'TXT', url: `${origin}/notes.txt` });
    assert.equal(
      errorOf(await service.request('POST', `/api/v1/documents/${document.id}/ingest`, { token: other.token })).code,
      'not_found',
    );
    assert.equal((await service.request('GET', `/api/v1/documents/${document.id}/chunks`, { token: other.token })).status, 404);
    // The owner's chunk id as a cursor tells the stranger nothing: the same 422 as any unknown id.
    const [chunk] = (await service.request('GET', `/api/v1/documents/${document.id}/chunks`, { token })).body.data;
    const withCursor = await service.request('GET', `/api/v1/documents/${document.id}/chunks?after=${chunk.id}`, { token: other.token });
    const withRandom = await service.request('GET', `/api/v1/documents/${document.id}/chunks?after=${document.id}`, { token: other.token });
    assert.equal(withCursor.status, withRandom.status);
    assert.deepEqual(errorOf(withCursor), errorOf(withRandom));
  });
});

describe('search', () => {
  test("only the caller's documents; narrowed by documentId or by agentId (its links and its own documentId)", async () => {
    routes.set('/lemur.txt', send('text/plain', 'Lemurs live on Madagascar.'));
    const first = await ingest({ type: 'TXT', url: `${origin}/lemur.txt` });
    const second = await ingest({ type: 'TXT', url: `${origin}/lemur.txt` });
    assert.equal((await search('lemurs')).length, 2);
    assert.deepEqual(
      (await search('lemurs', `&documentId=${second.id}`)).map((hit) => hit.documentId),
      [second.id],
    );

    const agent = (
      await service.request('POST', '/api/v1/agents', { token, body: { name: 'a', type: 'REACT', llm: { model: 'm', provider: 'p' } } })
    ).body.data;
    assert.deepEqual(await search('lemurs', `&agentId=${agent.id}`), []);
    await service.request('POST', '/api/v1/agent-documents', { token, body: { agentId: agent.id, documentId: first.id } });
    assert.deepEqual(
      (await search('lemurs', `&agentId=${agent.id}`)).map((hit) => hit.documentId),
      [first.id],
    );
    // The agent's own documentId counts as well, as it does for its runs.
    const owning = (
      await service.request('POST', '/api/v1/agents', {
        token,
        body: { name: 'b', type: 'REACT', llm: { model: 'm', provider: 'p' }, documentId: second.id },
      })
    ).body.data;
    assert.deepEqual(
      (await search('lemurs', `&agentId=${owning.id}`)).map((hit) => hit.documentId),
      [second.id],
    );
    await service.request('POST', '/api/v1/agent-documents', { token, body: { agentId: owning.id, documentId: first.id } });
    assert.deepEqual((await search('lemurs', `&agentId=${owning.id}`)).map((hit) => hit.documentId).sort(), [first.id, second.id].sort());

    const stranger = await service.signUp();
    assert.deepEqual(await search('lemurs', '', stranger.token), []);
  });

  test('query syntax in the input is taken literally, never an FTS5 error', async () => {
    for (const q of ['"', 'AND (', 'lemurs OR', 'NEAR(a b)', '*', 'col:lemurs', "'; DROP TABLE documents; --"]) {
      const reply = await service.request('GET', `/api/v1/documents/search?q=${encodeURIComponent(q)}`, { token });
      assert.ok(reply.status === 200 || reply.status === 422, `${q}: ${reply.status}`);
    }
    const noWords = await service.request('GET', '/api/v1/documents/search?q=%22%22', { token });
    assert.equal(noWords.status, 422);
    assert.equal(errorOf(noWords).details?.[0].path, 'q');
    assert.equal((await service.request('GET', '/api/v1/documents/search', { token })).status, 422);
  });

  test('snippets are escaped HTML: document text cannot inject markup', async () => {
    routes.set('/xss.txt', send('text/plain', 'Tapirs <script>alert(1)</script> & co'));
    await ingest({ type: 'TXT', url: `${origin}/xss.txt` });
    const [hit] = await search('tapirs');
    assert.equal(hit.snippet, '<mark>Tapirs</mark> &lt;script&gt;alert(1)&lt;/script&gt; &amp; co');
  });

  test('deleting a document hides its chunks at once and deletes them soon after', async () => {
    routes.set('/ibis.txt', send('text/plain', 'Ibises wade in marshes.'));
    const document = await ingest({ type: 'TXT', url: `${origin}/ibis.txt` });
    assert.equal((await search('ibises')).length, 1);
    await service.request('DELETE', `/api/v1/documents/${document.id}`, { token });
    assert.deepEqual(await search('ibises'), []);
    const chunksLeft = () => service.db.prepare('SELECT count(*) FROM document_chunks WHERE document_id = ?').pluck().get(document.id);
    await eventually(() => chunksLeft() === 0, 'the chunks are swept in the background');
  });
});

describe('deleted documents: chunks are swept in the background', () => {
  test('deleting an account hides every chunk of its documents at once; all are swept, in batches', async () => {
    const owner = await service.signUp();
    const many = Array.from({ length: Math.floor(CHUNK_BATCH * 1.5) }, (_, i) => `gannet ${i}`).join('\n\n');
    routes.set('/gannets.txt', send('text/plain', many));
    const splitter = { type: 'character', chunk_size: 12, chunk_overlap: 0 };
    const first = await ingest({ type: 'TXT', url: `${origin}/gannets.txt`, splitter }, service, owner.token);
    const second = await ingest({ type: 'TXT', url: `${origin}/gannets.txt`, splitter }, service, owner.token);
    assert.ok(first.index.chunks > CHUNK_BATCH, 'more than one batch per document');
    const chunksOf = (id: string) => service.db.prepare('SELECT count(*) FROM document_chunks WHERE document_id = ?').pluck().get(id);
    assert.equal(chunksOf(first.id), first.index.chunks);

    const deleted = await service.request('DELETE', '/api/v1/auth/me', { token: owner.token, body: { password: owner.password } });
    assert.equal(deleted.status, 200);
    const other = await service.signUp();
    assert.deepEqual((await service.request('GET', '/api/v1/documents/search?q=gannet', { token: other.token })).body.data, []);
    await eventually(() => chunksOf(first.id) === 0 && chunksOf(second.id) === 0, "the account's chunks are swept");
    await eventually(() => service.db.prepare('SELECT count(*) FROM chunk_sweeps').pluck().get() === 0, 'the sweep list empties');
  });

  test("a replaced run's chunks that a stopped service had not swept yet are swept after a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ams-sweep-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const databasePath = join(dir, 'service.db');
    const first = await startService({ databasePath });
    await first.app.stopBackgroundWork(); // nothing is swept in this process
    const user = await first.signUp();
    const document = await first.create(user.token, '/documents', { name: 'twice', type: 'TXT', url: `${origin}/notes.txt` });
    const store = createIngestionStore(first.db);
    const summary = {
      chunks: 1,
      characters: 3,
      pages: null,
      pagesRead: null,
      splitter: { type: 'character', chunk_size: 1000, chunk_overlap: 200 } as never,
      ingestedAt: '2026-01-01T00:00:00.000000+00:00',
    };
    for (const content of ['first run', 'second run']) {
      store.requestIngestion(user.user.id, document.id);
      const job = store.claim(document.id)!;
      assert.equal(store.storeChunks(job, [content], 0), true);
      assert.equal(store.complete(job, summary), true);
    }
    const contents = (svc: TestService) =>
      svc.db.prepare('SELECT content FROM document_chunks WHERE document_id = ? ORDER BY seq').pluck().all(document.id);
    assert.deepEqual(contents(first), ['first run', 'second run']);
    await first.close();

    const second = await startService({ databasePath });
    await eventually(() => contents(second).length === 1, 'the replaced run is swept after the restart');
    assert.deepEqual(contents(second), ['second run']);
  });

  test('chunks of documents deleted before a restart are swept after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ams-sweep-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const databasePath = join(dir, 'service.db');
    const first = await startService({ databasePath });
    const user = await first.signUp();
    const document = await first.create(user.token, '/documents', { name: 'gone', type: 'TXT', url: `${origin}/notes.txt` });
    await first.app.stopBackgroundWork(); // as if the process stopped right after the delete below
    first.db
      .prepare(
        `INSERT INTO document_chunks (id, user_id, document_id, position, content, created_at) VALUES ('left-1', ?, ?, 0, 'leftover', '')`,
      )
      .run(user.user.id, document.id);
    assert.equal((await first.request('DELETE', `/api/v1/documents/${document.id}`, { token: user.token })).status, 200);
    await first.close();

    const second = await startService({ databasePath });
    await eventually(
      () => second.db.prepare(`SELECT count(*) FROM document_chunks WHERE id = 'left-1'`).pluck().get() === 0,
      'swept after the restart',
    );
  });
});

describe('large documents: chunks are stored a batch at a time', () => {
  const lines = (count: number, word: string) => Array.from({ length: count }, (_, i) => `${word} line ${i}`);
  const oneChunkPerLine = { type: 'character', chunk_size: 20, chunk_overlap: 0 };

  /** Every chunk of the document, walking the pages as a client would. */
  const allChunks = async (id: string, svc = service, auth = token) => svc.listAll(auth, `/documents/${id}/chunks?limit=100`);

  test(`a document of several batches (${CHUNK_BATCH} chunks each) has every chunk once, in order`, async () => {
    const count = Math.floor(CHUNK_BATCH * 2.5);
    routes.set('/many-lines.txt', send('text/plain', lines(count, 'heron').join('\n\n')));
    const document = await ingest({ type: 'TXT', url: `${origin}/many-lines.txt`, splitter: oneChunkPerLine });
    assert.equal(document.status, 'ready', document.error);
    assert.equal(document.index.chunks, count);
    const chunks = await allChunks(document.id);
    assert.deepEqual(
      chunks.map((chunk) => chunk.position),
      [...Array(count).keys()],
    );
    assert.deepEqual(
      chunks.map((chunk) => chunk.content),
      lines(count, 'heron'),
    );
  });

  test("while a new run stores its batches, readers see the previous run's chunks; then only the new ones", async () => {
    const { token: owner, user } = await service.signUp();
    routes.set('/versions.txt', send('text/plain', lines(3, 'egret').join('\n\n')));
    const document = await ingest({ type: 'TXT', url: `${origin}/versions.txt`, splitter: oneChunkPerLine }, service, owner);
    assert.equal(document.status, 'ready', document.error);

    // A run driven by hand, batch by batch, through the same store the queue uses.
    const store = createIngestionStore(service.db);
    assert.equal(store.requestIngestion(user.id, document.id), true);
    const job = store.claim(document.id)!;
    assert.equal(store.storeChunks(job, ['ibis one', 'ibis two'], 0), true);
    const during = await allChunks(document.id, service, owner);
    assert.deepEqual(
      during.map((chunk) => chunk.content),
      lines(3, 'egret'),
      'the half-stored run is invisible',
    );
    const ibisHits = await service.request('GET', '/api/v1/documents/search?q=ibis', { token: owner });
    assert.deepEqual(ibisHits.body.data, [], 'and not searchable');

    assert.equal(store.storeChunks(job, ['ibis three'], 2), true);
    const rows = () => service.db.prepare('SELECT count(*) FROM document_chunks WHERE document_id = ?').pluck().get(document.id);
    assert.equal(
      store.complete(job, {
        chunks: 3,
        characters: 30,
        pages: null,
        pagesRead: null,
        splitter: oneChunkPerLine as never,
        ingestedAt: '2026-01-01T00:00:00.000000+00:00',
      }),
      true,
    );
    assert.equal(rows(), 6, 'the old chunks are still in the table until swept');
    const afterwards = await allChunks(document.id, service, owner);
    assert.deepEqual(
      afterwards.map((chunk) => chunk.content),
      ['ibis one', 'ibis two', 'ibis three'],
    );
    assert.equal((await service.request('GET', '/api/v1/documents/search?q=egret', { token: owner })).body.data.length, 0);
    await eventually(() => rows() === 3, "the previous run's chunks are swept");
    assert.deepEqual(
      (await allChunks(document.id, service, owner)).map((chunk) => chunk.content),
      ['ibis one', 'ibis two', 'ibis three'],
    );
  });

  test('a run superseded mid-way stores nothing more, and its chunks are deleted', async () => {
    const { token: owner, user } = await service.signUp();
    routes.set('/superseded.txt', send('text/plain', lines(2, 'stork').join('\n\n')));
    const document = await ingest({ type: 'TXT', url: `${origin}/superseded.txt`, splitter: oneChunkPerLine }, service, owner);
    const store = createIngestionStore(service.db);
    store.requestIngestion(user.id, document.id);
    const job = store.claim(document.id)!;
    assert.equal(store.storeChunks(job, ['crane one'], 0), true);
    store.requestIngestion(user.id, document.id); // the client asks again: this run is superseded
    assert.equal(store.storeChunks(job, ['crane two'], 1), false);
    assert.equal(
      store.complete(job, {
        chunks: 2,
        characters: 20,
        pages: null,
        pagesRead: null,
        splitter: oneChunkPerLine as never,
        ingestedAt: '2026-01-01T00:00:00.000000+00:00',
      }),
      false,
    );
    const craneRows = () => service.db.prepare(`SELECT count(*) FROM document_chunks WHERE content LIKE 'crane%'`).pluck().get();
    await eventually(() => craneRows() === 0, "the superseded run's chunk is swept");
    assert.deepEqual(
      (await allChunks(document.id, service, owner)).map((chunk) => chunk.content),
      lines(2, 'stork'),
    );
  });
});

describe('database errors', () => {
  test('a database error inside a job is logged and does not end the process; the document stays processing', async () => {
    const quiet = await startService(); // ingestion off: only the queue below works on this database
    const user = await quiet.signUp();
    const created = await quiet.create(user.token, '/documents', { name: 'busy', type: 'TXT', url: `${origin}/notes.txt` });
    const store = createIngestionStore(quiet.db);
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    // Busy for every write at the end of the job: storing the result and recording the failure.
    const failing = {
      ...store,
      complete: () => {
        throw busy;
      },
      fail: () => {
        throw busy;
      },
    };
    const errors: Record<string, unknown>[] = [];
    const queue = new IngestionQueue(
      failing,
      createSealer(randomBytes(32)),
      ingesting,
      {
        info: () => {},
        error: (fields) => errors.push(fields),
      },
      createFileStore(quiet.db),
    );
    queue.start(); // takes up the pending document
    const deadline = Date.now() + 5000;
    while (!errors.some((fields) => fields.msg === 'ingestion job failed')) {
      assert.ok(Date.now() < deadline, 'the error was never logged');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await queue.stop();
    assert.equal(errors.find((fields) => fields.msg === 'ingestion job failed')?.documentId, created.id);
    const document = (await quiet.request('GET', `/api/v1/documents/${created.id}`, { token: user.token })).body.data;
    assert.equal(document.status, 'processing', 'taken up again at the next start');
  });
});

describe('restart', () => {
  test('a document left processing by a stopped service is ingested by the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ams-restart-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const databasePath = join(dir, 'service.db');
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    routes.set('/slow.txt', async (_request, response) => {
      await held;
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('Slow lorises arrive eventually.');
    });

    const first = await startService({ databasePath, ingestion: ingesting });
    const user = await first.signUp();
    const created = await first.request('POST', '/api/v1/documents', {
      token: user.token,
      body: { name: 'slow', type: 'TXT', url: `${origin}/slow.txt` },
    });
    const id = created.body.data.id;
    const deadline = Date.now() + 5000;
    while ((await first.request('GET', `/api/v1/documents/${id}`, { token: user.token })).body.data.status !== 'processing') {
      assert.ok(Date.now() < deadline, 'never reached processing');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await first.close(); // stops mid-fetch: the run is stopped and the row goes back to `pending`
    release();

    const second = await startService({ databasePath, ingestion: ingesting });
    const token2 = (await second.request('POST', '/api/v1/auth/sign-in', { body: { email: user.email, password: user.password } })).body
      .data.token;
    const document = await settled(second, token2, id);
    assert.equal(document.status, 'ready', document.error);
    const hits = (await second.request('GET', '/api/v1/documents/search?q=lorises', { token: token2 })).body.data;
    assert.equal(hits.length, 1);
  });

  test('chunks a stopped service had half-stored are dropped, not shown twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ams-restart-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const databasePath = join(dir, 'service.db');
    routes.set('/half.txt', send('text/plain', 'Puffins nest in burrows.'));

    const first = await startService({ databasePath }); // ingestion off: the run below is driven by hand
    const user = await first.signUp();
    const created = await first.request('POST', '/api/v1/documents', {
      token: user.token,
      body: { name: 'half', type: 'TXT', url: `${origin}/half.txt` },
    });
    const id = created.body.data.id;
    const store = createIngestionStore(first.db);
    const job = store.claim(id)!;
    assert.equal(store.storeChunks(job, ['half-written puffin chunk'], 0), true);
    await first.close(); // stops between batches: the row stays `processing`

    const second = await startService({ databasePath, ingestion: ingesting });
    const token2 = (await second.request('POST', '/api/v1/auth/sign-in', { body: { email: user.email, password: user.password } })).body
      .data.token;
    assert.equal((await settled(second, token2, id)).status, 'ready');
    const chunks = (await second.request('GET', `/api/v1/documents/${id}/chunks`, { token: token2 })).body.data;
    assert.deepEqual(
      chunks.map((chunk: { content: string }) => chunk.content),
      ['Puffins nest in burrows.'],
    );
    assert.equal(second.db.prepare('SELECT count(*) FROM document_chunks WHERE document_id = ?').pluck().get(id), 1);
  });
});

describe('waiting for ingestion: GET /documents/{id}?wait= and progress', () => {
  test('?wait answers as soon as the document is ready, with no polling', async () => {
    let release: () => void = () => {};
    routes.set('/slow.txt', (_request, response) => {
      release = () => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('Slow lorises move slowly.');
      };
    });
    const document = await service.create(token, '/documents', { name: 'slow', type: 'TXT', url: `${origin}/slow.txt` });
    const waiting = service.request('GET', `/api/v1/documents/${document.id}?wait=20`, { token });
    // While the fetch hangs the document is processing and says so.
    let seen: any;
    for (let i = 0; i < 200 && seen?.status !== 'processing'; i++) {
      seen = (await service.request('GET', `/api/v1/documents/${document.id}`, { token })).body.data;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(seen.status, 'processing');
    assert.deepEqual(seen.progress, { phase: 'fetching', chunksStored: 0, chunksTotal: null });
    const started = Date.now();
    setTimeout(() => release(), 200);
    const answered = await waiting;
    assert.equal(answered.status, 200);
    assert.equal(answered.body.data.status, 'ready');
    assert.equal(answered.body.data.progress, undefined, 'no progress once ingestion has ended');
    assert.ok(Date.now() - started < 5000, 'answered when ingestion ended, not at the end of the wait');
  });

  test('?wait gives up after the time asked for; ?wait outside 0-30 is 422', async () => {
    const document = await service.create(token, '/documents', { name: 'silent', type: 'TXT', url: `${origin}/silent.txt` });
    const started = Date.now();
    const reply = await service.request('GET', `/api/v1/documents/${document.id}?wait=0.3`, { token });
    assert.equal(reply.status, 200);
    assert.ok(['pending', 'processing'].includes(reply.body.data.status));
    assert.ok(Date.now() - started >= 250, 'it waited');
    for (const wait of ['31', '-1', 'soon', '']) {
      const bad = await service.request('GET', `/api/v1/documents/${document.id}?wait=${wait}`, { token });
      assert.equal(bad.status, 422, wait);
      assert.deepEqual(
        errorOf(bad).details?.map((issue) => issue.path),
        ['wait'],
      );
    }
  });
});

test('stopping the ingestion queue answers waiting long polls at once', async () => {
  const svc = await startService({ ingestion: ingesting });
  const { token: auth } = await svc.signUp();
  const document = await svc.create(auth, '/documents', { name: 'silent', type: 'TXT', url: `${origin}/silent.txt` });
  const waiting = svc.request('GET', `/api/v1/documents/${document.id}?wait=30`, { token: auth });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const started = Date.now();
  await svc.app.stopBackgroundWork();
  const reply = await waiting;
  assert.equal(reply.status, 200);
  assert.ok(Date.now() - started < 5000, `the long poll was held ${Date.now() - started} ms after stop`);
});
