// Documents made to hurt the service: a small text whose splitter settings would make a huge index
// (LangChain's overlap does not count the separators between pieces, so with tiny paragraphs each
// chunk moves on by one paragraph), a long text whose splitting would hold the event loop, and a
// document whose ingestion is under way whenever the process dies (the service must not crash-loop).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, waitFor, type TestService } from './helpers.js';
import { startServiceProcess, type ServiceProcess } from './run-script.js';
import { INTERRUPTED_TWICE } from '../src/documents/ingestion-store.js';

// ---- A fixture server: /hang/<name> never answers unless the test lets it, the others answer text --

/** The /hang/ names in the order their requests arrived. */
const arrivals: string[] = [];
/** /hang/ names that answer from now on. */
const answering = new Set<string>();
let longText = '';
const fixture = createServer((request, response) => {
  const url = request.url ?? '';
  if (url === '/long.txt') return void response.writeHead(200, { 'content-type': 'text/plain' }).end(longText);
  if (!url.startsWith('/hang/')) return void response.writeHead(404).end();
  const name = url.slice(6);
  arrivals.push(name);
  if (answering.has(name)) response.writeHead(200, { 'content-type': 'text/plain' }).end(`Document ${name} about capybaras.`);
});
await new Promise<void>((resolve) => fixture.listen(0, '127.0.0.1', resolve));
after(() => {
  fixture.closeAllConnections();
  fixture.close();
});
const origin = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;

const ingesting = { enabled: true, concurrency: 2, maxBytes: 32 * 1024 * 1024, timeoutMs: 60_000, allowPrivateNetworks: true };

/** Uploads `content` as a text file with `splitter`. */
async function upload(service: TestService, token: string, content: string, splitter: object): Promise<string> {
  const form = new FormData();
  form.append('splitter', JSON.stringify(splitter));
  form.append('file', new Blob([content], { type: 'text/plain' }), 'paragraphs.txt');
  const response = await fetch(`${service.url}/api/v1/documents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
    body: form,
  });
  const body = (await response.json()) as any;
  assert.equal(response.status, 201, JSON.stringify(body));
  return body.data.id;
}

/** The document once ready or failed (waiting generously: a broken split can take minutes). */
async function settled(service: { request: TestService['request'] }, token: string, id: string): Promise<any> {
  for (let i = 0; i < 10; i += 1) {
    const document = (await service.request('GET', `/api/v1/documents/${id}?wait=30`, { token })).body.data;
    if (document.status === 'ready' || document.status === 'failed') return document;
  }
  assert.fail('the document never settled');
}

describe('splitter settings that would make a huge index', () => {
  test('tiny paragraphs with a large chunk_overlap fail at once, asking for a smaller chunk_overlap; nothing is stored', async () => {
    const service = await startService({ ingestion: ingesting });
    const { token } = await service.signUp();
    for (const [paragraphs, chunk_size, chunk_overlap] of [
      [16_600, 20_000, 7_000], // 49,800 bytes that made 9,934 chunks of about 20,000 characters (200 MB)
      [150_000, 30_000, 11_000], // 450 KB that ran the process out of memory
    ]) {
      const id = await upload(service, token, 'a\n\n'.repeat(paragraphs), { type: 'character', chunk_size, chunk_overlap });
      const document = await settled(service, token, id);
      assert.equal(document.status, 'failed', `${paragraphs} paragraphs: ${document.status}`);
      assert.equal(
        document.error,
        `the chunks would hold more than 4 times the text's ${3 * paragraphs} characters ` +
          `(chunk_overlap ${chunk_overlap} with chunk_size ${chunk_size} repeats too much of it): use a smaller chunk_overlap`,
      );
      const stored = service.db.prepare('SELECT count(*) FROM document_chunks WHERE document_id = ?').pluck().get(id);
      assert.equal(stored, 0);
    }
    assert.equal((await service.request('GET', '/healthz')).status, 200);
  });

  test('while a long text is split, other requests are served', async () => {
    const service = await startService({ ingestion: ingesting });
    const { token } = await service.signUp();
    // 3 MB of one-letter paragraphs in 30 chunks: splitting it is a long run of small steps.
    longText = 'a\n\n'.repeat(1_000_000);
    const created = await service.request('POST', '/api/v1/documents', {
      token,
      body: {
        name: 'long',
        type: 'TXT',
        url: `${origin}/long.txt`,
        splitter: { type: 'character', chunk_size: 100_000, chunk_overlap: 0 },
      },
    });
    assert.equal(created.status, 201);
    const id = created.body.data.id;
    // Split in one piece, the text would hold every request until it is done: the document would
    // never be seen while extracting (a TXT's text is read at once, then split).
    let seenSplitting = 0;
    for (;;) {
      const document = (await service.request('GET', `/api/v1/documents/${id}`, { token })).body.data;
      if (document.progress?.phase === 'extracting') seenSplitting += 1;
      if (document.status === 'ready' || document.status === 'failed') {
        assert.equal(document.status, 'ready', document.error);
        assert.equal(document.index.chunks, 30);
        break;
      }
    }
    assert.ok(seenSplitting >= 2, `requests answered while the text was split: ${seenSplitting}`);
  });
});

describe('a document under way whenever the process dies', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ams-hostile-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { DATABASE_PATH: join(dir, 'service.db'), ALLOW_PRIVATE_NETWORKS: 'on', INGEST_TIMEOUT_MS: '60000' };
  const fetchedTimes = (name: string) => arrivals.filter((arrival) => arrival === name).length;

  /** Starts the service, waits until it fetches `name` for the `times`th time, then kills it (or stops it with SIGTERM). */
  async function startAndEnd(name: string, times: number, how: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const service = await startServiceProcess(env);
    await waitFor(`fetch ${times} of ${name}`, () => fetchedTimes(name) >= times, 20_000);
    if (how === 'SIGKILL') {
      service.child.kill('SIGKILL');
      await service.exited;
    } else {
      assert.equal(await service.stop(), 0, service.stderrText());
    }
  }

  test('is tried again once; the second time it fails with a clear error instead of running at every start', async () => {
    let service: ServiceProcess = await startServiceProcess(env);
    const { token } = await service.signUp();
    const created = await service.request('POST', '/api/v1/documents', {
      token,
      body: { name: 'crasher', type: 'TXT', url: `${origin}/hang/crasher` },
    });
    assert.equal(created.status, 201);
    const id = created.body.data.id;
    await waitFor('the first fetch', () => fetchedTimes('crasher') === 1, 20_000);
    service.child.kill('SIGKILL'); // the process dies while the document is being ingested
    await service.exited;

    await startAndEnd('crasher', 2, 'SIGKILL'); // the next start tries it again, and dies again

    service = await startServiceProcess(env);
    const document = (await service.request('GET', `/api/v1/documents/${id}`, { token })).body.data;
    assert.equal(document.status, 'failed');
    assert.equal(document.error, INTERRUPTED_TWICE);
    assert.equal(fetchedTimes('crasher'), 2, 'not fetched a third time');

    // Asked for again, it gets a fresh start.
    answering.add('crasher');
    assert.equal((await service.request('POST', `/api/v1/documents/${id}/ingest`, { token })).status, 202);
    assert.equal((await settled(service, token, id)).status, 'ready');
    assert.equal(await service.stop(), 0, service.stderrText());
  });

  test('a service stopped with SIGTERM while ingesting does not count: the document is taken up at every start', async () => {
    let service: ServiceProcess = await startServiceProcess(env);
    const { token } = await service.signUp();
    const created = await service.request('POST', '/api/v1/documents', {
      token,
      body: { name: 'patient', type: 'TXT', url: `${origin}/hang/patient` },
    });
    const id = created.body.data.id;
    await waitFor('the first fetch', () => fetchedTimes('patient') === 1, 20_000);
    assert.equal(await service.stop(), 0, service.stderrText());
    await startAndEnd('patient', 2, 'SIGTERM');
    await startAndEnd('patient', 3, 'SIGTERM');

    answering.add('patient');
    service = await startServiceProcess(env);
    const document = await settled(service, token, id);
    assert.equal(document.status, 'ready', document.error);
    assert.equal(await service.stop(), 0, service.stderrText());
  });
});
