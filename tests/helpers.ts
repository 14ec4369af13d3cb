// Test harness: a fresh service on its own temporary database file, reached over real HTTP,
// and a tiny client that speaks the interface (envelope in, status/headers/body out).
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../src/app.js';
import { createHttpServer } from '../src/server.js';
import type { Config } from '../src/config.js';
import { closeDatabase, openDatabase, type Db } from '../src/db.js';
import { silentLogger, type Logger } from '../src/lib/log.js';
import { createSealer } from '../src/lib/secrets.js';
import { IngestError } from '../src/ingest/errors.js';

/** Fast hashing for tests only: production refuses anything below MIN_SCRYPT (src/config.ts). */
export const TEST_SCRYPT = { logN: 10, r: 8, p: 1 };

/** A record as the interface returns it. */
export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Reply {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface RequestOptions {
  token?: string;
  /** Send the token as `Authorization` instead of the interface's `Autorization`. */
  header?: 'Autorization' | 'Authorization';
  body?: unknown;
  /** A raw body sent as is (with `contentType`, default application/json). */
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface TestService {
  url: string;
  db: Db;
  config: Config;
  app: App;
  dir: string;
  /** Decrypts a sealed column value (tool metadata, llm extras, document authorization). */
  unseal(sealed: string): string;
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  /** POSTs `body` to `/api/v1${path}` as the holder of `token`, asserts 201 and returns the new record. */
  create(token: string, path: string, body: unknown): Promise<Json>;
  /** Signs up a new user and signs in: returns the user and a bearer token. */
  signUp(name?: string): Promise<{ user: { id: string; email: string; name: string }; token: string; email: string; password: string }>;
  close(): Promise<void>;
}

let userCounter = 0;

/**
 * Starts a service on a new temporary database; it is closed and deleted after the test file.
 * Rate limiting is off unless a test turns it on (`rateLimit: { enabled: true, ... }`).
 */
export async function startService(overrides: Partial<Config> = {}, log: Logger = silentLogger): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'ams-test-'));
  const config: Config = {
    host: '127.0.0.1',
    port: 0,
    databasePath: join(dir, 'test.db'),
    scrypt: TEST_SCRYPT,
    hashConcurrency: 2,
    bodyLimitBytes: 1024 * 1024,
    signInTokenTtlMs: 30 * 24 * 60 * 60 * 1000,
    logRequests: false,
    requestTimeoutMs: 30_000,
    shutdownTimeoutMs: 1_000,
    trustProxy: false,
    corsOrigins: [],
    rateLimit: { enabled: false, authPerMinute: 30, failedSignInsPer15Minutes: 10, perTokenPerMinute: 6000 },
    // Off unless a test ingests: documents then stay `pending`, so responses do not change under a test.
    ingestion: { enabled: false, concurrency: 2, maxBytes: 20 * 1024 * 1024, timeoutMs: 5000, allowPrivateNetworks: true },
    // Fixture servers (a fake model, tools) listen on 127.0.0.1.
    allowPrivateNetworks: true,
    // No real endpoint: a test that runs an agent points the agent (or these) at a fake model.
    runs: { openaiBaseUrl: 'http://127.0.0.1:9/v1', ollamaBaseUrl: 'http://127.0.0.1:9/v1', timeoutMs: 10_000, concurrencyPerUser: 4, maxSteps: 8 },
    ...overrides,
  };
  const db = openDatabase(config.databasePath);
  const secretKey = randomBytes(32);
  const app = createApp({ db, config, log, secretKey });
  const server: Server = createHttpServer(app, config);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function request(method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers[options.header ?? 'Autorization'] = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // left as text: a test asserting the envelope will fail on it
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  async function create(token: string, path: string, body: unknown): Promise<Json> {
    const reply = await request('POST', `/api/v1${path}`, { token, body });
    assert.equal(reply.status, 201, `POST ${path}: ${JSON.stringify(reply.body)}`);
    return reply.body.data;
  }

  async function signUp(name = 'Test User') {
    userCounter += 1;
    const email = `user${userCounter}.${Date.now()}@example.com`;
    const password = 'correct horse battery';
    const up = await request('POST', '/api/v1/auth/sign-up', { body: { name, email, password } });
    if (up.status !== 201) throw new Error(`sign-up failed: ${up.status} ${JSON.stringify(up.body)}`);
    const signIn = await request('POST', '/api/v1/auth/sign-in', { body: { email, password } });
    if (signIn.status !== 200) throw new Error(`sign-in failed: ${signIn.status} ${JSON.stringify(signIn.body)}`);
    return { user: up.body.data.user, token: signIn.body.data.token as string, email, password };
  }

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
  return { url, db, config, app, dir, unseal, request, create, signUp, close };
}

/** Asserts the failure envelope and returns its error object. */
export function errorOf(reply: Reply): { code: string; message: string; details?: { path: string; message: string }[] } {
  if (reply.body?.success !== false || reply.body.data !== null || typeof reply.body.error?.code !== 'string') {
    throw new Error(`not an error envelope (${reply.status}): ${JSON.stringify(reply.body)}`);
  }
  return reply.body.error;
}

/** Matches the interface's timestamps: ISO 8601, six fractional digits, a UTC offset. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;

/** The message of a failed status check: `what` (when given), then the status and the body. */
const failure = (reply: Reply, what?: string) => `${what === undefined ? '' : `${what}: `}${reply.status} ${JSON.stringify(reply.body)}`;

/** Asserts a 422 `validation_failed` whose details name exactly `path`; returns the error. */
export function assertInvalid(reply: Reply, path: string, what?: string): ReturnType<typeof errorOf> {
  assert.equal(reply.status, 422, failure(reply, what));
  const error = errorOf(reply);
  assert.equal(error.code, 'validation_failed', what);
  assert.deepEqual(error.details?.map((issue) => issue.path), [path], what);
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
