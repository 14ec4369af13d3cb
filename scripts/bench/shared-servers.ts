// The main database and the servers the cases on it share (case.ts says in which order they run):
// the service on the database itself, bare Koa and plain node:http each on a copy. Plus what those
// cases have in common: a closed-loop measurement of the three, the loads of GET /agents/{id} and
// POST /tools (measured closed and open loop), and the target against bare Koa.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPTS, log, sleep, type CaseKey } from './options.js';
import { MAIN_PLAN, seedAgents, type SeededUser } from './seed.js';
import { memoryOf, startReference, type Proc } from './processes.js';
import { bearer, compare, jsonHeaders, measure, probe, type Comparison, type Load } from './load.js';
import type { BenchContext } from './context.js';
import type { CaseReport, Target } from './report.js';

export interface MainDatabase {
  path: string;
  /** 200 users: 40 with 200 agents, 160 with 12-13 (seed.ts, MAIN_PLAN). */
  users: SeededUser[];
  /** The 40 users with 200 agents. */
  heavy: SeededUser[];
  /** A copy of the database for one server; made before the shared servers start (they write to it). */
  copy(suffix: string): string;
}

export function seedMainDatabase(ctx: BenchContext): { main: MainDatabase; report: CaseReport } {
  const seeded = seedAgents(join(ctx.dir, 'main.db'), MAIN_PLAN, ctx.passwordHash);
  log(`seeded the main database in ${seeded.ms} ms: ${JSON.stringify(seeded.counts)}`);
  const main: MainDatabase = {
    path: seeded.path,
    users: seeded.users,
    heavy: seeded.users.slice(0, 40),
    copy(suffix) {
      const path = seeded.path.replace(/\.db$/, `-${suffix}.db`);
      copyFileSync(seeded.path, path);
      return path;
    },
  };
  return { main, report: { results: { mainSeed: { ms: seeded.ms, counts: seeded.counts } } } };
}

export interface SharedServers {
  service: Proc;
  koa: Proc;
  plain: Proc;
  /** The three, the service first: the sides of a closed-loop case. */
  all: Proc[];
  /** A copy of the database as seeded, for the service the fixed-rate case starts with its request log on. */
  loggedDb: string;
  /** The service's resident memory a second after it started (MiB). */
  idleRssMiB: number | undefined;
}

export async function startSharedServers(ctx: BenchContext, main: MainDatabase): Promise<SharedServers> {
  // Each server on its own copy of the database: no server's writes (or its 5-second flush of
  // token uses) can meet another's transaction.
  const koaDb = main.copy('koa');
  const plainDb = main.copy('plain');
  const loggedDb = main.copy('logged');
  const service = await ctx.service('service', main.path, { nodeArgs: ctx.profileArgs });
  await sleep(1000);
  const idleRssMiB = memoryOf(service.pid)?.rssMiB;
  const koa = await startReference('koa', 'bare Koa', koaDb, {}, { nodeArgs: ctx.profileArgs });
  // The plain reference and the logged service carry the loop monitor for the fixed-rate cases.
  const plain = await startReference('plain', 'plain', plainDb, {}, { monitor: true });
  return { service, koa, plain, all: [service, koa, plain], loggedDb, idleRssMiB };
}

export async function stopSharedServers(ctx: BenchContext, servers: SharedServers): Promise<CaseReport> {
  const mainMemory = Object.fromEntries(servers.all.map((p) => [p.name, memoryOf(p.pid)]));
  for (const proc of servers.all) await ctx.stop(proc);
  if (OPTS.cpuProf) for (const proc of [servers.service, servers.koa]) ctx.summariseProfileOf(proc);
  return { results: { mainMemory } };
}

/** A closed-loop case on the three shared servers: a probe of each, then the rounds (load.ts, compare). */
export async function closedLoop(
  servers: SharedServers,
  key: CaseKey,
  title: string,
  load: Load,
  seconds = OPTS.duration,
): Promise<Comparison> {
  const procs = servers.all;
  for (const proc of procs) await probe(proc, load.requests[0], load.expectStatus);
  const result = await compare(key, title, procs, (proc, s) => measure(proc, load, s), { seconds, settle: load.settle });
  // Each server's memory after the case: which case raises the floor the peak RSS stands on.
  const memory = procs.map((proc) => ({ name: proc.name, ...memoryOf(proc.pid) }));
  log(
    `${title}: RSS after the case: ${memory.map((m) => `${m.name} ${m.rssMiB} MiB (anon ${m.anonMiB}, file ${m.fileMiB}; peak so far ${m.peakRssMiB})`).join(', ')}`,
  );
  return result;
}

/** GET /agents/{id}: each user's first 10 agents. */
export const getAgentLoad = (main: MainDatabase): Load => ({
  expectStatus: 200,
  requests: main.users.flatMap((user) =>
    user.agents.slice(0, 10).map((id) => ({ method: 'GET', path: `/api/v1/agents/${id}`, headers: bearer(user.tokens[0]) })),
  ),
});

/** POST /tools: a SEARCH tool with a secret, one request per user. */
export const postToolLoad = (main: MainDatabase): Load => ({
  expectStatus: 201,
  requests: main.users.map((user) => ({
    method: 'POST',
    path: '/api/v1/tools',
    headers: jsonHeaders(user.tokens[0]),
    body: JSON.stringify({ name: 'bench search', type: 'SEARCH', metadata: { api_key: 'secret' } }),
  })),
});

/** `target`: the service's req/s at least 0.90 of bare Koa's (median of the rounds), with no problem in the rounds. */
export function bareKoaTarget(target: string, c: Comparison): Target {
  return {
    target,
    measured:
      `${c.ratios['bare Koa'].median} (rounds ${c.ratios['bare Koa'].spread.join('–')}), by CPU per request ${c.ratios['bare Koa'].cpu}; ` +
      `÷ plain node:http ${c.ratios.plain.median}, by CPU ${c.ratios.plain.cpu}`,
    pass: c.problems.length === 0 && c.ratios['bare Koa'].median >= 0.9,
  };
}
