// src/main.ts as the real process: it logs the URL it listens on, serves, and stops cleanly on
// SIGTERM; a bad setting stops it before it listens.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, runScript, spawnServiceProcess, startServiceProcess, type SpawnedService } from './run-script.js';
import { productionNodeArgs, serviceNodeArgs } from '../scripts/service-command.js';

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

  test('SIGTERM answers a `?wait=` long-poll at once (200, the document as it is) and stops well within SHUTDOWN_TIMEOUT_MS', async () => {
    // A document server that accepts the connection and never answers: ingestion stays `processing`.
    const silent = createServer((socket) => socket.on('error', () => {}));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    after(() => silent.close());
    const { port } = silent.address() as { port: number };
    const service = await startServiceProcess({
      DATABASE_PATH: join(dir, 'long-poll.db'),
      INGEST: 'on',
      ALLOW_PRIVATE_NETWORKS: 'on',
      SHUTDOWN_TIMEOUT_MS: '10000',
    });
    const { token } = await service.signUp('Waiting');
    const document = await service.createDocument(token, { type: 'TXT', url: `http://127.0.0.1:${port}/never.txt` });
    const longPoll = service.request('GET', `/api/v1/documents/${document.id}?wait=30`, { token });
    // The long-poll is in flight (the service has read it) before the signal.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = Date.now();
    const stopped = service.stop();
    const reply = await longPoll;
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.data.id, document.id);
    assert.ok(['pending', 'processing'].includes(reply.body.data.status), reply.body.data.status);
    assert.equal(await stopped, 0, `stderr: ${service.stderrText()}`);
    const ms = Date.now() - started;
    // Broken, the long-poll held the stop for the whole 10 s and its connection was cut.
    assert.ok(ms < 3_000, `the stop took ${ms} ms`);
    assert.doesNotMatch(service.stderrText(), /did not finish in time/);
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

/** The last line the process wrote to stderr. */
const lastLine = (text: string) => text.trimEnd().split('\n').at(-1) ?? '';

/**
 * Starts the service with `env` and expects it to refuse: a non-zero exit within `withinMs`, never
 * listening, and a last stderr line `cannot start: <line>` without a stack trace. Returns that line.
 */
async function expectRefusal(env: Record<string, string>, line: RegExp, withinMs = 15_000): Promise<string> {
  const service = spawnServiceProcess(env);
  const timer = setTimeout(() => service.child.kill('SIGKILL'), withinMs);
  const code = await service.exited;
  clearTimeout(timer);
  const stderr = service.stderrText();
  assert.notEqual(code, null, `still running after ${withinMs} ms (killed); stderr: ${stderr}`);
  assert.notEqual(code, 0);
  const last = lastLine(stderr);
  assert.match(last, /^cannot start: /, stderr);
  assert.match(last, line);
  assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(service.stdoutText(), /"listening"/);
  return last;
}

/** The JSON log lines the process wrote (stdout and stderr). */
function logLines(service: SpawnedService): Record<string, unknown>[] {
  return `${service.stdoutText()}\n${service.stderrText()}`
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('start-up failures: one line naming the setting, its value and the cause; exit non-zero', () => {
  test('DATABASE_PATH under /proc (used to spin at 100% CPU forever)', async () => {
    await expectRefusal({ DATABASE_PATH: '/proc/nope/x.db' }, /DATABASE_PATH=\/proc\/nope\/x\.db: .*cannot be created/, 10_000);
  });

  test('DATABASE_PATH below a file (ENOTDIR, EEXIST)', async () => {
    const file = join(dir, 'plain-file');
    writeFileSync(file, 'not a directory');
    await expectRefusal(
      { DATABASE_PATH: join(file, 'x.db') },
      /DATABASE_PATH=.*plain-file\/x\.db: a part of the path is a file, not a directory/,
    );
    await expectRefusal(
      { DATABASE_PATH: join(file, 'deeper', 'x.db') },
      /DATABASE_PATH=.*plain-file\/deeper\/x\.db: a part of the path is a file, not a directory/,
    );
  });

  test('DATABASE_PATH where the service may not write (EACCES)', async (t) => {
    let path: string;
    if (process.getuid?.() === 0) {
      // root may write anywhere a mode allows; sysfs refuses new files even to root.
      path = '/sys/ams-test.db';
      try {
        writeFileSync(path, '', { flag: 'wx' });
        rmSync(path);
        t.skip('running as root and /sys accepts files: no place to test EACCES');
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EACCES') {
          t.skip(`running as root and /sys answers ${(error as NodeJS.ErrnoException).code}: no place to test EACCES`);
          return;
        }
      }
    } else {
      const locked = join(dir, 'locked');
      mkdirSync(locked);
      chmodSync(locked, 0o500);
      path = join(locked, 'sub', 'x.db');
    }
    await expectRefusal(
      { DATABASE_PATH: path },
      new RegExp(`DATABASE_PATH=${path.replaceAll('/', '\\/').replaceAll('.', '\\.')}: permission denied`),
    );
  });

  test('DATABASE_PATH is a file that is not a database', async () => {
    const path = join(dir, 'notes.txt');
    writeFileSync(path, 'These are my notes, not an SQLite database. '.repeat(200));
    await expectRefusal({ DATABASE_PATH: path }, /DATABASE_PATH=.*notes\.txt: the file exists but is not an SQLite database/);
  });

  test('PORT already in use (EADDRINUSE)', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      const line = await expectRefusal(
        { PORT: String(port), DATABASE_PATH: join(dir, 'port.db') },
        new RegExp(`PORT=${port}: .*already in use`),
      );
      assert.match(line, /EADDRINUSE/);
    } finally {
      holder.close();
    }
  });

  test('a HOST that does not resolve (ENOTFOUND)', async () => {
    await expectRefusal(
      { HOST: 'no-such-host.invalid', DATABASE_PATH: join(dir, 'host.db') },
      /HOST=no-such-host\.invalid: the host name cannot be resolved/,
      30_000,
    );
  });

  test("a bad setting names it and its value, never a secret's", async () => {
    await expectRefusal({ LOG_REQUESTS: 'sometimes', DATABASE_PATH: join(dir, 'setting.db') }, /LOG_REQUESTS=sometimes: must be on or off/);
    const secret = 'my-secret-but-not-a-key';
    const line = await expectRefusal({ SECRET_KEY: secret, DATABASE_PATH: join(dir, 'setting.db') }, /SECRET_KEY: must be 32 bytes/);
    assert.equal(line.includes(secret), false);
  });
});

describe('the database file: a lost one is noticed', () => {
  test('a -wal file without its database: refuses to start, saying why, and creates nothing', async () => {
    const lost = join(dir, 'lost');
    mkdirSync(lost);
    writeFileSync(join(lost, 'service.db-wal'), 'writes of the last run');
    await expectRefusal(
      { DATABASE_PATH: join(lost, 'service.db') },
      /DATABASE_PATH=.*service\.db: .*service\.db-wal exists but the database file does not/,
    );
    assert.equal(existsSync(join(lost, 'service.db')), false, 'no empty database was created');
  });

  test('a directory it had to create, and a key file without its database: warning lines, then it starts', async () => {
    const fresh = join(dir, 'fresh', 'nested');
    const service = await startServiceProcess({ DATABASE_PATH: join(fresh, 'service.db') });
    assert.ok(
      logLines(service).some((line) => line.level === 'warn' && String(line.msg).includes(`created the directory ${fresh}`)),
      service.stderrText(),
    );
    assert.equal(await service.stop(), 0);

    rmSync(join(fresh, 'service.db'));
    rmSync(join(fresh, 'service.db-wal'), { force: true });
    rmSync(join(fresh, 'service.db-shm'), { force: true });
    const again = await startServiceProcess({ DATABASE_PATH: join(fresh, 'service.db') });
    const warnings = logLines(again)
      .filter((line) => line.level === 'warn')
      .map((line) => String(line.msg));
    assert.ok(
      warnings.some((msg) => msg.includes(`the key file ${join(fresh, 'service.db.key')} exists but its database did not`)),
      warnings.join('\n'),
    );
    assert.equal(
      warnings.some((msg) => msg.includes('created the directory')),
      false,
      'the directory was there',
    );
    assert.equal(await again.stop(), 0);
  });

  for (const how of ['directory removed', 'file replaced'] as const) {
    test(`/healthz answers 503 storage_unavailable once the database file is gone (${how}), and the service logs an error`, async () => {
      const home = join(dir, `health-${how.split(' ')[0]}`);
      const databasePath = join(home, 'service.db');
      const service = await startServiceProcess({ DATABASE_PATH: databasePath });
      assert.equal((await fetch(`${service.url}/healthz`)).status, 200);
      if (how === 'directory removed') {
        rmSync(home, { recursive: true, force: true });
      } else {
        renameSync(databasePath, `${databasePath}.old`);
        writeFileSync(databasePath, '');
      }
      const reply = await fetch(`${service.url}/healthz`);
      assert.equal(reply.status, 503);
      const body = (await reply.json()) as { success: boolean; error: { code: string; message: string } };
      assert.equal(body.success, false);
      assert.equal(body.error.code, 'storage_unavailable');
      const errors = logLines(service).filter((line) => line.level === 'error');
      assert.ok(
        errors.some((line) => String(line.msg).startsWith('database file lost')),
        service.stderrText(),
      );
      await service.stop();
    });
  }
});

describe('.env and the start-up line', () => {
  test('.env in the working directory is read under the real environment; the listening line names it', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ams-dotenv-'));
    try {
      // PORT in the file is bad, but the real environment's PORT=0 wins; SIGN_UP comes from the file.
      writeFileSync(join(cwd, '.env'), `PORT=not-a-port\nSIGN_UP=off\nDATABASE_PATH=${join(dir, 'dotenv.db')}\n`);
      const service = spawnServiceProcess({ PORT: '0' }, cwd);
      const url = await service.listening();
      const listening = logLines(service).find((line) => line.msg === 'listening')!;
      assert.equal(listening.envFile, join(cwd, '.env'));
      assert.equal(listening.database, join(dir, 'dotenv.db'));
      const signUp = await fetch(`${url}/api/v1/auth/sign-up`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Closed', email: 'closed@example.com', password: 'correct horse battery' }),
      });
      assert.equal(signUp.status, 403);
      assert.equal(((await signUp.json()) as { error: { code: string } }).error.code, 'forbidden');
      assert.match(lastLine(String(listening.firstUser)), /SIGN_UP is off: run npm run user:create/);
      assert.equal(await service.stop(), 0);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  test('the listening line gives the console and docs URLs, and how to make the first user only while there is none', async () => {
    const databasePath = join(dir, 'first-user.db');
    const empty = await startServiceProcess({ DATABASE_PATH: databasePath });
    const first = logLines(empty).find((line) => line.msg === 'listening')!;
    assert.equal(first.console, `${empty.url}/`);
    assert.equal(first.docs, `${empty.url}/docs`);
    assert.equal(first.envFile, null, 'the temporary working directory has no .env');
    assert.match(String(first.firstUser), /no users yet: sign up .*npm run user:create -- --email <email> --name <name>/);
    assert.equal((await fetch(String(first.docs))).status, 200);
    assert.equal(await empty.stop(), 0);

    const created = await runScript(
      'scripts/admin-user-create.ts',
      ['--email', 'first@example.com', '--name', 'First', '--password', 'correct horse battery'],
      { DATABASE_PATH: databasePath },
    );
    assert.equal(created.code, 0, created.stderr);
    const withUser = await startServiceProcess({ DATABASE_PATH: databasePath });
    assert.equal(logLines(withUser).find((line) => line.msg === 'listening')!.firstUser, undefined);
    assert.equal(await withUser.stop(), 0);
  });
});

describe('npm start and SIGTERM', () => {
  test("SIGTERM to `npm start` stops the service (npm passes it on and node is the shell's exec)", async () => {
    // npm runs the script in the repository (it needs package.json), so a developer's .env there is
    // read too; the settings that matter here are set in the environment, which wins over it.
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const databasePath = join(dir, 'npm-start.db');
    const child = spawn(npm, ['start'], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_PATH: databasePath,
        LOG_REQUESTS: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.resume();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm start did not listen: ${stdout}`)), 30_000);
        child.stdout.on('data', () => {
          const match = /"msg":"listening","url":"([^"]+)"/.exec(stdout);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
      });
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      child.kill('SIGTERM');
      await exited;
      // The service itself stopped: it logged so, and the port no longer answers.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.match(stdout, /"msg":"stopped"/);
      await assert.rejects(fetch(`${url}/healthz`));
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('the start command', () => {
  test('the container starts the compiled service exactly as npm run start:prod does', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    // Docker uses the last CMD; indented ones (HEALTHCHECK's) are not instructions of their own.
    const cmd = [...dockerfile.matchAll(/^CMD (\[.*\])\s*$/gm)].at(-1);
    assert.ok(cmd, 'the Dockerfile has an exec-form CMD');
    assert.deepEqual(JSON.parse(cmd[1]), ['node', ...productionNodeArgs()]);
  });

  test('npm start and npm run start:prod give node the same V8 memory flags', () => {
    const flags = (args: string[]) => args.filter((arg, i) => arg.startsWith('--') && arg !== '--import' && args[i - 1] !== '--import');
    assert.ok(serviceNodeArgs().includes('--max-semi-space-size=4'), 'the memory flags are part of the start command');
    assert.deepEqual(flags(productionNodeArgs()), flags(serviceNodeArgs()));
    assert.ok(!productionNodeArgs().includes('tsx'), 'the production start loads no TypeScript loader');
  });
});
