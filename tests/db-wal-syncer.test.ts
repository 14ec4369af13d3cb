// walSyncer (src/db.ts): commits made with synchronous=NORMAL are made durable by an fsync of the
// WAL on the thread pool before their callers are told. Each caller is told only after an fsync that
// began after its commit; callers waiting at once share one fsync (group commit); an fsync's error
// reaches the callers waiting for it. The fsync is the test's own here, finished when the test says.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { fstatSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeDatabase, openDatabase, unsynced, unsyncedTransaction, walSyncer } from '../src/db.js';

/** A database file of its own with a table to commit to, committing as run ends do (synchronous=NORMAL). */
function openScratch() {
  const dir = mkdtempSync(join(tmpdir(), 'ams-wal-'));
  const path = join(dir, 'test.db');
  const db = openDatabase(path);
  db.exec('CREATE TABLE notes (text TEXT NOT NULL)');
  db.pragma('synchronous = NORMAL');
  const insert = db.prepare('INSERT INTO notes (text) VALUES (?)');
  after(() => {
    closeDatabase(db);
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, path, commit: (text: string) => insert.run(text) };
}

/** Lets the promise callbacks queued so far run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * An fsync that ends when the test finishes it (with an error or not), and a log of what happened
 * in order: `commit X`, `fsync N begins`, `fsync N ends`, `X told`, `X failed: <code>`.
 */
function pacedSyncs() {
  const log: string[] = [];
  const waiting = new Map<number, (error: NodeJS.ErrnoException | null) => void>();
  const fds: number[] = [];
  const syncFile = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
    fds.push(fd);
    log.push(`fsync ${fds.length} begins`);
    waiting.set(fds.length, done);
  };
  return {
    log,
    fds,
    syncFile,
    /** Ends fsync `n` (which must have begun and not ended) and lets its callers hear of it. */
    async finish(n: number, error: NodeJS.ErrnoException | null = null) {
      const done = waiting.get(n);
      assert.ok(done, `fsync ${n} is under way (log: ${log.join(', ')})`);
      waiting.delete(n);
      log.push(`fsync ${n} ends`);
      done(error);
      await settle();
    },
    /** Commits (through `commit`) and asks `sync` to make it durable, logging when the caller is told. */
    commitAndWait(name: string, commit: () => void, sync: () => Promise<void>) {
      commit();
      log.push(`commit ${name}`);
      void sync().then(
        () => log.push(`${name} told`),
        (error: NodeJS.ErrnoException) => log.push(`${name} failed: ${error.code}`),
      );
    },
    told: () => log.filter((line) => / (told|failed: .*)$/.test(line)),
  };
}

/** Asserts of every caller told in `log` that an fsync began after its commit and ended before it was told. */
function assertToldAfterALaterSync(log: string[]) {
  for (const [at, line] of log.entries()) {
    const told = / told$/.exec(line);
    if (!told) continue;
    const name = line.slice(0, told.index);
    const committed = log.indexOf(`commit ${name}`);
    const covering = log.some((begins, b) => {
      const n = /^fsync (\d+) begins$/.exec(begins)?.[1];
      if (n === undefined || b < committed) return false;
      const ends = log.indexOf(`fsync ${n} ends`);
      return ends !== -1 && ends < at;
    });
    assert.ok(covering, `${name} was told after an fsync begun after its commit (log: ${log.join(', ')})`);
  }
}

test('a caller is told only once an fsync of the WAL that began after its commit has ended', async () => {
  const { db, path, commit } = openScratch();
  const paced = pacedSyncs();
  const sync = walSyncer(db, paced.syncFile);
  const commitAndWait = (name: string) => paced.commitAndWait(name, () => commit(name), sync);

  commitAndWait('A');
  commitAndWait('B'); // while fsync 1 runs: it began before B's commit, so it does not cover B
  await settle();
  assert.deepEqual(paced.log, ['commit A', 'fsync 1 begins', 'commit B']);
  const wal = statSync(`${path}-wal`);
  assert.deepEqual([fstatSync(paced.fds[0]).dev, fstatSync(paced.fds[0]).ino], [wal.dev, wal.ino], 'the file synced is the WAL');

  await paced.finish(1);
  assert.deepEqual(paced.told(), ['A told']);
  assert.equal(paced.fds.length, 2, "B's fsync began once the one before it ended");
  commitAndWait('C'); // while fsync 2 runs: C waits for a third
  await settle();
  await paced.finish(2);
  assert.deepEqual(paced.told(), ['A told', 'B told']);
  await paced.finish(3);
  assert.deepEqual(paced.told(), ['A told', 'B told', 'C told']);
  assert.equal(paced.fds.length, 3);
  assertToldAfterALaterSync(paced.log);
});

test('commits waiting at once share one fsync (group commit)', async () => {
  const { db, commit } = openScratch();
  const paced = pacedSyncs();
  const sync = walSyncer(db, paced.syncFile);
  const commitAndWait = (name: string) => paced.commitAndWait(name, () => commit(name), sync);

  // The first commit starts fsync 1; the 49 made while it runs all wait for fsync 2.
  const first = Array.from({ length: 50 }, (_, index) => `first${index + 1}`);
  for (const name of first) commitAndWait(name);
  await settle();
  assert.equal(paced.fds.length, 1);
  await paced.finish(1);
  assert.deepEqual(paced.told(), ['first1 told']);
  assert.equal(paced.fds.length, 2);

  // 50 more while fsync 2 runs: all of them share fsync 3.
  const second = Array.from({ length: 50 }, (_, index) => `second${index + 1}`);
  for (const name of second) commitAndWait(name);
  await settle();
  await paced.finish(2);
  assert.deepEqual(paced.told(), [...first.map((name) => `${name} told`)]);
  await paced.finish(3);
  assert.deepEqual(
    paced.told(),
    [...first, ...second].map((name) => `${name} told`),
  );
  assert.equal(paced.fds.length, 3, '100 commits, 3 fsyncs');
  assertToldAfterALaterSync(paced.log);

  // Nothing waits: the next commit starts an fsync of its own at once.
  commitAndWait('alone');
  await settle();
  assert.equal(paced.fds.length, 4);
  await paced.finish(4);
  assert.deepEqual(paced.told().at(-1), 'alone told');
});

test("an fsync's error reaches every caller waiting for it, and the next fsync goes on", async () => {
  const { db, commit } = openScratch();
  const paced = pacedSyncs();
  const sync = walSyncer(db, paced.syncFile);
  const commitAndWait = (name: string) => paced.commitAndWait(name, () => commit(name), sync);
  const eio = () => Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO', errno: -5, syscall: 'fsync' });

  commitAndWait('A');
  commitAndWait('B');
  commitAndWait('C');
  await settle();
  await paced.finish(1, eio());
  assert.deepEqual(paced.told(), ['A failed: EIO']);
  // B and C were not covered by fsync 1 either way: theirs goes on.
  assert.equal(paced.fds.length, 2);
  commitAndWait('D');
  await settle();
  await paced.finish(2, eio());
  assert.deepEqual(paced.told(), ['A failed: EIO', 'B failed: EIO', 'C failed: EIO']);
  await paced.finish(3);
  assert.deepEqual(paced.told(), ['A failed: EIO', 'B failed: EIO', 'C failed: EIO', 'D told']);
  assertToldAfterALaterSync(paced.log);
});

test('with the real fsync the callers are told; an in-memory database has nothing to sync', async () => {
  const { db, commit } = openScratch();
  const sync = walSyncer(db);
  commit('real');
  await Promise.all([sync(), sync(), sync()]);

  const memory = openDatabase(':memory:');
  after(() => closeDatabase(memory));
  const paced = pacedSyncs();
  await walSyncer(memory, paced.syncFile)();
  assert.deepEqual(paced.fds, []);
});

test('unsynced: its work commits with synchronous=NORMAL, and FULL is back after it, even when it throws', () => {
  const { db, commit } = openScratch();
  db.pragma('synchronous = FULL');
  const level = () => db.pragma('synchronous', { simple: true });
  let inside = -1;
  unsynced(db, () => {
    inside = level() as number;
    commit('one');
  });
  assert.equal(inside, 1, 'NORMAL while it runs');
  assert.equal(level(), 2, 'FULL after');

  const failing = unsyncedTransaction(db, (text: string) => {
    commit(text);
    throw new Error('no');
  });
  assert.throws(() => failing('two'), /no/);
  assert.equal(level(), 2, 'FULL after a throw');
  assert.deepEqual(db.prepare('SELECT text FROM notes').pluck().all(), ['one'], 'the failed transaction was rolled back');
});
