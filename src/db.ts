// Opens the SQLite file, sets the pragmas every connection needs and brings the schema up to date:
// a new database gets schema.sql whole; an older one gets the missing migrations/NNN-*.sql steps.
// All SQL beyond this lives in the per-resource store modules.
import Database from 'better-sqlite3';
import { closeSync, existsSync, fsync, mkdirSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from './lib/paths.js';

export type Db = Database.Database;

const schemaPath = join(ROOT, 'schema.sql');

/** The migrations shipped with the code: `migrations/002-<name>.sql`, `003-...`, applied in order. */
export const MIGRATIONS_DIR = join(ROOT, 'migrations');

/** One upgrade step: running `sql` on a database at version `version - 1` makes it `version`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface OpenOptions {
  /** Where the migration files are; tests point this at a directory of their own. */
  migrationsDir?: string;
  /**
   * Litestream replicates this file (LITESTREAM=on): it owns checkpointing, so `closeDatabase`
   * leaves the WAL to it instead of truncating it.
   */
  litestream?: boolean;
  /** Told about things worth an operator's attention that do not stop the open (a directory created). */
  onWarning?: (message: string) => void;
}

/** The file a connection opened, as the file system identifies it. */
interface FileIdentity {
  path: string;
  dev: number;
  ino: number;
}

const openedFiles = new WeakMap<Db, FileIdentity>();

/** The path of the file `db` opened; undefined for an in-memory database. */
export function pathOf(db: Db): string | undefined {
  return openedFiles.get(db)?.path;
}

/** Each database's write-ahead log, opened for syncing it (see walSyncer). */
const walFiles = new WeakMap<Db, number>();

/**
 * What makes the database's commits so far durable without holding the event loop: a commit made
 * with synchronous=NORMAL writes its frames to the WAL (the operating system's cache) in tens of
 * microseconds; this then fsyncs the WAL file on libuv's thread pool. NORMAL plus that fsync is
 * what synchronous=FULL does inside the commit, where the fsync (a few to tens of milliseconds on
 * a disk) stops every request meanwhile. Calls made while a sync runs share the next one (a
 * group commit): each resolves once a sync that began after it was called has finished. An
 * in-memory database has nothing to sync. `syncFile` is node:fs's fsync (tests count and pace it).
 */
export function walSyncer(
  db: Db,
  syncFile: (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void = fsync,
): () => Promise<void> {
  const file = openedFiles.get(db);
  if (!file) return async () => {};
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const syncOnce = () =>
    new Promise<void>((resolve, reject) => {
      let fd = walFiles.get(db);
      if (fd === undefined) {
        fd = openSync(`${file.path}-wal`, 'r');
        walFiles.set(db, fd);
      }
      syncFile(fd, (error) => (error ? reject(error) : resolve()));
    });
  return () => {
    if (!running) {
      running = syncOnce().finally(() => (running = null));
      return running;
    }
    // A sync is under way, begun before this commit: the next one covers it.
    next ??= running
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        next = null;
        running = syncOnce().finally(() => (running = null));
        return running;
      });
    return next;
  };
}

/** Each database's statements that switch `synchronous` (see unsynced). */
const synchronousSwitches = new WeakMap<Db, { normal: Database.Statement; full: Database.Statement }>();

/**
 * Runs `fn` (a transaction, or one statement committing on its own) with synchronous=NORMAL: what it
 * commits reaches the WAL (the operating system's cache) without an fsync inside the commit, and the
 * next fsync'd commit, or walSyncer, makes it durable; a power cut (not a crash of the process)
 * before that may lose it. For writes that may be lost that way, or that are synced on the thread
 * pool before anyone is told, and run while requests wait on the same event loop. The connection's
 * synchronous=FULL is restored at once, so every other commit still waits for its fsync.
 */
export function unsynced<T>(db: Db, fn: () => T): T {
  let switches = synchronousSwitches.get(db);
  if (!switches) {
    // SQLite applies this pragma when it compiles the statement, and a statement's first run after
    // that only marks it for compiling again: so each is run once here (NORMAL, then FULL, which is
    // where it is left), after which every run applies its setting.
    switches = { normal: db.prepare('PRAGMA synchronous = NORMAL'), full: db.prepare('PRAGMA synchronous = FULL') };
    switches.normal.run();
    switches.full.run();
    synchronousSwitches.set(db, switches);
  }
  switches.normal.run();
  try {
    return fn();
  } finally {
    switches.full.run();
  }
}

/** `fn` as one transaction committed without an fsync inside the commit (see unsynced). */
export function unsyncedTransaction<A extends unknown[], T>(db: Db, fn: (...args: A) => T): (...args: A) => T {
  const transaction = db.transaction(fn);
  return (...args) => unsynced(db, () => transaction(...args));
}

/** An error from the file system, with the code and path the start-up message needs. */
function fsError(code: string, message: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code, path });
}

/**
 * Creates `dir` and its missing parents (mode 0700); true when it had to create `dir`. Not
 * `mkdirSync(..., { recursive: true })`: on a file system that refuses a new entry with ENOENT
 * (e.g. /proc/nope) Node's recursive mkdir retries forever at 100% CPU.
 */
export function ensureDirectory(dir: string): boolean {
  try {
    if (statSync(dir).isDirectory()) return false;
    throw fsError('ENOTDIR', `${dir} exists and is not a directory`, dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const parent = dirname(dir);
  if (parent !== dir) ensureDirectory(parent);
  try {
    mkdirSync(dir, { mode: 0o700 });
    return true;
  } catch (error) {
    // Made by someone else in the meantime: fine if it is a directory.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(dir).isDirectory()) return false;
    throw error;
  }
}

// The connections opened with `litestream: true`, so that closing them needs no extra argument.
const replicated = new WeakSet<Db>();

// Version 1 is the schema as it was when versions began (tests/fixtures/schema-v1.sql);
// every later version is one file. Other files (README.md) are not migrations.
const MIGRATION_FILE = /^(\d+)-([a-z0-9][a-z0-9_-]*)\.sql$/;

/** Reads the migration files of `dir` in version order; refuses gaps, duplicates and version 1. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  if (!existsSync(dir)) return [];
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.sql')) continue;
    const match = MIGRATION_FILE.exec(file);
    if (!match) throw new Error(`migration file ${file} in ${dir} is not named NNN-name.sql`);
    migrations.push({ version: Number(match[1]), name: file, sql: readFileSync(join(dir, file), 'utf8') });
  }
  migrations.forEach((migration, index) => {
    // Sorted by name with three-digit numbers, so the expected version is simply 2, 3, 4, ...
    if (migration.version !== index + 2) {
      throw new Error(`migration ${migration.name} in ${dir}: expected version ${index + 2} next (versions start at 002 and have no gaps)`);
    }
  });
  return migrations;
}

/** The version of a database brought up to date with the migrations in `dir`. */
export function latestVersion(dir: string = MIGRATIONS_DIR): number {
  return 1 + readMigrations(dir).length;
}

/** The schema version this code writes: `PRAGMA user_version` of a current database. */
export const SCHEMA_VERSION = latestVersion();

/** Opens (creating if needed) the database at `path` with WAL, foreign keys and an up-to-date schema. */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  if (path !== ':memory:') {
    if (!existsSync(path) && existsSync(`${path}-wal`)) {
      // The writes of the last run are in that WAL; a new empty database would silently lose them
      // (and SQLite would discard the WAL).
      throw fsError(
        'WAL_WITHOUT_DATABASE',
        `${path}-wal exists but the database file does not: the database was moved or deleted while its ` +
          'write-ahead log stayed. Put the database file back (or restore a backup), or move the -wal and -shm files away to start empty',
        path,
      );
    }
    if (ensureDirectory(dirname(path))) options.onWarning?.(`created the directory ${dirname(path)} for the database`);
    // Owner-only from the first byte; SQLite gives the -wal and -shm files the same mode.
    closeSync(openSync(path, 'a', 0o600));
  }
  const db = new Database(path);
  if (path !== ':memory:') {
    const { dev, ino } = statSync(path);
    openedFiles.set(db, { path, dev, ino });
  }
  try {
    db.pragma('journal_mode = WAL');
    // FULL: a 2xx means the row survives power loss, not only a crash of the process.
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    // SQLite's own default page cache (2 MiB) instead of the 16 MiB better-sqlite3 compiles in: the
    // operating system caches the file too, and the larger cache measured no faster here while it
    // held 16 MiB more in the process once the write cases had filled it (RSS 104 vs 88 MiB).
    db.pragma('cache_size = -2000');
    migrate(db, readMigrations(options.migrationsDir ?? MIGRATIONS_DIR));
    db.pragma('foreign_keys = ON');
  } catch (error) {
    db.close();
    throw error;
  }
  if (options.litestream) replicated.add(db);
  return db;
}

/**
 * Why the file `db` opened is no longer the file at its path (deleted, moved, replaced), or
 * undefined while it still is. Writes to a file that is no longer there are lost at the next start.
 */
export function databaseFileProblem(db: Db): string | undefined {
  const opened = openedFiles.get(db);
  if (opened === undefined) return undefined;
  try {
    const { dev, ino } = statSync(opened.path);
    if (dev === opened.dev && ino === opened.ino) return undefined;
    return `the file at ${opened.path} is no longer the database this process opened (it was replaced or moved)`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return `the database file ${opened.path} is gone (deleted or moved, or its directory was)`;
    return `the database file ${opened.path} cannot be checked: ${(error as Error).message}`;
  }
}

/** The database's schema version (`PRAGMA user_version`; 0 for a new file). */
export function schemaVersionOf(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Writes the schema version over itself: the smallest real write (one page through the WAL, no
 * row changed), which fails with SQLITE_FULL while the disk is full. Tells when writes work again.
 */
export function probeWrite(db: Db): void {
  db.pragma(`user_version = ${schemaVersionOf(db)}`);
}

function migrate(db: Db, migrations: Migration[]): void {
  const latest = 1 + migrations.length;
  const version = schemaVersionOf(db);
  if (version > latest) {
    throw new Error(
      `the database is at schema version ${version}, newer than this code's ${latest}: ` +
        'run the newer release again, or restore a backup made by this one (downgrades are not supported)',
    );
  }
  if (version === latest) return;

  // Each step checks the version again inside its own write transaction, so two processes opening
  // the same file at once (the service and an admin script) never apply a step twice.
  if (version === 0) {
    db.transaction(() => {
      if (schemaVersionOf(db) !== 0) return;
      // Litestream (LITESTREAM=on) may add its bookkeeping tables to the new file before this
      // transaction takes the lock: those do not make the database someone else's.
      const tables = db
        .prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name NOT GLOB 'sqlite_*' AND name NOT GLOB '_litestream_*'`)
        .get() as { n: number };
      if (tables.n > 0) throw new Error('the database has tables but no schema version: it was not made by this service');
      db.exec(readFileSync(schemaPath, 'utf8'));
      db.pragma(`user_version = ${latest}`);
    }).immediate();
    return;
  }

  // Foreign keys stay off while steps run (SQLite ignores the pragma inside a transaction), so a
  // step may rebuild a table the documented way; each step must leave no dangling reference.
  db.pragma('foreign_keys = OFF');
  for (const migration of migrations.filter((step) => step.version > version)) {
    db.transaction(() => {
      if (schemaVersionOf(db) >= migration.version) return;
      try {
        db.exec(migration.sql);
      } catch (error) {
        throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      const dangling = db.pragma('foreign_key_check') as unknown[];
      if (dangling.length > 0) {
        throw new Error(`migration ${migration.name} leaves ${dangling.length} rows with dangling foreign keys`);
      }
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
}

/**
 * Closes the database. Without Litestream it first folds the WAL back into the main file and
 * empties it, so the database is one self-contained file while the service is stopped.
 * With Litestream (opened with `litestream: true`) it does not: Litestream copies the WAL to its
 * replicas and decides itself when the WAL may start over; a truncation behind its back would
 * make it take a fresh snapshot, and would wait the busy timeout on the read lock it holds.
 */
export function closeDatabase(db: Db): void {
  if (!db.open) return;
  const wal = walFiles.get(db);
  if (wal !== undefined) {
    walFiles.delete(db);
    closeSync(wal);
  }
  try {
    if (!replicated.has(db)) db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}
