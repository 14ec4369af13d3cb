// `/tags`: create, read and delete as original clients do, and the added list and PATCH.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  assertConflict,
  assertDeletes,
  assertHiddenFrom,
  assertInvalid,
  assertNotFound,
  errorOf,
  startService,
  TIMESTAMP,
} from './helpers.js';

const service = await startService();
const { request, createTag } = service;

describe('POST /tags', () => {
  test('201 with id, name and color', async () => {
    const { token, user } = await service.signUp();
    const reply = await request('POST', '/api/v1/tags', { token, body: { name: 'urgent', color: '#d73a4a', userId: user.id } });
    assert.equal(reply.status, 201);
    assert.equal(reply.body.success, true);
    const tag = reply.body.data;
    assert.equal(typeof tag.id, 'string');
    assert.ok(tag.id.length > 0);
    assert.equal(tag.name, 'urgent');
    assert.equal(tag.color, '#d73a4a');
    assert.match(tag.createdAt, TIMESTAMP);
    assert.match(tag.updatedAt, TIMESTAMP);
  });

  test('color defaults to #0e8a16; userId may be left out (the owner is the caller)', async () => {
    const { token, user } = await service.signUp();
    const tag = await createTag(token, { name: 'plain' });
    assert.equal(tag.color, '#0e8a16');
    const read = await request('GET', `/api/v1/tags/${tag.id}`, { token });
    assert.equal(read.body.data.userId, user.id);
  });

  test('accepts #rgb, #rgba, #rrggbb and #rrggbbaa colours', async () => {
    const { token } = await service.signUp();
    const colours = ['#abc', '#ABCD', '#0e8a16', '#0E8A16cc'];
    for (const [index, color] of colours.entries()) {
      const tag = await createTag(token, { name: `colour ${index}`, color });
      assert.equal(tag.color, color);
    }
  });

  test("rejects colours that are not hex: 'red', '#12', '#ggg', '0e8a16' and others at path color", async () => {
    const { token } = await service.signUp();
    for (const color of ['red', '#12', '#ggg', '0e8a16', '#12345', '#1234567', '#123456789', '', 42, null]) {
      assertInvalid(await request('POST', '/api/v1/tags', { token, body: { name: `bad ${String(color)}`, color } }), 'color');
    }
    const list = await request('GET', '/api/v1/tags', { token });
    assert.deepEqual(list.body.data, []);
  });

  test('a missing or empty name is 422 at path name', async () => {
    const { token } = await service.signUp();
    assertInvalid(await request('POST', '/api/v1/tags', { token, body: { color: '#fff' } }), 'name');
    assertInvalid(await request('POST', '/api/v1/tags', { token, body: { name: '  ' } }), 'name');
    assertInvalid(await request('POST', '/api/v1/tags', { token, body: { name: 'n'.repeat(201) } }), 'name');
  });

  test('names are unique per user, whatever their case: 409 conflict', async () => {
    const { token } = await service.signUp();
    const first = await createTag(token, { name: 'Backend' });
    assertConflict(await request('POST', '/api/v1/tags', { token, body: { name: 'Backend' } }));
    assertConflict(await request('POST', '/api/v1/tags', { token, body: { name: 'backend', color: '#fff' } }));
    assertConflict(await request('POST', '/api/v1/tags', { token, body: { name: '  BACKEND  ' } }));
    const list = await request('GET', '/api/v1/tags', { token });
    assert.deepEqual(
      list.body.data.map((tag: { id: string }) => tag.id),
      [first.id],
    );
  });

  test('another user may use the same name', async () => {
    const one = await service.signUp();
    const two = await service.signUp();
    const mine = await createTag(one.token, { name: 'shared-name' });
    const theirs = await createTag(two.token, { name: 'Shared-Name' });
    assert.notEqual(mine.id, theirs.id);
    assert.equal(theirs.name, 'Shared-Name');
  });

  test("a body userId equal to the caller's id is 201; another id is 403 forbidden", async () => {
    const { token, user } = await service.signUp();
    const other = await service.signUp();
    const tag = await createTag(token, { name: 'mine', userId: user.id });
    const read = await request('GET', `/api/v1/tags/${tag.id}`, { token });
    assert.equal(read.body.data.userId, user.id);

    for (const userId of [other.user.id, randomUUID()]) {
      const reply = await request('POST', '/api/v1/tags', { token, body: { name: 'not mine', userId } });
      assert.equal(reply.status, 403, JSON.stringify(reply.body));
      assert.equal(errorOf(reply).code, 'forbidden');
    }
    const theirList = await request('GET', '/api/v1/tags', { token: other.token });
    assert.deepEqual(theirList.body.data, []);
    const myList = await request('GET', '/api/v1/tags', { token });
    assert.deepEqual(
      myList.body.data.map((item: { name: string }) => item.name),
      ['mine'],
    );
  });
});

describe('GET /tags/{tagId}', () => {
  test('the tag with its userId', async () => {
    const { token, user } = await service.signUp();
    const tag = await createTag(token, { name: 'read me', color: '#123' });
    const reply = await request('GET', `/api/v1/tags/${tag.id}`, { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.equal(reply.body.data.id, tag.id);
    assert.equal(reply.body.data.userId, user.id);
    assert.equal(reply.body.data.name, 'read me');
    assert.equal(reply.body.data.color, '#123');
    assert.equal(reply.body.data.createdAt, tag.createdAt);
  });

  test('an unknown id is 404', async () => {
    const { token } = await service.signUp();
    assertNotFound(await request('GET', `/api/v1/tags/${randomUUID()}`, { token }), 'unknown id');
  });
});

describe('GET /tags', () => {
  test("an array of the caller's tags, oldest first", async () => {
    const { token } = await service.signUp();
    const other = await service.signUp();
    const first = await createTag(token, { name: 'zeta' });
    await createTag(other.token, { name: 'not mine' });
    const second = await createTag(token, { name: 'alpha' });

    const reply = await request('GET', '/api/v1/tags', { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.deepEqual(
      reply.body.data.map((tag: { id: string }) => tag.id),
      [first.id, second.id],
    );
    assert.equal(reply.body.data[0].name, 'zeta');
    assert.equal(reply.headers.get('link'), null);
  });
});

describe('PATCH /tags/{tagId}', () => {
  test('renames and recolours; updatedAt moves', async () => {
    const { token } = await service.signUp();
    const tag = await createTag(token, { name: 'old', color: '#000' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const reply = await request('PATCH', `/api/v1/tags/${tag.id}`, { token, body: { name: 'new' } });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
    assert.equal(reply.body.data.id, tag.id);
    assert.equal(reply.body.data.name, 'new');
    assert.equal(reply.body.data.color, '#000');
    assert.ok(reply.body.data.updatedAt > tag.updatedAt, 'updatedAt moves forward');

    const recoloured = await request('PATCH', `/api/v1/tags/${tag.id}`, { token, body: { color: '#ffffff' } });
    assert.equal(recoloured.status, 200);
    assert.equal(recoloured.body.data.name, 'new');
    assert.equal(recoloured.body.data.color, '#ffffff');
  });

  test('a change of case of its own name is allowed', async () => {
    const { token } = await service.signUp();
    const tag = await createTag(token, { name: 'docs' });
    const reply = await request('PATCH', `/api/v1/tags/${tag.id}`, { token, body: { name: 'Docs' } });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.data.name, 'Docs');
  });

  test('a rename clashing with another tag is 409 and changes nothing', async () => {
    const { token } = await service.signUp();
    await createTag(token, { name: 'frontend' });
    const tag = await createTag(token, { name: 'backend', color: '#abc' });
    assertConflict(await request('PATCH', `/api/v1/tags/${tag.id}`, { token, body: { name: 'FrontEnd', color: '#fff' } }));
    const read = await request('GET', `/api/v1/tags/${tag.id}`, { token });
    assert.equal(read.body.data.name, 'backend');
    assert.equal(read.body.data.color, '#abc');
    assert.equal(read.body.data.updatedAt, tag.updatedAt);
  });

  test('an invalid colour is 422 at path color and changes nothing', async () => {
    const { token } = await service.signUp();
    const tag = await createTag(token, { name: 'keep', color: '#abc' });
    assertInvalid(await request('PATCH', `/api/v1/tags/${tag.id}`, { token, body: { color: 'red' } }), 'color');
    const read = await request('GET', `/api/v1/tags/${tag.id}`, { token });
    assert.equal(read.body.data.color, '#abc');
  });

  test('an unknown id is 404', async () => {
    const { token } = await service.signUp();
    assertNotFound(await request('PATCH', `/api/v1/tags/${randomUUID()}`, { token, body: { name: 'x' } }), 'unknown id');
  });
});

describe('DELETE /tags/{tagId}', () => {
  test('200 with data null; the tag is gone and its name is free again', async () => {
    const { token } = await service.signUp();
    const tag = await createTag(token, { name: 'temporary' });
    await assertDeletes(service, `/api/v1/tags/${tag.id}`, token);
    const again = await createTag(token, { name: 'temporary' });
    assert.notEqual(again.id, tag.id);
  });
});

describe("another user's tag", () => {
  test('is 404 on GET, PATCH and DELETE, and stays unchanged', async () => {
    const owner = await service.signUp();
    const stranger = await service.signUp();
    const tag = await createTag(owner.token, { name: 'private', color: '#abc' });
    await assertHiddenFrom(service, `/api/v1/tags/${tag.id}`, { record: tag, owner: owner.token, stranger: stranger.token });
  });
});
