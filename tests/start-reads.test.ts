// A start reads what it needs through indexes: its time must not grow with the database (a file
// with a million finished runs or documents starts as fast as a new one). Every statement a start
// runs — main's look for a first user, building the app, becomePrimary with ingestion on — is
// recorded and its query plan checked: no statement reads a whole table or index.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createApp } from '../src/app.js';
import { closeDatabase, openDatabase } from '../src/db.js';
import { silentLogger } from '../src/lib/log.js';
import { createUserAdminStore } from '../src/users/admin-store.js';
import { testConfig } from './helpers.js';

test('every statement a start runs reads through an index, never a whole table', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'start-reads-'));
  const db = openDatabase(join(dir, 'start.db'));
  const config = testConfig({ DATABASE_PATH: join(dir, 'start.db') });
  const statement = Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  /** Each statement run, with the values of its first run (its plan is read with them). */
  const ran = new Map<string, unknown[]>();
  const originals = Object.fromEntries(['get', 'all', 'run', 'iterate'].map((name) => [name, statement[name]]));
  for (const [name, original] of Object.entries(originals)) {
    statement[name] = function (this: { source: string }, ...args: unknown[]) {
      if (!ran.has(this.source)) ran.set(this.source, args);
      return original.apply(this, args);
    };
  }
  try {
    createUserAdminStore(db).hasUsers();
    const app = createApp({
      db,
      config: { ...config, ingestion: { ...config.ingestion, enabled: true } },
      secretKey: randomBytes(32),
      log: silentLogger,
    });
    app.becomePrimary();
    await app.stopBackgroundWork();
  } finally {
    Object.assign(statement, originals);
  }
  assert.ok(ran.size > 0);
  // A partial index holds only the rows of its condition (the runs under way, the documents to ingest).
  const partial = new Set(db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND sql LIKE '% WHERE %'`).pluck().all());
  const wholeReads = [...ran].flatMap(([sql, args]) => {
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[];
    // `SCAN t` reads table t whole; `SCAN t USING [COVERING] INDEX i` reads all of index i. A scan
    // that stops at its first row (LIMIT 1) reads one row.
    const scans = plan.filter(({ detail }) => {
      const scan = /^SCAN \w+(?: USING (?:COVERING )?INDEX (\w+))?$/.exec(detail);
      return scan !== null && !partial.has(scan[1]);
    });
    return scans.length > 0 && !/\bLIMIT 1\b/.test(sql)
      ? [`${sql.replace(/\s+/g, ' ')}: ${scans.map(({ detail }) => detail).join('; ')}`]
      : [];
  });
  closeDatabase(db);
  rmSync(dir, { recursive: true, force: true });
  // The one exception: the parts of uploads a stopped process left are found in the index of all
  // parts (small entries, no file bytes read). Finding them without it needs a record of the
  // uploads under way.
  assert.deepEqual(
    wholeReads.filter((read) => !read.startsWith('DELETE FROM document_file_parts WHERE document_id IN (')),
    [],
  );
});
