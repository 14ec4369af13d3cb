// `npm run restore -- <file>`: puts a backup made by `npm run backup` in place of the database at
// DATABASE_PATH, only while the service is stopped, keeping the replaced files aside.
import Database from 'better-sqlite3';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SCHEMA_VERSION, schemaVersionOf } from '../src/db.js';
import { parseSecretKey } from '../src/lib/secrets.js';
import { loadServiceConfig, parseCommandLine, runScript, UsageError } from './cli.js';

const USAGE = `Usage: npm run restore -- <file> [--no-key]

Replaces the database at DATABASE_PATH with the backup <file> (made by npm run backup) and its
key file with <file>.key. Stop the service first: the restore refuses while any process has the
database open. The replaced files are kept as
  <DATABASE_PATH>.before-restore-<time>   (and its -wal, -shm and .key)
The backup is checked (integrity_check, schema version not newer than this code) before anything
is moved. An older backup is upgraded by the migrations when the service next starts.

Options:
  --no-key    restore the database only and keep the current key file (for a backup that has no
              <file>.key, e.g. one taken with SECRET_KEY set)
  -h, --help  show this help
`;

runScript(USAGE, () => {
  const { values, positionals } = parseCommandLine(USAGE, { 'no-key': { type: 'boolean' } });
  if (positionals.length !== 1) throw new UsageError('give exactly one backup file name');
  const config = loadServiceConfig();
  const live = config.databasePath;
  const liveKey = `${live}.key`;
  const backup = resolve(positionals[0]);
  const backupKey = `${backup}.key`;
  const restoreKey = !values['no-key'];

  if (!existsSync(backup)) throw new Error(`no backup at ${backup}`);
  if (backup === live) throw new Error('the backup is the live database itself');
  if (existsSync(`${backup}-wal`) && statSync(`${backup}-wal`).size > 0) {
    throw new Error(`${backup} has a -wal file beside it, so it is not a self-contained backup; make one with npm run backup`);
  }
  let key: Buffer | undefined;
  if (restoreKey) {
    if (!existsSync(backupKey)) {
      throw new Error(
        `no key file beside the backup (${backupKey}): without it the sealed secrets in the backup cannot be read. ` +
          'Put it there, or pass --no-key to keep the current key file (right if the backup was made with the same key, or with SECRET_KEY)',
      );
    }
    key = parseSecretKey(readFileSync(backupKey, 'utf8'));
    if (!key) throw new Error(`${backupKey} does not hold a 32-byte key`);
  }

  process.umask(0o077);
  mkdirSync(dirname(live), { recursive: true, mode: 0o700 });
  const partial = `${live}.restore-partial-${process.pid}`;
  const partialKey = `${liveKey}.restore-partial-${process.pid}`;
  try {
    // Check the very bytes that will be put in place, before touching the live files.
    copyFileSync(backup, partial);
    chmodSync(partial, 0o600);
    const version = checkBackup(partial);
    if (key) {
      copyFileSync(backupKey, partialKey);
      chmodSync(partialKey, 0o600);
    }

    assertNotInUse(live);

    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const aside = `${live}.before-restore-${stamp}`;
    const keptAside: string[] = [];
    for (const suffix of ['', '-wal', '-shm', ...(restoreKey ? ['.key'] : [])]) {
      if (!existsSync(`${live}${suffix}`)) continue;
      renameSync(`${live}${suffix}`, `${aside}${suffix}`);
      keptAside.push(`${aside}${suffix}`);
    }
    // The key first: the database never appears without the key it needs.
    if (key) {
      fsyncFile(partialKey);
      renameSync(partialKey, liveKey);
    }
    fsyncFile(partial);
    renameSync(partial, live);
    fsyncFile(dirname(live));

    const lines = [
      `restored ${backup} to ${live} (schema version ${version})`,
      restoreKey ? `restored ${backupKey} to ${liveKey}` : `kept the current key (${config.secretKey ? 'SECRET_KEY' : liveKey})`,
      keptAside.length > 0 ? `the replaced files are kept as:\n  ${keptAside.join('\n  ')}` : 'there was no database to replace',
    ];
    if (version < SCHEMA_VERSION) lines.push(`the service upgrades it to schema version ${SCHEMA_VERSION} when it starts`);
    if (restoreKey && config.secretKey) lines.push('note: SECRET_KEY is set, and it takes precedence over the key file');
    if (!restoreKey && !config.secretKey && !existsSync(liveKey)) {
      lines.push(`WARNING: there is no key file at ${liveKey}; the service will make a new key and sealed secrets will be unreadable`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    rmSync(partial, { force: true });
    rmSync(partialKey, { force: true });
  }
});

/** Opens the copy, runs integrity_check and returns its schema version (refusing a newer one). */
function checkBackup(path: string): number {
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: true });
  } catch (error) {
    throw new Error(`the backup cannot be opened: ${(error as Error).message}`);
  }
  try {
    const problems = db.pragma('integrity_check') as { integrity_check: string }[];
    if (problems.length !== 1 || problems[0].integrity_check !== 'ok') {
      throw new Error(
        `the backup fails integrity_check: ${problems
          .slice(0, 5)
          .map((row) => row.integrity_check)
          .join('; ')}`,
      );
    }
    const version = schemaVersionOf(db);
    if (version < 1) throw new Error('the backup is not a database of this service (no schema version)');
    if (version > SCHEMA_VERSION) {
      throw new Error(
        `the backup is at schema version ${version}, newer than this code's ${SCHEMA_VERSION}: restore it with the newer release`,
      );
    }
    return version;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_NOTADB') throw new Error('the backup is not an SQLite database');
    throw error;
  } finally {
    db.close();
  }
}

/**
 * Refuses while any process has the database open. In WAL mode every open connection holds a
 * shared lock on the database file for as long as it is open, even when idle, so taking SQLite's
 * exclusive lock (locking_mode=EXCLUSIVE, then a write transaction, without waiting) succeeds only
 * when no one else has it open. (A plain BEGIN EXCLUSIVE is not enough: in WAL mode it only
 * excludes other writers and succeeds beside an idle service.) This is SQLite's own lock, so it
 * is released by the kernel when the service dies, unlike a pid file that a crash leaves behind.
 */
function assertNotInUse(path: string): void {
  if (!existsSync(path)) return;
  const db = new Database(path, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new Error(`${path} is in use: stop the service (and any other program using the database) before restoring`);
    }
    throw error;
  } finally {
    // Closing folds the live WAL into the file that is about to be kept aside.
    db.close();
  }
}

/** Flushes a file (or a directory's entries) to the disk. */
function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
