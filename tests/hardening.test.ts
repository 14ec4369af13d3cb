// Hardening: limits, rate limiting, token lifecycle, secrets at rest, headers and logs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeDatabase, openDatabase } from '../src/db.js';
import { RateLimiter } from '../src/lib/rate-limiter.js';
import { createSealer, loadOrCreateKeyFile } from '../src/lib/secrets.js';
import { errorOf, startService, TIMESTAMP, type Reply } from './helpers.js';

const limits = { enabled: true, authPerMinute: 4, failedSignInsPer15Minutes: 2, perTokenPerMinute: 6 };
const limited = await startService({ rateLimit: limits });
const proxied = await startService({ rateLimit: limits, trustProxy: true });
const plain = await startService();
const withCors = await startService({ corsOrigins: ['https://app.example.com'] });
const logLines: Record<string, unknown>[] = [];
const capture = {
  info: (fields: Record<string, unknown>) => logLines.push(fields),
  error: (fields: Record<string, unknown>) => logLines.push(fields),
};
const logged = await startService({ logRequests: true }, capture);
const slow = await startService({ requestTimeoutMs: 1000 });

function assertRateLimited(reply: Reply): void {
  assert.equal(reply.status, 429);
  assert.equal(errorOf(reply).code, 'rate_limited');
  assert.match(reply.headers.get('retry-after') ?? '', /^\d+$/);
  assert.ok(Number(reply.headers.get('retry-after')) >= 1);
}

describe('rate limiting', () => {
  test('sign-up and sign-in attempts per client address: the next one is 429 with Retry-After', async () => {
    const body = { email: 'nobody@example.com', password: 'whatever password' };
    const statuses = [];
    for (let i = 0; i < limits.authPerMinute; i += 1) {
      statuses.push((await limited.request('POST', '/api/v1/auth/sign-in', { body: { ...body, email: `n${i}@example.com` } })).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 401]);
    assertRateLimited(
      await limited.request('POST', '/api/v1/auth/sign-up', { body: { name: 'x', email: 'x@example.com', password: 'password1' } }),
    );
  });

  test('X-Forwarded-For is ignored unless TRUST_PROXY is on', async () => {
    // `limited` has used up its address's attempts above: a forged header does not reset them.
    const forged = await limited.request('POST', '/api/v1/auth/sign-in', {
      body: { email: 'a@example.com', password: 'password1' },
      headers: { 'X-Forwarded-For': '203.0.113.9' },
    });
    assertRateLimited(forged);

    // Behind a trusted proxy each client address has its own allowance.
    for (let i = 0; i < limits.authPerMinute; i += 1) {
      await proxied.request('POST', '/api/v1/auth/sign-in', {
        body: { email: `p${i}@example.com`, password: 'password1' },
        headers: { 'X-Forwarded-For': '198.51.100.1' },
      });
    }
    const exhausted = await proxied.request('POST', '/api/v1/auth/sign-in', {
      body: { email: 'q@example.com', password: 'password1' },
      headers: { 'X-Forwarded-For': '198.51.100.1' },
    });
    assertRateLimited(exhausted);
    const other = await proxied.request('POST', '/api/v1/auth/sign-in', {
      body: { email: 'q@example.com', password: 'password1' },
      headers: { 'X-Forwarded-For': '198.51.100.2' },
    });
    assert.equal(other.status, 401);
  });

  test('failed sign-ins per email: after the limit even the right password waits; other emails are unaffected', async () => {
    const service = await startService({ rateLimit: { ...limits, authPerMinute: 100 } });
    const { email, password } = await service.signUp();
    for (let i = 0; i < limits.failedSignInsPer15Minutes; i += 1) {
      assert.equal((await service.request('POST', '/api/v1/auth/sign-in', { body: { email, password: 'wrong password' } })).status, 401);
    }
    assertRateLimited(await service.request('POST', '/api/v1/auth/sign-in', { body: { email, password } }));
    const other = await service.signUp();
    assert.equal(
      (await service.request('POST', '/api/v1/auth/sign-in', { body: { email: other.email, password: other.password } })).status,
      200,
    );
  });

  test('password checks of PATCH and DELETE /auth/me count against the account: a token cannot guess or flood', async () => {
    const service = await startService({ rateLimit: { ...limits, authPerMinute: 100 } });
    const { token, password } = await service.signUp();
    for (let i = 0; i < limits.failedSignInsPer15Minutes; i += 1) {
      const wrong = await service.request('PATCH', '/api/v1/auth/me', {
        token,
        body: { password: 'new password 1', currentPassword: `guess ${i}` },
      });
      assert.equal(wrong.status, 403);
    }
    assertRateLimited(
      await service.request('PATCH', '/api/v1/auth/me', { token, body: { password: 'new password 1', currentPassword: password } }),
    );
    assertRateLimited(await service.request('DELETE', '/api/v1/auth/me', { token, body: { password } }));
    // A name change needs no password and is not limited.
    assert.equal((await service.request('PATCH', '/api/v1/auth/me', { token, body: { name: 'Still here' } })).status, 200);
  });

  test('requests per API token: over the limit is 429; another token of the same user still works', async () => {
    const service = await startService({ rateLimit: { ...limits, authPerMinute: 100 } });
    const { token } = await service.signUp();
    const second = (await service.request('POST', '/api/v1/api-tokens', { token, body: {} })).body.data.token;
    const statuses = [];
    for (let i = 0; i < limits.perTokenPerMinute - 1; i += 1)
      statuses.push((await service.request('GET', '/api/v1/tools', { token })).status);
    assert.ok(
      statuses.every((status) => status === 200),
      String(statuses),
    );
    assertRateLimited(await service.request('GET', '/api/v1/tools', { token }));
    assert.equal((await service.request('GET', '/api/v1/tools', { token: second })).status, 200);
  });

  test('RATE_LIMIT=off (the test default) never answers 429', async () => {
    for (let i = 0; i < 40; i += 1) {
      assert.equal(
        (await plain.request('POST', '/api/v1/auth/sign-in', { body: { email: 'z@example.com', password: 'password1' } })).status,
        401,
      );
    }
  });

  test('the limiter forgets the least recently used keys beyond its bound', () => {
    const limiter = new RateLimiter({ capacity: 1, windowMs: 60_000, maxKeys: 100 });
    for (let i = 0; i < 10_000; i += 1) limiter.take(`198.51.${i >> 8}.${i & 255}`);
    assert.equal(limiter.size, 100);
    assert.ok(limiter.take('198.51.39.15') > 0, 'a recent key is still limited');
    assert.equal(limiter.take('198.51.0.0'), 0, 'a forgotten key starts afresh');
  });

  test('a bucket refills over its window', () => {
    const limiter = new RateLimiter({ capacity: 2, windowMs: 60_000 });
    assert.equal(limiter.take('k', 0), 0);
    assert.equal(limiter.take('k', 0), 0);
    assert.equal(limiter.take('k', 0), 30);
    assert.equal(limiter.take('k', 30_000), 0);
  });
});

describe('token lifecycle', () => {
  test('a token revoked while its password change is being hashed changes nothing (401)', async () => {
    // A slower hash (about 50 ms) leaves time to revoke the token mid-request.
    const service = await startService({ scrypt: { logN: 15, r: 8, p: 1 } });
    const { token, email, password } = await service.signUp();
    const second = (await service.request('POST', '/api/v1/api-tokens', { token, body: {} })).body.data;
    const change = service.request('PATCH', '/api/v1/auth/me', {
      token: second.token,
      body: { password: 'attacker password', currentPassword: password },
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal((await service.request('DELETE', `/api/v1/api-tokens/${second.id}`, { token })).status, 200);
    const reply = await change;
    assert.equal(reply.status, 401, JSON.stringify(reply.body));
    assert.equal((await service.request('GET', '/api/v1/auth/me', { token })).status, 200, "the owner's token still works");
    assert.equal(
      (await service.request('POST', '/api/v1/auth/sign-in', { body: { email, password } })).status,
      200,
      'the password is unchanged',
    );
  });

  test('a password change racing the deletion of the account answers 401, not 500', async () => {
    const service = await startService({ scrypt: { logN: 15, r: 8, p: 1 } });
    const { token, password } = await service.signUp();
    const other = (await service.request('POST', '/api/v1/api-tokens', { token, body: {} })).body.data.token;
    const change = service.request('PATCH', '/api/v1/auth/me', {
      token: other,
      body: { password: 'another password', currentPassword: password },
    });
    const removal = service.request('DELETE', '/api/v1/auth/me', { token, body: { password } });
    const [changed, removed] = await Promise.all([change, removal]);
    // Whichever hash ends first wins: the deletion (the change then finds no account: 401, never a
    // 500) or the change (which revokes the other tokens, so the deletion is refused: 401).
    assert.deepEqual([changed.status, removed.status].sort(), [200, 401], JSON.stringify({ changed: changed.body, removed: removed.body }));
  });

  test('lastUsedAt is set on first use and not rewritten within a minute', async () => {
    const { token } = await plain.signUp();
    const created = (await plain.request('POST', '/api/v1/api-tokens', { token, body: { description: 'ci' } })).body.data;
    assert.equal(created.lastUsedAt, null);
    assert.match(created.createdAt, TIMESTAMP);
    await plain.request('GET', '/api/v1/auth/me', { token: created.token });
    const first = (await plain.request('GET', `/api/v1/api-tokens/${created.id}`, { token })).body.data.lastUsedAt;
    assert.match(first, TIMESTAMP);
    await plain.request('GET', '/api/v1/auth/me', { token: created.token });
    const again = (await plain.request('GET', `/api/v1/api-tokens/${created.id}`, { token })).body.data.lastUsedAt;
    assert.equal(again, first);
  });

  test('an authenticated read writes nothing: lastUsedAt reaches the file with the next flush', async () => {
    const { token } = await plain.signUp();
    const created = (await plain.request('POST', '/api/v1/api-tokens', { token, body: { description: 'reader' } })).body.data;
    const stored = plain.db.prepare('SELECT last_used_at FROM api_tokens WHERE id = ?').pluck();
    const changesBefore = plain.db.prepare('SELECT total_changes()').pluck().get();
    assert.equal((await plain.request('GET', '/api/v1/auth/me', { token: created.token })).status, 200);
    assert.equal(plain.db.prepare('SELECT total_changes()').pluck().get(), changesBefore, 'no row written by the read');
    assert.equal(stored.get(created.id), null);
    // Seen at once through the API, on the file after the flush.
    const seen = (await plain.request('GET', `/api/v1/api-tokens/${created.id}`, { token })).body.data.lastUsedAt;
    assert.match(seen, TIMESTAMP);
    await plain.app.stopBackgroundWork();
    assert.equal(stored.get(created.id), seen);
  });

  test('expiresAt on create: a future time is kept; a past or malformed one is 422; the token stops at expiry', async () => {
    const { token } = await plain.signUp();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const created = await plain.request('POST', '/api/v1/api-tokens', { token, body: { expiresAt: future } });
    assert.equal(created.status, 201);
    assert.equal(Date.parse(created.body.data.expiresAt), Date.parse(future));
    assert.match(created.body.data.expiresAt, TIMESTAMP);

    for (const expiresAt of [new Date(Date.now() - 1000).toISOString(), 'tomorrow', 12]) {
      const reply = await plain.request('POST', '/api/v1/api-tokens', { token, body: { expiresAt } });
      assert.equal(reply.status, 422, String(expiresAt));
      assert.equal(errorOf(reply).details?.[0].path, 'expiresAt');
    }

    plain.db.prepare('UPDATE api_tokens SET expires_at = ? WHERE id = ?').run('2000-01-01T00:00:00.000000+00:00', created.body.data.id);
    const expired = await plain.request('GET', '/api/v1/auth/me', { token: created.body.data.token });
    assert.equal(expired.status, 401);
  });

  test('sign-in tokens expire after the configured period', async () => {
    const service = await startService({ signInTokenTtlMs: 2 * 24 * 3_600_000 });
    const { token } = await service.signUp();
    const tokens = (await service.request('GET', '/api/v1/api-tokens', { token })).body.data;
    const days = (Date.parse(tokens[0].expiresAt) - Date.now()) / (24 * 3_600_000);
    assert.ok(days > 1.99 && days <= 2, String(days));
  });
});

describe('secrets at rest', () => {
  test('tool metadata, extra llm keys and document authorization never reach the database file in clear', async () => {
    const secret = 'planted-secret-7f3a9c1e';
    const { token } = await plain.signUp();
    const tool = await plain.request('POST', '/api/v1/tools', {
      token,
      body: { name: 'nla', type: 'AUTOMATION_NLA', metadata: { automation_nla_api_key: secret } },
    });
    const agent = await plain.request('POST', '/api/v1/agents', {
      token,
      body: { name: 'a', type: 'REACT', llm: { model: 'm', provider: 'p', api_key: secret } },
    });
    const document = await plain.request('POST', '/api/v1/documents', {
      token,
      body: { name: 'd', type: 'URL', url: 'https://example.com', authorization: { bearer: secret } },
    });
    assert.deepEqual([tool.status, agent.status, document.status], [201, 201, 201]);
    for (const reply of [tool, agent, document]) assert.ok(!JSON.stringify(reply.body).includes(secret));

    plain.db.pragma('wal_checkpoint(TRUNCATE)');
    for (const file of [plain.config.databasePath, `${plain.config.databasePath}-wal`]) {
      if (existsSync(file)) assert.ok(!readFileSync(file).includes(secret), `${file} holds the secret in clear`);
    }
    // ...but they are there, sealed, for the service to use.
    const stored = plain.db.prepare('SELECT metadata FROM tools WHERE id = ?').pluck().get(tool.body.data.id) as string;
    assert.equal(JSON.parse(plain.unseal(stored)).automation_nla_api_key, secret);
  });

  test('a document URL may not carry credentials (they would be returned); authorization is for them', async () => {
    const { token } = await plain.signUp();
    const reply = await plain.request('POST', '/api/v1/documents', {
      token,
      body: { name: 'd', type: 'URL', url: 'https://user:hunter2@example.com/x' },
    });
    assert.equal(reply.status, 422);
    assert.equal(errorOf(reply).details?.[0].path, 'url');
    assert.ok(!JSON.stringify(reply.body).includes('hunter2'));
  });

  test('a sealed value opens only with its key and detects tampering', () => {
    const key = Buffer.alloc(32, 7);
    const sealer = createSealer(key);
    const sealed = sealer.seal('{"k":"v"}');
    assert.notEqual(sealer.seal('{"k":"v"}'), sealed, 'a fresh IV every time');
    assert.equal(sealer.open(sealed), '{"k":"v"}');
    assert.throws(() => createSealer(Buffer.alloc(32, 8)).open(sealed));
    const tampered = `v1:${Buffer.from(Buffer.from(sealed.slice(3), 'base64').map((byte, i) => (i === 30 ? byte ^ 1 : byte))).toString('base64')}`;
    assert.throws(() => sealer.open(tampered));
  });

  test('the key file is created owner-only (0600) and read back unchanged', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ams-key-'));
    const path = join(dir, 'service.db.key');
    const key = loadOrCreateKeyFile(path);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(loadOrCreateKeyFile(path), key);
  });

  test('a new database file and its directory are owner-only', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'ams-db-')), 'nested');
    const db = openDatabase(join(dir, 'service.db'));
    closeDatabase(db);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, 'service.db')).mode & 0o777, 0o600);
  });
});

describe('headers', () => {
  test('no X-Powered-By; nosniff and no-store on responses that carry a token or user', async () => {
    const reply = await plain.request('POST', '/api/v1/auth/sign-up', {
      body: { name: 'h', email: 'h@example.com', password: 'password1' },
    });
    assert.equal(reply.headers.get('x-powered-by'), null);
    assert.equal(reply.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(reply.headers.get('cache-control'), 'no-store');
  });

  test('CORS is off by default: no Access-Control headers', async () => {
    const reply = await plain.request('OPTIONS', '/api/v1/tools', {
      headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'GET' },
    });
    assert.equal(reply.headers.get('access-control-allow-origin'), null);
  });

  test('CORS_ORIGINS: a listed origin gets a preflight answer and CORS headers; others do not', async () => {
    const preflight = await withCors.request('OPTIONS', '/api/v1/tools', {
      headers: {
        Origin: 'https://app.example.com',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'autorization, content-type',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example.com');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Autorization/);
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /PATCH/);

    const { token } = await withCors.signUp();
    const simple = await withCors.request('GET', '/api/v1/tools', { token, headers: { Origin: 'https://app.example.com' } });
    assert.equal(simple.headers.get('access-control-allow-origin'), 'https://app.example.com');
    assert.match(simple.headers.get('access-control-expose-headers') ?? '', /Link/);

    const stranger = await withCors.request('GET', '/api/v1/tools', { token, headers: { Origin: 'https://evil.example.net' } });
    assert.equal(stranger.headers.get('access-control-allow-origin'), null);
  });
});

describe('cheap to refuse', () => {
  test('a template with thousands of placeholders is checked quickly and the 422 message stays short', async () => {
    const { token } = await plain.signUp();
    const template = Array.from({ length: 12_000 }, (_, i) => `{v${i}}`).join('');
    const started = Date.now();
    const reply = await plain.request('POST', '/api/v1/prompts', { token, body: { name: 'p', template, input_variables: [] } });
    assert.equal(reply.status, 422);
    assert.ok(Date.now() - started < 2000);
    assert.match(errorOf(reply).details![0].message, /and 11990 more/);
    assert.ok(JSON.stringify(reply.body).length < 2000);
  });

  test('a plain OPTIONS answers 204 with Allow (no body outside the envelope)', async () => {
    const reply = await plain.request('OPTIONS', '/api/v1/agents');
    assert.equal(reply.status, 204);
    assert.match(reply.headers.get('allow') ?? '', /POST/);
  });
});

describe('request log', () => {
  test('one JSON line per request with id, method, route, status, duration and user; never a secret', async () => {
    const { token, password, user } = await logged.signUp();
    logLines.length = 0;
    await logged.request('POST', '/api/v1/tools', { token, body: { name: 't', type: 'SEARCH', metadata: { key: 'metadata-secret-91' } } });
    await logged.request('GET', '/api/v1/nothing-here', { token });
    const lines = logLines.filter((line) => line.msg === 'request');
    assert.equal(lines.length, 2);
    assert.deepEqual(Object.keys(lines[0]).sort(), ['method', 'ms', 'msg', 'requestId', 'route', 'status', 'userId']);
    assert.equal(lines[0].route, '/api/v1/tools');
    assert.equal(lines[0].status, 201);
    assert.equal(lines[0].userId, user.id);
    assert.equal(typeof lines[0].ms, 'number');
    assert.equal(lines[1].status, 404);
    const text = JSON.stringify(logLines);
    for (const secret of [token, password, 'metadata-secret-91']) assert.ok(!text.includes(secret), `log holds ${secret}`);
  });
});

describe('slow clients', () => {
  test('a request body that never finishes is cut off after REQUEST_TIMEOUT_MS', async () => {
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(slow.url).port), '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => (received += chunk));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
      socket.write(
        'POST /api/v1/auth/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":',
      );
    });
    const elapsed = Date.now() - started;
    assert.match(answer, /^HTTP\/1\.1 408/);
    assert.ok(elapsed < 5000, `took ${elapsed} ms`);
  });
});
