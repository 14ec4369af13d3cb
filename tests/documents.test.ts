// `/documents`: create, read and list as original clients do, and the added PATCH and DELETE.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertDeletes, assertHiddenFrom, assertInvalid, assertNotFound, errorOf, startService, TIMESTAMP, type Reply } from './helpers.js';

const service = await startService();
const { request, createDocument } = service;

const DOCUMENT_TYPES = ['TXT', 'PDF', 'VIDEO', 'CSV', 'URL'];
const SECRET = 'doc-bearer-3f9a61c2d7';

const BASE = { name: 'Handbook', type: 'PDF', url: 'https://example.com/handbook.pdf' };

/** Asserts the credentials appear nowhere in a response. */
function assertNoAuthorization(reply: Reply): void {
  const text = JSON.stringify(reply.body);
  assert.ok(!text.includes(SECRET), `the credentials leaked: ${text}`);
  const records = Array.isArray(reply.body.data) ? reply.body.data : [reply.body.data];
  for (const record of records) assert.ok(!('authorization' in record), 'authorization is never echoed');
}

/**
 * The stored `authorization` column of a document as kept in the database file (null when none).
 * The service may seal it at rest, so tests compare stored values rather than read them.
 */
function storedAuthorization(id: string): string | null {
  return service.db.prepare('SELECT authorization FROM documents WHERE id = ?').pluck().get(id) as string | null;
}

describe('POST /documents', () => {
  test('201 with every field given; authorization stored but not echoed', async () => {
    const { token, user, email } = await service.signUp('Doc Owner');
    const reply = await request('POST', '/api/v1/documents', {
      token,
      body: {
        name: 'Handbook',
        type: 'PDF',
        url: 'https://example.com/handbook.pdf',
        from_page: 2,
        to_page: 9,
        authorization: { bearer: SECRET },
        splitter: { type: 'recursive', chunk_size: 500, chunk_overlap: 50 },
        metadata: { lang: 'en', tags: ['hr'] },
      },
    });
    assert.equal(reply.status, 201);
    assert.equal(reply.body.success, true);
    const document = reply.body.data;
    assert.equal(typeof document.id, 'string');
    assert.equal(document.userId, user.id);
    assert.equal(document.user.id, user.id);
    assert.equal(document.user.email, email);
    assert.ok(!('password' in document.user), 'the nested user never carries the hash');
    assert.equal(document.type, 'PDF');
    assert.equal(document.url, 'https://example.com/handbook.pdf');
    assert.equal(document.from_page, 2);
    assert.equal(document.to_page, 9);
    assert.deepEqual(document.splitter, { type: 'recursive', chunk_size: 500, chunk_overlap: 50 });
    assert.deepEqual(document.metadata, { lang: 'en', tags: ['hr'] });
    assert.match(document.createdAt, TIMESTAMP);
    assert.match(document.updatedAt, TIMESTAMP);
    assert.equal(document.index ?? null, null);
    assertNoAuthorization(reply);
    assert.notEqual(storedAuthorization(document.id), null, 'the credentials are stored');
  });

  test('defaults: from_page 1, to_page null, splitter null, metadata {}', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token);
    assert.equal(document.from_page, 1);
    assert.equal(document.to_page, null);
    assert.equal(document.splitter, null);
    assert.deepEqual(document.metadata, {});
    assert.equal(storedAuthorization(document.id), null);
  });

  test('to_page accepts a number or a numeric string', async () => {
    const { token } = await service.signUp();
    assert.equal((await createDocument(token, { to_page: 5 })).to_page, 5);
    assert.equal((await createDocument(token, { to_page: '5' })).to_page, 5);
    assert.equal((await createDocument(token, { from_page: 3, to_page: '3' })).to_page, 3);
  });

  test('to_page that is not a whole number is 422 at path to_page', async () => {
    const { token } = await service.signUp();
    for (const to_page of ['five', '5.5', 2.5, 0, true]) {
      assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, to_page } }), 'to_page');
    }
  });

  test('from_page must be a whole number of at least 1', async () => {
    const { token } = await service.signUp();
    for (const from_page of [0, -1, 1.5, '2']) {
      assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, from_page } }), 'from_page');
    }
  });

  test('to_page below from_page is 422 at path to_page', async () => {
    const { token } = await service.signUp();
    assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, from_page: 5, to_page: 4 } }), 'to_page');
    assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, from_page: 5, to_page: '4' } }), 'to_page');
  });

  test('splitter CharacterTextSplitter is normalised to character with the default sizes', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token, { splitter: { type: 'CharacterTextSplitter' } });
    assert.deepEqual(document.splitter, { type: 'character', chunk_size: 1000, chunk_overlap: 200 });
    const read = await request('GET', `/api/v1/documents/${document.id}`, { token });
    assert.deepEqual(read.body.data.splitter, { type: 'character', chunk_size: 1000, chunk_overlap: 200 });
  });

  test('splitter RecursiveCharacterTextSplitter is normalised to recursive', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token, {
      splitter: { type: 'RecursiveCharacterTextSplitter', chunk_size: 800, chunk_overlap: 100 },
    });
    assert.deepEqual(document.splitter, { type: 'recursive', chunk_size: 800, chunk_overlap: 100 });
  });

  test('splitter chunk_overlap not below chunk_size is 422 at path splitter.chunk_overlap', async () => {
    const { token } = await service.signUp();
    for (const splitter of [
      { type: 'character', chunk_size: 100, chunk_overlap: 100 },
      { type: 'recursive', chunk_size: 100, chunk_overlap: 150 },
    ]) {
      assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, splitter } }), 'splitter.chunk_overlap');
    }
  });

  test('an unknown splitter type is 422 at path splitter.type', async () => {
    const { token } = await service.signUp();
    assertInvalid(
      await request('POST', '/api/v1/documents', { token, body: { ...BASE, splitter: { type: 'TokenTextSplitter' } } }),
      'splitter.type',
    );
  });

  test('a url that is not an absolute http(s) URL is 422 at path url', async () => {
    const { token } = await service.signUp();
    for (const url of ['ftp://example.com/file.txt', 'not a url', '/x', 'javascript:alert(1)', 42]) {
      assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, url } }), 'url');
    }
    assert.equal((await createDocument(token, { url: 'http://example.com/a.txt' })).url, 'http://example.com/a.txt');
  });

  test('every document type original clients send is accepted; others are 422 at path type', async () => {
    const { token } = await service.signUp();
    for (const type of DOCUMENT_TYPES) {
      const reply = await request('POST', '/api/v1/documents', { token, body: { ...BASE, type } });
      assert.equal(reply.status, 201, type);
      assert.equal(reply.body.data.type, type);
    }
    assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, type: 'DOCX' } }), 'type');
    assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, type: 'pdf' } }), 'type');
  });

  test('name, type and url are required', async () => {
    const { token } = await service.signUp();
    for (const field of ['name', 'type', 'url'] as const) {
      const body: Record<string, unknown> = { ...BASE };
      delete body[field];
      assertInvalid(await request('POST', '/api/v1/documents', { token, body }), field);
    }
    assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, name: '   ' } }), 'name');
  });

  test('authorization and metadata must be objects (authorization may be null)', async () => {
    const { token } = await service.signUp();
    assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, authorization: 'Bearer x' } }), 'authorization');
    assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, metadata: 'x' } }), 'metadata');
    const document = await createDocument(token, { authorization: null });
    assert.equal(storedAuthorization(document.id), null);
  });

  test('an array is not an object: authorization [] or metadata [] is 422 at that path', async () => {
    const { token } = await service.signUp();
    assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, authorization: [] } }), 'authorization');
    assertInvalid(await request('POST', '/api/v1/documents', { token, body: { ...BASE, metadata: ['a'] } }), 'metadata');
  });
});

describe('GET /documents/{documentId}', () => {
  test('the document with its name, as created; no authorization', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token, { name: 'Read me', authorization: { bearer: SECRET } });
    const reply = await request('GET', `/api/v1/documents/${document.id}`, { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.equal(reply.body.data.name, 'Read me');
    assert.deepEqual(reply.body.data, document);
    assertNoAuthorization(reply);
  });

  test('an unknown id is 404', async () => {
    const { token } = await service.signUp();
    assertNotFound(await request('GET', `/api/v1/documents/${randomUUID()}`, { token }), 'unknown id');
  });
});

describe('GET /documents', () => {
  test("an array of the caller's documents, oldest first; no authorization", async () => {
    const { token } = await service.signUp();
    const other = await service.signUp();
    const first = await createDocument(token, { name: 'first', authorization: { bearer: SECRET } });
    await createDocument(other.token, { name: 'not mine' });
    const second = await createDocument(token, { name: 'second', type: 'TXT' });

    const reply = await request('GET', '/api/v1/documents', { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.deepEqual(
      reply.body.data.map((document: { id: string }) => document.id),
      [first.id, second.id],
    );
    assert.deepEqual(reply.body.data[0], first);
    assert.equal(reply.headers.get('link'), null);
    assertNoAuthorization(reply);
  });
});

describe('GET /documents filters', () => {
  test('?status= and ?type= filter the list; an unknown value is 422 at its path', async () => {
    const { token } = await service.signUp();
    const pdf = await createDocument(token, { type: 'PDF' });
    const txt = await createDocument(token, { type: 'TXT', url: 'https://example.com/a.txt' });
    service.db.prepare(`UPDATE documents SET status = 'failed', error = 'x' WHERE id = ?`).run(txt.id);
    const ids = async (query: string) => {
      const reply = await request('GET', `/api/v1/documents${query}`, { token });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      return reply.body.data.map((document: { id: string }) => document.id);
    };
    assert.deepEqual(await ids('?status=pending'), [pdf.id]);
    assert.deepEqual(await ids('?status=failed'), [txt.id]);
    assert.deepEqual(await ids('?type=TXT'), [txt.id]);
    assert.deepEqual(await ids('?type=PDF&status=failed'), []);
    assertInvalid(await request('GET', '/api/v1/documents?status=done', { token }), 'status');
    assertInvalid(await request('GET', '/api/v1/documents?type=DOCX', { token }), 'type');
  });

  test('an unknown query parameter on a list is 422 naming it, not silently ignored', async () => {
    const { token } = await service.signUp();
    for (const path of ['/documents?state=ready', '/agents?limit=5&tag=x', '/agent-tools?agent=1', '/documents/search?q=x&documentid=1']) {
      const reply = await request('GET', `/api/v1${path}`, { token });
      const name = [...new URLSearchParams(path.split('?')[1]).keys()].find((key) => !['limit', 'q'].includes(key));
      assertInvalid(reply, `query.${name}`, path);
    }
  });
});

describe('PATCH /documents/{documentId}', () => {
  test('a partial change keeps the other fields and moves updatedAt', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token, { from_page: 2, to_page: 10, metadata: { a: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const reply = await request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { name: 'Renamed', to_page: '12' } });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    const changed = reply.body.data;
    assert.equal(changed.id, document.id);
    assert.equal(changed.name, 'Renamed');
    assert.equal(changed.to_page, 12);
    assert.equal(changed.from_page, 2);
    assert.equal(changed.url, document.url);
    assert.equal(changed.type, document.type);
    assert.deepEqual(changed.metadata, { a: 1 });
    assert.equal(changed.createdAt, document.createdAt);
    assert.ok(changed.updatedAt > document.updatedAt, 'updatedAt moves forward');

    const read = await request('GET', `/api/v1/documents/${document.id}`, { token });
    assert.deepEqual(read.body.data, changed);
  });

  test('to_page alone below the stored from_page is 422 and changes nothing', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token, { from_page: 5, to_page: 8 });
    assertInvalid(await request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { to_page: 4 } }), 'to_page');
    const read = await request('GET', `/api/v1/documents/${document.id}`, { token });
    assert.equal(read.body.data.to_page, 8);
    assert.deepEqual(read.body.data, document);
  });

  test('from_page alone above the stored to_page is 422 and changes nothing', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token, { from_page: 2, to_page: 3 });
    const reply = await request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { from_page: 4 } });
    assert.equal(reply.status, 422);
    assert.equal(errorOf(reply).code, 'validation_failed');
    const read = await request('GET', `/api/v1/documents/${document.id}`, { token });
    assert.deepEqual(read.body.data, document);
  });

  test('to_page null clears it; an invalid url or splitter is 422', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token, { to_page: 8 });
    const cleared = await request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { to_page: null } });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.data.to_page, null);
    assertInvalid(await request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { url: 'ftp://example.com/x' } }), 'url');
    assertInvalid(
      await request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { splitter: { chunk_size: 10, chunk_overlap: 10 } } }),
      'splitter.chunk_overlap',
    );
    const splitter = await request('PATCH', `/api/v1/documents/${document.id}`, {
      token,
      body: { splitter: { type: 'CharacterTextSplitter' } },
    });
    assert.equal(splitter.status, 200);
    assert.deepEqual(splitter.body.data.splitter, { type: 'character', chunk_size: 1000, chunk_overlap: 200 });
  });

  test('authorization absent keeps the stored value; a new one replaces it; null clears it', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token, { authorization: { bearer: 'first' } });
    const first = storedAuthorization(document.id);
    assert.notEqual(first, null);

    const rename = await request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { name: 'no credential change' } });
    assert.equal(rename.status, 200);
    assert.equal(storedAuthorization(document.id), first, 'absent keeps the stored credentials');

    const replace = await request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { authorization: { bearer: SECRET } } });
    assert.equal(replace.status, 200);
    assertNoAuthorization(replace);
    const second = storedAuthorization(document.id);
    assert.notEqual(second, null);
    assert.notEqual(second, first, 'a new value replaces the stored credentials');

    const clear = await request('PATCH', `/api/v1/documents/${document.id}`, { token, body: { authorization: null } });
    assert.equal(clear.status, 200);
    assert.equal(storedAuthorization(document.id), null);
  });

  test('credentials follow the url only on its origin: another origin without authorization drops them', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token, { url: 'https://files.example.com/a.pdf', authorization: { bearer: SECRET } });
    assert.equal(document.hasAuthorization, true);
    const stored = storedAuthorization(document.id);

    const samePlace = await request('PATCH', `/api/v1/documents/${document.id}`, {
      token,
      body: { url: 'https://files.example.com/b.pdf' },
    });
    assert.equal(samePlace.status, 200);
    assert.equal(samePlace.body.data.hasAuthorization, true);
    assert.equal(storedAuthorization(document.id), stored, 'the same origin keeps the credentials');

    const elsewhere = await request('PATCH', `/api/v1/documents/${document.id}`, {
      token,
      body: { url: 'https://attacker.example.net/c.pdf' },
    });
    assert.equal(elsewhere.status, 200);
    assert.equal(elsewhere.body.data.hasAuthorization, false);
    assert.equal(storedAuthorization(document.id), null, 'another origin drops them');

    // A port or scheme change is another origin too; sending authorization again keeps the new one.
    const moved = await request('PATCH', `/api/v1/documents/${document.id}`, {
      token,
      body: { url: 'http://attacker.example.net:8080/d.pdf', authorization: { bearer: 'given again' } },
    });
    assert.equal(moved.body.data.hasAuthorization, true);
    const port = await request('PATCH', `/api/v1/documents/${document.id}`, {
      token,
      body: { url: 'http://attacker.example.net:8081/d.pdf' },
    });
    assert.equal(port.body.data.hasAuthorization, false);
    assert.equal((await request('GET', `/api/v1/documents/${document.id}`, { token })).body.data.hasAuthorization, false);
  });

  test('an unknown id is 404', async () => {
    const { token } = await service.signUp();
    assertNotFound(await request('PATCH', `/api/v1/documents/${randomUUID()}`, { token, body: { name: 'x' } }), 'unknown id');
  });
});

describe('DELETE /documents/{documentId}', () => {
  test('200 with data null; the document is gone afterwards', async () => {
    const { token } = await service.signUp();
    const document = await createDocument(token);
    const keep = await createDocument(token, { name: 'keep' });
    await assertDeletes(service, `/api/v1/documents/${document.id}`, token);
    const list = await request('GET', '/api/v1/documents', { token });
    assert.deepEqual(
      list.body.data.map((item: { id: string }) => item.id),
      [keep.id],
    );
  });
});

describe("another user's document", () => {
  test('is 404 on GET, PATCH and DELETE, and stays unchanged', async () => {
    const owner = await service.signUp();
    const stranger = await service.signUp();
    const document = await createDocument(owner.token, { authorization: { bearer: 'owner' } });
    const credentials = storedAuthorization(document.id);
    await assertHiddenFrom(service, `/api/v1/documents/${document.id}`, {
      record: document,
      owner: owner.token,
      stranger: stranger.token,
      patch: { name: 'stolen', authorization: null },
    });
    assert.equal(storedAuthorization(document.id), credentials, 'the credentials are untouched');
    const strangerList = await request('GET', '/api/v1/documents', { token: stranger.token });
    assert.deepEqual(strangerList.body.data, []);
  });
});
