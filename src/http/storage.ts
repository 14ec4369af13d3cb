// Keeps the service from acknowledging writes the database cannot keep. Once the file this process
// opened is no longer at its path (deleted, moved, its directory removed), a write would go into a
// file the next start never sees: writes are refused with 503 `storage_unavailable`. While the disk
// is full, a write fails with SQLITE_FULL: it is answered 503 `storage_full` (not a masked 500), and
// /healthz says so until a write succeeds again.
import Database from 'better-sqlite3';
import { databaseFileProblem, probeWrite, type Db } from '../db.js';
import type { Logger } from '../lib/log.js';
import type { AppMiddleware } from './context.js';
import { storageFull, storageUnavailable } from './errors.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

const isDiskFull = (error: unknown) => error instanceof Database.SqliteError && error.code === 'SQLITE_FULL';

export class StorageMonitor {
  /** Set by a write that failed for lack of space; cleared by the next one that succeeds. */
  private full = false;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /**
   * Throws 503 `storage_unavailable` when the database file is gone from its path. One stat of the
   * path: about 2–8 µs measured here, against ~40 µs and an fsync for the smallest write with
   * synchronous=FULL, so it is done before every write request (reads do not need it).
   */
  assertFileInPlace(): void {
    const problem = databaseFileProblem(this.db);
    if (problem === undefined) return;
    this.log.error({
      msg: 'database file lost: writes since then are not in the file at DATABASE_PATH; stop the service and restore',
      problem,
    });
    throw storageUnavailable();
  }

  /** What /healthz checks: the file is in place and, after a failed write for lack of space, a write works again. */
  assertWritable(): void {
    this.assertFileInPlace();
    if (!this.full) return;
    try {
      probeWrite(this.db);
    } catch (error) {
      if (isDiskFull(error)) throw storageFull();
      throw error;
    }
    this.wrote();
  }

  /** The answer to a write that threw `error`: 503 `storage_full` for a full disk, else `error` itself. */
  failed(error: unknown): unknown {
    if (!isDiskFull(error)) return error;
    if (!this.full)
      this.log.error({ msg: 'the disk holding the database is full: writes fail until space is freed', error: (error as Error).message });
    this.full = true;
    return storageFull();
  }

  /** A write succeeded: the disk has room again. */
  wrote(): void {
    if (!this.full) return;
    this.full = false;
    this.log.info({ msg: 'the database accepts writes again' });
  }
}

/** Refuses write requests while the database file is gone, and answers a full disk with 503 `storage_full`. */
export function storageGuard(monitor: StorageMonitor): AppMiddleware {
  return async function storageGuardMiddleware(ctx, next) {
    const write = !READS.has(ctx.method);
    if (write) monitor.assertFileInPlace();
    try {
      await next();
    } catch (error) {
      throw monitor.failed(error);
    }
    if (write && ctx.status < 400) monitor.wrote();
  };
}
