// `/api-tokens`: create, list, read and delete as original clients do, PATCH of the description,
// ownership and pagination.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertNotFound, errorOf, startService, TIMESTAMP, type Reply } from './helpers.js';

const service = await startService();
const { request } = service;

/** Creates a token for the holder of `token` and returns the new record. */
const createToken = (token: string, description?: string) =>
  service.create(token, '/api-tokens', description === undefined ? {} : { description });

describe('POST /api-tokens', () => {
  test('201 with the full record; description defaults to ""', async () => {
    const { token, user, email } = await service.signUp('Owner');
    const reply = await request('POST', '/api/v1/api-tokens', { token, body: {} });
    assert.equal(reply.status, 201);
    assert.equal(reply.body.success, true);
    const record = reply.body.data;
    assert.equal(typeof record.id, 'string');
    assert.equal(record.userId, user.id);
    assert.equal(record.description, '');
    assert.match(record.token, /^ams_[A-Za-z0-9_-]{43,}$/);
    assert.notEqual(record.token, token);
    assert.match(record.createdAt, TIMESTAMP);
    assert.match(record.updatedAt, TIMESTAMP);
    assert.equal(record.user.id, user.id);
    assert.equal(record.user.email, email);
    assert.equal(record.user.name, 'Owner');
    assert.ok(!('password' in record.user), 'the nested user never carries the hash');
  });

  test('the new token works as a credential', async () => {
    const { token, user } = await service.signUp();
    const record = await createToken(token, 'ci');
    const me = await request('GET', '/api/v1/auth/me', { token: record.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.id, user.id);
  });

  test('keeps the description (trimmed); no body at all is fine too', async () => {
    const { token } = await service.signUp();
    assert.equal((await createToken(token, '  deploy bot  ')).description, 'deploy bot');
    const bare = await request('POST', '/api/v1/api-tokens', { token });
    assert.equal(bare.status, 201);
    assert.equal(bare.body.data.description, '');
  });

  test('a description that is not a string is 422', async () => {
    const { token } = await service.signUp();
    const reply = await request('POST', '/api/v1/api-tokens', { token, body: { description: 42 } });
    assert.equal(reply.status, 422);
    const error = errorOf(reply);
    assert.equal(error.code, 'validation_failed');
    assert.deepEqual(
      error.details?.map((issue) => issue.path),
      ['description'],
    );
  });

  test('without a credential it is 401', async () => {
    const reply = await request('POST', '/api/v1/api-tokens', { body: {} });
    assert.equal(reply.status, 401);
    assert.equal(errorOf(reply).code, 'unauthorized');
  });
});

describe('GET /api-tokens', () => {
  test("an array of the caller's tokens, oldest first", async () => {
    const { token } = await service.signUp();
    const first = await createToken(token, 'first');
    const second = await createToken(token, 'second');
    await service.signUp(); // someone else's tokens never show

    const reply = await request('GET', '/api/v1/api-tokens', { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.ok(Array.isArray(reply.body.data));
    assert.deepEqual(
      reply.body.data.map((item: { token: string }) => item.token),
      [token, first.token, second.token],
    );
    assert.deepEqual(reply.body.data[1], first);
    assert.equal(reply.headers.get('link'), null);
  });
});

describe('GET /api-tokens/{tokenId}', () => {
  test('the record, as created', async () => {
    const { token } = await service.signUp();
    const record = await createToken(token, 'read me');
    const reply = await request('GET', `/api/v1/api-tokens/${record.id}`, { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.deepEqual(reply.body.data, record);
  });

  test('an unknown id is 404', async () => {
    const { token } = await service.signUp();
    assertNotFound(await request('GET', `/api/v1/api-tokens/${randomUUID()}`, { token }), 'unknown id');
  });
});

describe('PATCH /api-tokens/{tokenId}', () => {
  test('changes the description and moves updatedAt', async () => {
    const { token } = await service.signUp();
    const record = await createToken(token, 'before');
    const reply = await request('PATCH', `/api/v1/api-tokens/${record.id}`, { token, body: { description: 'after' } });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.data.id, record.id);
    assert.equal(reply.body.data.description, 'after');
    assert.equal(reply.body.data.token, record.token);
    assert.equal(reply.body.data.createdAt, record.createdAt);
    assert.match(reply.body.data.updatedAt, TIMESTAMP);
    assert.ok(reply.body.data.updatedAt > record.updatedAt, `${reply.body.data.updatedAt} after ${record.updatedAt}`);
    const read = await request('GET', `/api/v1/api-tokens/${record.id}`, { token });
    assert.equal(read.body.data.description, 'after');
  });

  test('a description that is not a string is 422', async () => {
    const { token } = await service.signUp();
    const record = await createToken(token);
    const reply = await request('PATCH', `/api/v1/api-tokens/${record.id}`, { token, body: { description: ['x'] } });
    assert.equal(reply.status, 422);
    assert.equal(errorOf(reply).code, 'validation_failed');
  });
});

describe('DELETE /api-tokens/{tokenId}', () => {
  test('returns the deleted record; the token then stops working', async () => {
    const { token } = await service.signUp();
    const record = await createToken(token, 'short-lived');
    assert.equal((await request('GET', '/api/v1/auth/me', { token: record.token })).status, 200);

    const reply = await request('DELETE', `/api/v1/api-tokens/${record.id}`, { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    // The same record, except that using it set lastUsedAt.
    assert.match(reply.body.data.lastUsedAt, TIMESTAMP);
    assert.deepEqual({ ...reply.body.data, lastUsedAt: null }, record);

    const revoked = await request('GET', '/api/v1/auth/me', { token: record.token });
    assert.equal(revoked.status, 401);
    assert.equal(errorOf(revoked).code, 'unauthorized');
    assertNotFound(await request('GET', `/api/v1/api-tokens/${record.id}`, { token }), 'read after delete');
    assertNotFound(await request('DELETE', `/api/v1/api-tokens/${record.id}`, { token }), 'second delete');
    assert.equal((await request('GET', '/api/v1/auth/me', { token })).status, 200, 'other tokens keep working');
  });

  test('a token can revoke itself', async () => {
    const { token } = await service.signUp();
    const record = await createToken(token);
    const reply = await request('DELETE', `/api/v1/api-tokens/${record.id}`, { token: record.token });
    assert.equal(reply.status, 200);
    assert.equal((await request('GET', '/api/v1/auth/me', { token: record.token })).status, 401);
  });
});

describe("another user's token", () => {
  test('is 404 on GET, PATCH and DELETE, and stays untouched', async () => {
    const owner = await service.signUp();
    const stranger = await service.signUp();
    const record = await createToken(owner.token, 'mine');
    const path = `/api/v1/api-tokens/${record.id}`;

    assertNotFound(await request('GET', path, { token: stranger.token }), 'GET');
    assertNotFound(await request('PATCH', path, { token: stranger.token, body: { description: 'theirs' } }), 'PATCH');
    assertNotFound(await request('DELETE', path, { token: stranger.token }), 'DELETE');

    const still = await request('GET', path, { token: owner.token });
    assert.equal(still.status, 200);
    assert.deepEqual(still.body.data, record);
    assert.equal((await request('GET', '/api/v1/auth/me', { token: record.token })).status, 200);
  });

  test('answers exactly like a missing id', async () => {
    const owner = await service.signUp();
    const stranger = await service.signUp();
    const record = await createToken(owner.token);
    const theirs = await request('GET', `/api/v1/api-tokens/${record.id}`, { token: stranger.token });
    const missing = await request('GET', `/api/v1/api-tokens/${randomUUID()}`, { token: stranger.token });
    assert.deepEqual(theirs.body, missing.body);
  });
});

describe('pagination of GET /api-tokens', () => {
  for (const limit of ['0', '-1', 'abc', '1001', '2.5']) {
    test(`?limit=${limit} is 422`, async () => {
      const { token } = await service.signUp();
      const reply = await request('GET', `/api/v1/api-tokens?limit=${limit}`, { token });
      assert.equal(reply.status, 422);
      const error = errorOf(reply);
      assert.equal(error.code, 'validation_failed');
      assert.deepEqual(
        error.details?.map((issue) => issue.path),
        ['limit'],
      );
    });
  }

  test('?limit=1000 is allowed', async () => {
    const { token } = await service.signUp();
    const reply = await request('GET', '/api/v1/api-tokens?limit=1000', { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.data.length, 1);
  });

  test("?after= an unknown id, or another user's token id, is 422", async () => {
    const { token } = await service.signUp();
    const stranger = await service.signUp();
    const theirs = await createToken(stranger.token);
    for (const after of [randomUUID(), theirs.id]) {
      const reply = await request('GET', `/api/v1/api-tokens?after=${after}`, { token });
      assert.equal(reply.status, 422, after);
      const error = errorOf(reply);
      assert.equal(error.code, 'validation_failed');
      assert.deepEqual(
        error.details?.map((issue) => issue.path),
        ['after'],
      );
    }
  });

  test('limit=2 over 5 tokens: Link rel="next" pages through every token exactly once', async () => {
    const { token } = await service.signUp();
    for (const description of ['a', 'b', 'c', 'd']) await createToken(token, description);
    const all = await request('GET', '/api/v1/api-tokens', { token });
    const expected = all.body.data.map((item: { id: string }) => item.id);
    assert.equal(expected.length, 5);

    const seen: string[] = [];
    const pageSizes: number[] = [];
    let path: string | undefined = '/api/v1/api-tokens?limit=2';
    while (path !== undefined) {
      assert.ok(pageSizes.length < 5, 'the pages end');
      const reply: Reply = await request('GET', path, { token });
      assert.equal(reply.status, 200, path);
      assert.ok(Array.isArray(reply.body.data));
      pageSizes.push(reply.body.data.length);
      seen.push(...reply.body.data.map((item: { id: string }) => item.id));
      const link = reply.headers.get('link');
      if (link === null) {
        path = undefined;
      } else {
        const match = /^<([^>]+)>;\s*rel="next"$/.exec(link);
        assert.ok(match, `Link header: ${link}`);
        const next = new URL(match[1], service.url); // absolute or relative
        assert.equal(next.searchParams.get('limit'), '2', 'the next page keeps the limit');
        path = next.pathname + next.search;
      }
    }
    assert.deepEqual(pageSizes, [2, 2, 1]);
    assert.deepEqual(seen, expected);
  });

  test('a page that ends exactly at the last row has no Link', async () => {
    const { token } = await service.signUp();
    await createToken(token);
    const reply = await request('GET', '/api/v1/api-tokens?limit=2', { token });
    assert.equal(reply.body.data.length, 2);
    assert.equal(reply.headers.get('link'), null);
  });
});
