// `npm run bench`: measures the real service against the raw-stack ceiling (scripts/baseline-server.ts:
// plain node:http + better-sqlite3 doing the same work) on loopback, and checks the targets of issue 6.
//
//   npm run bench                      full run: 3 alternating rounds of 5 s per case (about 8 minutes)
//   npm run bench -- --quick           smoke run: 1 round of 1 s per case, no warm-up (under a minute)
//   npm run bench -- --only get-agent,post-tool --rounds 5 --duration 8
//   npm run bench -- --cpu-prof --only get-agent   also profile the service (bench-profiles/) and print
//                                                  its hottest functions by self time
//
// What it does:
//   1. Seeds temporary databases directly with better-sqlite3, each in one transaction, using the
//      service's own modules: openDatabase (schema and migrations), token secrets and SHA-256 digests,
//      the password hash (at the default scrypt cost) and the sealer for secret columns (SECRET_KEY).
//      main: 200 users (40 with 200 agents each, 160 with 12-13), one API token each, 5 tags, 3 prompts,
//            5 documents and 50 tools per user; 10,000 agents with 2 tags each (half with a prompt,
//            a quarter with a document); one agent-tool link per agent, an agent-document link for a quarter.
//      scale: two more databases holding 1,000 and 100,000 agents, all owned by one user (20 tokens).
//   2. Counts the SQL statements list requests run (the service's app in this process, better-sqlite3's
//      Statement methods wrapped to count executions) for pages of 1, 10 and 100 agents.
//   3. Starts the service as a child process (node + package.json's start flags, with PORT=0, LOG_REQUESTS=off,
//      RATE_LIMIT=off, INGEST=off), reads its URL from the `listening` log line and times spawn → first
//      answered GET /healthz. Starts the baseline on the same database file (same synchronous setting).
//   4. Per case: a warm-up on each server, then rounds alternating which server goes first (autocannon in
//      this process, 50 connections, so the load generator shares the cores). Requests rotate over
//      several users' tokens and records, each connection starting at a different place. After each run
//      the server is left to finish what it had received (its CPU falls idle) before the next starts.
//   5. Reads peak RSS (VmHWM) of the service processes, prints a Markdown table with PASS/FAIL per
//      target and writes bench-results.json (or --out) to the current directory.
//
// Figures drift ±10% between runs and machines and move with whatever else the machine runs: the
// "other load" column estimates the share of CPU that processes outside the benchmark used meanwhile.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeDatabase, openDatabase, type Db } from '../src/db.js';
import { digestToken, newTokenSecret } from '../src/api-tokens/secrets.js';
import { hashPassword } from '../src/auth/password.js';
import { MIN_SCRYPT } from '../src/config.js';
import { formatTimestamp } from '../src/lib/ids.js';
import { createSealer } from '../src/lib/secrets.js';
import { serviceNodeArgs } from './service-command.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// ---- autocannon (no bundled types; this is the part of its API used here) ----------------------

interface AcRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AcClient {
  setRequests(requests: AcRequest[]): void;
}
interface AcResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  requests: { total: number };
  throughput: { average: number };
}
interface AcInstance extends PromiseLike<AcResult> {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): AcInstance;
  stop(): void;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  timeout: number;
  requests: AcRequest[];
  setupClient?: (client: AcClient) => void;
}) => AcInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

// ---- options -----------------------------------------------------------------------------------

const CASE_KEYS = ['get-agent', 'list-agents', 'post-tool', 'post-agent', 'patch-agent', 'sign-in', 'get-agent-during-sign-ins', 'list-scaling'] as const;
type CaseKey = (typeof CASE_KEYS)[number];

const { values: argv } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string' },
    out: { type: 'string', default: 'bench-results.json' },
    'cpu-prof': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (argv.help) {
  process.stdout.write(`npm run bench -- [--quick] [--rounds N] [--duration S] [--warmup S] [--connections N]
  [--only ${CASE_KEYS.join(',')}] [--out FILE] [--cpu-prof] [--keep]\n`);
  process.exit(0);
}
const positive = (text: string | undefined, fallback: number, name: string, allowZero = false): number => {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!(value > 0 || (allowZero && value === 0))) throw new Error(`--${name} must be a positive number`);
  return value;
};
const OPTS = {
  quick: argv.quick,
  rounds: Math.round(positive(argv.rounds, argv.quick ? 1 : 3, 'rounds')),
  duration: positive(argv.duration, argv.quick ? 1 : 5, 'duration'),
  /** 0: no warm-up (--quick). */
  warmup: positive(argv.warmup, argv.quick ? 0 : 2, 'warmup', true),
  connections: Math.round(positive(argv.connections, 50, 'connections')),
  cpuProf: argv['cpu-prof'],
  only: argv.only ? (argv.only.split(',').map((key) => key.trim()) as CaseKey[]) : [...CASE_KEYS],
};
for (const key of OPTS.only) if (!CASE_KEYS.includes(key)) throw new Error(`--only: unknown case "${key}" (known: ${CASE_KEYS.join(', ')})`);
const SIGN_IN_STORM = 20;
/** The key that seals secrets at rest, given to the service and the baseline as SECRET_KEY. */
const SECRET_KEY = randomBytes(32);
const PASSWORD = 'bench password, long enough';
const BENCH_START = performance.now();
const log = (text: string) => process.stderr.write(`[bench ${((performance.now() - BENCH_START) / 1000).toFixed(1).padStart(5)} s] ${text}\n`);

// ---- seeding -----------------------------------------------------------------------------------

interface SeededUser {
  id: string;
  email: string;
  tokens: string[];
  agents: string[];
  tags: string[];
  prompts: string[];
}

interface SeedPlan {
  /** Agents per user, one entry per user. */
  agents: number[];
  tokensPerUser: number;
  tagsPerUser: number;
  promptsPerUser: number;
  documentsPerUser: number;
  toolsPerUser: number;
  /** Link every agent to one of its owner's tools, and a quarter of them to a document. */
  links: boolean;
}

const TOOL_TYPES = ['SEARCH', 'ENGINE_ALPHA', 'HOSTED_MODEL', 'AUTOMATION_NLA', 'AGENT', 'OPENAPI'];

function seed(path: string, plan: SeedPlan, passwordHash: string): { users: SeededUser[]; counts: Record<string, number>; ms: number } {
  const started = performance.now();
  const db = openDatabase(path);
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const at = () => formatTimestamp((clock += 0.001));
  const counts: Record<string, number> = {};
  const bump = (table: string) => (counts[table] = (counts[table] ?? 0) + 1);
  const insert = {
    users: db.prepare(`INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`),
    api_tokens: db.prepare(`INSERT INTO api_tokens (id, user_id, description, token, token_digest, created_at, updated_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`),
    prompts: db.prepare(`INSERT INTO prompts (id, user_id, name, template, input_variables, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    tags: db.prepare(`INSERT INTO tags (id, user_id, name, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`),
    documents: db.prepare(`INSERT INTO documents (id, user_id, name, type, url, from_page, to_page, authorization, splitter, metadata, created_at, updated_at)
      VALUES (?, ?, ?, 'PDF', ?, 1, 12, NULL, NULL, '{"source":"bench"}', ?, ?)`),
    tools: db.prepare(`INSERT INTO tools (id, user_id, name, type, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    agents: db.prepare(`INSERT INTO agents (id, user_id, name, type, llm_model, llm_provider, llm_extra, has_memory, prompt_id, document_id, created_at, updated_at)
      VALUES (?, ?, ?, ?, 'gpt-4o', 'openai', ?, ?, ?, ?, ?, ?)`),
    agent_tags: db.prepare(`INSERT INTO agent_tags (agent_id, tag_id, position) VALUES (?, ?, ?)`),
    agent_tools: db.prepare(`INSERT INTO agent_tools (id, user_id, agent_id, tool_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`),
    agent_documents: db.prepare(`INSERT INTO agent_documents (id, user_id, agent_id, document_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`),
  };
  // Secret columns are sealed as the service seals them (the same value for every row is fine here).
  const sealer = createSealer(SECRET_KEY);
  const toolMetadata = sealer.seal('{"api_key":"secret"}');
  const llmExtra = sealer.seal('{"apiKey":"sk-bench"}');
  const users: SeededUser[] = [];
  db.transaction(() => {
    plan.agents.forEach((agentCount, u) => {
      const user: SeededUser = { id: randomUUID(), email: `bench-${u}@example.com`, tokens: [], agents: [], tags: [], prompts: [] };
      const now = at();
      insert.users.run(user.id, user.email, `Bench user ${u}`, passwordHash, now, now);
      bump('users');
      for (let k = 0; k < plan.tokensPerUser; k++) {
        const secret = newTokenSecret();
        const t = at();
        insert.api_tokens.run(randomUUID(), user.id, `bench token ${k}`, secret, digestToken(secret), t, t);
        bump('api_tokens');
        user.tokens.push(secret);
      }
      for (let k = 0; k < plan.promptsPerUser; k++) {
        const id = randomUUID();
        const t = at();
        insert.prompts.run(id, user.id, `prompt ${k}`, 'Say hello to {who} in {language}.', '["who","language"]', t, t);
        bump('prompts');
        user.prompts.push(id);
      }
      for (let k = 0; k < plan.tagsPerUser; k++) {
        const id = randomUUID();
        const t = at();
        insert.tags.run(id, user.id, `tag ${k}`, '#0e8a16', t, t);
        bump('tags');
        user.tags.push(id);
      }
      const documents: string[] = [];
      for (let k = 0; k < plan.documentsPerUser; k++) {
        const id = randomUUID();
        const t = at();
        insert.documents.run(id, user.id, `handbook ${k}`, `https://example.com/handbook-${k}.pdf`, t, t);
        bump('documents');
        documents.push(id);
      }
      const tools: string[] = [];
      for (let k = 0; k < plan.toolsPerUser; k++) {
        const id = randomUUID();
        const t = at();
        insert.tools.run(id, user.id, `tool ${k}`, TOOL_TYPES[k % TOOL_TYPES.length], toolMetadata, t, t);
        bump('tools');
        tools.push(id);
      }
      for (let j = 0; j < agentCount; j++) {
        const id = randomUUID();
        const t = at();
        const prompt = j % 2 === 0 && user.prompts.length > 0 ? user.prompts[j % user.prompts.length] : null;
        const document = j % 4 === 0 && documents.length > 0 ? documents[j % documents.length] : null;
        insert.agents.run(id, user.id, `agent ${j}`, j % 3 === 0 ? 'VENDOR_A' : 'REACT', llmExtra, j % 2, prompt, document, t, t);
        bump('agents');
        user.agents.push(id);
        if (user.tags.length >= 2) {
          insert.agent_tags.run(id, user.tags[j % user.tags.length], 0);
          insert.agent_tags.run(id, user.tags[(j + 1) % user.tags.length], 1);
          counts.agent_tags = (counts.agent_tags ?? 0) + 2;
        }
        if (plan.links && tools.length > 0) {
          insert.agent_tools.run(randomUUID(), user.id, id, tools[j % tools.length], t, t);
          bump('agent_tools');
        }
        if (plan.links && documents.length > 0 && j % 4 === 1) {
          insert.agent_documents.run(randomUUID(), user.id, id, documents[j % documents.length], t, t);
          bump('agent_documents');
        }
      }
      users.push(user);
    });
  }).immediate();
  closeDatabase(db);
  return { users, counts, ms: Math.round(performance.now() - started) };
}

// ---- child processes ---------------------------------------------------------------------------

interface Proc {
  name: string;
  child: ChildProcess;
  url: string;
  pid: number;
  spawnToListeningMs: number;
  spawnToFirstAnswerMs: number;
  /** Resident memory right after the first answer (MiB). */
  rssAtStartMiB: number | null;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

async function startProcess(name: string, args: string[], env: Record<string, string>): Promise<Proc> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const url = await new Promise<string>((resolveUrl, reject) => {
    let buffered = '';
    let found = false;
    const timer = setTimeout(() => reject(new Error(`${name}: no "listening" line within 30 s; stderr: ${stderr}`)), 30_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      // Keep draining stdout for the whole run, or a full pipe would stall the server.
      if (found) return;
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        try {
          const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
          if (entry.msg === 'listening' && typeof entry.url === 'string') {
            found = true;
            clearTimeout(timer);
            resolveUrl(entry.url.replace('://0.0.0.0:', '://127.0.0.1:'));
            return;
          }
        } catch {
          // not a JSON line
        }
      }
    });
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}) before listening; stderr: ${stderr}`)));
  });
  const spawnToListeningMs = performance.now() - started;
  const health = await fetch(`${url}/healthz`);
  await health.arrayBuffer();
  if (health.status !== 200) throw new Error(`${name}: GET /healthz answered ${health.status}`);
  const spawnToFirstAnswerMs = performance.now() - started;
  return {
    name,
    child,
    url,
    pid: child.pid!,
    spawnToListeningMs: round(spawnToListeningMs),
    spawnToFirstAnswerMs: round(spawnToFirstAnswerMs),
    rssAtStartMiB: memoryOf(child.pid!)?.rssMiB ?? null,
  };
}

function startService(name: string, databasePath: string, extraNodeArgs: string[] = []): Promise<Proc> {
  return startProcess(name, [...extraNodeArgs, ...serviceNodeArgs()], {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_PATH: databasePath,
    LOG_REQUESTS: 'off',
    RATE_LIMIT: 'off',
    // Seeded documents are never fetched: no background ingestion during the measurements.
    INGEST: 'off',
    SECRET_KEY: SECRET_KEY.toString('hex'),
  });
}

function startBaseline(name: string, databasePath: string, synchronous: string): Promise<Proc> {
  return startProcess(name, ['--import', 'tsx', 'scripts/baseline-server.ts'], {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_PATH: databasePath,
    SYNCHRONOUS: synchronous,
    SECRET_KEY: SECRET_KEY.toString('hex'),
  });
}

async function stopProcess(proc: Proc): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  const exited = new Promise<void>((done) => proc.child.once('exit', () => done()));
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Peak and current resident memory of a process, in MiB (Linux /proc). */
function memoryOf(pid: number): { peakRssMiB: number; rssMiB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peakRssMiB: round(kib('VmHWM') / 1024, 1), rssMiB: round(kib('VmRSS') / 1024, 1) };
  } catch {
    return undefined;
  }
}

// ---- CPU accounting (how much of the machine other processes used during a run) -----------------

interface CpuSnapshot {
  busy: number;
  total: number;
  ours: number;
}

function cpuSnapshot(pids: number[]): CpuSnapshot | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system] = fields;
    let ours = 0;
    for (const pid of pids) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ours += Number(rest[11]) + Number(rest[12]); // utime, stime (fields 14 and 15)
      } catch {
        // process gone
      }
    }
    return { busy: user + nice + system, total: fields.slice(0, 8).reduce((a, b) => a + b, 0), ours };
  } catch {
    return undefined;
  }
}

/** Share of all CPU time spent by processes outside the benchmark (0-1), approximately. */
function otherLoad(before: CpuSnapshot | undefined, after: CpuSnapshot | undefined): number | null {
  if (!before || !after || after.total === before.total) return null;
  const foreign = after.busy - before.busy - (after.ours - before.ours);
  return round(Math.max(0, foreign) / (after.total - before.total), 2);
}

// ---- load generation ---------------------------------------------------------------------------

interface Load {
  /** The requests, rotated differently for each connection. */
  requests: AcRequest[];
  connections?: number;
  expectStatus: number;
}

interface RunResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  bytesPerResponse: number;
  otherLoad: number | null;
  /** CPU used during the run, in cores: the server measured, and this process (the load generator). */
  serverCores: number | null;
  generatorCores: number | null;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Requests per connection: each connection cycles through its own slice of the request set. */
const PER_CONNECTION = 64;

/** USER_HZ: the unit of /proc CPU times (100 on Linux everywhere that matters). */
const CLOCK_TICKS = 100;

/** CPU time (clock ticks) a process has used so far, or undefined when it is gone. */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(rest[11]) + Number(rest[12]);
  } catch {
    return undefined;
  }
}

/**
 * Waits until the server has finished what it had already received (it keeps answering requests,
 * and hashing passwords, after the load generator has gone): its CPU use drops below 10% for 200 ms.
 * So no run inherits a backlog, and no write of one run overlaps the next (another process's commit
 * between a deferred transaction's read and write is SQLITE_BUSY).
 */
async function waitIdle(pid: number, maxMs = 60_000): Promise<void> {
  const deadline = performance.now() + maxMs;
  let last = cpuTicks(pid);
  while (last !== undefined && performance.now() < deadline) {
    await sleep(200);
    const now = cpuTicks(pid);
    if (now === undefined || now - last <= 2) return;
    last = now;
  }
}

function runLoad(proc: Proc, load: Load, seconds: number, drain = true): { instance: AcInstance; done: Promise<RunResult> } {
  const url = proc.url;
  const pids = [process.pid, proc.pid];
  let rotation = 0;
  const all = load.requests;
  const step = Math.max(1, Math.floor(all.length / (load.connections ?? OPTS.connections)));
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let bytes = 0;
  const instance = autocannon({
    url,
    connections: load.connections ?? OPTS.connections,
    duration: seconds,
    timeout: 30,
    requests: all.slice(0, PER_CONNECTION),
    setupClient: (client) => {
      const offset = (rotation++ * step) % all.length;
      client.setRequests(Array.from({ length: Math.min(PER_CONNECTION, all.length) }, (_, k) => all[(offset + k) % all.length]));
    },
  });
  instance.on('response', (_client, status, responseBytes, ms) => {
    if (status !== load.expectStatus) return;
    bytes += responseBytes;
    if (count === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[count++] = ms;
  });
  const before = cpuSnapshot(pids);
  const started = { at: performance.now(), server: cpuTicks(proc.pid), generator: cpuTicks(process.pid) };
  const done = Promise.resolve(instance).then(async (result): Promise<RunResult> => {
    const after = cpuSnapshot(pids);
    const seconds = (performance.now() - started.at) / 1000;
    const cores = (ticksBefore: number | undefined, ticksAfter: number | undefined) =>
      ticksBefore === undefined || ticksAfter === undefined ? null : round((ticksAfter - ticksBefore) / CLOCK_TICKS / seconds, 2);
    const serverCores = cores(started.server, cpuTicks(proc.pid));
    const generatorCores = cores(started.generator, cpuTicks(process.pid));
    if (drain) await waitIdle(proc.pid);
    const sorted = latencies.slice(0, count).sort();
    const unexpected = Object.entries(result.statusCodeStats)
      .filter(([status]) => Number(status) !== load.expectStatus)
      .reduce((sum, [, { count: n }]) => sum + n, 0);
    return {
      rps: round(count / result.duration),
      p50: round(percentile(sorted, 50), 2),
      p99: round(percentile(sorted, 99), 2),
      requests: count,
      non2xx: unexpected,
      errors: result.errors,
      bytesPerResponse: count > 0 ? Math.round(bytes / count) : 0,
      otherLoad: otherLoad(before, after),
      serverCores,
      generatorCores,
    };
  });
  return { instance, done };
}

function measure(proc: Proc, load: Load, seconds: number): Promise<RunResult> {
  return runLoad(proc, load, seconds).done;
}

/** Measures `load` while `storm` keeps its connections' sign-ins in flight on the same server. */
async function measureDuringStorm(proc: Proc, load: Load, storm: Load, seconds: number): Promise<RunResult & { signInsPerSecond: number }> {
  const background = runLoad(proc, storm, seconds + 60);
  await sleep(500); // let the sign-ins fill the threadpool first
  const result = await runLoad(proc, load, seconds, false).done;
  background.instance.stop();
  const stormResult = await background.done;
  return { ...result, signInsPerSecond: stormResult.rps };
}

// ---- cases -------------------------------------------------------------------------------------

interface Side {
  rps: number;
  p50: number;
  p99: number;
  rounds: RunResult[];
}

interface CaseResult {
  key: CaseKey;
  title: string;
  service: Side;
  baseline: Side;
  ratio: number;
  ratioSpread: [number, number];
  otherLoad: number | null;
  problems: string[];
  extra?: Record<string, unknown>;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function side(rounds: RunResult[]): Side {
  return { rps: round(median(rounds.map((r) => r.rps))), p50: round(median(rounds.map((r) => r.p50)), 2), p99: round(median(rounds.map((r) => r.p99)), 2), rounds };
}

/**
 * Warm-up on each server, then `rounds` rounds alternating which server goes first.
 * `run` measures one server for `seconds`.
 */
async function compare(
  key: CaseKey,
  title: string,
  service: Proc,
  baseline: Proc,
  run: (proc: Proc, seconds: number) => Promise<RunResult>,
  extra?: (serviceRounds: RunResult[], baselineRounds: RunResult[]) => Record<string, unknown>,
  seconds = OPTS.duration,
): Promise<CaseResult> {
  if (OPTS.warmup > 0) {
    log(`${title}: warm-up`);
    await run(service, OPTS.warmup);
    await run(baseline, OPTS.warmup);
  }
  const s: RunResult[] = [];
  const b: RunResult[] = [];
  for (let round = 0; round < OPTS.rounds; round++) {
    const order = round % 2 === 0 ? ([service, baseline] as const) : ([baseline, service] as const);
    for (const proc of order) (proc === service ? s : b).push(await run(proc, seconds));
    log(`${title}: round ${round + 1}/${OPTS.rounds}: service ${s[round].rps} req/s p99 ${s[round].p99} ms, baseline ${b[round].rps} req/s p99 ${b[round].p99} ms`);
  }
  const ratios = s.map((r, i) => (b[i].rps > 0 ? r.rps / b[i].rps : NaN));
  const problems: string[] = [];
  for (const [who, rounds] of [['service', s], ['baseline', b]] as const) {
    const unexpected = rounds.reduce((sum, r) => sum + r.non2xx, 0);
    const errors = rounds.reduce((sum, r) => sum + r.errors, 0);
    if (unexpected > 0) problems.push(`${who}: ${unexpected} responses with an unexpected status`);
    if (errors > 0) problems.push(`${who}: ${errors} connection errors or timeouts`);
  }
  const serviceSide = side(s);
  const baselineSide = side(b);
  const loads = [...s, ...b].map((r) => r.otherLoad).filter((x): x is number => x !== null);
  return {
    key,
    title,
    service: serviceSide,
    baseline: baselineSide,
    ratio: round(baselineSide.rps > 0 ? serviceSide.rps / baselineSide.rps : NaN, 2),
    ratioSpread: [round(Math.min(...ratios), 2), round(Math.max(...ratios), 2)],
    otherLoad: loads.length ? Math.max(...loads) : null,
    problems,
    extra: extra?.(s, b),
  };
}

const bearer = (token: string) => ({ Autorization: `Bearer ${token}` });
const jsonHeaders = (token: string) => ({ ...bearer(token), 'content-type': 'application/json' });

/** Sends one request and checks its status before a case is measured (a wrong setup fails loudly). */
async function probe(url: string, request: AcRequest, expectStatus: number, name: string): Promise<void> {
  const response = await fetch(url + request.path, { method: request.method ?? 'GET', headers: request.headers, body: request.body });
  const text = await response.text();
  if (response.status !== expectStatus) throw new Error(`${name}: ${request.method ?? 'GET'} ${request.path} answered ${response.status}, expected ${expectStatus}: ${text.slice(0, 300)}`);
}

// ---- SQL statements per list request -----------------------------------------------------------

/**
 * Runs the service's app in this process on `databasePath` and counts the better-sqlite3 statement
 * executions (get/all/run/iterate) of single requests. Sub-selects inside one statement count once.
 */
async function countStatements(databasePath: string, user: SeededUser): Promise<Record<string, number>> {
  const [{ createApp }, { loadConfig }, { silentLogger }] = await Promise.all([
    import('../src/app.js'),
    import('../src/config.js'),
    import('../src/lib/log.js'),
  ]);
  const db: Db = openDatabase(databasePath);
  const Statement = Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  let executed = 0;
  const originals: Record<string, (...args: unknown[]) => unknown> = {};
  for (const method of ['get', 'all', 'run', 'iterate']) {
    const original = Statement[method];
    originals[method] = original;
    Statement[method] = function (this: unknown, ...args: unknown[]) {
      executed++;
      return original.apply(this, args);
    };
  }
  let server: Server | undefined;
  let app: { callback(): Parameters<typeof createServer>[1]; stopBackgroundWork(): Promise<void> } | undefined;
  try {
    const config = loadConfig({ DATABASE_PATH: databasePath, LOG_REQUESTS: 'off', RATE_LIMIT: 'off', INGEST: 'off' });
    app = createApp({ db, config, secretKey: SECRET_KEY, log: silentLogger });
    server = createServer(app.callback());
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    const count = async (path: string): Promise<number> => {
      executed = 0;
      const response = await fetch(base + path, { headers: bearer(user.tokens[0]) });
      const body = (await response.json()) as { data: unknown };
      if (response.status !== 200) throw new Error(`statement count: GET ${path} answered ${response.status}`);
      if (Array.isArray(body.data) && path.includes('limit=') && body.data.length !== Number(/limit=(\d+)/.exec(path)![1])) {
        throw new Error(`statement count: GET ${path} returned ${body.data.length} agents`);
      }
      return executed;
    };
    await count('/agents?limit=1'); // the token's first use writes its lastUsedAt: not a per-page cost
    return {
      'GET /agents?limit=1': await count('/agents?limit=1'),
      'GET /agents?limit=10': await count('/agents?limit=10'),
      'GET /agents?limit=100': await count('/agents?limit=100'),
      'GET /agents?limit=1&after=': await count(`/agents?limit=1&after=${user.agents[49]}`),
      'GET /agents?limit=100&after=': await count(`/agents?limit=100&after=${user.agents[49]}`),
      'GET /agents/{id}': await count(`/agents/${user.agents[0]}`),
    };
  } finally {
    for (const [method, original] of Object.entries(originals)) Statement[method] = original;
    if (server) await new Promise<void>((done) => server!.close(() => done()));
    await app?.stopBackgroundWork();
    closeDatabase(db);
  }
}

// ---- CPU profile summary -----------------------------------------------------------------------

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

function summariseProfile(file: string, top = 25): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    total += us;
    const where = url ? `${url.replace(`file://${ROOT}/`, '').replace(/^.*node_modules\//, 'node_modules/')}:${lineNumber + 1}` : '';
    const name = `${functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
  return [...byFunction.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => `| ${round((100 * us) / total, 1)}% | ${round(us / 1000)} ms | \`${name}\` |`);
}

// ---- output ------------------------------------------------------------------------------------

function round(value: number, digits = 0): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a');

interface Target {
  target: string;
  measured: string;
  pass: boolean;
}

// ---- main --------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const wants = (key: CaseKey) => OPTS.only.includes(key);
  const startedAt = new Date();
  const dir = (tempDir = mkdtempSync(join(os.tmpdir(), 'ams-bench-')));
  const profileDir = resolve('bench-profiles');
  log(`temporary databases in ${dir}; ${OPTS.quick ? 'quick' : 'full'} run: ${OPTS.rounds} round(s) of ${OPTS.duration} s, warm-up ${OPTS.warmup} s, ${OPTS.connections} connections`);

  const cpus = os.cpus();
  const machine = {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    loadAverageAtStart: os.loadavg().map((x) => round(x, 2)),
  };

  // The service's own pragmas decide the baseline's synchronous setting (synchronous is per connection).
  const probeDb = openDatabase(join(dir, 'probe.db'));
  const synchronousLevel = probeDb.pragma('synchronous', { simple: true }) as number;
  closeDatabase(probeDb);
  const synchronous = ['OFF', 'NORMAL', 'FULL', 'EXTRA'][synchronousLevel] ?? 'FULL';

  log('hashing the seed password at the service default cost');
  const passwordHash = await hashPassword(PASSWORD, MIN_SCRYPT);

  const mainDb = join(dir, 'main.db');
  const mainPlan: SeedPlan = {
    agents: Array.from({ length: 200 }, (_, u) => (u < 40 ? 200 : u % 2 === 0 ? 12 : 13)),
    tokensPerUser: 1,
    tagsPerUser: 5,
    promptsPerUser: 3,
    documentsPerUser: 5,
    toolsPerUser: 50,
    links: true,
  };
  const main = seed(mainDb, mainPlan, passwordHash);
  log(`seeded main database in ${main.ms} ms: ${JSON.stringify(main.counts)}`);
  const heavy = main.users.slice(0, 40);

  const scalePlan = (agents: number): SeedPlan => ({ agents: [agents], tokensPerUser: 20, tagsPerUser: 5, promptsPerUser: 3, documentsPerUser: 10, toolsPerUser: 0, links: false });
  const scaleSizes = [1_000, 100_000] as const;
  const scale = wants('list-scaling')
    ? scaleSizes.map((agents) => {
        const path = join(dir, `scale-${agents}.db`);
        const seeded = seed(path, scalePlan(agents), passwordHash);
        log(`seeded ${agents}-agent database in ${seeded.ms} ms (${round(statSync(path).size / 2 ** 20)} MiB)`);
        return { agents, path, user: seeded.users[0], ms: seeded.ms };
      })
    : [];

  // ---- SQL statements per list request (in this process) ----
  let statements: Record<string, number> | undefined;
  if (wants('list-agents') || wants('list-scaling')) {
    statements = await countStatements(mainDb, heavy[0]);
    log(`SQL statements per request: ${JSON.stringify(statements)}`);
  }

  // ---- the main service and its baseline ----
  const profileArgs = OPTS.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  if (OPTS.cpuProf) mkdirSync(profileDir, { recursive: true });
  const profilesBefore = new Set(OPTS.cpuProf ? readdirSync(profileDir) : []);
  const service = await startService('service', mainDb, profileArgs);
  log(`service up at ${service.url}: listening after ${service.spawnToListeningMs} ms, first answer after ${service.spawnToFirstAnswerMs} ms`);
  const baseline = await startBaseline('baseline', mainDb, synchronous);
  log(`baseline up at ${baseline.url} (synchronous=${synchronous})`);

  // Request sets: several users' tokens and records, each connection starting at a different place.
  const getAgent: Load = {
    expectStatus: 200,
    requests: main.users.flatMap((user) => user.agents.slice(0, 10).map((id) => ({ method: 'GET', path: `/api/v1/agents/${id}`, headers: bearer(user.tokens[0]) }))),
  };
  const listAgents: Load = {
    expectStatus: 200,
    requests: heavy.flatMap((user) => [
      { method: 'GET', path: '/api/v1/agents?limit=100', headers: bearer(user.tokens[0]) },
      { method: 'GET', path: `/api/v1/agents?limit=100&after=${user.agents[99]}`, headers: bearer(user.tokens[0]) },
    ]),
  };
  const postTool: Load = {
    expectStatus: 201,
    requests: main.users.map((user) => ({
      method: 'POST',
      path: '/api/v1/tools',
      headers: jsonHeaders(user.tokens[0]),
      body: JSON.stringify({ name: 'bench search', type: 'SEARCH', metadata: { api_key: 'secret' } }),
    })),
  };
  const postAgent: Load = {
    expectStatus: 201,
    requests: main.users.map((user) => ({
      method: 'POST',
      path: '/api/v1/agents',
      headers: jsonHeaders(user.tokens[0]),
      body: JSON.stringify({
        name: 'bench agent',
        type: 'REACT',
        llm: { model: 'gpt-4o', provider: 'openai', apiKey: 'sk-bench' },
        hasMemory: true,
        promptId: user.prompts[0],
        tags: [user.tags[0], user.tags[1]],
      }),
    })),
  };
  const patchAgent: Load = {
    expectStatus: 200,
    requests: heavy.flatMap((user) => user.agents.slice(100, 110).map((id) => ({
      method: 'PATCH',
      path: `/api/v1/agents/${id}`,
      headers: jsonHeaders(user.tokens[0]),
      body: JSON.stringify({ name: 'renamed agent', hasMemory: true }),
    }))),
  };
  const signIn: Load = {
    expectStatus: 200,
    requests: main.users.map((user) => ({
      method: 'POST',
      path: '/api/v1/auth/sign-in',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: PASSWORD }),
    })),
  };
  const signInStorm: Load = { ...signIn, connections: SIGN_IN_STORM };
  // Each connection's sign-in still runs after the load generator stops (the server drains them before
  // the next run, at a few hashes a second): --quick keeps that short with fewer connections.
  if (OPTS.quick) signIn.connections = 10;

  const cases: CaseResult[] = [];
  const simple = async (key: CaseKey, title: string, load: Load, seconds = OPTS.duration) => {
    if (!wants(key)) return;
    for (const proc of [service, baseline]) await probe(proc.url, load.requests[0], load.expectStatus, `${proc.name} ${title}`);
    cases.push(await compare(key, title, service, baseline, (proc, s) => measure(proc, load, s), undefined, seconds));
  };
  // A sign-in takes a good part of a second on this kind of machine: give those cases a few seconds even in --quick.
  const signInSeconds = Math.max(OPTS.duration, OPTS.quick ? 2 : 3);

  await simple('get-agent', 'GET /agents/{id}', getAgent);
  await simple('list-agents', 'GET /agents?limit=100', listAgents);
  await simple('post-tool', 'POST /tools', postTool);
  await simple('post-agent', 'POST /agents (2 tags, prompt)', postAgent);
  await simple('patch-agent', 'PATCH /agents/{id}', patchAgent);
  // Password hashing is the memory-hungry part (scrypt, 32 MiB per hash at the default cost): note the peak before it.
  const beforeSignIns = { service: memoryOf(service.pid), baseline: memoryOf(baseline.pid) };
  await simple('sign-in', 'POST /auth/sign-in', signIn, signInSeconds);
  if (wants('get-agent-during-sign-ins')) {
    const title = `GET /agents/{id} during ${SIGN_IN_STORM} sign-ins`;
    cases.push(
      await compare('get-agent-during-sign-ins', title, service, baseline,
        (proc, seconds) => measureDuringStorm(proc, getAgent, signInStorm, seconds),
        (s, b) => ({
          serviceSignInsPerSecond: round(median(s.map((r) => (r as RunResult & { signInsPerSecond: number }).signInsPerSecond)), 1),
          baselineSignInsPerSecond: round(median(b.map((r) => (r as RunResult & { signInsPerSecond: number }).signInsPerSecond)), 1),
        }),
        signInSeconds),
    );
  }

  const memory = { service: memoryOf(service.pid), baseline: memoryOf(baseline.pid), beforeSignIns };
  log(`peak RSS: service ${memory.service?.peakRssMiB} MiB, baseline ${memory.baseline?.peakRssMiB} MiB`);
  await stopProcess(service);
  await stopProcess(baseline);

  // ---- GET /agents?limit=100 at 1,000 and 100,000 agents ----
  let scaling: Record<string, unknown> | undefined;
  const scaleProcs: { agents: number; service: Proc; baseline: Proc }[] = [];
  if (wants('list-scaling')) {
    for (const s of scale) {
      const svc = await startService(`service@${s.agents}`, s.path);
      const base = await startBaseline(`baseline@${s.agents}`, s.path, synchronous);
      log(`${svc.name} up: first answer after ${svc.spawnToFirstAnswerMs} ms`);
      scaleProcs.push({ agents: s.agents, service: svc, baseline: base });
    }
    // Pages from all over the caller's list: the first page and keyset pages (?after=) spread to the end.
    const loadFor = (s: (typeof scale)[number]): Load => {
      const positions = Array.from({ length: 10 }, (_, i) => Math.floor((i * (s.agents - 100)) / 9 / 100) * 100);
      return {
        expectStatus: 200,
        requests: positions.flatMap((position, i) => {
          const token = s.user.tokens[i % s.user.tokens.length];
          const path = position === 0 ? '/api/v1/agents?limit=100' : `/api/v1/agents?limit=100&after=${s.user.agents[position - 1]}`;
          return [{ method: 'GET', path, headers: bearer(token) }];
        }),
      };
    };
    const perSize: CaseResult[] = [];
    for (const [i, s] of scale.entries()) {
      const procs = scaleProcs[i];
      const load = loadFor(s);
      for (const proc of [procs.service, procs.baseline]) await probe(proc.url, load.requests[load.requests.length - 1], 200, `${proc.name} list`);
    }
    // Alternate sizes within each round as well: warm-ups first, then rounds of small, large, large, small…
    if (OPTS.warmup > 0) log('list scaling: warm-up');
    for (const [i, s] of OPTS.warmup > 0 ? scale.entries() : []) {
      for (const proc of [scaleProcs[i].service, scaleProcs[i].baseline]) await measure(proc, loadFor(s), OPTS.warmup);
    }
    const rounds = scale.map(() => ({ s: [] as RunResult[], b: [] as RunResult[] }));
    for (let round = 0; round < OPTS.rounds; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const procs = scaleProcs[i];
        rounds[i].s.push(await measure(procs.service, loadFor(scale[i]), OPTS.duration));
        rounds[i].b.push(await measure(procs.baseline, loadFor(scale[i]), OPTS.duration));
      }
      log(`list scaling: round ${round + 1}/${OPTS.rounds}: service ${scale.map((s, i) => `${s.agents}: ${rounds[i].s[round].rps} req/s`).join(', ')}`);
    }
    for (const [i, s] of scale.entries()) {
      const sv = side(rounds[i].s);
      const bl = side(rounds[i].b);
      const problems = [...rounds[i].s, ...rounds[i].b].some((r) => r.non2xx > 0 || r.errors > 0) ? ['unexpected statuses or errors'] : [];
      const ratios = rounds[i].s.map((r, k) => r.rps / rounds[i].b[k].rps);
      const loads = [...rounds[i].s, ...rounds[i].b].map((r) => r.otherLoad).filter((x): x is number => x !== null);
      perSize.push({
        key: 'list-scaling',
        title: `GET /agents?limit=100 at ${fmt(s.agents)} agents`,
        service: sv,
        baseline: bl,
        ratio: round(sv.rps / bl.rps, 2),
        ratioSpread: [round(Math.min(...ratios), 2), round(Math.max(...ratios), 2)],
        otherLoad: loads.length ? Math.max(...loads) : null,
        problems,
      });
    }
    cases.push(...perSize);
    const perRound = rounds[0].s.map((r, k) => r.rps / rounds[1].s[k].rps);
    scaling = {
      meaning: 'a database holding N agents, all owned by the caller; pages of 100 from the start and via ?after= spread over the whole list',
      slowdown: round(perSize[0].service.rps / perSize[1].service.rps, 2),
      slowdownSpread: [round(Math.min(...perRound), 2), round(Math.max(...perRound), 2)],
      baselineSlowdown: round(perSize[0].baseline.rps / perSize[1].baseline.rps, 2),
    };
    for (const procs of scaleProcs) {
      (procs as { memory?: unknown }).memory = memoryOf(procs.service.pid);
      (procs as { baselineMemory?: unknown }).baselineMemory = memoryOf(procs.baseline.pid);
      await stopProcess(procs.service);
      await stopProcess(procs.baseline);
    }
  }

  // ---- targets ----
  const byKey = (key: CaseKey) => cases.find((c) => c.key === key);
  const targets: Target[] = [];
  const clean = (c: CaseResult) => c.problems.length === 0;
  const get = byKey('get-agent');
  if (get) {
    targets.push({ target: 'GET /agents/{id} ≥ 0.60 of baseline req/s', measured: `${get.ratio} (rounds ${get.ratioSpread.join('–')})`, pass: clean(get) && get.ratio >= 0.6 });
    targets.push({ target: 'GET /agents/{id} p99 ≤ 5 ms @50 conns', measured: `${get.service.p99} ms`, pass: clean(get) && get.service.p99 <= 5 });
  }
  const tool = byKey('post-tool');
  if (tool) targets.push({ target: 'POST /tools ≥ 0.60 of baseline insert req/s', measured: `${tool.ratio} (rounds ${tool.ratioSpread.join('–')})`, pass: clean(tool) && tool.ratio >= 0.6 });
  if (statements) {
    const first = ['GET /agents?limit=1', 'GET /agents?limit=10', 'GET /agents?limit=100'].map((k) => statements![k]);
    const after = ['GET /agents?limit=1&after=', 'GET /agents?limit=100&after='].map((k) => statements![k]);
    const constant = first.every((n) => n === first[0]) && after.every((n) => n === after[0]);
    targets.push({
      target: 'GET /agents: constant SQL statements per page',
      measured: `${first.join(' / ')} for pages of 1 / 10 / 100 agents; ${after.join(' / ')} for 1 / 100 after a cursor`,
      pass: constant,
    });
  }
  if (scaling) {
    targets.push({
      target: 'GET /agents?limit=100 req/s at 1k ≤ 1.5× at 100k',
      measured: `${scaling.slowdown}× (rounds ${(scaling.slowdownSpread as number[]).join('–')})`,
      pass: (scaling.slowdown as number) <= 1.5 && cases.filter((c) => c.key === 'list-scaling').every(clean),
    });
  }
  const storm = byKey('get-agent-during-sign-ins');
  if (storm) targets.push({ target: `GET /agents/{id} p99 < 50 ms during ${SIGN_IN_STORM} sign-ins`, measured: `${storm.service.p99} ms`, pass: clean(storm) && storm.service.p99 < 50 });
  const serviceMemory = [memory.service, ...scaleProcs.map((p) => (p as { memory?: ReturnType<typeof memoryOf> }).memory)].filter((m) => m !== undefined);
  const peakRss = serviceMemory.length ? Math.max(...serviceMemory.map((m) => m!.peakRssMiB)) : NaN;
  targets.push({ target: 'peak RSS < 150 MB through the benchmark', measured: `${fmt(peakRss * 1.048576)} MB (${peakRss} MiB)`, pass: peakRss * 1.048576 < 150 });
  const starts = [service, ...scaleProcs.map((p) => p.service)];
  const slowestStart = Math.max(...starts.map((p) => p.spawnToFirstAnswerMs));
  targets.push({ target: 'first answered request ≤ 1.5 s after start', measured: `${fmt(slowestStart)} ms (${starts.map((p) => `${p.name} ${fmt(p.spawnToFirstAnswerMs)}`).join(', ')})`, pass: slowestStart <= 1500 });

  // ---- profile summary ----
  let profileSummary: string[] | undefined;
  if (OPTS.cpuProf) {
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread (tsx's loader has its own).
    const fresh = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile') && f.includes(`.${service.pid}.0.`) && !profilesBefore.has(f));
    if (fresh.length) {
      const file = join(profileDir, fresh.sort().at(-1)!);
      profileSummary = [`CPU profile of the service's main thread: ${file} (self time; share of the non-idle time)`, '', '| self | time | function |', '|---:|---:|---|', ...summariseProfile(file)];
    }
  }

  // ---- report ----
  const lines: string[] = [];
  lines.push(`## Benchmark ${startedAt.toISOString()}${OPTS.quick ? ' (quick smoke run: figures are not meaningful)' : ''}${OPTS.cpuProf ? ' (service under --cpu-prof: figures are skewed)' : ''}`);
  lines.push('');
  lines.push(`${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.os}; load generator autocannon in the same machine, ${OPTS.connections} connections; `
    + `${OPTS.rounds} round(s) × ${OPTS.duration} s per server (sign-in cases ${signInSeconds} s${OPTS.quick ? ', sign-in with 10 connections' : ''}) ${OPTS.warmup > 0 ? `after a ${OPTS.warmup} s warm-up` : 'without warm-up'}, `
    + `service and baseline alternating; figures are medians of the rounds, latency in ms. `
    + `Baseline: plain node:http + better-sqlite3 doing the same work (synchronous=${synchronous}).`);
  lines.push('');
  lines.push('| case | service req/s | p50 | p99 | baseline req/s | p50 | p99 | ratio | ratio per round | other load |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const c of cases) {
    const warn = c.problems.length ? ' ⚠' : '';
    lines.push(`| ${c.title}${warn} | ${fmt(c.service.rps)} | ${fmt(c.service.p50, 2)} | ${fmt(c.service.p99, 2)} | ${fmt(c.baseline.rps)} | ${fmt(c.baseline.p50, 2)} | ${fmt(c.baseline.p99, 2)} | ${fmt(c.ratio, 2)} | ${c.ratioSpread.map((x) => fmt(x, 2)).join('–')} | ${c.otherLoad === null ? 'n/a' : `${Math.round(c.otherLoad * 100)}%`} |`);
  }
  if (get) {
    const m = (rounds: RunResult[], key: 'serverCores' | 'generatorCores') => round(median(rounds.map((r) => r[key] ?? NaN)), 2);
    lines.push('', `CPU during GET /agents/{id} (cores of ${machine.cpus}): service ${m(get.service.rounds, 'serverCores')} + autocannon ${m(get.service.rounds, 'generatorCores')}; `
      + `baseline ${m(get.baseline.rounds, 'serverCores')} + autocannon ${m(get.baseline.rounds, 'generatorCores')}. `
      + `With ${OPTS.connections} connections always busy, mean latency is ${OPTS.connections}/req/s (Little's law).`);
  }
  if (storm?.extra) lines.push('', `Sign-ins completed during the storm: service ${storm.extra.serviceSignInsPerSecond}/s, baseline ${storm.extra.baselineSignInsPerSecond}/s.`);
  if (scaling) lines.push('', `List scaling ("at N agents" = ${scaling.meaning}): 1k/100k req/s = ${scaling.slowdown} for the service, ${scaling.baselineSlowdown} for the baseline.`);
  lines.push('', `Peak RSS (VmHWM): service ${memory.service?.peakRssMiB ?? 'n/a'} MiB after all main cases (${beforeSignIns.service?.peakRssMiB ?? 'n/a'} MiB before the sign-in cases), `
    + `baseline ${memory.baseline?.peakRssMiB ?? 'n/a'} MiB (${beforeSignIns.baseline?.peakRssMiB ?? 'n/a'} MiB); at start (idle): service ${service.rssAtStartMiB} MiB, baseline ${baseline.rssAtStartMiB} MiB`
    + `${scaleProcs.length ? `; list-scaling services ${scaleProcs.map((p) => `${p.agents}: ${(p as { memory?: { peakRssMiB: number } }).memory?.peakRssMiB ?? 'n/a'} MiB`).join(', ')}` : ''}. `
    + `Start-up: spawn → listening ${fmt(service.spawnToListeningMs)} ms, → first answered GET /healthz ${fmt(service.spawnToFirstAnswerMs)} ms (10k-agent database).`);
  if (statements) lines.push('', `SQL statements per request: ${Object.entries(statements).map(([k, n]) => `${k} ${n}`).join(', ')}.`);
  const problems = cases.flatMap((c) => c.problems.map((p) => `${c.title}: ${p}`));
  if (problems.length) lines.push('', '⚠ ' + problems.join('; '));
  const loads = cases.map((c) => c.otherLoad).filter((x): x is number => x !== null);
  if (loads.some((x) => x > 0.1)) lines.push('', `⚠ Other processes used up to ${Math.round(Math.max(...loads) * 100)}% of the machine's CPU during some runs; those figures are depressed.`);
  lines.push('', '| target | measured | result |', '|---|---|---|');
  for (const t of targets) lines.push(`| ${t.target} | ${t.measured} | ${t.pass ? 'PASS' : '**FAIL**'} |`);
  if (profileSummary) lines.push('', ...profileSummary);
  process.stdout.write(`${lines.join('\n')}\n`);

  const results = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    options: OPTS,
    machine: { ...machine, loadAverageAtEnd: os.loadavg().map((x) => round(x, 2)) },
    baselineSynchronous: synchronous,
    seed: { main: { ms: main.ms, counts: main.counts }, scale: scale.map((s) => ({ agents: s.agents, ms: s.ms })) },
    startup: Object.fromEntries(starts.map((p) => [p.name, { spawnToListeningMs: p.spawnToListeningMs, spawnToFirstAnswerMs: p.spawnToFirstAnswerMs, rssAtStartMiB: p.rssAtStartMiB }])),
    memory: {
      ...memory,
      scale: scaleProcs.map((p) => ({ agents: p.agents, service: (p as { memory?: object }).memory, baseline: (p as { baselineMemory?: object }).baselineMemory })),
    },
    statements,
    scaling,
    cases,
    targets,
    profileSummary,
  };
  writeFileSync(argv.out!, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${resolve(argv.out!)}`);
}

let tempDir: string | undefined;

main().then(
  () => 0,
  (error: unknown) => {
    process.stderr.write(`bench failed: ${(error as Error)?.stack ?? String(error)}\n`);
    return 1;
  },
).then((code) => {
  for (const child of children) child.kill('SIGKILL');
  if (tempDir && argv.keep) log(`kept ${tempDir}`);
  else if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  process.exit(code);
});
