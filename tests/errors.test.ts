// The error contract: one envelope, a real status and a stable code for each kind of error the
// service documents, and the headers every response carries.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { errorOf, startService, type Reply } from './helpers.js';
import { RouteTable } from '../src/http/route.js';

const service = await startService();
/** A second service with a small body limit, for the 413 row. */
const small = await startService({ bodyLimitBytes: 2048 });
const { request } = service;
let token: string;
let password: string;

before(async () => {
  ({ token, password } = await service.signUp('Errors'));
});

/** Asserts the exact failure envelope, the status and the code; returns the error object. */
function assertError(reply: Reply, status: number, code: string) {
  assert.equal(reply.status, status, JSON.stringify(reply.body));
  assert.deepEqual(Object.keys(reply.body).sort(), ['data', 'error', 'success']);
  assert.equal(reply.body.success, false);
  assert.equal(reply.body.data, null);
  const error = errorOf(reply);
  assert.equal(error.code, code);
  assert.equal(typeof error.message, 'string');
  assert.ok(error.message.length > 0);
  const extra = Object.keys(error).filter((key) => !['code', 'message', 'details'].includes(key));
  assert.deepEqual(extra, [], 'error has only code, message and details');
  assert.match(reply.headers.get('content-type') ?? '', /^application\/json/);
  return error;
}

describe('the error table', () => {
  test('400 invalid_json: a body that is not parseable JSON', async () => {
    for (const raw of ['{"name": ', '{name: "x"}', "{'a': 1}"]) {
      const reply = await request('POST', '/api/v1/api-tokens', { token, raw });
      const error = assertError(reply, 400, 'invalid_json');
      assert.ok(!error.message.includes(raw), 'the message does not echo the body');
    }
  });

  test('401 unauthorized: no credential, and an unknown token', async () => {
    assertError(await request('GET', '/api/v1/api-tokens'), 401, 'unauthorized');
    assertError(await request('GET', '/api/v1/api-tokens', { token: 'ams_not-a-real-token' }), 401, 'unauthorized');
  });

  test('401 unauthorized: a wrong sign-in password', async () => {
    const { email } = await service.signUp();
    const reply = await request('POST', '/api/v1/auth/sign-in', { body: { email, password: 'wrong password' } });
    assertError(reply, 401, 'unauthorized');
  });

  test('403 forbidden: a wrong current password on PATCH /auth/me', async () => {
    const reply = await request('PATCH', '/api/v1/auth/me', {
      token,
      body: { password: 'a new password', currentPassword: `${password}!` },
    });
    assertError(reply, 403, 'forbidden');
  });

  test('404 not_found: an unknown route, with or without a token', async () => {
    for (const path of ['/api/v1/nothing-here', '/api/v1/api-tokens/x/y', '/nothing', '/api/v2/api-tokens']) {
      assertError(await request('GET', path), 404, 'not_found');
      assertError(await request('GET', path, { token }), 404, 'not_found');
    }
  });

  test('paths match in any letter case and with a trailing slash; a partial or doubled path is 404', async () => {
    for (const path of ['/API/V1/api-tokens', '/api/v1/API-TOKENS', '/api/v1/api-tokens/', '/HEALTHZ']) {
      assert.equal((await request('GET', path, { token })).status, 200, path);
    }
    for (const path of ['/api/v1', '/api/v1/', '/api/v1//api-tokens', '/api'])
      assertError(await request('GET', path, { token }), 404, 'not_found');
  });

  test('a route whose first path segment is a pattern is refused when it is added (routes are grouped by that segment)', () => {
    for (const path of ['/api/v1/:kind', '/:page', '/api/v1/(.*)']) {
      assert.throws(() => new RouteTable().add('get', path, () => {}), /first segment of a path must be literal/, path);
    }
    assert.doesNotThrow(() => new RouteTable().add('get', '/api/v1/agents/:id', () => {}));
  });

  test('405 method_not_allowed with an Allow header: a known path, a wrong method', async () => {
    const reply = await request('PUT', '/api/v1/api-tokens', { token, body: {} });
    assertError(reply, 405, 'method_not_allowed');
    const allowed = (reply.headers.get('allow') ?? '').split(',').map((method) => method.trim());
    assert.ok(allowed.includes('GET'), `Allow: ${reply.headers.get('allow')}`);
    assert.ok(allowed.includes('POST'), `Allow: ${reply.headers.get('allow')}`);
    assert.ok(!allowed.includes('PUT'));

    const health = await request('DELETE', '/healthz');
    assertError(health, 405, 'method_not_allowed');
    assert.match(health.headers.get('allow') ?? '', /\bGET\b/);
  });

  test('409 conflict: an email already registered', async () => {
    const { email } = await service.signUp();
    const reply = await request('POST', '/api/v1/auth/sign-up', { body: { name: 'Again', email, password: 'correct horse battery' } });
    assertError(reply, 409, 'conflict');
  });

  describe('413 payload_too_large', () => {
    test('a body over the configured limit', async () => {
      const body = { name: 'Big', email: 'big@example.com', password: 'correct horse battery', padding: 'x'.repeat(10 * 1024) };
      const reply = await small.request('POST', '/api/v1/auth/sign-up', { body });
      assertError(reply, 413, 'payload_too_large');
      const count = small.db.prepare('SELECT COUNT(*) FROM users').pluck().get();
      assert.equal(count, 0);
    });

    test('a body under the limit is read', async () => {
      const reply = await small.request('POST', '/api/v1/auth/sign-up', {
        body: { name: 'Small', email: 'small@example.com', password: 'correct horse battery' },
      });
      assert.equal(reply.status, 201);
    });
  });

  test('415 unsupported_media_type: a body that is not application/json', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const reply = await request('POST', '/api/v1/api-tokens', { token, raw: '{"description":"x"}', contentType });
      assertError(reply, 415, 'unsupported_media_type');
    }
    const signUp = await request('POST', '/api/v1/auth/sign-up', {
      raw: 'name=x&email=x@example.com&password=12345678',
      contentType: 'text/plain',
    });
    assertError(signUp, 415, 'unsupported_media_type');
  });

  test('application/json with a charset parameter is accepted', async () => {
    const reply = await request('POST', '/api/v1/api-tokens', {
      token,
      raw: '{"description":"charset"}',
      contentType: 'application/json; charset=utf-8',
    });
    assert.equal(reply.status, 201);
  });

  for (const raw of ['[]', '"x"', '3', 'null', 'true']) {
    test(`422 validation_failed: a body of ${raw} is not an object`, async () => {
      const tokenReply = await request('POST', '/api/v1/api-tokens', { token, raw });
      const error = assertError(tokenReply, 422, 'validation_failed');
      assert.ok(Array.isArray(error.details));
      const signUp = await request('POST', '/api/v1/auth/sign-up', { raw });
      assertError(signUp, 422, 'validation_failed');
    });
  }

  test('422 details: one entry per bad field, each with a path and a message', async () => {
    const reply = await request('POST', '/api/v1/auth/sign-up', { body: { name: 7, email: 'nope' } });
    const error = assertError(reply, 422, 'validation_failed');
    assert.ok(Array.isArray(error.details));
    for (const issue of error.details!) {
      assert.deepEqual(Object.keys(issue).sort(), ['message', 'path']);
      assert.equal(typeof issue.message, 'string');
    }
    assert.deepEqual(error.details!.map((issue) => issue.path).sort(), ['email', 'name', 'password']);
  });

  test('errors other than 422 carry no details unless they have some', async () => {
    const error = assertError(await request('GET', '/api/v1/nothing-here'), 404, 'not_found');
    assert.deepEqual(Object.keys(error).sort(), ['code', 'message']);
  });
});

describe('headers on every response', () => {
  const cases: [string, () => Promise<Reply>][] = [
    ['200', () => request('GET', '/api/v1/auth/me', { token })],
    ['201', () => request('POST', '/api/v1/api-tokens', { token, body: {} })],
    ['400', () => request('POST', '/api/v1/api-tokens', { token, raw: '{' })],
    ['401', () => request('GET', '/api/v1/auth/me')],
    ['404', () => request('GET', '/nothing')],
    ['405', () => request('PUT', '/api/v1/api-tokens', { token })],
    ['415', () => request('POST', '/api/v1/api-tokens', { token, raw: 'x', contentType: 'text/plain' })],
    ['422', () => request('POST', '/api/v1/api-tokens', { token, raw: '[]' })],
    ['healthz', () => request('GET', '/healthz')],
  ];
  for (const [name, send] of cases) {
    test(`${name}: X-Request-Id, X-Content-Type-Options: nosniff, Cache-Control: no-store`, async () => {
      const reply = await send();
      assert.match(reply.headers.get('x-request-id') ?? '', /^\S{8,128}$/);
      assert.equal(reply.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(reply.headers.get('cache-control'), 'no-store');
    });
  }

  test('each request gets its own id', async () => {
    const first = await request('GET', '/healthz');
    const second = await request('GET', '/healthz');
    assert.notEqual(first.headers.get('x-request-id'), second.headers.get('x-request-id'));
  });

  test('a sane client X-Request-Id is echoed, on success and on failure', async () => {
    for (const id of ['req-123', 'abc.DEF_9:trace-0001', 'f47ac10b-58cc-4372-a567-0e02b2c3d479']) {
      const ok = await request('GET', '/healthz', { headers: { 'X-Request-Id': id } });
      assert.equal(ok.headers.get('x-request-id'), id);
      const failed = await request('GET', '/api/v1/auth/me', { headers: { 'X-Request-Id': id } });
      assert.equal(failed.status, 401);
      assert.equal(failed.headers.get('x-request-id'), id);
    }
  });

  test('an insane client X-Request-Id is replaced', async () => {
    for (const id of ['a'.repeat(300), 'has spaces in it', '<script>', 'quote"d']) {
      const reply = await request('GET', '/healthz', { headers: { 'X-Request-Id': id } });
      const sent = reply.headers.get('x-request-id');
      assert.ok(sent, 'an id is still sent');
      assert.notEqual(sent, id);
      assert.ok(sent.length <= 128 && !/\s/.test(sent), sent);
    }
  });
});

describe('hostile bodies', () => {
  test('a __proto__ key neither pollutes Object.prototype nor causes a 5xx', async () => {
    const raws = [
      '{"__proto__": {"polluted": true}, "description": "proto"}',
      '{"description": "nested", "x": {"__proto__": {"polluted": true}}}',
      '{"constructor": {"prototype": {"polluted": true}}, "description": "ctor"}',
    ];
    for (const raw of raws) {
      const reply = await request('POST', '/api/v1/api-tokens', { token, raw });
      assert.ok(reply.status < 500, `${reply.status} for ${raw}`);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    }
    const signUp = await request('POST', '/api/v1/auth/sign-up', {
      raw: '{"__proto__": {"polluted": true, "name": "Proto"}, "email": "proto@example.com", "password": "correct horse battery"}',
    });
    assert.ok(signUp.status < 500, `${signUp.status}`);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    // The name inside __proto__ must not count as the body's own name: the default one is used.
    assert.equal(signUp.status, 201, JSON.stringify(signUp.body));
    assert.equal(signUp.body.data.user.name, 'proto');
  });

  test('a very long bearer token is 401, not a 5xx', async () => {
    const reply = await request('GET', '/api/v1/auth/me', { headers: { Authorization: `Bearer ams_${'x'.repeat(4000)}` } });
    assertError(reply, 401, 'unauthorized');
  });
});

describe('GET /healthz', () => {
  test('200 without a credential', async () => {
    const reply = await request('GET', '/healthz');
    assert.equal(reply.status, 200);
    assert.equal(reply.body.success, true);
  });
});
