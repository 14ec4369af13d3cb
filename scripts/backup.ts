// `npm run backup -- <file>`: a consistent copy of the live database, taken while the service runs
// and writes, checked with integrity_check, with the secret key file beside it.
import Database from 'better-sqlite3';
import { chmodSync, closeSync, copyFileSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { schemaVersionOf } from '../src/db.js';
import { loadServiceConfig, parseCommandLine, runScript, UsageError } from './cli.js';

const USAGE = `Usage: npm run backup -- <file> [--force]

Copies the database at DATABASE_PATH to <file> while the service keeps running and writing
(SQLite's online backup API: one consistent snapshot), checks the copy with PRAGMA
integrity_check, and copies the secret key file beside it as <file>.key. Both are owner-only
(mode 0600). Keep them together: sealed secrets (tool metadata, llm keys, document
authorization) cannot be read without the key. With SECRET_KEY set, there is no key file:
keep SECRET_KEY itself somewhere safe.

The copy is a single self-contained file (no -wal): restore it with  npm run restore -- <file>

Options:
  --force     overwrite <file> (and <file>.key) if they exist
  -h, --help  show this help
`;

/** Pages per backup step: all of them, so the copy is one read transaction, never restarted. */
const ALL_PAGES = 0x7fffffff;

runScript(USAGE, async () => {
  const { values, positionals } = parseCommandLine(USAGE, { force: { type: 'boolean' } });
  if (positionals.length !== 1) throw new UsageError('give exactly one backup file name');
  const config = loadServiceConfig();
  const source = config.databasePath;
  const target = resolve(positionals[0]);
  const keyFile = `${source}.key`;
  const targetKey = `${target}.key`;

  if (!existsSync(source)) throw new Error(`no database at ${source} (DATABASE_PATH)`);
  if (target === source || target === keyFile || target.startsWith(`${source}-`))
    throw new Error('the backup must not be the live database or one of its files');
  if (!existsSync(dirname(target))) throw new Error(`the directory ${dirname(target)} does not exist`);
  if (!values.force && (existsSync(target) || existsSync(targetKey))) {
    throw new Error(`${existsSync(target) ? target : targetKey} exists; pass --force to overwrite it`);
  }

  // Everything this script writes is readable by its owner only: the copy holds password hashes.
  process.umask(0o077);
  const partial = `${target}.partial-${process.pid}`;
  closeSync(openSync(partial, 'w', 0o600));
  try {
    // A plain connection, no migrations: a backup copies what is there. In WAL mode this reader
    // never blocks the service's writes, and they never block it.
    const live = new Database(source, { fileMustExist: true });
    try {
      live.pragma('busy_timeout = 5000');
      await live.backup(partial, { progress: () => ALL_PAGES });
    } finally {
      live.close();
    }

    const copy = new Database(partial, { fileMustExist: true });
    let version: number;
    try {
      // The copy's header still says WAL; one file is easier to move around and restore.
      copy.pragma('journal_mode = DELETE');
      const problems = copy.pragma('integrity_check') as { integrity_check: string }[];
      if (problems.length !== 1 || problems[0].integrity_check !== 'ok') {
        throw new Error(
          `the copy fails integrity_check: ${problems
            .slice(0, 5)
            .map((row) => row.integrity_check)
            .join('; ')}`,
        );
      }
      version = schemaVersionOf(copy);
    } finally {
      copy.close();
    }
    fsyncFile(partial);

    // The key first: a backup file never appears without the key it needs.
    let keyNote: string;
    if (existsSync(keyFile)) {
      copyFileSync(keyFile, `${targetKey}.partial-${process.pid}`);
      chmodSync(`${targetKey}.partial-${process.pid}`, 0o600);
      fsyncFile(`${targetKey}.partial-${process.pid}`);
      renameSync(`${targetKey}.partial-${process.pid}`, targetKey);
      keyNote = `key:    ${targetKey}`;
    } else if (config.secretKey) {
      keyNote = 'key:    SECRET_KEY is set, so there is no key file: keep SECRET_KEY safe, apart from this backup';
    } else {
      keyNote = `key:    WARNING: no key file at ${keyFile}; sealed secrets in this backup cannot be read`;
    }
    renameSync(partial, target);
    fsyncFile(dirname(target));
    process.stdout.write(`backup: ${target} (${statSync(target).size} bytes, schema version ${version}, integrity_check ok)\n${keyNote}\n`);
  } finally {
    rmSync(partial, { force: true });
    rmSync(`${targetKey}.partial-${process.pid}`, { force: true });
  }
});

/** Flushes a file (or a directory's entries) to the disk. */
function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
