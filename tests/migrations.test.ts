// Schema versions: a new file gets schema.sql at the latest version; an older file with data is
// upgraded step by step (each step all or nothing); a newer file is refused; and schema.sql never
// drifts from what the migrations make of a version-1 database.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeDatabase, latestVersion, openDatabase, readMigrations, SCHEMA_VERSION, schemaVersionOf, type Db } from '../src/db.js';
import { createStores } from '../src/stores.js';
import { succeededEnd } from './helpers.js';
import { createSealer } from '../src/lib/secrets.js';
import { digestToken, newTokenSecret } from '../src/api-tokens/secrets.js';

const V1_SCHEMA = readFileSync(fileURLToPath(new URL('fixtures/schema-v1.sql', import.meta.url)), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'ams-migrations-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let fileCounter = 0;
const newPath = () => join(dir, `db-${++fileCounter}.db`);

const key = randomBytes(32);
const sealer = createSealer(key);
const now = '2025-01-02T03:04:05.000000+00:00';

/** What the v1 database holds, so tests can look for every piece after an upgrade. */
const v1 = {
  userId: 'u-1',
  email: 'old@example.com',
  token: newTokenSecret(),
  tokenId: 't-1',
  promptId: 'p-1',
  tagIds: ['g-1', 'g-2'],
  toolId: 'o-1',
  documentId: 'd-1',
  agentId: 'a-1',
  agentDocumentId: 'ad-1',
  agentToolId: 'at-1',
};

/** A database as release 1 made it: the frozen v1 schema, stamped 1, holding one of everything. */
function makeV1Database(path: string): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.exec(V1_SCHEMA);
  db.pragma('user_version = 1');
  const run = (sql: string, ...values: unknown[]) => db.prepare(sql).run(...values);
  run(
    `INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES (?, ?, 'Old User', '$scrypt$ln=15,r=8,p=3$c2FsdA==$aGFzaA==', ?, ?)`,
    v1.userId,
    v1.email,
    now,
    now,
  );
  run(
    `INSERT INTO api_tokens (id, user_id, description, token, token_digest, created_at, updated_at) VALUES (?, ?, 'cli', ?, ?, ?, ?)`,
    v1.tokenId,
    v1.userId,
    v1.token,
    digestToken(v1.token),
    now,
    now,
  );
  run(
    `INSERT INTO prompts (id, user_id, name, template, input_variables, created_at, updated_at) VALUES (?, ?, 'greet', 'Hi {who}', '["who"]', ?, ?)`,
    v1.promptId,
    v1.userId,
    now,
    now,
  );
  v1.tagIds.forEach((id, index) =>
    run(
      `INSERT INTO tags (id, user_id, name, color, created_at, updated_at) VALUES (?, ?, ?, '#0e8a16', ?, ?)`,
      id,
      v1.userId,
      `tag ${index}`,
      now,
      now,
    ),
  );
  run(
    `INSERT INTO tools (id, user_id, name, type, metadata, created_at, updated_at) VALUES (?, ?, 'search', 'SEARCH', ?, ?, ?)`,
    v1.toolId,
    v1.userId,
    sealer.seal('{"apiKey":"k"}'),
    now,
    now,
  );
  run(
    `INSERT INTO documents (id, user_id, name, type, url, from_page, to_page, authorization, splitter, metadata, created_at, updated_at)
       VALUES (?, ?, 'handbook', 'PDF', 'https://example.com/h.pdf', 1, 12, ?, NULL, '{}', ?, ?)`,
    v1.documentId,
    v1.userId,
    sealer.seal('{"bearer":"x"}'),
    now,
    now,
  );
  run(
    `INSERT INTO agents (id, user_id, name, type, llm_model, llm_provider, llm_extra, has_memory, prompt_id, document_id, created_at, updated_at)
       VALUES (?, ?, 'helper', 'REACT', 'gpt-4o', 'openai', ?, 1, ?, ?, ?, ?)`,
    v1.agentId,
    v1.userId,
    sealer.seal('{}'),
    v1.promptId,
    v1.documentId,
    now,
    now,
  );
  v1.tagIds.forEach((tagId, position) =>
    run(`INSERT INTO agent_tags (agent_id, tag_id, position) VALUES (?, ?, ?)`, v1.agentId, tagId, position),
  );
  run(
    `INSERT INTO agent_documents (id, user_id, agent_id, document_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
    v1.agentDocumentId,
    v1.userId,
    v1.agentId,
    v1.documentId,
    now,
    now,
  );
  run(
    `INSERT INTO agent_tools (id, user_id, agent_id, tool_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
    v1.agentToolId,
    v1.userId,
    v1.agentId,
    v1.toolId,
    now,
    now,
  );
  db.close();
}

/** A directory of migration files for one test. */
function migrationsDir(files: Record<string, string>): string {
  const path = join(dir, `migrations-${++fileCounter}`);
  mkdirSync(path);
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(path, name), sql);
  return path;
}

/** A sample step 002: a new column backfilled from data, a new table filled from rows, and a
 *  table rebuild (tags, which agent_tags references) that must not cascade-delete anything. */
const SAMPLE_002 = `
ALTER TABLE users ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
UPDATE users SET display_name = upper(name);

CREATE TABLE user_notes (
  seq     INTEGER PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  body    TEXT NOT NULL
);
INSERT INTO user_notes (user_id, body) SELECT id, 'migrated from v1' FROM users;

CREATE TABLE new_tags (
  seq        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL UNIQUE,
  user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name       TEXT    NOT NULL,
  color      TEXT    NOT NULL CHECK (color LIKE '#%'),
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL
);
INSERT INTO new_tags SELECT seq, id, user_id, name, color, created_at, updated_at FROM tags;
DROP TABLE tags;
ALTER TABLE new_tags RENAME TO tags;
CREATE INDEX tags_by_user ON tags (user_id, seq);
CREATE UNIQUE INDEX tags_unique_name ON tags (user_id, name COLLATE NOCASE);
`;

const count = (db: Db, table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

/**
 * sqlite_master, normalised so that only meaning counts: comments dropped, white space collapsed,
 * case folded outside quotes, quotes around plain identifiers dropped, `IF NOT EXISTS` dropped, and
 * the items of each CREATE TABLE sorted
 * (ALTER TABLE ADD COLUMN appends at the end; schema.sql may put the column anywhere).
 */
function normalisedSchema(db: Db): string[] {
  const rows = db.prepare(`SELECT type, name, tbl_name AS tableName, sql FROM sqlite_master ORDER BY type, name`).all() as {
    type: string;
    name: string;
    tableName: string;
    sql: string | null;
  }[];
  return rows.map((row) => `${row.type} ${row.name} on ${row.tableName}: ${row.sql === null ? '(automatic)' : normaliseSql(row.sql)}`);
}

function normaliseSql(sql: string): string {
  let out = '';
  let space = false;
  const emit = (text: string) => {
    if (space && out !== '' && !/[(,]$/.test(out) && !/^[(),]/.test(text)) out += ' ';
    space = false;
    out += text;
  };
  for (let i = 0; i < sql.length;) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === '`') {
      const end = closingQuote(sql, i);
      const quoted = sql.slice(i, end + 1);
      // A quoted plain identifier means the same as the bare one (ALTER TABLE RENAME writes "name").
      emit(c !== "'" && /^.[a-z_][a-z0-9_]*.$/i.test(quoted) ? quoted.slice(1, -1).toLowerCase() : quoted);
      i = end + 1;
    } else if (sql.startsWith('--', i)) {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end;
      space = true;
    } else if (sql.startsWith('/*', i)) {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
      space = true;
    } else if (/\s/.test(c)) {
      space = true;
      i += 1;
    } else {
      emit(c.toLowerCase());
      i += 1;
    }
  }
  out = out.replace(/^create (table|index|unique index|view|trigger) if not exists /, 'create $1 ');
  return out.startsWith('create table') ? sortTableItems(out) : out;
}

/** Index of the quote closing the one at `start` (a doubled quote is an escaped one). */
function closingQuote(sql: string, start: number): number {
  const quote = sql[start];
  for (let i = start + 1; i < sql.length; i += 1) {
    if (sql[i] !== quote) continue;
    if (sql[i + 1] === quote) i += 1;
    else return i;
  }
  return sql.length - 1;
}

function sortTableItems(statement: string): string {
  const open = statement.indexOf('(');
  const items: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < statement.length; i += 1) {
    const c = statement[i];
    if (c === "'" || c === '"' || c === '`') i = closingQuote(statement, i);
    else if (c === '(') depth += 1;
    else if (c === ',' && depth === 1) {
      items.push(statement.slice(start, i));
      start = i + 1;
    } else if (c === ')' && --depth === 0) {
      items.push(statement.slice(start, i));
      return `${statement.slice(0, open + 1)}${items.sort().join(',')}${statement.slice(i)}`;
    }
  }
  return statement;
}

describe('a new database', () => {
  test('gets schema.sql, the latest version and the connection settings', () => {
    const path = newPath();
    const db = openDatabase(path);
    assert.equal(schemaVersionOf(db), SCHEMA_VERSION);
    assert.equal(SCHEMA_VERSION, latestVersion(), 'SCHEMA_VERSION is 1 + the files in migrations/');
    assert.ok(count(db, 'users') === 0);
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('synchronous', { simple: true }), 2, 'FULL');
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
    assert.equal(db.pragma('busy_timeout', { simple: true }), 5000);
    assert.equal(db.pragma('cache_size', { simple: true }), -2000, "SQLite's own 2 MiB page cache, not better-sqlite3's 16 MiB");
    assert.equal(statSync(path).mode & 0o777, 0o600);
    closeDatabase(db);
  });

  test('an empty file at version 0 is stamped with the version of the migrations it was opened with', () => {
    const db = openDatabase(newPath(), { migrationsDir: migrationsDir({ '002-sample.sql': SAMPLE_002 }) });
    assert.equal(schemaVersionOf(db), 2);
    closeDatabase(db);
  });

  test('a file with tables but no version is refused, untouched', () => {
    const path = newPath();
    const raw = new Database(path);
    raw.exec('CREATE TABLE something_else (x)');
    raw.close();
    assert.throws(() => openDatabase(path), /has tables but no schema version/);
    const again = new Database(path);
    assert.equal(schemaVersionOf(again), 0);
    assert.equal(count(again, 'sqlite_master'), 1);
    again.close();
  });

  test("Litestream's own bookkeeping tables do not make a new database foreign", () => {
    // Litestream may open the file between the service creating it and the first migration, and
    // adds _litestream_seq and _litestream_lock; the schema still has to be created.
    const path = newPath();
    const raw = new Database(path);
    raw.pragma('journal_mode = WAL');
    raw.exec('CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER); CREATE TABLE _litestream_lock (id INTEGER)');
    raw.close();
    const db = openDatabase(path);
    assert.ok(schemaVersionOf(db) > 1);
    assert.equal(count(db, 'users'), 0);
    closeDatabase(db);
  });
});

describe('upgrading a version-1 database that holds data', () => {
  test('a sample 002 runs once, in order, keeping every row (no cascade during a table rebuild)', () => {
    const path = newPath();
    makeV1Database(path);
    const migrations = migrationsDir({ '002-sample.sql': SAMPLE_002, 'README.md': 'not a migration' });

    const db = openDatabase(path, { migrationsDir: migrations });
    assert.equal(schemaVersionOf(db), 2);
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are back on after the steps');
    assert.deepEqual(db.prepare(`SELECT display_name AS displayName FROM users WHERE id = ?`).get(v1.userId), { displayName: 'OLD USER' });
    assert.deepEqual(db.prepare(`SELECT body FROM user_notes`).all(), [{ body: 'migrated from v1' }]);
    assert.equal(count(db, 'tags'), 2);
    assert.equal(count(db, 'agent_tags'), 2, 'rebuilding tags did not cascade into agent_tags');
    assert.deepEqual(db.pragma('foreign_key_check'), []);
    for (const table of ['api_tokens', 'prompts', 'tools', 'documents', 'agents', 'agent_documents', 'agent_tools']) {
      assert.equal(count(db, table), 1, table);
    }
    closeDatabase(db);

    // Opening again applies nothing twice.
    const reopened = openDatabase(path, { migrationsDir: migrations });
    assert.equal(schemaVersionOf(reopened), 2);
    assert.equal(count(reopened, 'user_notes'), 1);
    closeDatabase(reopened);
  });

  test('a failing step rolls back whole and stops the start; earlier steps stay applied', () => {
    const path = newPath();
    makeV1Database(path);
    const migrations = migrationsDir({
      '002-sample.sql': SAMPLE_002,
      '003-broken.sql': `CREATE TABLE half_done (x); UPDATE users SET name = 'changed'; INSERT INTO no_such_table VALUES (1);`,
    });
    assert.throws(
      () => openDatabase(path, { migrationsDir: migrations }),
      /migration 003-broken\.sql failed: no such table: no_such_table/,
    );

    const raw = new Database(path, { readonly: true });
    assert.equal(schemaVersionOf(raw), 2);
    assert.deepEqual(raw.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = 'half_done'`).get(), { n: 0 });
    assert.deepEqual(raw.prepare(`SELECT name FROM users`).all(), [{ name: 'Old User' }]);
    raw.close();
  });

  test('a step that leaves a dangling foreign key is rolled back', () => {
    const path = newPath();
    makeV1Database(path);
    const migrations = migrationsDir({ '002-dangling.sql': `UPDATE agent_tools SET tool_id = 'no-such-tool';` });
    assert.throws(() => openDatabase(path, { migrationsDir: migrations }), /002-dangling\.sql leaves 1 rows with dangling foreign keys/);
    const raw = new Database(path, { readonly: true });
    assert.equal(schemaVersionOf(raw), 1);
    assert.deepEqual(raw.prepare(`SELECT tool_id AS toolId FROM agent_tools`).all(), [{ toolId: v1.toolId }]);
    raw.close();
  });

  test('with the real migrations/ folder, the service reads every v1 record', () => {
    const path = newPath();
    makeV1Database(path);
    const db = openDatabase(path);
    assert.equal(schemaVersionOf(db), SCHEMA_VERSION);
    const stores = createStores(db, sealer);
    assert.equal(stores.users.getByEmail(v1.email)?.id, v1.userId);
    assert.equal(stores.apiTokens.findCaller(v1.token)?.id, v1.userId);
    assert.equal(stores.prompts.get(v1.userId, v1.promptId)?.name, 'greet');
    assert.equal(stores.tools.get(v1.userId, v1.toolId)?.name, 'search');
    assert.equal(stores.documents.get(v1.userId, v1.documentId)?.name, 'handbook');
    const agent = stores.agents.get(v1.userId, v1.agentId);
    assert.deepEqual(
      agent?.tags.map((tag) => tag.id),
      v1.tagIds,
    );
    assert.equal(agent?.document?.id, v1.documentId);
    assert.equal(agent?.promptId, v1.promptId);
    assert.equal(stores.agentDocuments.get(v1.userId, v1.agentDocumentId)?.id, v1.agentDocumentId);
    assert.equal(stores.agentTools.get(v1.userId, v1.agentToolId)?.id, v1.agentToolId);
    closeDatabase(db);
  });

  test('an agent linked to documents before the upgrade shows its oldest linked document, and the next once that link goes', () => {
    const path = newPath();
    makeV1Database(path);
    const raw = new Database(path);
    raw.pragma('foreign_keys = ON');
    const run = (sql: string, ...values: unknown[]) => raw.prepare(sql).run(...values);
    run(
      `INSERT INTO documents (id, user_id, name, type, url, from_page, to_page, authorization, splitter, metadata, created_at, updated_at)
         VALUES ('d-2', ?, 'policy', 'PDF', 'https://example.com/p.pdf', 1, 2, NULL, NULL, '{}', ?, ?)`,
      v1.userId,
      now,
      now,
    );
    run(
      `INSERT INTO agents (id, user_id, name, type, llm_model, llm_provider, llm_extra, has_memory, prompt_id, document_id, created_at, updated_at)
         VALUES ('a-2', ?, 'linked only', 'REACT', 'gpt-4o', 'openai', '{}', 0, NULL, NULL, ?, ?)`,
      v1.userId,
      now,
      now,
    );
    // Linked first to d-2, then to d-1: the oldest link is neither the lowest document id nor link id.
    for (const [linkId, documentId] of [
      ['ad-3', 'd-2'],
      ['ad-2', v1.documentId],
    ]) {
      run(
        `INSERT INTO agent_documents (id, user_id, agent_id, document_id, created_at, updated_at) VALUES (?, ?, 'a-2', ?, ?, ?)`,
        linkId,
        v1.userId,
        documentId,
        now,
        now,
      );
    }
    raw.close();

    const db = openDatabase(path);
    const { agents, agentDocuments } = createStores(db, sealer);
    const shown = () =>
      agents.list(v1.userId, { limit: 10, afterSeq: 0 }).rows.map((agent) => [agent.id, agent.documentId, agent.document?.id ?? null]);
    assert.deepEqual(shown(), [
      [v1.agentId, v1.documentId, v1.documentId],
      ['a-2', 'd-2', 'd-2'],
    ]);
    assert.equal(agents.get(v1.userId, 'a-2')?.document?.id, 'd-2');
    assert.equal(agentDocuments.delete(v1.userId, 'ad-3'), true);
    assert.deepEqual(shown(), [
      [v1.agentId, v1.documentId, v1.documentId],
      ['a-2', v1.documentId, v1.documentId],
    ]);
    closeDatabase(db);
  });

  test("a tool's type is the service's to check, not the database's: any type can be stored, and every v1 tool is kept with its links", () => {
    const upgraded = newPath();
    makeV1Database(upgraded);
    for (const db of [openDatabase(upgraded), openDatabase(newPath())]) {
      if (count(db, 'users') === 0) {
        db.prepare(
          `INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES (?, 'new@example.com', 'New', 'x', ?, ?)`,
        ).run(v1.userId, now, now);
      }
      // A kind added to src/tools/kinds/ later needs no table rebuild.
      db.prepare(
        `INSERT INTO tools (id, user_id, name, type, metadata, created_at, updated_at) VALUES ('o-new', ?, 'later', 'A_LATER_KIND', '{}', ?, ?)`,
      ).run(v1.userId, now, now);
      assert.equal(db.prepare(`SELECT type FROM tools WHERE id = 'o-new'`).pluck().get(), 'A_LATER_KIND');
      closeDatabase(db);
    }
    const db = openDatabase(upgraded);
    const stores = createStores(db, sealer);
    const tool = stores.tools.get(v1.userId, v1.toolId);
    assert.deepEqual(
      { name: tool?.name, type: tool?.type, description: tool?.description },
      { name: 'search', type: 'SEARCH', description: null },
    );
    assert.deepEqual(
      stores.tools.listForRun(v1.userId, v1.agentId).map((record) => [record.id, record.metadata]),
      [[v1.toolId, { apiKey: 'k' }]],
    );
    assert.equal(stores.tools.seqOf(v1.userId, v1.toolId), 1, 'seq is kept (pages of tools go by it)');
    closeDatabase(db);
  });

  test('chunks a version-2 database held stay listed and searchable after 003 (batched chunk storage)', () => {
    const path = newPath();
    makeV1Database(path);
    const raw = new Database(path);
    raw.exec(readFileSync(fileURLToPath(new URL('../migrations/002-document-ingestion.sql', import.meta.url)), 'utf8'));
    raw.pragma('user_version = 2');
    raw.prepare(`UPDATE documents SET status = 'ready' WHERE id = ?`).run(v1.documentId);
    raw
      .prepare(
        `INSERT INTO document_chunks (id, user_id, document_id, position, content, created_at) VALUES ('c-1', ?, ?, 0, 'Old chunk about kestrels.', ?)`,
      )
      .run(v1.userId, v1.documentId, now);
    raw.close();

    const db = openDatabase(path);
    assert.equal(schemaVersionOf(db), SCHEMA_VERSION);
    const { chunks: ingestion, search } = createStores(db, sealer);
    const find = (word: string) =>
      search.find({ userId: v1.userId }, [word], { match: 'all', limit: 10, snippet: { words: 24, marked: true } });
    assert.deepEqual(
      ingestion.listChunks(v1.documentId, { limit: 10, afterSeq: 0 }).rows.map((chunk) => chunk.id),
      ['c-1'],
    );
    assert.deepEqual(
      find('kestrels').map((hit) => hit.chunkId),
      ['c-1'],
    );
    // The index was rebuilt with the stemmer (009): other forms of the word find the old chunk too.
    assert.deepEqual(
      find('kestrel').map((hit) => hit.chunkId),
      ['c-1'],
    );
    while (ingestion.sweepChunks(10)); // nothing of theirs is listed for sweeping: they are the shown run
    assert.deepEqual(
      ingestion.listChunks(v1.documentId, { limit: 10, afterSeq: 0 }).rows.map((chunk) => chunk.id),
      ['c-1'],
    );
    closeDatabase(db);
  });
});

describe('the sessions an older database held', () => {
  /** The migrations before the rebuild of agent_messages (which keeps a message by its session alone). */
  const before = () => {
    const folder = fileURLToPath(new URL('../migrations/', import.meta.url));
    const names = readdirSync(folder)
      .filter((name) => /^\d{3}-.*\.sql$/.test(name))
      .sort();
    const rebuild = names.findIndex((name) => name.endsWith('-agent-messages-by-session.sql'));
    assert.ok(rebuild > 0, 'the rebuild of agent_messages is in migrations/');
    return migrationsDir(Object.fromEntries(names.slice(0, rebuild).map((name) => [name, readFileSync(join(folder, name), 'utf8')])));
  };

  /** A database as the version before the rebuild left it, with two sessions of the v1 agent; its path and messages. */
  const olderSessions = () => {
    const path = newPath();
    makeV1Database(path);
    closeDatabase(openDatabase(path, { migrationsDir: before() }));
    // Two sessions of the v1 agent as the older schema held them: each message with its agent, a run's turn with its run.
    const raw = new Database(path);
    raw.pragma('foreign_keys = ON');
    const run = (sql: string, ...values: unknown[]) => raw.prepare(sql).run(...values);
    for (const [runId, sessionId] of [
      ['r-1', 's-1'],
      ['r-2', 's-1'],
      ['r-3', 's-2'],
    ]) {
      run(
        `INSERT INTO agent_runs (id, user_id, agent_id, session_id, status, input, output, model, started_at, finished_at, ms)
           VALUES (?, ?, ?, ?, 'succeeded', 'q', 'a', 'm', ?, ?, 1)`,
        runId,
        v1.userId,
        v1.agentId,
        sessionId,
        now,
        now,
      );
    }
    run(
      `INSERT INTO agent_sessions (seq, id, agent_id, created_at, updated_at) VALUES (1, 's-1', ?, ?, ?), (2, 's-2', ?, ?, ?)`,
      v1.agentId,
      now,
      now,
      v1.agentId,
      now,
      now,
    );
    const messages: [string, number, string, string, string | null][] = [
      ['m-1', 1, 'user', 'carried in, no run', null],
      ['m-2', 1, 'assistant', 'its answer', null],
      ['m-3', 1, 'user', 'first question', 'r-1'],
      ['m-4', 2, 'user', 'other session', 'r-3'],
      ['m-5', 1, 'assistant', 'first answer', 'r-1'],
      ['m-6', 2, 'assistant', 'other answer', 'r-3'],
      ['m-7', 1, 'user', 'second question', 'r-2'],
      ['m-8', 1, 'assistant', 'second answer', 'r-2'],
    ];
    for (const [id, sessionSeq, role, content, runId] of messages) {
      run(
        `INSERT INTO agent_messages (id, session_seq, agent_id, role, content, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        id,
        sessionSeq,
        v1.agentId,
        role,
        content,
        runId,
        now,
      );
    }
    raw.close();

    return { path, messages };
  };

  test('keep their messages (ids, order, runs), counts and cursors; deleting a run, a session or the agent still takes its messages', () => {
    const { path, messages } = olderSessions();
    const db = openDatabase(path);
    assert.equal(schemaVersionOf(db), SCHEMA_VERSION);
    const { memory, runs, agents } = createStores(db, sealer);
    const listed = (sessionId: string) =>
      memory.listMessages(v1.agentId, sessionId, { afterSeq: 0, limit: 100 }).rows.map((m) => [m.id, m.role, m.content, m.runId]);
    const expected = (sessionSeq: number) =>
      messages.filter((m) => m[1] === sessionSeq).map(([id, , role, content, runId]) => [id, role, content, runId]);
    assert.deepEqual(listed('s-1'), expected(1));
    assert.deepEqual(listed('s-2'), expected(2));
    assert.deepEqual(
      [memory.getSession(v1.agentId, 's-1')?.messages, memory.getSession(v1.agentId, 's-1')?.title],
      [6, 'carried in, no run'],
    );
    assert.deepEqual([agents.get(v1.userId, v1.agentId)?.memorySessions, agents.get(v1.userId, v1.agentId)?.memoryMessages], [2, 8]);
    // A message's id is a cursor within its session only.
    const afterSeq = memory.seqOfMessage(v1.agentId, 's-1', 'm-3');
    assert.notEqual(afterSeq, undefined);
    assert.deepEqual(
      memory.listMessages(v1.agentId, 's-1', { afterSeq: afterSeq!, limit: 100 }).rows.map((m) => m.id),
      ['m-5', 'm-7', 'm-8'],
    );
    assert.equal(memory.seqOfMessage(v1.agentId, 's-2', 'm-3'), undefined);
    assert.deepEqual(
      memory.recentMessages(v1.agentId, 's-1', 4).map((m) => m.content),
      ['first question', 'first answer', 'second question', 'second answer'],
    );

    // Deleting a run takes its turn, and only its turn.
    assert.equal(runs.deleteRun(v1.userId, 'r-1'), true);
    assert.deepEqual(
      listed('s-1'),
      expected(1).filter(([id]) => id !== 'm-3' && id !== 'm-5'),
    );
    assert.deepEqual(listed('s-2'), expected(2));
    // Deleting a session takes its messages; deleting the agent takes the rest.
    assert.equal(memory.deleteSession(v1.agentId, 's-2'), true);
    assert.equal(count(db, 'agent_messages'), 4);
    assert.equal(agents.get(v1.userId, v1.agentId)?.memoryMessages, 4);
    db.prepare(`DELETE FROM agents WHERE id = ?`).run(v1.agentId);
    assert.equal(count(db, 'agent_messages'), 0);
    assert.equal(count(db, 'agent_runs'), 0);
    closeDatabase(db);
  });

  test("gain new turns after their stored messages: order, cursors across both, the replay's budget, counts and title", () => {
    const { path, messages } = olderSessions();
    const db = openDatabase(path);
    const { memory, runs, agents } = createStores(db, sealer);
    const started = runs.startRun({
      userId: v1.userId,
      agentId: v1.agentId,
      parentRunId: null,
      sessionId: 's-1',
      input: 'third question',
      model: 'm',
    })!.id;
    assert.equal(runs.finishRun(started, succeededEnd('third answer'), { agentId: v1.agentId, sessionId: 's-1' }), true);

    const listed = memory.listMessages(v1.agentId, 's-1', { afterSeq: 0, limit: 100 }).rows;
    assert.deepEqual(
      listed.map((m) => [m.role, m.content, m.runId]),
      [
        ...messages.filter((m) => m[1] === 1).map(([, , role, content, runId]) => [role, content, runId]),
        ['user', 'third question', started],
        ['assistant', 'third answer', started],
      ],
    );
    // Every message, stored or a run's turn, is a cursor to the ones after it; pages of one walk them all.
    for (const [k, message] of listed.entries()) {
      const afterSeq = memory.seqOfMessage(v1.agentId, 's-1', message.id);
      assert.notEqual(afterSeq, undefined, message.id);
      assert.deepEqual(memory.listMessages(v1.agentId, 's-1', { afterSeq: afterSeq!, limit: 100 }).rows, listed.slice(k + 1));
      const page = memory.listMessages(v1.agentId, 's-1', { afterSeq: afterSeq!, limit: 1 });
      assert.deepEqual([page.rows, page.hasMore], [listed.slice(k + 1, k + 2), k + 2 < listed.length]);
    }
    assert.equal(memory.seqOfMessage(v1.agentId, 's-2', listed.at(-1)!.id), undefined, 'a cursor within its own session only');

    const recent = (limit: number, maxBytes?: number) => memory.recentMessages(v1.agentId, 's-1', limit, maxBytes).map((m) => m.content);
    assert.deepEqual(recent(4), ['second question', 'second answer', 'third question', 'third answer']);
    assert.deepEqual(recent(2), ['third question', 'third answer']);
    // Room for the new turn and the stored answer before it, not its question: whole turns only.
    const bytes = (...texts: string[]) => texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    assert.deepEqual(recent(10, bytes('second answer', 'third question', 'third answer')), ['third question', 'third answer']);
    assert.deepEqual(recent(10, bytes('second question', 'second answer', 'third question', 'third answer')), [
      'second question',
      'second answer',
      'third question',
      'third answer',
    ]);
    assert.deepEqual(recent(10, bytes('third question', 'third answer') - 1), [], 'a turn too large for the budget is not replayed');

    assert.deepEqual(
      [memory.getSession(v1.agentId, 's-1')?.messages, memory.getSession(v1.agentId, 's-1')?.title],
      [8, 'carried in, no run'],
    );
    assert.equal(agents.get(v1.userId, v1.agentId)?.memoryMessages, 10);
    // Deleting the session takes both kinds of its messages and keeps the runs.
    assert.equal(memory.deleteSession(v1.agentId, 's-1'), true);
    assert.equal(agents.get(v1.userId, v1.agentId)?.memoryMessages, 2);
    assert.equal(runs.getRun(v1.userId, started)?.output, 'third answer');
    closeDatabase(db);
  });
});

describe('refusals', () => {
  test('a database newer than the code is refused, naming both versions, and left as it was', () => {
    const path = newPath();
    makeV1Database(path);
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    assert.throws(
      () => openDatabase(path),
      (error: Error) => error.message.includes(`version ${SCHEMA_VERSION + 1}`) && error.message.includes(`code's ${SCHEMA_VERSION}`),
    );
    const untouched = new Database(path, { readonly: true });
    assert.equal(schemaVersionOf(untouched), SCHEMA_VERSION + 1);
    untouched.close();
  });

  test('migration files with a gap, a version 1 or a bad name are refused', () => {
    assert.throws(() => readMigrations(migrationsDir({ '002-a.sql': '', '004-c.sql': '' })), /004-c\.sql.*expected version 3/);
    assert.throws(() => readMigrations(migrationsDir({ '001-a.sql': '' })), /expected version 2/);
    assert.throws(() => readMigrations(migrationsDir({ '002 Add Things.sql': '' })), /not named NNN-name\.sql/);
    assert.deepEqual(readMigrations(join(dir, 'no-such-dir')), []);
  });
});

describe('schema.sql and migrations/ agree', () => {
  test('a fresh database and an upgraded v1 database have the same sqlite_master', () => {
    const fresh = openDatabase(newPath());
    const upgradedPath = newPath();
    makeV1Database(upgradedPath);
    const upgraded = openDatabase(upgradedPath);
    assert.equal(schemaVersionOf(upgraded), schemaVersionOf(fresh));
    assert.deepEqual(
      normalisedSchema(upgraded),
      normalisedSchema(fresh),
      'schema.sql and migrations/ disagree: every change to schema.sql needs a migration that makes the same change (see migrations/README.md)',
    );
    closeDatabase(fresh);
    closeDatabase(upgraded);
  });

  test('the comparison sees a real difference (a column missing from one side)', () => {
    const a = new Database(':memory:');
    const b = new Database(':memory:');
    a.exec(`CREATE TABLE t (x TEXT NOT NULL, -- a comment\n  y INTEGER)`);
    b.exec(`create table if not exists t(y integer,x text not null)`);
    assert.deepEqual(normalisedSchema(a), normalisedSchema(b), 'order, case, comments and spacing do not count');
    b.exec(`ALTER TABLE t ADD COLUMN z TEXT`);
    assert.notDeepEqual(normalisedSchema(a), normalisedSchema(b));
    a.close();
    b.close();
  });
});
