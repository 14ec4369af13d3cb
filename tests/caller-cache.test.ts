// Authenticated requests skip the token query for callers seen before (src/api-tokens/caller-cache.ts).
// What a client must never notice: a revoked token working, or an account change not showing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { errorOf, startService } from './helpers.js';

const service = await startService();
const { request } = service;

const me = (token: string) => request('GET', '/api/v1/auth/me', { token });

function assertUnauthorized(reply: Awaited<ReturnType<typeof request>>): void {
  assert.equal(reply.status, 401, JSON.stringify(reply.body));
  assert.equal(errorOf(reply).code, 'unauthorized');
}

/** A second connection to the service's file, as an admin script or another process would hold. */
function otherProcess<T>(write: (db: Database.Database) => T): T {
  const db = new Database(service.config.databasePath);
  try {
    return write(db);
  } finally {
    db.close();
  }
}

describe('tokens remembered by the service', () => {
  test('a token revoked through the API fails on the very next request', async () => {
    const { token } = await service.signUp();
    const other = await service.create(token, '/api-tokens', { description: 'second' });
    assert.equal((await me(other.token)).status, 200);
    assert.equal((await request('DELETE', `/api/v1/api-tokens/${other.id}`, { token })).status, 200);
    assertUnauthorized(await me(other.token));
    assert.equal((await me(token)).status, 200, 'the token that revoked it still works');
  });

  test('a password change revokes the other tokens at once, and the new name shows at once', async () => {
    const { token, password } = await service.signUp('Before');
    const other = await service.create(token, '/api-tokens', { description: 'second' });
    assert.equal((await me(other.token)).body.data.name, 'Before');
    const change = await request('PATCH', '/api/v1/auth/me', {
      token,
      body: { name: 'After', currentPassword: password, password: 'another long passphrase' },
    });
    assert.equal(change.status, 200, JSON.stringify(change.body));
    assertUnauthorized(await me(other.token));
    assert.equal((await me(token)).body.data.name, 'After');
  });

  test('a deleted account cannot be used, whichever of its tokens is sent', async () => {
    const { token, password } = await service.signUp();
    const other = await service.create(token, '/api-tokens', { description: 'second' });
    assert.equal((await me(other.token)).status, 200);
    assert.equal((await request('DELETE', '/api/v1/auth/me', { token, body: { password } })).status, 200);
    assertUnauthorized(await me(token));
    assertUnauthorized(await me(other.token));
  });

  test('any write through the service connection counts, not only the API paths', async () => {
    const { token } = await service.signUp();
    assert.equal((await me(token)).status, 200);
    service.db.prepare('DELETE FROM api_tokens WHERE token = ?').run(token);
    assertUnauthorized(await me(token));
  });

  test('a token revoked by another process (an admin script, say) fails on the next request', async () => {
    const { token } = await service.signUp();
    const kept = await service.signUp();
    assert.equal((await me(token)).status, 200);
    assert.equal((await me(kept.token)).status, 200);
    otherProcess((db) => db.prepare('DELETE FROM api_tokens WHERE token = ?').run(token));
    assertUnauthorized(await me(token));
    assert.equal((await me(kept.token)).status, 200, 'other callers are read again and still work');
  });

  test('an account renamed by another process shows the new name on the next request', async () => {
    const { token, user } = await service.signUp('Old name');
    assert.equal((await me(token)).body.data.name, 'Old name');
    otherProcess((db) => db.prepare('UPDATE users SET name = ? WHERE id = ?').run('New name', user.id));
    assert.equal((await me(token)).body.data.name, 'New name');
  });

  test('a token moved to another user by REPLACE answers as that user at once (no stale owner)', async () => {
    const first = await service.signUp('First owner');
    const second = await service.signUp('Second owner');
    assert.equal((await me(first.token)).body.data.name, 'First owner');
    service.db
      .prepare(
        `REPLACE INTO api_tokens (id, user_id, description, token, token_digest, created_at, updated_at)
         SELECT id, ?, description, token, token_digest, created_at, updated_at FROM api_tokens WHERE token = ?`,
      )
      .run(second.user.id, first.token);
    assert.equal((await me(first.token)).body.data.name, 'Second owner');
  });

  test('recording a use does not stop later uses from being remembered, and lastUsedAt is kept', async () => {
    const { token } = await service.signUp();
    assert.equal((await me(token)).status, 200);
    const lastUsedAt = service.db.prepare('SELECT last_used_at FROM api_tokens WHERE token = ?').pluck().get(token);
    assert.equal(typeof lastUsedAt, 'string', 'the first use is recorded');
    for (let i = 0; i < 3; i += 1) assert.equal((await me(token)).status, 200);
    const after = service.db.prepare('SELECT last_used_at FROM api_tokens WHERE token = ?').pluck().get(token);
    assert.equal(after, lastUsedAt, 'written at most once a minute');
  });
});
