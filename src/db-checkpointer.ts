// Folds the write-ahead log back into the database file on a worker thread, so that no request
// waits for it. SQLite does this by itself (a "checkpoint") inside the commit that takes the WAL
// past 1,000 pages: that commit copies up to 4 MiB of pages into the file and fsyncs it, 10–30 ms
// here during which the event loop serves nothing. With runs streaming, starts and ends write a
// few MiB a second, so that stall came every second or two and set the p99 of every other request.
// Here, once the worker is ready, the main connection does not checkpoint (wal_autocheckpoint = 0);
// a second connection on a worker thread runs a PASSIVE checkpoint every `everyMs`, which copies
// what no reader still needs and never blocks the writer. Closing the database (closeDatabase) still checkpoints on the main
// connection, as before.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { pathOf, type Db } from './db.js';

export interface Checkpointer {
  /** Ends the worker once its checkpoint under way (if any) has finished. */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  everyMs?: number;
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
 * Starts checkpointing `db`'s WAL on a worker thread (nothing for an in-memory database). The
 * worker does not keep the process alive; stop it before closing the database.
 */
export function startCheckpointer(db: Db, { everyMs = 250, onError }: CheckpointerOptions = {}): Checkpointer {
  const path = pathOf(db);
  if (path === undefined) return { stop: async () => {} };
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { driver, path, everyMs } });
  worker.unref();
  let running = true;
  const fallBack = (message: string) => {
    if (!running) return;
    running = false;
    // SQLite's own checkpoints again, so that the WAL does not grow without end.
    if (db.open) db.pragma('wal_autocheckpoint = 1000');
    onError?.(`the WAL checkpointer stopped (${message}); SQLite checkpoints inside commits again`);
  };
  worker.on('message', (message: { ready?: true; error?: string }) => {
    // SQLite's own checkpoints stay on until the worker has its connection.
    if (message.ready && running && db.open) db.pragma('wal_autocheckpoint = 0');
    if (message.error !== undefined) {
      fallBack(message.error);
      void worker.terminate();
    }
  });
  worker.on('error', (error) => fallBack(error.message));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      running = false;
      // Held open until the worker has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
      if (db.open) db.pragma('wal_autocheckpoint = 1000');
    },
  };
}
