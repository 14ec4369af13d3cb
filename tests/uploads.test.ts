// Documents uploaded as files (POST /documents with multipart/form-data), through HTTP: each type
// ingested from the stored bytes and searchable, the type told from the file, the file served
// back to its owner only, and bad uploads (over the limit, malformed, cut short, of the wrong
// content) refused with nothing left behind.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { makePdf } from './fixtures/ingest/pdf.js';
import { errorOf, startService, testConfig, type TestService } from './helpers.js';

const LIMIT = 256 * 1024;
const service = await startService({ ingestion: testConfig({ INGEST: 'on' }).ingestion, uploadMaxBytes: LIMIT });
const { token } = await service.signUp();
const other = await service.signUp();

const CAPTIONS =
  'WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nWelcome to the axolotl lecture.\n\n00:00:05.000 --> 00:00:07.000\nThey regrow limbs.\n';
const SRT = '1\n00:00:01,000 --> 00:00:03,000\nManatees graze on seagrass.\n\n2\n00:00:04,000 --> 00:00:06,000\nSlowly.\n';
const HTML = '<!doctype html><html><body><nav>menuword</nav><h1>Narwhal facts</h1><p>The narwhal tusk is a tooth.</p></body></html>';

interface FilePart {
  content: string | Uint8Array;
  filename?: string;
  type?: string;
}

/** Uploads `file` with `fields` as a browser's FormData would send them. */
async function upload(file: FilePart | undefined, fields: Record<string, string> = {}, auth = token) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file)
    form.append(
      'file',
      new Blob([typeof file.content === 'string' ? file.content : new Uint8Array(file.content)], { type: file.type ?? '' }),
      file.filename ?? 'upload.bin',
    );
  const response = await fetch(`${service.url}/api/v1/documents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${auth}` },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function settled(id: string, auth = token): Promise<any> {
  const reply = await service.request('GET', `/api/v1/documents/${id}?wait=30`, { token: auth });
  assert.ok(['ready', 'failed'].includes(reply.body.data.status), JSON.stringify(reply.body));
  return reply.body.data;
}

async function searchIds(words: string): Promise<string[]> {
  const reply = await service.request('GET', `/api/v1/documents/search?q=${encodeURIComponent(words)}`, { token });
  assert.equal(reply.status, 200);
  return reply.body.data.map((hit: { documentId: string }) => hit.documentId);
}

/** Counts what an upload could leave behind: documents, file records and file parts. */
function storedCounts(): { documents: number; files: number; parts: number } {
  const count = (table: string) => service.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
  return { documents: count('documents'), files: count('document_files'), parts: count('document_file_parts') };
}

describe('uploading each type', () => {
  const cases: { what: string; file: FilePart; type: string; words: string }[] = [
    {
      what: 'plain text',
      file: { content: 'Aardvarks dig burrows at night.', filename: 'notes.txt', type: 'text/plain' },
      type: 'TXT',
      words: 'aardvarks',
    },
    {
      what: 'Markdown',
      file: { content: '# Tapirs\n\nTapirs browse leaves.', filename: 'tapirs.md' },
      type: 'TXT',
      words: 'tapirs browse',
    },
    {
      what: 'CSV',
      file: { content: 'animal,habitat\nokapi,rainforest\n', filename: 'table.csv', type: 'text/csv' },
      type: 'CSV',
      words: 'okapi rainforest',
    },
    { what: 'HTML', file: { content: HTML, filename: 'page.html', type: 'text/html' }, type: 'URL', words: 'narwhal tusk' },
    {
      what: 'PDF',
      file: {
        content: makePdf([['Chapter one about otters'], ['Chapter two about beavers']]),
        filename: 'book.pdf',
        type: 'application/pdf',
      },
      type: 'PDF',
      words: 'beavers',
    },
    {
      what: 'WebVTT captions',
      file: { content: CAPTIONS, filename: 'talk.vtt', type: 'text/vtt' },
      type: 'VIDEO',
      words: 'axolotl lecture',
    },
    { what: 'SRT captions', file: { content: SRT, filename: 'talk.srt' }, type: 'VIDEO', words: 'manatees seagrass' },
  ];
  for (const { what, file, type, words } of cases) {
    test(`${what}: detected as ${type}, ingested from the stored bytes, searchable`, async () => {
      const created = await upload(file);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const document = created.body.data;
      assert.equal(document.type, type);
      assert.equal(document.name, file.filename);
      assert.equal(document.url, `${service.url}/api/v1/documents/${document.id}/file`);
      const done = await settled(document.id);
      assert.equal(done.status, 'ready', done.error);
      assert.ok(done.index.chunks >= 1);
      assert.deepEqual(await searchIds(words), [document.id]);
    });
  }

  test('the JSON fields as form fields: name, type, pages, splitter and metadata', async () => {
    const pdf = makePdf([['Page about herons'], ['Page about egrets'], ['Page about storks']]);
    const created = await upload(
      { content: pdf, filename: 'birds.bin', type: 'application/octet-stream' },
      { name: 'Birds', type: 'PDF', from_page: '2', to_page: '2', splitter: '{"chunk_size":500}', metadata: '{"shelf":"B"}' },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const document = created.body.data;
    assert.deepEqual(
      [document.name, document.type, document.from_page, document.to_page, document.splitter, document.metadata, document.hasAuthorization],
      ['Birds', 'PDF', 2, 2, { type: 'character', chunk_size: 500, chunk_overlap: 100 }, { shelf: 'B' }, false],
    );
    const done = await settled(document.id);
    assert.equal(done.status, 'ready', done.error);
    assert.equal(done.index.pagesRead, 1);
    assert.deepEqual(await searchIds('egrets'), [document.id]);
    assert.deepEqual(await searchIds('herons'), []);
  });

  test('a long file name is cut between characters: the name shown is valid and PATCHes back as it is', async () => {
    const cases = [
      // 405 UTF-16 code units; the 200th is the first half of an emoji.
      { disposition: `filename="x${'😀'.repeat(200)}.txt"`, name: `x${'😀'.repeat(99)}`, file: `x${'😀'.repeat(127)}` },
      // Control characters and line breaks (percent-encoded in filename*: busboy refuses most raw) become spaces.
      {
        disposition: "filename*=UTF-8''tab%09here%1B%5B31m%20red%C2%85%0A.txt",
        name: 'tab here [31m red  .txt',
        file: 'tab\there\u001b[31m red\u0085\n.txt',
      },
    ];
    for (const { disposition, name, file } of cases) {
      const boundary = 'long-name-boundary';
      const raw = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; ${disposition}\r\n\r\n`),
        Buffer.from('Ocelots hunt at dusk.'),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const created = await service.request('POST', '/api/v1/documents', {
        token,
        raw: new Uint8Array(raw),
        contentType: `multipart/form-data; boundary=${boundary}`,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const { id } = created.body.data;
      const shown = (await service.request('GET', `/api/v1/documents/${id}`, { token })).body.data.name;
      assert.equal(shown, name);
      const patched = await service.request('PATCH', `/api/v1/documents/${id}`, { token, body: { name: shown } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.equal(patched.body.data.name, name);
      // The file keeps its own name (up to 255 code units, also cut between characters).
      const response = await fetch(`${service.url}/api/v1/documents/${id}/file`, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(response.status, 200);
      const header = response.headers.get('content-disposition') ?? '';
      assert.equal(decodeURIComponent(header.slice(header.indexOf("UTF-8''") + 7)), file);
    }
  });

  test('a given type wins over what the file looks like: HTML uploaded as TXT is refused as HTML only when it says it is a page', async () => {
    const markdown = await upload({ content: '<p align="center">Logo</p>\n\nQuolls hunt at night.', filename: 'README.md' });
    assert.equal(markdown.status, 201);
    assert.equal(markdown.body.data.type, 'TXT');
    assert.equal((await settled(markdown.body.data.id)).status, 'ready');
  });

  test('the type is told from the first bytes when neither the name nor the media type says', async () => {
    const cases: [FilePart, string][] = [
      [{ content: makePdf([['Sniffed']]), filename: 'scan' }, 'PDF'],
      [{ content: CAPTIONS, filename: 'captions' }, 'VIDEO'],
      [{ content: HTML, filename: 'saved' }, 'URL'],
      [{ content: 'Just words.', filename: 'words' }, 'TXT'],
      [{ content: 'col\nvalue\n', filename: 'x', type: 'text/csv' }, 'CSV'],
    ];
    for (const [file, type] of cases) {
      const created = await upload(file);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.data.type, type, file.filename);
    }
    const binary = await upload({ content: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]), filename: 'image' });
    assert.equal(binary.status, 422);
    assert.equal(binary.body.error.details[0].path, 'type');
  });
});

describe('the file endpoint', () => {
  test('answers the bytes to their owner, with the media type and an attachment naming the file; 404 to anyone else', async () => {
    const bytes = makePdf([['Downloadable']]);
    // Sent by hand: FormData would write the quotes of the name as %22.
    const boundary = 'name-boundary';
    const raw = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="日本 \\"report\\"; v2.pdf"\r\n\r\n`),
      Buffer.from(bytes),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const created = await service.request('POST', '/api/v1/documents', {
      token,
      raw: new Uint8Array(raw),
      contentType: `multipart/form-data; boundary=${boundary}`,
    });
    assert.equal(created.status, 201);
    const { id } = created.body.data;
    const response = await fetch(`${service.url}/api/v1/documents/${id}/file`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(response.status, 200);
    assert.ok(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(bytes)), 'the bytes as uploaded');
    assert.equal(response.headers.get('content-type'), 'application/pdf');
    assert.equal(response.headers.get('content-length'), String(bytes.length));
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    // The quoted name is ASCII with its quotes escaped (no header can be forged with it); filename* holds the whole name.
    assert.equal(
      response.headers.get('content-disposition'),
      `attachment; filename="?? \\"report\\"; v2.pdf"; filename*=UTF-8''${encodeURIComponent('日本 "report"; v2.pdf')}`,
    );

    for (const [who, auth] of [
      ['another user', other.token],
      ['nobody', undefined],
    ] as const) {
      const denied = await service.request('GET', `/api/v1/documents/${id}/file`, { token: auth });
      assert.equal(denied.status, auth ? 404 : 401, who);
    }
  });

  test('a document fetched from a URL has no file (404)', async () => {
    const created = await service.request('POST', '/api/v1/documents', {
      token,
      body: { name: 'web', type: 'TXT', url: 'https://example.com/a.txt' },
    });
    assert.equal(created.status, 201);
    const reply = await service.request('GET', `/api/v1/documents/${created.body.data.id}/file`, { token });
    assert.equal(reply.status, 404);
  });

  test('an HTML upload is served as an attachment that cannot run as a page of this origin', async () => {
    const created = await upload({ content: HTML, filename: 'page.html', type: 'text/html' });
    const response = await fetch(`${service.url}/api/v1/documents/${created.body.data.id}/file`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(response.headers.get('content-type'), 'text/html');
    assert.match(response.headers.get('content-security-policy') ?? '', /sandbox/);
    assert.match(response.headers.get('content-disposition') ?? '', /^attachment/);
    assert.equal(await response.text(), HTML);
  });

  test('deleting the document deletes its file and every part', async () => {
    const created = await upload({ content: 'z'.repeat(200 * 1024), filename: 'big.txt' });
    assert.equal(created.status, 201);
    const before = storedCounts();
    assert.equal((await service.request('DELETE', `/api/v1/documents/${created.body.data.id}`, { token })).status, 200);
    const afterDelete = storedCounts();
    assert.equal(afterDelete.files, before.files - 1);
    const left = service.db.prepare('SELECT count(*) FROM document_file_parts WHERE document_id = ?').pluck().get(created.body.data.id);
    assert.equal(left, 0);
  });
});

describe('re-ingesting', () => {
  test('reads the stored bytes: no source is needed', async () => {
    const created = await upload({ content: 'Wombats leave cubic droppings.', filename: 'wombats.txt' });
    const { id } = created.body.data;
    assert.equal((await settled(id)).status, 'ready');
    const again = await service.request('POST', `/api/v1/documents/${id}/ingest`, { token });
    assert.equal(again.status, 202);
    const done = await settled(id);
    assert.equal(done.status, 'ready', done.error);
    assert.deepEqual(await searchIds('cubic droppings'), [id]);
    // A change of splitter ingests it again, from the same bytes.
    const patched = await service.request('PATCH', `/api/v1/documents/${id}`, {
      token,
      body: { splitter: { type: 'recursive', chunk_size: 10, chunk_overlap: 0 } },
    });
    assert.equal(patched.status, 200);
    const split = await settled(id);
    assert.equal(split.status, 'ready', split.error);
    assert.ok(split.index.chunks > 1);
  });
});

describe('a new URL', () => {
  test('makes the document a fetched one: the file is dropped with its parts', async () => {
    const created = await upload({ content: 'Dugongs are sea cows.', filename: 'dugongs.txt' });
    const { id } = created.body.data;
    const moved = await service.request('PATCH', `/api/v1/documents/${id}`, { token, body: { url: 'https://example.com/dugongs.txt' } });
    assert.equal(moved.status, 200);
    assert.equal(moved.body.data.url, 'https://example.com/dugongs.txt');
    assert.equal((await service.request('GET', `/api/v1/documents/${id}/file`, { token })).status, 404);
    const parts = service.db.prepare('SELECT count(*) FROM document_file_parts WHERE document_id = ?').pluck().get(id);
    assert.equal(parts, 0);
  });
});

describe('bad uploads: a clear 4xx and nothing stored', () => {
  test('content that does not match the given type is refused with the reason', async () => {
    const before = storedCounts();
    const cases: [FilePart, Record<string, string>, RegExp][] = [
      [{ content: 'Not a PDF at all.', filename: 'fake.pdf' }, {}, /not a PDF/],
      [{ content: makePdf([['x']]), filename: 'book.txt' }, { type: 'TXT' }, /is a PDF; give the type PDF/],
      [{ content: 'Plain words, no cues.', filename: 'talk.txt' }, { type: 'VIDEO' }, /WebVTT or SRT/],
      [{ content: HTML, filename: 'page.html' }, { type: 'CSV' }, /web page \(HTML\); give the type URL/],
      [{ content: new Uint8Array([1, 2, 0, 3]), filename: 'blob.txt' }, {}, /binary/],
    ];
    for (const [file, fields, reason] of cases) {
      const reply = await upload(file, fields);
      assert.equal(reply.status, 422, JSON.stringify(reply.body));
      assert.equal(reply.body.error.details[0].path, 'file');
      assert.match(reply.body.error.details[0].message, reason);
    }
    assert.deepEqual(storedCounts(), before);
  });

  test('bad fields: 422 naming each, nothing stored', async () => {
    const before = storedCounts();
    const file = { content: 'Words.', filename: 'a.txt' };
    const cases: [FilePart | undefined, Record<string, string>, string][] = [
      [undefined, { name: 'no file' }, 'file'],
      [file, { type: 'DOCX' }, 'type'],
      [file, { from_page: 'first' }, 'from_page'],
      [file, { metadata: '{not json' }, 'metadata'],
      [file, { metadata: '[1]' }, 'metadata'],
      [file, { url: 'https://example.com/x' }, 'url'],
      [file, { authorization: '{}' }, 'authorization'],
      [{ content: '', filename: 'empty.txt' }, {}, 'file'],
    ];
    for (const [part, fields, path] of cases) {
      const reply = await upload(part, fields);
      assert.equal(reply.status, 422, `${path}: ${JSON.stringify(reply.body)}`);
      assert.equal(reply.body.error.details[0].path, path);
    }
    assert.deepEqual(storedCounts(), before);
  });

  test('a field refused before a large file: the client still gets the 422, not a closed connection', async () => {
    const before = storedCounts();
    const reply = await upload({ content: 'w'.repeat(LIMIT - 1024), filename: 'big.txt' }, { url: 'https://example.com/x' });
    assert.equal(reply.status, 422, JSON.stringify(reply.body));
    assert.equal(reply.body.error.details[0].path, 'url');
    assert.deepEqual(storedCounts(), before);
  });

  test('malformed multipart bodies: 400 invalid_form', async () => {
    const before = storedCounts();
    const bodies: [string, string][] = [
      ['multipart/form-data', '--x\r\n\r\n'], // no boundary
      ['multipart/form-data; boundary=x', 'nothing like a form'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nWords cut sh'], // no closing boundary
    ];
    for (const [contentType, raw] of bodies) {
      const reply = await service.request('POST', '/api/v1/documents', { token, raw, contentType });
      assert.equal(reply.status, 400, `${contentType} ${raw}: ${reply.text}`);
      assert.equal(errorOf(reply).code, 'invalid_form');
    }
    assert.deepEqual(storedCounts(), before);
  });

  test('a file of exactly UPLOAD_MAX_BYTES is taken; one byte more is 413', async () => {
    const exact = await upload({ content: 'w'.repeat(LIMIT), filename: 'exact.txt' });
    assert.equal(exact.status, 201, JSON.stringify(exact.body));
    const before = storedCounts();
    const over = await upload({ content: 'w'.repeat(LIMIT + 1), filename: 'over.txt' });
    assert.equal(over.status, 413);
    assert.deepEqual(storedCounts(), before);
  });

  test('over UPLOAD_MAX_BYTES: 413 while the body is still arriving, and nothing stored', async () => {
    const before = storedCounts();
    const boundary = 'limit-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.txt"\r\nContent-Type: text/plain\r\n\r\n`;
    const declared = 64 * 1024 * 1024; // the body the client says it will send
    const { status, body, sentBytes } = await new Promise<{ status: number; body: string; sentBytes: number }>((resolve, reject) => {
      const req = httpRequest(`${service.url}/api/v1/documents`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': String(declared),
        },
      });
      let sent = 0;
      let answered = false;
      const chunk = Buffer.alloc(16 * 1024, 'a');
      req.write(head);
      // Slowly: 16 KiB every 5 ms, until the answer arrives (or far past the limit).
      const timer = setInterval(() => {
        if (answered || sent > 8 * LIMIT) return clearInterval(timer);
        sent += chunk.length;
        req.write(chunk);
      }, 5);
      req.on('response', (response) => {
        answered = true;
        const sentBytes = sent;
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (piece) => (text += piece));
        response.on('end', () => {
          clearInterval(timer);
          req.destroy();
          resolve({ status: response.statusCode ?? 0, body: text, sentBytes });
        });
      });
      req.on('error', (error) => {
        clearInterval(timer);
        if (!answered) reject(error);
      });
    });
    assert.equal(status, 413, body);
    assert.equal(JSON.parse(body).error.code, 'payload_too_large');
    // The answer came while the body was far from whole: soon after the limit.
    assert.ok(sentBytes < 4 * LIMIT, `answered after ${sentBytes} bytes`);
    assert.ok(sentBytes < declared);
    assert.deepEqual(storedCounts(), before);
  });

  test('a body cut short by the client going away leaves nothing behind', async () => {
    const before = storedCounts();
    const boundary = 'cut-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\n`;
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${service.url}/api/v1/documents`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': '1000000',
        },
      });
      req.on('error', () => resolve());
      req.write(head + 'b'.repeat(300_000 - head.length), () => setTimeout(() => req.destroy(), 50));
      req.on('close', () => resolve());
    });
    // The service notices the broken connection; give it a moment.
    const deadline = Date.now() + 5000;
    while (storedCounts().parts !== before.parts && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(storedCounts(), before);
  });
});

describe('the JSON body', () => {
  test('creates a document from a URL exactly as before; other media types are still 415', async () => {
    const created = await service.request('POST', '/api/v1/documents', {
      token,
      body: { name: 'json', type: 'URL', url: 'https://example.com/page', metadata: { a: 1 } },
    });
    assert.equal(created.status, 201);
    assert.deepEqual(
      [created.body.data.type, created.body.data.url, created.body.data.metadata],
      ['URL', 'https://example.com/page', { a: 1 }],
    );
    const text = await service.request('POST', '/api/v1/documents', { token, raw: 'name=x', contentType: 'text/plain' });
    assert.equal(text.status, 415);
    // multipart elsewhere is still refused as a body that is not JSON.
    const elsewhere = await service.request('POST', '/api/v1/tags', {
      token,
      raw: '--x--',
      contentType: 'multipart/form-data; boundary=x',
    });
    assert.equal(elsewhere.status, 415);
  });

  test('an upload without a token is refused before anything is stored', async () => {
    const before = storedCounts();
    const reply = await upload({ content: 'Words.', filename: 'a.txt' }, {}, 'not-a-token');
    assert.equal(reply.status, 401);
    assert.deepEqual(storedCounts(), before);
  });
});

export type { TestService };
