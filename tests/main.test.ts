// src/main.ts as the real process: it logs the URL it listens on, serves, and stops cleanly on
// SIGTERM; a bad setting stops it before it listens.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, spawnServiceProcess, startServiceProcess } from './run-script.js';
import { serviceNodeArgs } from '../scripts/service-command.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-main-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('the service process', () => {
  test('logs its URL, serves, and exits 0 on SIGTERM', async () => {
    const service = await startServiceProcess({ PORT: '0', HOST: '127.0.0.1', DATABASE_PATH: join(dir, 'service.db') });
    const { url } = service;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(url, 'http://127.0.0.1:0', 'PORT=0 logs the port actually chosen');

    const health = await service.request('GET', '/healthz');
    assert.equal(health.status, 200);
    assert.equal(health.body.success, true);

    const signUp = await service.request('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Process', email: 'process@example.com', password: 'correct horse battery' },
    });
    assert.equal(signUp.status, 201);
    const { data } = signUp.body;
    assert.equal(data.user.email, 'process@example.com');
    assert.match(data.user.password, /^\$scrypt\$ln=15,r=8,p=3\$/, 'the real process hashes at the production cost');

    assert.equal(await service.stop(), 0, `stderr: ${service.stderrText()}`);
  });

  test('SIGTERM lets an in-flight request finish, checkpoints the WAL and exits 0; the key file is 0600', async () => {
    const databasePath = join(dir, 'graceful.db');
    const service = await startServiceProcess({ PORT: '0', DATABASE_PATH: databasePath });
    // A sign-up takes ~160 ms of hashing at the production cost: SIGTERM arrives in the middle of it.
    const inFlight = service.request('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Late', email: 'late@example.com', password: 'correct horse battery' },
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    const stopped = service.stop();
    const reply = await inFlight;
    assert.equal(reply.status, 201);
    assert.equal(await stopped, 0, `stderr: ${service.stderrText()}`);
    assert.match(service.stdoutText(), /"msg":"stopped"/);

    // The WAL was folded into the main file: the user is there without it.
    assert.ok(!existsSync(`${databasePath}-wal`) || statSync(`${databasePath}-wal`).size === 0, 'WAL checkpointed');
    const db = new Database(databasePath, { readonly: true });
    assert.equal(db.prepare('SELECT count(*) FROM users WHERE email = ?').pluck().get('late@example.com'), 1);
    db.close();
    assert.equal(statSync(`${databasePath}.key`).mode & 0o777, 0o600);
    assert.equal(statSync(databasePath).mode & 0o777, 0o600);
  });

  test('PORT=abc: exits non-zero naming PORT, without listening', async () => {
    const service = spawnServiceProcess({ PORT: 'abc', DATABASE_PATH: join(dir, 'refused.db') });
    const code = await service.exited;
    assert.notEqual(code, 0);
    assert.notEqual(code, null);
    assert.match(service.stderrText(), /\bPORT\b/);
    assert.doesNotMatch(service.stdoutText(), /"listening"/);
  });
});

describe('the start command', () => {
  test('the container starts the service exactly as npm start does (same V8 memory flags)', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    // Docker uses the last CMD; indented ones (HEALTHCHECK's) are not instructions of their own.
    const cmd = [...dockerfile.matchAll(/^CMD (\[.*\])\s*$/gm)].at(-1);
    assert.ok(cmd, 'the Dockerfile has an exec-form CMD');
    assert.deepEqual(JSON.parse(cmd[1]), ['node', ...serviceNodeArgs()]);
    assert.ok(serviceNodeArgs().includes('--max-semi-space-size=4'), 'the memory flags are part of the start command');
  });
});
