// Test harness: a fresh service on its own temporary database file, reached over real HTTP through
// the tests' one client (client.ts), with the assertions the test files share.
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App, type AppOptions } from '../src/app.js';
import { createHttpServer } from '../src/server.js';
import type { RunEnd } from '../src/runs/store.js';
import { loadConfig, type Config } from '../src/config.js';
import { closeDatabase, openDatabase, type Db } from '../src/db.js';
import { silentLogger, type Logger } from '../src/lib/log.js';
import { createSealer } from '../src/lib/secrets.js';
import { IngestError } from '../src/ingest/errors.js';
import { createClient, type Client, type Json, type Reply } from './client.js';

export { createClient, nextPath } from './client.js';
export type { Client, Json, Reply, RequestOptions, SignedUp } from './client.js';

/** The cheap hash of PASSWORD_HASH_COST=test (src/config.ts), which every test service uses. */
export { TEST_SCRYPT } from '../src/config.js';

/** Where a test service's settings differ from the service's defaults (src/config.ts supplies the rest). */
const TEST_ENV: Record<string, string> = {
  PORT: '0',
  LOG_REQUESTS: 'off',
  // Off unless a test turns it on (`rateLimit: { enabled: true, ... }`).
  RATE_LIMIT: 'off',
  // Off unless a test ingests: documents then stay `pending`, so responses do not change under a test.
  INGEST: 'off',
  // The fixture servers a test ingests from (or a fake model, or a tool) listen on 127.0.0.1.
  ALLOW_PRIVATE_NETWORKS: 'on',
  // No real model server: a test that runs an agent points the agent (or these) at a fake model.
  OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
  OLLAMA_BASE_URL: 'http://127.0.0.1:9/v1',
  RUN_TIMEOUT_MS: '10000',
  HASH_CONCURRENCY: '2',
  // The cheap hash for integration tests, as a user's test suite would ask for it.
  PASSWORD_HASH_COST: 'test',
  NODE_ENV: 'test',
};

/** The settings of a test service: `env` read as the service reads its environment, on top of the test settings above. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ ...TEST_ENV, ...env });
}

export interface TestService extends Client {
  db: Db;
  config: Config;
  app: App;
  dir: string;
  /** Decrypts a sealed column value (tool metadata, llm extras, document authorization). */
  unseal(sealed: string): string;
  close(): Promise<void>;
}

/**
 * Starts a service on a new temporary database; it is closed and deleted after the test file.
 * `overrides` replace whole settings of `testConfig()` (rate limiting and ingestion are off there).
 */
export async function startService(
  overrides: Partial<Config> = {},
  log: Logger = silentLogger,
  options: Pick<AppOptions, 'beforeHash' | 'onHashWait' | 'keepAliveMs' | 'resolveHost' | 'toolProvider' | 'webhookRetryDelaysMs'> & {
    /** The key sealing secrets (a restart on the same `databasePath` needs the same one); default a new one. */
    secretKey?: Buffer;
  } = {},
): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'ams-test-'));
  const config: Config = { ...testConfig({ DATABASE_PATH: join(dir, 'test.db') }), ...overrides };
  const db = openDatabase(config.databasePath);
  const { secretKey = randomBytes(32), ...appOptions } = options;
  const app = createApp({ db, config, log, secretKey, ...appOptions });
  app.becomePrimary();
  const server: Server = createHttpServer(app, config);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = createClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);

  let closed = false;
  async function close() {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await app.stopBackgroundWork();
    closeDatabase(db);
    rmSync(dir, { recursive: true, force: true });
  }
  after(close);

  const { open: unseal } = createSealer(secretKey);
  return { ...client, db, config, app, dir, unseal, close };
}

/** Asserts the failure envelope and returns its error object. */
export function errorOf(reply: Reply): { code: string; message: string; details?: { path: string; message: string }[] } {
  if (reply.body?.success !== false || reply.body.data !== null || typeof reply.body.error?.code !== 'string') {
    throw new Error(`not an error envelope (${reply.status}): ${JSON.stringify(reply.body)}`);
  }
  return reply.body.error;
}

/** Matches the service's timestamps: ISO 8601, six fractional digits, a UTC offset. */
/** A successful run's end as the run store records it (no steps, sources or usage), for tests that drive the store. */
export function succeededEnd(output: string): RunEnd {
  return { status: 'succeeded', output, error: null, steps: [], sources: [], warnings: [], usage: null, ms: 1 };
}

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;

/** The message of a failed status check: `what` (when given), then the status and the body. */
const failure = (reply: Reply, what?: string) => `${what === undefined ? '' : `${what}: `}${reply.status} ${JSON.stringify(reply.body)}`;

/** Asserts a 422 `validation_failed` whose details name exactly `path`; returns the error. */
export function assertInvalid(reply: Reply, path: string, what?: string): ReturnType<typeof errorOf> {
  assert.equal(reply.status, 422, failure(reply, what));
  const error = errorOf(reply);
  assert.equal(error.code, 'validation_failed', what);
  assert.deepEqual(
    error.details?.map((issue) => issue.path),
    [path],
    what,
  );
  return error;
}

/** Asserts a 404 `not_found`; `what` names the case in a failure. */
export function assertNotFound(reply: Reply, what?: string): void {
  assert.equal(reply.status, 404, failure(reply, what));
  assert.equal(errorOf(reply).code, 'not_found', what);
}

/** Asserts a 409 `conflict`. */
export function assertConflict(reply: Reply): void {
  assert.equal(reply.status, 409, failure(reply));
  assert.equal(errorOf(reply).code, 'conflict');
}

/** Awaits `promise`, asserts that it rejects with an IngestError and returns that error. */
export async function rejection(promise: Promise<unknown>): Promise<IngestError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof IngestError, `expected an IngestError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the promise to reject');
}

/**
 * DELETEs `path` (such as `/api/v1/tools/<id>`) as the holder of `token`: asserts 200 with data null,
 * then 404 on a GET and on a second DELETE.
 */
export async function assertDeletes(client: Client, path: string, token: string): Promise<void> {
  const reply = await client.request('DELETE', path, { token });
  assert.equal(reply.status, 200, failure(reply, `DELETE ${path}`));
  assert.deepEqual(reply.body, { success: true, data: null });
  assertNotFound(await client.request('GET', path, { token }), `GET ${path} after the delete`);
  assertNotFound(await client.request('DELETE', path, { token }), `DELETE ${path} twice`);
}

/**
 * `record`, at `path`, seen by a `stranger`: 404 on GET, on PATCH (with `patch`) and on DELETE, exactly
 * like a missing one; afterwards its owner reads it back unchanged.
 */
export async function assertHiddenFrom(
  client: Client,
  path: string,
  { record, owner, stranger, patch = { name: 'stolen' } }: { record: Json; owner: string; stranger: string; patch?: Json },
): Promise<void> {
  assertNotFound(await client.request('GET', path, { token: stranger }), 'GET');
  assertNotFound(await client.request('PATCH', path, { token: stranger, body: patch }), 'PATCH');
  assertNotFound(await client.request('DELETE', path, { token: stranger }), 'DELETE');
  const read = await client.request('GET', path, { token: owner });
  assert.equal(read.status, 200, failure(read, `the owner's GET ${path}`));
  assert.deepEqual(read.body.data, record);
}

/** Polls `check` until it gives a value (not undefined or false), or fails naming `what` after `ms`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
