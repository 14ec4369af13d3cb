// Seeds benchmark databases. The schema comes from the service (openDatabase: schema.sql and the
// migrations); rows are written through `inserter`, which builds each INSERT from the table's own
// column list (PRAGMA table_info), so a renamed or new NOT NULL column fails loudly here instead of
// drifting. Everything of one database goes in one transaction with statements prepared once.
// Secrets are sealed, tokens digested and passwords hashed by the service's own functions.
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { closeDatabase, openDatabase, type Db } from '../../src/db.js';
import { digestToken, newTokenSecret } from '../../src/api-tokens/secrets.js';
import { formatTimestamp } from '../../src/lib/ids.js';
import { createSealer } from '../../src/lib/secrets.js';
import { TOOL_TYPES } from '../../src/tools/schema.js';
import { SECRET_KEY } from './options.js';

type Row = Record<string, string | number | null | Buffer>;

/**
 * An insert for `table` taking a row keyed by column name. Every key must be a column; every NOT
 * NULL column without a default must be given. One statement is prepared per set of keys.
 */
export function inserter(db: Db, table: string): (row: Row) => void {
  const columns = db.prepare(`SELECT name, "notnull" AS "notNull", dflt_value AS dflt, pk FROM pragma_table_info(?)`).all(table) as {
    name: string;
    notNull: number;
    dflt: string | null;
    pk: number;
  }[];
  if (columns.length === 0) throw new Error(`seed: no table ${table}`);
  const known = new Set(columns.map((c) => c.name));
  // An INTEGER PRIMARY KEY (seq) is assigned by SQLite; a composite key's columns are required.
  const rowidKey = columns.filter((c) => c.pk > 0).length === 1 ? columns.find((c) => c.pk > 0)!.name : undefined;
  const required = columns.filter((c) => c.notNull && c.dflt === null && c.name !== rowidKey).map((c) => c.name);
  const statements = new Map<string, (row: Row) => void>();
  return (row) => {
    const keys = Object.keys(row);
    const signature = keys.join(',');
    let run = statements.get(signature);
    if (!run) {
      for (const key of keys) if (!known.has(key)) throw new Error(`seed: ${table} has no column ${key}`);
      for (const name of required) if (!keys.includes(name)) throw new Error(`seed: ${table}.${name} is required`);
      const statement = db.prepare(`INSERT INTO ${table} (${keys.join(', ')}) VALUES (${keys.map((k) => `@${k}`).join(', ')})`);
      run = (values) => void statement.run(values);
      statements.set(signature, run);
    }
    run(row);
  };
}

export interface SeededUser {
  id: string;
  email: string;
  tokens: string[];
  agents: string[];
  tags: string[];
  prompts: string[];
  documents: string[];
}

export interface UserPlan {
  agents: number;
  tokens: number;
  tags: number;
  prompts: number;
  documents: number;
  tools: number;
}

export interface Seeded {
  path: string;
  users: SeededUser[];
  counts: Record<string, number>;
  ms: number;
}

/** The size of a seeded database with its write-ahead log, in MiB. */
export function databaseMiB(path: string): number {
  let bytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      bytes += statSync(path + suffix).size;
    } catch {
      // no such file
    }
  }
  return bytes / 2 ** 20;
}

/**
 * The service's database for seeding: its schema and pragmas, then a page cache large enough that
 * a million-row transaction never spills (random UUID keys touch pages all over their indexes) and
 * no fsync (a benchmark database that a crash loses is seeded again).
 */
function openForSeeding(path: string): Db {
  const db = openDatabase(path);
  db.pragma('cache_size = -2000000');
  db.pragma('synchronous = OFF');
  return db;
}

/** A clock for created_at/updated_at: strictly increasing, a microsecond a row. */
function seedClock() {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  return () => formatTimestamp((clock += 0.001));
}

/**
 * Users with API tokens, prompts, tags, documents (ready, no chunks), tools and agents. Agent j has
 * two tags, a prompt when j is even, a document when j % 4 == 0, one agent-tool link and (j % 4 == 1)
 * an agent-document link.
 */
export function seedAgents(path: string, plan: UserPlan[], passwordHash: string): Seeded {
  const started = performance.now();
  const db = openForSeeding(path);
  const at = seedClock();
  const insert = Object.fromEntries(
    ['users', 'api_tokens', 'prompts', 'tags', 'documents', 'tools', 'agents', 'agent_tags', 'agent_tools', 'agent_documents'].map((t) => [
      t,
      inserter(db, t),
    ]),
  );
  const counts: Record<string, number> = {};
  const put = (table: string, row: Row) => {
    insert[table](row);
    counts[table] = (counts[table] ?? 0) + 1;
  };
  // Secret columns are sealed as the service seals them (one sealed value reused: the cost is not the point here).
  const sealer = createSealer(SECRET_KEY);
  const toolMetadata = sealer.seal('{"api_key":"secret"}');
  const users: SeededUser[] = [];
  db.transaction(() => {
    plan.forEach((p, u) => {
      const user: SeededUser = {
        id: randomUUID(),
        email: `bench-${u}@example.com`,
        tokens: [],
        agents: [],
        tags: [],
        prompts: [],
        documents: [],
      };
      const now = at();
      put('users', {
        id: user.id,
        email: user.email,
        name: `Bench user ${u}`,
        password_hash: passwordHash,
        created_at: now,
        updated_at: now,
      });
      for (let k = 0; k < p.tokens; k++) {
        const secret = newTokenSecret();
        const t = at();
        put('api_tokens', {
          id: randomUUID(),
          user_id: user.id,
          description: `bench token ${k}`,
          token: secret,
          token_digest: digestToken(secret),
          created_at: t,
          updated_at: t,
        });
        user.tokens.push(secret);
      }
      for (let k = 0; k < p.prompts; k++) {
        const t = at();
        const id = randomUUID();
        put('prompts', {
          id,
          user_id: user.id,
          name: `prompt ${k}`,
          template: 'Say hello to {who} in {language}.',
          input_variables: '["who","language"]',
          created_at: t,
          updated_at: t,
        });
        user.prompts.push(id);
      }
      for (let k = 0; k < p.tags; k++) {
        const t = at();
        const id = randomUUID();
        put('tags', { id, user_id: user.id, name: `tag ${k}`, color: '#0e8a16', created_at: t, updated_at: t });
        user.tags.push(id);
      }
      for (let k = 0; k < p.documents; k++) {
        const t = at();
        const id = randomUUID();
        put('documents', {
          id,
          user_id: user.id,
          name: `handbook ${k}`,
          type: 'PDF',
          url: `https://example.com/handbook-${k}.pdf`,
          from_page: 1,
          to_page: 12,
          metadata: '{"source":"bench"}',
          status: 'ready',
          created_at: t,
          updated_at: t,
        });
        user.documents.push(id);
      }
      const tools: string[] = [];
      for (let k = 0; k < p.tools; k++) {
        const t = at();
        const id = randomUUID();
        put('tools', {
          id,
          user_id: user.id,
          name: `tool ${k}`,
          type: TOOL_TYPES[k % TOOL_TYPES.length],
          metadata: toolMetadata,
          created_at: t,
          updated_at: t,
        });
        tools.push(id);
      }
      for (let j = 0; j < p.agents; j++) {
        const t = at();
        const id = randomUUID();
        put('agents', {
          id,
          user_id: user.id,
          name: `agent ${j}`,
          type: j % 3 === 0 ? 'VENDOR_A' : 'REACT',
          llm_model: 'gpt-4o',
          llm_provider: 'openai',
          llm_extra: '{}',
          has_memory: j % 2,
          prompt_id: j % 2 === 0 && user.prompts.length > 0 ? user.prompts[(j >> 1) % user.prompts.length] : null,
          document_id: j % 4 === 0 && user.documents.length > 0 ? user.documents[(j >> 2) % user.documents.length] : null,
          created_at: t,
          updated_at: t,
        });
        user.agents.push(id);
        if (user.tags.length >= 2) {
          put('agent_tags', { agent_id: id, tag_id: user.tags[j % user.tags.length], position: 0 });
          put('agent_tags', { agent_id: id, tag_id: user.tags[(j + 1) % user.tags.length], position: 1 });
        }
        if (tools.length > 0)
          put('agent_tools', {
            id: randomUUID(),
            user_id: user.id,
            agent_id: id,
            tool_id: tools[j % tools.length],
            created_at: t,
            updated_at: t,
          });
        if (user.documents.length > 0 && j % 4 === 1) {
          put('agent_documents', {
            id: randomUUID(),
            user_id: user.id,
            agent_id: id,
            document_id: user.documents[j % user.documents.length],
            created_at: t,
            updated_at: t,
          });
        }
      }
      users.push(user);
    });
  }).immediate();
  closeDatabase(db);
  return { path, users, counts, ms: Math.round(performance.now() - started) };
}

/** The main database: 200 users (40 with 200 agents, 160 with 12-13), 10,000 agents in all. */
export const MAIN_PLAN: UserPlan[] = Array.from({ length: 200 }, (_, u) => ({
  agents: u < 40 ? 200 : u % 2 === 0 ? 12 : 13,
  tokens: 1,
  tags: 5,
  prompts: 3,
  documents: 5,
  tools: 50,
}));

/**
 * One user owning `agents` agents, with the rest in proportion (per 1,000 agents: 10 tags, 5 prompts,
 * 5 documents, 50 tools; at least what a main-database user has) and 20 API tokens.
 */
export const scalePlan = (agents: number): UserPlan[] => [
  {
    agents,
    tokens: 20,
    tags: Math.max(5, Math.round(agents / 100)),
    prompts: Math.max(3, Math.round(agents / 200)),
    documents: Math.max(5, Math.round(agents / 200)),
    tools: Math.max(50, Math.round(agents / 20)),
  },
];

// ---- search ------------------------------------------------------------------------------------

/** In every chunk of about one in 2: the common-word query. */
export const COMMON_WORD = 'service';
/** In one chunk in 1,000: the rare-word query. */
export const RARE_WORD = 'zephyr';
const CHUNKS_PER_DOCUMENT = 100;
const WORDS_PER_CHUNK = 24;

/**
 * The searching user's 10,000 chunks (100 ready documents) and `otherChunks` chunks of other users
 * (1,000 each), every chunk 24 words from a 5,000-word vocabulary, COMMON_WORD in about half of
 * them and RARE_WORD in one in 1,000.
 */
export function seedSearch(path: string, otherChunks: number, passwordHash: string): Seeded & { user: SeededUser } {
  const started = performance.now();
  const db = openForSeeding(path);
  const at = seedClock();
  const insert = {
    users: inserter(db, 'users'),
    api_tokens: inserter(db, 'api_tokens'),
    documents: inserter(db, 'documents'),
    document_chunks: inserter(db, 'document_chunks'),
  };
  let seedState = 42;
  const random = () => (seedState = (Math.imul(seedState, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
  const vocabulary = Array.from({ length: 5000 }, (_, k) => `w${k.toString(36)}x`);
  let chunkNumber = 0;
  const chunkText = () => {
    const words: string[] = [];
    for (let k = 0; k < WORDS_PER_CHUNK; k++) words.push(vocabulary[Math.floor(random() * vocabulary.length)]);
    if (random() < 0.5) words[3] = COMMON_WORD;
    if (chunkNumber++ % 1000 === 500) words[7] = RARE_WORD;
    return words.join(' ');
  };
  const counts = { users: 0, documents: 0, document_chunks: 0 };
  const addUser = (u: number, chunks: number): SeededUser => {
    const user: SeededUser = {
      id: randomUUID(),
      email: `search-${u}@example.com`,
      tokens: [],
      agents: [],
      tags: [],
      prompts: [],
      documents: [],
    };
    const now = at();
    insert.users({
      id: user.id,
      email: user.email,
      name: `Search user ${u}`,
      password_hash: passwordHash,
      created_at: now,
      updated_at: now,
    });
    counts.users++;
    const secret = newTokenSecret();
    insert.api_tokens({
      id: randomUUID(),
      user_id: user.id,
      description: 'bench',
      token: secret,
      token_digest: digestToken(secret),
      created_at: now,
      updated_at: now,
    });
    user.tokens.push(secret);
    for (let d = 0; d * CHUNKS_PER_DOCUMENT < chunks; d++) {
      const documentId = randomUUID();
      const t = at();
      insert.documents({
        id: documentId,
        user_id: user.id,
        name: `report ${d}`,
        type: 'TXT',
        url: `https://example.com/report-${d}.txt`,
        from_page: 1,
        to_page: null,
        metadata: '{}',
        status: 'ready',
        ingest_generation: 0,
        chunks_generation: 0,
        created_at: t,
        updated_at: t,
      });
      counts.documents++;
      user.documents.push(documentId);
      for (let position = 0; position < CHUNKS_PER_DOCUMENT; position++) {
        insert.document_chunks({
          id: randomUUID(),
          user_id: user.id,
          document_id: documentId,
          position,
          content: chunkText(),
          created_at: t,
          generation: 0,
        });
        counts.document_chunks++;
      }
    }
    return user;
  };
  let user: SeededUser | undefined;
  db.transaction(() => {
    user = addUser(0, 10_000);
    for (let u = 1; u * 1000 <= otherChunks; u++) addUser(u, 1000);
  }).immediate();
  closeDatabase(db);
  return { path, users: [user!], user: user!, counts, ms: Math.round(performance.now() - started) };
}
