// The WAL checkpointer: the main connection never checkpoints inside a commit while it runs, the
// worker folds the WAL into the database file meanwhile, and stopping it (or its failure) gives
// SQLite its own checkpoints back.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeDatabase, openDatabase } from '../src/db.js';
import { startCheckpointer } from '../src/db-checkpointer.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tempDatabase() {
  const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
  const path = join(dir, 'test.db');
  const db = openDatabase(path);
  db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body BLOB)');
  return { db, path, remove: () => (closeDatabase(db), rmSync(dir, { recursive: true, force: true })) };
}

test('while it runs, commits do not checkpoint, and the worker folds the WAL into the file', async () => {
  const t = tempDatabase();
  after(t.remove);
  const checkpointer = startCheckpointer(t.db, { everyMs: 20, startAtBytes: -1 });
  try {
    // SQLite's own checkpoints are off once the worker has its connection.
    for (let waited = 0; t.db.pragma('wal_autocheckpoint', { simple: true }) !== 0 && waited < 5000; waited += 10) await sleep(10);
    assert.equal(t.db.pragma('wal_autocheckpoint', { simple: true }), 0);
    const sizeBefore = statSync(t.path).size;
    // About 1,200 pages: past SQLite's own threshold of 1,000.
    const insert = t.db.prepare('INSERT INTO filler (body) VALUES (?)');
    t.db.transaction(() => {
      for (let k = 0; k < 1200; k++) insert.run(Buffer.alloc(3000, k % 251));
    })();
    let grown = statSync(t.path).size;
    for (let waited = 0; grown < sizeBefore + 1200 * 3000 && waited < 5000; waited += 20) {
      await sleep(20);
      grown = statSync(t.path).size;
    }
    assert.ok(grown >= sizeBefore + 1200 * 3000, `the database file holds the rows (${grown} bytes)`);
    assert.equal(t.db.prepare('SELECT count(*) FROM filler').pluck().get(), 1200);
  } finally {
    await checkpointer.stop();
  }
  assert.equal(t.db.pragma('wal_autocheckpoint', { simple: true }), 1000);
});

test('a database whose worker cannot checkpoint gets SQLite checkpoints back and an error is told', async () => {
  const t = tempDatabase();
  after(t.remove);
  const errors: string[] = [];
  // The worker opens the file by its path: gone, it cannot open it.
  rmSync(t.path);
  const checkpointer = startCheckpointer(t.db, { everyMs: 20, startAtBytes: -1, onError: (message) => errors.push(message) });
  for (let waited = 0; errors.length === 0 && waited < 5000; waited += 20) await sleep(20);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /the WAL checkpointer stopped/);
  assert.equal(t.db.pragma('wal_autocheckpoint', { simple: true }), 1000);
  await checkpointer.stop();
});

test('the worker starts only once the WAL has grown past its threshold', async () => {
  const t = tempDatabase();
  after(t.remove);
  const checkpointer = startCheckpointer(t.db, { startAtBytes: 1024 * 1024 });
  try {
    t.db.prepare('INSERT INTO filler (body) VALUES (?)').run(Buffer.alloc(1000));
    await sleep(1500);
    assert.equal(t.db.pragma('wal_autocheckpoint', { simple: true }), 1000, 'a small WAL keeps SQLite checkpointing');
    const insert = t.db.prepare('INSERT INTO filler (body) VALUES (?)');
    t.db.transaction(() => {
      for (let k = 0; k < 400; k++) insert.run(Buffer.alloc(3000, k % 251));
    })();
    for (let waited = 0; t.db.pragma('wal_autocheckpoint', { simple: true }) !== 0 && waited < 5000; waited += 50) await sleep(50);
    assert.equal(t.db.pragma('wal_autocheckpoint', { simple: true }), 0, 'past 1 MiB the worker took over');
  } finally {
    await checkpointer.stop();
  }
});

test('an in-memory database has nothing to checkpoint', async () => {
  const db = openDatabase(':memory:');
  const checkpointer = startCheckpointer(db);
  await checkpointer.stop();
  assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000);
  closeDatabase(db);
});
