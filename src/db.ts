// Opens the SQLite file, sets the pragmas every connection needs and brings the schema up to date.
// All SQL beyond this lives in the per-resource store modules.
import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Db = Database.Database;

/** The schema version this code writes; `PRAGMA user_version` of a current database. */
export const SCHEMA_VERSION = 1;

const schemaPath = join(dirname(fileURLToPath(import.meta.url)), '..', 'schema.sql');

/** Opens (creating if needed) the database at `path` with WAL, foreign keys and the schema applied. */
export function openDatabase(path: string): Db {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // Owner-only from the first byte; SQLite gives the -wal and -shm files the same mode.
    closeSync(openSync(path, 'a', 0o600));
  }
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // FULL: a 2xx means the row survives power loss, not only a crash of the process.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    db.close();
    throw new Error(
      `database schema version ${version} is newer than this code understands (${SCHEMA_VERSION}); upgrade the service`,
    );
  }
  if (version === SCHEMA_VERSION) return;
  db.transaction(() => {
    db.exec(readFileSync(schemaPath, 'utf8'));
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/** Closes the database after folding the WAL back into the main file. */
export function closeDatabase(db: Db): void {
  if (!db.open) return;
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}
