// The ceiling `npm run bench` compares the service with: plain `node:http` + better-sqlite3 doing the
// same work per request as the service (bearer token → SHA-256 digest → api_tokens JOIN users, then
// the same row read, page, insert or update, valibot-validated bodies, the same JSON shapes), and
// nothing else: no framework, no request ids, no extra headers, no logging. Like the service it seals
// tool metadata and extra llm keys with AES-256-GCM (SECRET_KEY, 64 hex digits) before storing them.
//
// It opens an already seeded database (it never creates the schema) and is started by
// scripts/bench.ts as a child process:
//   DATABASE_PATH=file.db PORT=0 SYNCHRONOUS=FULL SECRET_KEY=<hex> node --import tsx scripts/baseline-server.ts
// On listening it writes one JSON line `{"msg":"listening","url":"http://127.0.0.1:PORT"}`.
//
// Only the routes the benchmark measures exist. Keep the SQL equivalent to the service's stores
// (src/*/store.ts), or the ratios stop meaning "framework and glue cost".
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCipheriv, createHash, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import Database from 'better-sqlite3';
import * as v from 'valibot';
import { jsonDepth, MAX_JSON_DEPTH } from '../src/http/validate.js';

const databasePath = process.env.DATABASE_PATH;
if (!databasePath) {
  process.stderr.write('DATABASE_PATH is required\n');
  process.exit(2);
}
const synchronous = process.env.SYNCHRONOUS ?? 'FULL';
if (!/^(OFF|NORMAL|FULL|EXTRA)$/.test(synchronous)) {
  process.stderr.write('SYNCHRONOUS must be OFF, NORMAL, FULL or EXTRA\n');
  process.exit(2);
}

const secretKey = Buffer.from(process.env.SECRET_KEY ?? '', 'hex');
if (secretKey.length !== 32) {
  process.stderr.write('SECRET_KEY must be 64 hex digits\n');
  process.exit(2);
}

const db = new Database(databasePath, { fileMustExist: true });
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${synchronous}`);
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');

// ---- SQL (equivalent to the service's stores) -------------------------------------------------

const selectCaller = db.prepare(
  `SELECT u.id, u.email, u.name, u.created_at AS createdAt, u.updated_at AS updatedAt,
          t.id AS tokenId, t.expires_at AS expiresAt
     FROM api_tokens t JOIN users u ON u.id = t.user_id
    WHERE t.token_digest = ?`,
);

const AGENT_COLUMNS = `id, user_id AS userId, name, type, llm_model AS llmModel, llm_provider AS llmProvider,
  has_memory AS hasMemory, prompt_id AS promptId, document_id AS documentId, created_at AS createdAt, updated_at AS updatedAt,
  (SELECT json_object('id', d.id, 'userId', d.user_id, 'name', d.name, 'type', d.type, 'url', d.url,
          'from_page', d.from_page, 'to_page', d.to_page, 'splitter', json(d.splitter), 'metadata', json(d.metadata),
          'createdAt', d.created_at, 'updatedAt', d.updated_at)
     FROM documents d WHERE d.id = agents.document_id) AS document,
  (SELECT json_group_array(json_object('id', t.id, 'userId', t.user_id, 'name', t.name, 'color', t.color,
          'createdAt', t.created_at, 'updatedAt', t.updated_at) ORDER BY at.position)
     FROM agent_tags at JOIN tags t ON t.id = at.tag_id WHERE at.agent_id = agents.id) AS tags`;

const selectAgent = db.prepare(`SELECT ${AGENT_COLUMNS} FROM agents WHERE id = ? AND user_id = ?`);
const selectAgentSeq = db.prepare(`SELECT seq FROM agents WHERE id = ? AND user_id = ?`).pluck();
const selectAgentPage = db.prepare(`SELECT ${AGENT_COLUMNS} FROM agents WHERE user_id = ? AND seq > ? ORDER BY seq LIMIT ?`);
const insertAgent = db.prepare(
  `INSERT INTO agents (id, user_id, name, type, llm_model, llm_provider, llm_extra, has_memory, prompt_id, document_id, created_at, updated_at)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const updateAgent = db.prepare(
  `UPDATE agents SET name = ?, type = ?, llm_model = ?, llm_provider = ?, llm_extra = coalesce(?, llm_extra),
          has_memory = ?, prompt_id = ?, document_id = ?, updated_at = ?
    WHERE id = ? AND user_id = ?`,
);
const ownsPrompt = db.prepare(`SELECT 1 FROM prompts WHERE id = ? AND user_id = ?`).pluck();
const countOwnedTags = db.prepare(`SELECT count(*) FROM tags WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))`).pluck();
const clearTags = db.prepare(`DELETE FROM agent_tags WHERE agent_id = ?`);
const insertTag = db.prepare(`INSERT INTO agent_tags (agent_id, tag_id, position) VALUES (?, ?, ?)`);
const insertTool = db.prepare(
  `INSERT INTO tools (id, user_id, name, type, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
);
const selectUserByEmail = db.prepare(
  `SELECT id, email, name, password_hash AS passwordHash, created_at AS createdAt, updated_at AS updatedAt FROM users WHERE email = ?`,
);
const insertToken = db.prepare(
  `INSERT INTO api_tokens (id, user_id, description, token, token_digest, created_at, updated_at, expires_at)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
);

// ---- Bodies (valibot, as the service validates them) ------------------------------------------

const Name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200));
const Id = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(64));
const JsonObject = v.pipe(
  v.unknown(),
  v.check((value) => jsonDepth(value) <= MAX_JSON_DEPTH),
  v.record(v.string(), v.unknown()),
  v.check((value) => Buffer.byteLength(JSON.stringify(value)) <= 64 * 1024),
);
const CreateTool = v.object({
  name: Name,
  type: v.picklist(['SEARCH', 'ENGINE_ALPHA', 'HOSTED_MODEL', 'AUTOMATION_NLA', 'AGENT', 'OPENAPI']),
  metadata: v.optional(JsonObject, {}),
});
const Llm = v.pipe(
  v.looseObject({ model: Name, provider: Name }),
  v.check((llm) => jsonDepth(llm) <= MAX_JSON_DEPTH),
  v.check((llm) => Buffer.byteLength(JSON.stringify(llm)) <= 16 * 1024),
  v.transform(({ model, provider, ...extra }) => ({ model, provider, extra })),
);
const agentFields = {
  name: Name,
  type: v.picklist(['VENDOR_A', 'REACT']),
  llm: Llm,
  hasMemory: v.boolean(),
  promptId: v.nullable(Id),
  documentId: v.nullable(Id),
  tags: v.pipe(
    v.array(v.pipe(v.union([Id, v.object({ id: Id })]), v.transform((ref) => (typeof ref === 'string' ? ref : ref.id)))),
    v.maxLength(100),
    v.transform((ids) => [...new Set(ids)]),
  ),
};
const CreateAgent = v.object({
  ...agentFields,
  hasMemory: v.optional(agentFields.hasMemory, false),
  promptId: v.optional(agentFields.promptId, null),
  documentId: v.optional(agentFields.documentId, null),
  tags: v.optional(agentFields.tags, []),
});
const UpdateAgent = v.partial(v.object(agentFields));
const SignIn = v.object({
  email: v.pipe(v.string(), v.trim(), v.toLowerCase(), v.maxLength(254)),
  password: v.pipe(v.string(), v.minLength(1), v.maxLength(1024)),
});

// ---- Helpers ------------------------------------------------------------------------------------

interface Caller { id: string; email: string; name: string; createdAt: string; updatedAt: string; tokenId: string; expiresAt: string | null }
type Raw = Record<string, unknown>;

class Failure extends Error {
  constructor(readonly status: number) {
    super(String(status));
  }
}

function send(res: ServerResponse, status: number, data: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(status < 400 ? { success: true, data } : { success: false, data: null, error: data });
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** AES-256-GCM: `v1:` + base64(iv | tag | ciphertext), as src/lib/secrets.ts writes it. */
function seal(plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secretKey, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

function now(): string {
  const ms = performance.timeOrigin + performance.now();
  const whole = Math.floor(ms);
  return `${new Date(whole).toISOString().slice(0, -1)}${String(Math.min(999, Math.floor((ms - whole) * 1000))).padStart(3, '0')}+00:00`;
}

const BEARER = /^\s*bearer\s+(\S+)\s*$/i;

function authenticate(req: IncomingMessage): Caller {
  const header = req.headers['autorization'] ?? req.headers['authorization'];
  const secret = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
  if (secret === undefined || secret.length > 256) throw new Failure(401);
  const caller = selectCaller.get(createHash('sha256').update(secret).digest()) as Caller | undefined;
  if (caller === undefined || (caller.expiresAt !== null && Date.parse(caller.expiresAt) <= Date.now())) throw new Failure(401);
  return caller;
}

function readJson(req: IncomingMessage): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 1024 * 1024) reject(new Failure(413));
      else chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        if (typeof body !== 'object' || body === null || Array.isArray(body)) reject(new Failure(422));
        else resolve(body as Raw);
      } catch {
        reject(new Failure(400));
      }
    });
    req.on('error', reject);
  });
}

function check<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (!result.success) throw new Failure(422);
  return result.output;
}

function presentUser(user: { id: string; email: string; name: string; createdAt: string; updatedAt: string }) {
  return { id: user.id, email: user.email, name: user.name, createdAt: user.createdAt, updatedAt: user.updatedAt, deletedAt: null };
}

function presentAgent(raw: Raw, owner: Caller) {
  const user = presentUser(owner);
  const document = raw.document === null ? null : (JSON.parse(raw.document as string) as Raw);
  return {
    id: raw.id,
    userId: raw.userId,
    user,
    name: raw.name,
    type: raw.type,
    llm: { model: raw.llmModel, provider: raw.llmProvider },
    hasMemory: raw.hasMemory === 1,
    AgentMemory: null,
    promptId: raw.promptId,
    documentId: raw.documentId,
    createdAt: raw.createdAt,
    updatedAt: raw.updatedAt,
    document: document === null ? {} : { ...document, user, index: null, Agent: null },
    tags: JSON.parse(raw.tags as string),
  };
}

function setTags(agentId: string, tags: string[]): void {
  clearTags.run(agentId);
  tags.forEach((tagId, position) => insertTag.run(agentId, tagId, position));
}

function checkReferences(userId: string, refs: { promptId?: string | null; tags?: string[] }): void {
  if (refs.promptId && !ownsPrompt.get(refs.promptId, userId)) throw new Failure(422);
  if (refs.tags && refs.tags.length > 0 && countOwnedTags.get(userId, JSON.stringify(refs.tags)) !== refs.tags.length) throw new Failure(422);
}

const createAgent = db.transaction((userId: string, input: v.InferOutput<typeof CreateAgent>): string => {
  checkReferences(userId, input);
  const id = randomUUID();
  const at = now();
  insertAgent.run(id, userId, input.name, input.type, input.llm.model, input.llm.provider, seal(JSON.stringify(input.llm.extra)),
    input.hasMemory ? 1 : 0, input.promptId, input.documentId, at, at);
  setTags(id, input.tags);
  return id;
});

const patchAgent = db.transaction((userId: string, id: string, change: v.InferOutput<typeof UpdateAgent>): boolean => {
  const stored = selectAgent.get(id, userId) as Raw | undefined;
  if (!stored) return false;
  checkReferences(userId, change);
  updateAgent.run(
    change.name ?? stored.name, change.type ?? stored.type, change.llm?.model ?? stored.llmModel,
    change.llm?.provider ?? stored.llmProvider, change.llm ? seal(JSON.stringify(change.llm.extra)) : null,
    (change.hasMemory ?? stored.hasMemory === 1) ? 1 : 0,
    change.promptId === undefined ? stored.promptId : change.promptId,
    change.documentId === undefined ? stored.documentId : change.documentId,
    now(), id, userId,
  );
  if (change.tags) setTags(id, change.tags);
  return true;
});

function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([^$]+)\$([^$]+)$/.exec(stored);
  if (!match) return Promise.resolve(false);
  const N = 2 ** Number(match[1]);
  const r = Number(match[2]);
  const expected = Buffer.from(match[5], 'base64');
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), Buffer.from(match[4], 'base64'), expected.length, { N, r, p: Number(match[3]), maxmem: 256 * N * r },
      (error, key) => (error ? reject(error) : resolve(timingSafeEqual(key, expected))));
  });
}

// ---- Routes -------------------------------------------------------------------------------------

const AGENT_PATH = /^\/api\/v1\/agents\/([^/?]+)$/;

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const method = req.method;

  if (method === 'GET' && path === '/healthz') return send(res, 200, { status: 'ok' });

  if (method === 'POST' && path === '/api/v1/auth/sign-in') {
    const input = check(SignIn, await readJson(req));
    const user = selectUserByEmail.get(input.email) as (Raw & { id: string; passwordHash: string; email: string; name: string; createdAt: string; updatedAt: string }) | undefined;
    if (!user || !(await verifyPassword(input.password, user.passwordHash))) throw new Failure(401);
    const token = `ams_${randomBytes(32).toString('base64url')}`;
    const at = now();
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const id = randomUUID();
    insertToken.run(id, user.id, 'Created by sign-in', token, createHash('sha256').update(token).digest(), at, at, expiresAt);
    const presented = presentUser(user);
    return send(res, 200, {
      user: presented,
      token,
      apiToken: { id, userId: user.id, user: presented, description: 'Created by sign-in', token, createdAt: at, updatedAt: at, expiresAt },
    });
  }

  if (path === '/api/v1/agents') {
    const caller = authenticate(req);
    if (method === 'GET') {
      const params = new URLSearchParams(query === -1 ? '' : url.slice(query + 1));
      const limitText = params.get('limit') ?? '100';
      const limit = /^\d+$/.test(limitText) ? Number(limitText) : NaN;
      if (!(limit >= 1 && limit <= 1000)) throw new Failure(422);
      const after = params.get('after');
      let afterSeq = 0;
      if (after !== null) {
        const seq = selectAgentSeq.get(after, caller.id) as number | undefined;
        if (seq === undefined) throw new Failure(422);
        afterSeq = seq;
      }
      const rows = selectAgentPage.all(caller.id, afterSeq, limit + 1) as Raw[];
      const page = rows.length > limit ? rows.slice(0, limit) : rows;
      const headers: Record<string, string> = {};
      if (rows.length > limit) {
        params.set('after', page[page.length - 1].id as string);
        headers.link = `<http://${req.headers.host}${path}?${params}>; rel="next"`;
      }
      return send(res, 200, page.map((row) => presentAgent(row, caller)), headers);
    }
    if (method === 'POST') {
      const input = check(CreateAgent, await readJson(req));
      const id = createAgent(caller.id, input);
      return send(res, 201, presentAgent(selectAgent.get(id, caller.id) as Raw, caller));
    }
  }

  const agentPath = AGENT_PATH.exec(path);
  if (agentPath) {
    const caller = authenticate(req);
    const id = check(Id, decodeURIComponent(agentPath[1]));
    if (method === 'GET') {
      const row = selectAgent.get(id, caller.id) as Raw | undefined;
      if (!row) throw new Failure(404);
      return send(res, 200, presentAgent(row, caller));
    }
    if (method === 'PATCH') {
      const change = check(UpdateAgent, await readJson(req));
      if (!patchAgent(caller.id, id, change)) throw new Failure(404);
      return send(res, 200, presentAgent(selectAgent.get(id, caller.id) as Raw, caller));
    }
  }

  if (method === 'POST' && path === '/api/v1/tools') {
    const caller = authenticate(req);
    const input = check(CreateTool, await readJson(req));
    const id = randomUUID();
    const at = now();
    insertTool.run(id, caller.id, input.name, input.type, seal(JSON.stringify(input.metadata)), at, at);
    return send(res, 201, { id, userId: caller.id, user: presentUser(caller), name: input.name, type: input.type, createdAt: at, updatedAt: at });
  }

  throw new Failure(404);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    const status = error instanceof Failure ? error.status : 500;
    if (status === 500) process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    if (!res.headersSent) send(res, status, { code: String(status), message: 'failed' });
  });
});

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://${address}:${port}` })}\n`);
});

const stop = () => server.close(() => {
  db.close();
  process.exit(0);
});
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
