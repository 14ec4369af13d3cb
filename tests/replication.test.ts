// Replication with Litestream: the service runs the way the container runs it with LITESTREAM=on
// (scripts/docker-entrypoint.sh: `litestream replicate -exec "node ... dist/main.js"`, the repository's
// litestream.yml, a file replica in a temporary directory). Records written over HTTP reach the
// replica; after a SIGKILL and the loss of the database with its -wal and -shm (the key file kept),
// `litestream restore` brings every record back. The binary comes from the npm package
// @flydotio/litestream-linux-x64 (the platform package of @flydotio/litestream); these tests skip,
// saying why, only when it is missing or cannot run on this machine.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { closeDatabase, openDatabase } from '../src/db.js';
import { createSealer, parseSecretKey } from '../src/lib/secrets.js';
import { productionNodeArgs } from '../scripts/service-command.js';
import { waitFor } from './helpers.js';
import { makeInstallDir, root, runCommand, startServiceProcess, type ServiceProcess } from './run-script.js';

const dir = mkdtempSync(join(tmpdir(), 'ams-replication-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const binary = join(root, 'node_modules', '@flydotio', `litestream-${process.platform}-${process.arch}`, 'litestream');
const version = existsSync(binary) ? spawnSync(binary, ['version'], { encoding: 'utf8' }) : undefined;
const skip =
  version === undefined
    ? `no Litestream binary for ${process.platform}-${process.arch} in node_modules/@flydotio (the optional dependency @flydotio/litestream-linux-x64 exists for linux x64 only)`
    : version.status !== 0
      ? `the Litestream binary does not run here: ${version.error?.message ?? version.stderr}`
      : false;

/** The operations guide's shell block that restores from the replica (under "Replication"). */
function documentedRestoreBlock(): string {
  const guide = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
  const block = /\*\*Restore\*\* \(a lost disk[^]*?```sh\n([^]*?)```/.exec(guide)?.[1];
  assert.ok(block, 'docs/operations.md has the restore block under Replication');
  return block;
}

describe('closing the database', () => {
  // Another connection stays open (as Litestream's does), so SQLite's own checkpoint at the last
  // close does not hide what closeDatabase did.
  function walAfterClose(litestream: boolean): number {
    const path = join(dir, `close-${litestream}.db`);
    const db = openDatabase(path, { litestream });
    const other = new Database(path);
    other.prepare('SELECT count(*) FROM sqlite_master').get(); // connections open the files lazily
    try {
      db.exec('CREATE TABLE scratch (x); INSERT INTO scratch VALUES (1)');
      assert.ok(statSync(`${path}-wal`).size > 0, 'the write is in the WAL');
      closeDatabase(db);
      return statSync(`${path}-wal`).size;
    } finally {
      other.close();
    }
  }

  test('without Litestream, the WAL is folded back and truncated', () => {
    assert.equal(walAfterClose(false), 0);
  });

  test('with Litestream (LITESTREAM=on), the WAL is left to Litestream', () => {
    assert.ok(walAfterClose(true) > 0);
  });
});

describe('Litestream replication (litestream replicate -exec, file replica)', { skip }, () => {
  // Like the container's /app: dist/, litestream.yml, scripts/docker-entrypoint.sh, ... (no src/).
  const install = skip ? dir : makeInstallDir();
  const databasePath = join(install, 'data', 'service.db');
  const replicaPath = join(dir, 'replica');
  const env = {
    DATABASE_PATH: databasePath,
    LITESTREAM: 'on',
    LITESTREAM_CONFIG: join(install, 'litestream.yml'),
    LITESTREAM_REPLICA_PATH: replicaPath,
    // The entry point finds `litestream` and `node` on the PATH, as in the container.
    PATH: [dirname(binary), dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
  };
  const entrypoint = join(install, 'scripts', 'docker-entrypoint.sh');
  const cmd = ['node', ...productionNodeArgs()];
  /** The container's start: its entry point with the CMD, in a process group of its own. */
  const start = (): Promise<ServiceProcess> => startServiceProcess(env, 30_000, install, { file: entrypoint, args: cmd, detached: true });
  const litestream = (...args: string[]) => runCommand(binary, args, env, undefined, install);
  /** Litestream's own state beside the database (its shadow WAL and generations). */
  const litestreamState = join(dirname(databasePath), '.service.db-litestream');
  /**
   * Stops the service with SIGTERM, as the container runtime does, once Litestream has shipped its
   * first WAL segment: Litestream 0.3.13 can panic (exit 2) when the signal lands while the first
   * sync of a new generation is still running, about a second after the start.
   */
  async function stop(service: ServiceProcess): Promise<{ code: number | null; ms: number }> {
    await waitFor(
      "Litestream's first WAL segment",
      () => (/wal segment written/.test(service.stderrText() + service.stdoutText()) ? true : undefined),
      15_000,
    );
    const began = Date.now();
    process.kill(service.child.pid!, 'SIGTERM');
    const code = await service.exited;
    return { code, ms: Date.now() - began };
  }

  /** Where the documented point-in-time restore writes its file. */
  const pointInTime = join(dir, 'point-in-time');
  /** Litestream's restore scratch files (`<file>.tmp`, `.tmp-wal`, `.tmp-shm`) beside the restored databases. */
  const scratchFiles = () =>
    [dirname(databasePath), pointInTime]
      .filter((folder) => existsSync(folder))
      .flatMap((folder) =>
        readdirSync(folder)
          .filter((name) => /\.tmp(-wal|-shm)?$/.test(name))
          .map((name) => join(folder, name)),
      );

  const email = 'replicated@example.com';
  const password = 'correct horse battery';
  const agents = new Map<string, string>();
  let toolId = '';
  /** A time between the replica's first and last change (Litestream finds no state for a later one). */
  let halfwayAt = new Date();

  test('records written over HTTP reach the file replica', async () => {
    const service = await start();
    assert.match(service.stdoutText() + service.stderrText(), /replicating to/, 'the service runs under litestream replicate');

    const up = await service.request('POST', '/api/v1/auth/sign-up', { body: { name: 'Replicated', email, password } });
    assert.equal(up.status, 201, up.text);
    const token = await service.signIn(email, password);
    const tool = await service.createTool(token, { type: 'AUTOMATION_NLA', metadata: { automation_nla_api_key: 'replicated-secret' } });
    toolId = tool.id;
    // The replica's first snapshot comes a moment after the database's first writes, and the point
    // in time chosen below must be after it (Litestream finds no backup for an earlier one): the
    // agents are written once a restore of the replica succeeds.
    let snapshotted = false;
    for (let attempt = 0; attempt < 30 && !snapshotted; attempt++) {
      const probe = join(dir, `first-${attempt}.db`);
      const restored = await litestream('restore', '-config', env.LITESTREAM_CONFIG, '-o', probe, databasePath);
      snapshotted = restored.code === 0 && existsSync(probe);
      if (!snapshotted) await sleep(500);
    }
    assert.ok(snapshotted, 'the replica has its first snapshot within 15 s');
    for (let i = 0; i < 30; i++) {
      if (i === 15) halfwayAt = new Date();
      const agent = await service.createAgent(token, { name: `agent ${i}` });
      agents.set(agent.id, agent.name);
    }
    const last = [...agents.keys()].at(-1)!;

    // Caught up: a restore of the replica into a scratch file has the last acknowledged record.
    // Litestream ships the WAL every second (sync-interval in litestream.yml).
    let caughtUp = false;
    for (let attempt = 0; attempt < 30 && !caughtUp; attempt++) {
      await sleep(500);
      const probe = join(dir, `probe-${attempt}.db`);
      const restored = await litestream('restore', '-config', env.LITESTREAM_CONFIG, '-o', probe, databasePath);
      if (restored.code !== 0 || !existsSync(probe)) continue;
      const db = new Database(probe, { readonly: true });
      caughtUp = db.prepare('SELECT 1 FROM agents WHERE id = ?').get(last) !== undefined;
      db.close();
    }
    assert.ok(caughtUp, 'the replica has the last record within 15 s');
    // The replica holds what the database holds: owner-only, like the database.
    const entries = readdirSync(replicaPath, { recursive: true, withFileTypes: true });
    assert.ok(entries.some((entry) => entry.isFile()));
    for (const entry of entries) {
      const path = join(entry.parentPath, entry.name);
      assert.equal(statSync(path).mode & 0o077, 0, `${path} is owner-only`);
    }

    // The machine dies: litestream and the service with it, no chance to shut down.
    process.kill(-service.child.pid!, 'SIGKILL');
    await service.exited;
  });

  test('after SIGKILL and the loss of the database, litestream restore brings every record back', async () => {
    assert.ok(agents.size > 0, 'the first test wrote records');
    // Lose the database, its WAL and shared memory and Litestream's own state beside them; the key
    // file is kept (Litestream does not replicate it).
    for (const file of [databasePath, `${databasePath}-wal`, `${databasePath}-shm`, litestreamState]) {
      rmSync(file, { recursive: true, force: true });
    }
    assert.ok(existsSync(`${databasePath}.key`));

    // The documented restore commands, as written, from the installation's directory with the
    // service's environment; only the example time and output file are this test's own.
    const then = join(pointInTime, 'then.db');
    mkdirSync(pointInTime);
    const block = documentedRestoreBlock()
      .replace(/-timestamp \S+/, `-timestamp ${halfwayAt.toISOString()}`)
      .replaceAll('/tmp/then.db', then);
    // A file, not `bash -c`: bash reads the system's bashrc for -c when its stdin is a socket.
    writeFileSync(join(dir, 'restore.sh'), block);
    // Without the container, Litestream is not on the PATH.
    const restored = await runCommand(
      'bash',
      ['-euo', 'pipefail', join(dir, 'restore.sh')],
      { ...env, PATH: process.env.PATH ?? '' },
      undefined,
      install,
    );
    assert.equal(restored.code, 0, restored.stdout + restored.stderr);
    assert.ok(existsSync(databasePath), 'litestream restore wrote the database');
    assert.ok(existsSync(then), 'the point-in-time restore wrote its file');
    assert.deepEqual(scratchFiles(), [], 'no scratch files of the restores are left');

    const service = await start();
    const token = await service.signIn(email, password);
    for (const [id, name] of agents) {
      const agent = await service.request('GET', `/api/v1/agents/${id}`, { token });
      assert.equal(agent.status, 200, `agent ${id}: ${agent.text}`);
      assert.equal(agent.body.data.name, name);
    }
    assert.equal((await service.listAll(token, '/agents')).length, agents.size);

    // Under Litestream the service leaves the WAL alone at shutdown: no wait on Litestream's read
    // lock (the 5 s busy timeout), and the service still exits 0 when Litestream forwards SIGTERM.
    const stopped = await stop(service);
    assert.equal(stopped.code, 0, service.stdoutText() + service.stderrText());
    assert.ok(stopped.ms < 4_000, `stopped in ${stopped.ms} ms`);

    // The sealed tool metadata is readable with the kept key file.
    const db = new Database(databasePath, { readonly: true });
    const sealed = db.prepare('SELECT metadata FROM tools WHERE id = ?').pluck().get(toolId) as string;
    db.close();
    const sealer = createSealer(parseSecretKey(readFileSync(`${databasePath}.key`, 'utf8'))!);
    assert.match(sealer.open(sealed), /replicated-secret/);
  });

  test('the entry point restores a missing database by itself, but not without its key file', async () => {
    assert.ok(agents.size > 0, 'the first test wrote records');
    const key = readFileSync(`${databasePath}.key`, 'utf8');
    // A lost volume: the database, its WAL, Litestream's state and the key file are all gone.
    for (const file of [databasePath, `${databasePath}-wal`, `${databasePath}-shm`, litestreamState, `${databasePath}.key`])
      rmSync(file, { recursive: true, force: true });

    const refused = await runCommand(entrypoint, cmd, env, undefined, install);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /key file .* is missing/);
    assert.ok(!existsSync(databasePath), 'the restored database is removed again');
    assert.deepEqual(scratchFiles(), []);

    writeFileSync(`${databasePath}.key`, key, { mode: 0o600 });
    const service = await start();
    const list = await service.listAll(await service.signIn(email, password), '/agents');
    assert.deepEqual(new Set(list.map((agent) => agent.id)), new Set(agents.keys()));
    assert.deepEqual(scratchFiles(), [], "the entry point removed the restore's scratch files");
    assert.equal((await stop(service)).code, 0, service.stdoutText() + service.stderrText());
  });
});
