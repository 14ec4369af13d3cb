// Pagination of every list: `?limit=` (default 100, 1-1000), `?after=<id>` (keyset,
// stable under inserts), creation order, and `Link: <...>; rel="next"` while more rows exist.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertInvalid, nextPath, startService, type Json, type Reply } from './helpers.js';

const service = await startService();
const { request } = service;

/** Every list of the service. */
const LISTS = ['/tools', '/tags', '/documents', '/prompts', '/agents', '/api-tokens', '/agent-documents', '/agent-tools'];

/** Lists whose records this file creates, with the factory of their records. */
const CREATORS: Record<string, (token: string) => Promise<Json>> = {
  '/tools': service.createTool,
  '/tags': service.createTag,
  '/prompts': service.createPrompt,
  '/documents': service.createDocument,
};

/** Creates one record in `list` for the holder of `token` and returns its id. */
const create = async (token: string, list: string): Promise<string> => (await CREATORS[list](token)).id;

async function createMany(token: string, list: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push(await create(token, list));
  return ids;
}

const ids = (reply: Reply): string[] => reply.body.data.map((item: { id: string }) => item.id);

describe('?limit=', () => {
  test('0, -1, abc, 1.5, 1001 and an empty value are 422 validation_failed at path limit, on every list', async () => {
    const { token } = await service.signUp();
    for (const list of LISTS) {
      for (const limit of ['0', '-1', 'abc', '1.5', '1001', '', '1e2']) {
        const reply = await request('GET', `/api/v1${list}?limit=${encodeURIComponent(limit)}`, { token });
        assertInvalid(reply, 'limit', `${list}?limit=${limit}`);
      }
    }
  });

  test('limit given twice is 422 at path limit', async () => {
    const { token } = await service.signUp();
    assertInvalid(await request('GET', '/api/v1/tools?limit=1&limit=2', { token }), 'limit', 'limit twice');
  });

  test('1 and 1000 are accepted', async () => {
    const { token } = await service.signUp();
    const [first, second] = await createMany(token, '/tools', 2);
    const one = await request('GET', '/api/v1/tools?limit=1', { token });
    assert.equal(one.status, 200);
    assert.deepEqual(ids(one), [first]);
    assert.notEqual(nextPath(one), null, 'more rows exist');
    const all = await request('GET', '/api/v1/tools?limit=1000', { token });
    assert.equal(all.status, 200);
    assert.deepEqual(ids(all), [first, second]);
    assert.equal(all.headers.get('link'), null);
  });

  test('a limit exactly matching the rows left gives no Link header', async () => {
    const { token } = await service.signUp();
    const tags = await createMany(token, '/tags', 3);
    const reply = await request('GET', '/api/v1/tags?limit=3', { token });
    assert.equal(reply.status, 200);
    assert.deepEqual(ids(reply), tags);
    assert.equal(reply.headers.get('link'), null);
  });
});

describe('?after=', () => {
  test('an unknown id is 422 at path after', async () => {
    const { token } = await service.signUp();
    await create(token, '/tools');
    for (const list of ['/tools', '/tags', '/prompts', '/documents']) {
      const reply = await request('GET', `/api/v1${list}?after=${randomUUID()}`, { token });
      assertInvalid(reply, 'after', `${list} unknown after`);
    }
  });

  test("another user's id is 422 at path after", async () => {
    const { token } = await service.signUp();
    const other = await service.signUp();
    for (const list of ['/tools', '/tags', '/prompts', '/documents']) {
      await create(token, list);
      const theirs = await create(other.token, list);
      const reply = await request('GET', `/api/v1${list}?after=${theirs}`, { token });
      assertInvalid(reply, 'after', `${list} another user's after`);
    }
  });

  test("an id from another of the caller's lists is 422 at path after", async () => {
    const { token } = await service.signUp();
    await create(token, '/tools');
    const tag = await create(token, '/tags');
    assertInvalid(await request('GET', `/api/v1/tools?after=${tag}`, { token }), 'after', 'a tag id on /tools');
  });

  test('the rows after the given one, in creation order', async () => {
    const { token } = await service.signUp();
    const tags = await createMany(token, '/tags', 4);
    const reply = await request('GET', `/api/v1/tags?after=${tags[1]}`, { token });
    assert.equal(reply.status, 200);
    assert.deepEqual(ids(reply), tags.slice(2));
    assert.equal(reply.headers.get('link'), null);
    const last = await request('GET', `/api/v1/tags?after=${tags[3]}`, { token });
    assert.equal(last.status, 200);
    assert.deepEqual(last.body, { success: true, data: [] });
    assert.equal(last.headers.get('link'), null);
  });
});

describe('default page size', () => {
  test('100 rows per page; the Link header leads to the rest', async () => {
    const { token } = await service.signUp();
    const tools = await createMany(token, '/tools', 105);

    const first = await request('GET', '/api/v1/tools', { token });
    assert.equal(first.status, 200);
    assert.equal(first.body.success, true);
    assert.ok(Array.isArray(first.body.data), 'the body stays a plain array');
    assert.deepEqual(ids(first), tools.slice(0, 100));
    const next = nextPath(first);
    assert.ok(next !== null, 'a Link header while more rows exist');
    assert.ok(next.startsWith('/api/v1/tools?'), next);
    assert.equal(new URLSearchParams(next.split('?')[1]).get('after'), tools[99]);

    const second = await request('GET', next, { token });
    assert.equal(second.status, 200);
    assert.deepEqual(ids(second), tools.slice(100));
    assert.equal(second.headers.get('link'), null, 'the last page has no Link header');
  });
});

describe('walking the Link headers', () => {
  for (const list of ['/tools', '/tags']) {
    test(`${list}: limit=10 gets every row once, in order, while rows are added between pages`, async () => {
      const { token } = await service.signUp();
      const other = await service.signUp();
      const existing = await createMany(token, list, 27);
      const added: string[] = [];
      const seen: string[] = [];

      let path: string | null = `/api/v1${list}?limit=10`;
      let pages = 0;
      let last: Reply | undefined;
      while (path !== null) {
        pages += 1;
        assert.ok(pages <= 10, 'the walk ends');
        last = await request('GET', path, { token });
        assert.equal(last.status, 200, JSON.stringify(last.body));
        assert.ok(last.body.data.length <= 10, 'at most limit rows per page');
        seen.push(...ids(last));
        path = nextPath(last);
        if (path !== null) {
          assert.match(path, /[?&]limit=10(&|$)/, 'the next link keeps the limit');
          // New rows (and someone else's) arrive while the client is between pages.
          added.push(await create(token, list));
          await create(other.token, list);
        }
      }

      assert.ok(pages >= 3, `several pages (${pages})`);
      assert.equal(last?.headers.get('link'), null, 'the last page has no Link header');
      assert.equal(new Set(seen).size, seen.length, 'no row twice');
      assert.deepEqual(seen.slice(0, existing.length), existing, 'every pre-existing row once, in creation order');
      assert.deepEqual(seen.slice(existing.length), added, 'the rows added during the walk come at the end');
    });
  }
});

describe('keyset, not offset', () => {
  test('deleting an already-seen row between pages skips nothing that is left', async () => {
    const { token } = await service.signUp();
    const tools = await createMany(token, '/tools', 12);
    const first = await request('GET', '/api/v1/tools?limit=5', { token });
    assert.deepEqual(ids(first), tools.slice(0, 5));
    const deleted = await request('DELETE', `/api/v1/tools/${tools[0]}`, { token });
    assert.equal(deleted.status, 200);

    const second = await request('GET', nextPath(first)!, { token });
    assert.equal(second.status, 200);
    assert.deepEqual(ids(second), tools.slice(5, 10));
    const third = await request('GET', nextPath(second)!, { token });
    assert.deepEqual(ids(third), tools.slice(10));
    assert.equal(third.headers.get('link'), null);
  });
});
