// Folds the write-ahead log back into the database file on a worker thread, so that no request
// waits for it. SQLite does this by itself (a "checkpoint") inside the commit that takes the WAL
// past 1,000 pages: that commit copies up to 4 MiB of pages into the file and fsyncs it, 10–30 ms
// here during which the event loop serves nothing. With runs streaming, starts and ends write a
// few MiB a second, so that stall came every second or two and set the p99 of every other request.
// Here, once the worker is ready, the main connection does not checkpoint (wal_autocheckpoint = 0);
// a second connection on a worker thread runs a PASSIVE checkpoint every `everyMs`, which copies
// what no reader still needs and never blocks the writer. Closing the database (closeDatabase) still checkpoints on the main
// connection, as before.
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import { pathOf, type Db } from './db.js';
import { workerThreads } from './lib/builtins.js';

export interface Checkpointer {
  /** Ends the worker once its checkpoint under way (if any) has finished. */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  everyMs?: number;
  /** The size of the WAL file past which the worker starts. */
  startAtBytes?: number;
  /** Told when the worker cannot checkpoint (it stops, and SQLite's own checkpoints come back). */
  onError?: (message: string) => void;
}

// Plain JavaScript run by the worker (an evaluated script: nothing to bundle or resolve). It opens
// its own connection (better-sqlite3 connections may live on any thread), checkpoints on a timer,
// and stops when told. synchronous=FULL: the checkpoint fsyncs the WAL before copying from it and
// the database file after.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('synchronous = FULL');
parentPort.postMessage({ ready: true });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    clearInterval(timer);
    parentPort.postMessage({ error: String(error && error.message) });
  }
}, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints `db`'s WAL on a worker thread once the WAL file has grown past `startAtBytes` (a
 * worker holds about 8 MiB: a service that writes little never starts one, and SQLite's own
 * checkpoints, small then, serve it). Nothing for an in-memory database. The worker does not keep
 * the process alive; stop it before closing the database.
 */
export function startCheckpointer(db: Db, { everyMs = 250, startAtBytes = 1024 * 1024, onError }: CheckpointerOptions = {}): Checkpointer {
  const path = pathOf(db);
  if (path === undefined) return { stop: async () => {} };
  let stopped = false;
  let worker: Worker | undefined;
  let exited: Promise<void> | undefined;
  const walSize = () => {
    try {
      return statSync(`${path}-wal`).size;
    } catch {
      return 0;
    }
  };
  const fallBack = (message: string) => {
    if (stopped) return;
    stopped = true;
    // SQLite's own checkpoints again, so that the WAL does not grow without end.
    if (db.open) db.pragma('wal_autocheckpoint = 1000');
    onError?.(`the WAL checkpointer stopped (${message}); SQLite checkpoints inside commits again`);
  };
  const start = () => {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const started = new (workerThreads().Worker)(WORKER, {
      eval: true,
      workerData: { driver, path, everyMs },
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
    });
    started.unref();
    started.on('message', (message: { ready?: true; error?: string }) => {
      // SQLite's own checkpoints stay on until the worker has its connection.
      if (message.ready && !stopped && db.open) db.pragma('wal_autocheckpoint = 0');
      if (message.error !== undefined) {
        fallBack(message.error);
        void started.terminate();
      }
    });
    started.on('error', (error) => fallBack(error.message));
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    worker = started;
  };
  // The WAL file keeps the size it once reached (SQLite reuses it from its start), so one busy
  // stretch starts the worker for the rest of the process's life.
  const watch = setInterval(
    () => {
      if (worker === undefined && !stopped && walSize() > startAtBytes) start();
      if (worker !== undefined || stopped) clearInterval(watch);
    },
    Math.max(everyMs, 1000),
  );
  watch.unref();
  if (walSize() > startAtBytes) start();
  return {
    async stop() {
      clearInterval(watch);
      stopped = true;
      if (worker === undefined) return;
      // Held open until the worker has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
      if (db.open) db.pragma('wal_autocheckpoint = 1000');
    },
  };
}
