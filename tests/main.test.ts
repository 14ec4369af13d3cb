// src/main.ts as the real process: it logs the URL it listens on, serves, and stops cleanly on
// SIGTERM; a bad setting stops it before it listens.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ams-main-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `node --import tsx src/main.ts` with `env` on top of a clean environment. */
function startProcess(env: Record<string, string>): ChildProcess & { stdoutText: () => string; stderrText: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', RATE_LIMIT: 'off', LOG_REQUESTS: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Never leave a process behind when a test fails half-way.
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return Object.assign(child, { stdoutText: () => stdout, stderrText: () => stderr, exited });
}

/** Resolves with the first JSON log line on stdout whose msg is `listening`. */
function listeningLine(child: ReturnType<typeof startProcess>, timeoutMs = 15_000): Promise<{ url: string }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`no "listening" line within ${timeoutMs} ms; stdout: ${child.stdoutText()} stderr: ${child.stderrText()}`));
    }, timeoutMs);
    const look = () => {
      // Only complete lines: the last piece may still be arriving.
      for (const line of child.stdoutText().split('\n').slice(0, -1)) {
        let entry: { msg?: string; url?: string };
        try {
          entry = JSON.parse(line);
        } catch {
          continue;
        }
        if (entry.msg === 'listening' && typeof entry.url === 'string') {
          clearTimeout(timer);
          child.stdout!.off('data', look);
          resolve({ url: entry.url });
          return;
        }
      }
    };
    child.stdout!.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening; stderr: ${child.stderrText()}`));
    });
  });
}

describe('the service process', () => {
  test('logs its URL, serves, and exits 0 on SIGTERM', async () => {
    const child = startProcess({ PORT: '0', HOST: '127.0.0.1', DATABASE_PATH: join(dir, 'service.db') });
    const { url } = await listeningLine(child);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(url, 'http://127.0.0.1:0', 'PORT=0 logs the port actually chosen');

    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { success: boolean }).success, true);

    const signUp = await fetch(`${url}/api/v1/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Process', email: 'process@example.com', password: 'correct horse battery' }),
    });
    assert.equal(signUp.status, 201);
    const { data } = (await signUp.json()) as { data: { user: { email: string; password: string } } };
    assert.equal(data.user.email, 'process@example.com');
    assert.match(data.user.password, /^\$scrypt\$ln=15,r=8,p=3\$/, 'the real process hashes at the production cost');

    child.kill('SIGTERM');
    assert.equal(await child.exited, 0, `stderr: ${child.stderrText()}`);
  });

  test('SIGTERM lets an in-flight request finish, checkpoints the WAL and exits 0; the key file is 0600', async () => {
    const databasePath = join(dir, 'graceful.db');
    const child = startProcess({ PORT: '0', DATABASE_PATH: databasePath });
    const { url } = await listeningLine(child);
    // A sign-up takes ~160 ms of hashing at the production cost: SIGTERM arrives in the middle of it.
    const inFlight = fetch(`${url}/api/v1/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Late', email: 'late@example.com', password: 'correct horse battery' }),
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    child.kill('SIGTERM');
    const reply = await inFlight;
    assert.equal(reply.status, 201);
    assert.equal(await child.exited, 0, `stderr: ${child.stderrText()}`);
    assert.match(child.stdoutText(), /"msg":"stopped"/);

    // The WAL was folded into the main file: the user is there without it.
    assert.ok(!existsSync(`${databasePath}-wal`) || statSync(`${databasePath}-wal`).size === 0, 'WAL checkpointed');
    const db = new Database(databasePath, { readonly: true });
    assert.equal(db.prepare('SELECT count(*) FROM users WHERE email = ?').pluck().get('late@example.com'), 1);
    db.close();
    assert.equal(statSync(`${databasePath}.key`).mode & 0o777, 0o600);
    assert.equal(statSync(databasePath).mode & 0o777, 0o600);
  });

  test('PORT=abc: exits non-zero naming PORT, without listening', async () => {
    const child = startProcess({ PORT: 'abc', DATABASE_PATH: join(dir, 'refused.db') });
    const code = await child.exited;
    assert.notEqual(code, 0);
    assert.notEqual(code, null);
    assert.match(child.stderrText(), /\bPORT\b/);
    assert.doesNotMatch(child.stdoutText(), /"listening"/);
  });
});
