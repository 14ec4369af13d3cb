// Route groups: each answers errors in its own format — a thrown error, an unknown route or a wrong
// method under its prefix, a validation error — while every other path keeps the error envelope.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import * as v from 'valibot';
import type { AppContext, AppState } from '../src/http/context.js';
import { envelope, presentEnvelope } from '../src/http/envelope.js';
import { jsonBody } from '../src/http/body.js';
import { conflict, unauthorized, type ErrorPresenter } from '../src/http/errors.js';
import { defineRoute, mountRoutes } from '../src/http/route.js';
import { silentLogger } from '../src/lib/log.js';

/** Another error format: `{ error: { message, type } }`. */
const presentOther: ErrorPresenter = (error) => ({ error: { message: error.message, type: error.code } });

const routes = (path: string, root: boolean) => [
  defineRoute({
    method: 'post',
    path: `${path}/things`,
    root,
    operationId: `create${path.replace(/\W/g, '')}`,
    summary: 'Create a thing',
    tag: 'Test',
    auth: false,
    body: v.strictObject({ name: v.pipe(v.string(), v.minLength(1)) }),
    success: { status: 201, description: 'Created.', data: v.strictObject({ name: v.string() }) },
    handler: ({ body }) => {
      if (body.name === 'taken') throw conflict('That name is taken.');
      return { name: body.name };
    },
  }),
];

const app = new Koa<AppState, AppContext>();
const table = mountRoutes(
  [
    { routes: routes('/things', false), presentError: presentEnvelope },
    { prefix: '/v1', routes: routes('/v1', true), presentError: presentOther },
  ],
  () => {
    throw unauthorized();
  },
);
app.use(envelope(silentLogger, { logRequests: false, presenterFor: table.presenterFor }));
app.use(jsonBody(1024));
app.use(table.middleware());
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
after(() => server.close());
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), requestId: response.headers.get('x-request-id') };
}

test('a group with its own presenter answers its errors in its format', async () => {
  const created = await call('POST', '/v1/things', { name: 'a' });
  assert.deepEqual([created.status, created.body], [201, { success: true, data: { name: 'a' } }]);

  const thrown = await call('POST', '/v1/things', { name: 'taken' });
  assert.equal(thrown.status, 409);
  assert.deepEqual(thrown.body, { error: { message: 'That name is taken.', type: 'conflict' } });
  assert.ok(thrown.requestId);

  const unknown = await call('GET', '/v1/nothing-here');
  assert.equal(unknown.status, 404);
  assert.deepEqual(unknown.body, { error: { message: 'Route not found.', type: 'not_found' } });

  const wrongMethod = await call('GET', '/v1/things');
  assert.equal(wrongMethod.status, 405);
  assert.deepEqual(wrongMethod.body, { error: { message: 'Method not allowed here; use POST.', type: 'method_not_allowed' } });

  const invalid = await call('POST', '/v1/things', { name: '' });
  assert.equal(invalid.status, 422);
  assert.deepEqual(invalid.body, { error: { message: 'Invalid name.', type: 'validation_failed' } });

  // Refused by the body reader, before any route runs.
  const response = await fetch(`${base}/v1/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' });
  assert.equal(response.status, 400);
  assert.deepEqual(await response.json(), { error: { message: 'The request body could not be read as JSON.', type: 'invalid_json' } });
});

test('the other paths keep the error envelope', async () => {
  const thrown = await call('POST', '/api/v1/things/things', { name: 'taken' });
  assert.equal(thrown.status, 409);
  assert.deepEqual(thrown.body, { success: false, data: null, error: { code: 'conflict', message: 'That name is taken.' } });

  // A path that only starts like the group's prefix is not in it.
  const unknown = await call('GET', '/v1x/things');
  assert.equal(unknown.status, 404);
  assert.deepEqual(unknown.body, { success: false, data: null, error: { code: 'not_found', message: 'Route not found.' } });

  const invalid = await call('POST', '/api/v1/things/things', { name: '' });
  assert.equal(invalid.status, 422);
  assert.equal(invalid.body.error.code, 'validation_failed');
  assert.deepEqual(invalid.body.error.details, [{ path: 'name', message: invalid.body.error.details[0].message }]);
});

test('a route outside its group’s prefix is refused when mounted', () => {
  const noAuth = () => {
    throw unauthorized();
  };
  assert.throws(
    () =>
      mountRoutes(
        [
          { routes: [], presentError: presentEnvelope },
          { prefix: '/v1', routes: routes('/v2', true), presentError: presentOther },
        ],
        noAuth,
      ),
    /outside its group's paths/,
  );
  assert.throws(
    () =>
      mountRoutes(
        [
          { routes: routes('/v1', true), presentError: presentEnvelope },
          { prefix: '/v1', routes: [], presentError: presentOther },
        ],
        noAuth,
      ),
    /outside/,
  );
  assert.throws(
    () => mountRoutes([{ prefix: '/v1', routes: [], presentError: presentOther }], noAuth),
    /exactly one route group has no prefix/,
  );
});
