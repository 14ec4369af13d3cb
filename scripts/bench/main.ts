// `npm run bench`: measures the service against two references doing the same work per request
// (bare Koa + @koa/router + koa-bodyparser, and plain node:http; see reference-work.ts) and checks
// its targets, printing each with PASS/FAIL.
//
//   npm run bench                       full run (about 20 minutes: it seeds a million agents and a million chunks)
//   npm run bench -- --quick            smoke run: 1 round of 1 s per case, no warm-up, 100,000-row scale cases
//   npm run bench -- --only get-agent,post-tool --rounds 5 --duration 8
//   npm run bench -- --cpu-prof --only get-agent   also profile the service and the bare-Koa reference
//                                                  (bench-profiles/) and print their hottest functions by self time
//
// Cases (--only): get-agent, list-agents, post-tool, post-agent, patch-agent (closed loop, 50
// connections, service ÷ bare Koa and ÷ plain); in-process (GET /agents/{id} and POST /tools through
// the service's Koa app and the bare-Koa app in one process of their own (a child of the bench),
// no network: CPU per request, see in-process.ts); fixed-rate (open loop: GET /agents/{id} at 1,000/s,
// POST /tools at 300/s, the service with its request log on, as in production); sign-in;
// sign-in-flood (a legitimate sign-in during a flood from many addresses); scale (GET by id and
// pages at 1,000 vs a million agents in one file); search-scale (one user's searches while other
// users' chunks grow tenfold); agent-runs (agents run against a fake OpenAI-compatible model
// answering at once, scripts/bench/fake-model.ts: invoke throughput vs plain node:http making the
// same upstream call and writing the same run row; time to the first token of a streamed run vs
// asking the model directly; GET /agents/{id} at 1,000/s offered, idle vs 100 open streams).
//
// Figures drift ±10% between runs and move with whatever else the machine runs: the "other load"
// column estimates the share of CPU that processes outside the benchmark used meanwhile.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { hashPassword } from '../../src/auth/password.js';
import { MIN_SCRYPT } from '../../src/config.js';
import { OPTS, PASSWORD, fmt, log, median, round, sleep, wants, type CaseKey } from './options.js';
import { MAIN_PLAN, databaseMiB, scalePlan, seedAgents, seedSearch, type Seeded } from './seed.js';
import type { InProcessCase } from './in-process.js';
import { inProcessInChild, killAll, memoryOf, startReference, type Proc } from './processes.js';
import { bearer, compare, jsonHeaders, measure, paced, probe, runLoad, waitIdle, type Comparison, type Load, type PacedResult } from './load.js';
import { countStatements } from './statements.js';
import { benchReport, type CaseReport, type Target } from './report.js';
import { createContext } from './context.js';
import type { BenchCase } from './case.js';
import { closedLoop as sharedClosedLoop, getAgentLoad, postToolLoad, seedMainDatabase, startSharedServers, stopSharedServers } from './shared-servers.js';
import { getAgent } from './cases/get-agent.js';
import { agentRuns } from './cases/agent-runs.js';
import { scale } from './cases/scale.js';
import { signInFlood } from './cases/sign-in-flood.js';
import { searchScale } from './cases/search-scale.js';

let tempDir: string | undefined;

async function main(): Promise<void> {
  const startedAt = new Date();
  const dir = (tempDir = mkdtempSync(join(os.tmpdir(), 'ams-bench-')));
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

  log('hashing the seed password at the service default cost');
  const passwordHash = await hashPassword(PASSWORD, MIN_SCRYPT);
  const { ctx, runTargets, profiles, startup, peaksMiB } = createContext(dir, passwordHash);
  const { service, stop, profileArgs, summariseProfileOf } = ctx;
  const cases: Comparison[] = [];
  const inProcessRows: InProcessCase[] = [];
  const targets: Target[] = [];
  const notes: string[] = [];
  const results: Record<string, unknown> = {};
  /** Gathers what a case reports, checking that it reports the targets it declares. */
  const take = (c: BenchCase, report: CaseReport) => {
    const reported = (report.targets ?? []).map((t) => t.target);
    if (reported.join('\n') !== c.targets.join('\n')) {
      throw new Error(`case ${c.name} reported the targets ${JSON.stringify(reported)}, declared ${JSON.stringify(c.targets)}`);
    }
    cases.push(...(report.rows ?? []));
    inProcessRows.push(...(report.inProcessRows ?? []));
    targets.push(...(report.targets ?? []));
    notes.push(...(report.notes ?? []));
    Object.assign(results, report.results);
  };

  // ---- the main database, the service and the two references ----
  const mainCases: CaseKey[] = ['get-agent', 'list-agents', 'post-tool', 'post-agent', 'patch-agent', 'in-process', 'fixed-rate', 'sign-in'];
  let idleRssMiB: number | undefined;
  if (mainCases.some(wants)) {
    const seededMain = seedMainDatabase(ctx);
    const { main } = seededMain;
    Object.assign(results, seededMain.report.results);
    const { heavy } = main;

    if (wants('list-agents')) {
      const statements = await countStatements(main.path, heavy[0]);
      log(`SQL statements per request: ${JSON.stringify(statements)}`);
      results.statements = statements;
      const first = ['GET /agents?limit=1', 'GET /agents?limit=10', 'GET /agents?limit=100'].map((k) => statements[k]);
      const after = ['GET /agents?limit=1&after=', 'GET /agents?limit=100&after='].map((k) => statements[k]);
      targets.push({
        target: 'GET /agents: the same number of SQL statements for any page size',
        measured: `${first.join(' / ')} for pages of 1 / 10 / 100; ${after.join(' / ')} for 1 / 100 after a cursor`,
        pass: first.every((n) => n === first[0]) && after.every((n) => n === after[0]),
      });
    }

    // Before any server starts: nothing else runs meanwhile.
    if (wants('in-process')) {
      log('in process: the service app and the bare-Koa app, alternating');
      const inProcessCases = await inProcessInChild(main.copy('in-process'), main.users);
      inProcessRows.push(...inProcessCases);
      for (const c of inProcessCases) log(`in process: ${c.title}: service ${c.serviceUs} µs, bare Koa ${c.bareUs} µs of CPU per request`);
      results.inProcess = inProcessCases;
    }
    const servers = await startSharedServers(ctx, main);
    idleRssMiB = servers.idleRssMiB;
    const { plain, loggedDb } = servers;
    const procs = servers.all;

    const getAgentLoad_ = getAgentLoad(main);
    const listAgents: Load = {
      expectStatus: 200,
      requests: heavy.flatMap((user) => [
        { method: 'GET', path: '/api/v1/agents?limit=100', headers: bearer(user.tokens[0]) },
        { method: 'GET', path: `/api/v1/agents?limit=100&after=${user.agents[99]}`, headers: bearer(user.tokens[0]) },
      ]),
    };
    const postTool = postToolLoad(main);
    const postAgent: Load = {
      expectStatus: 201,
      requests: main.users.map((user) => ({
        method: 'POST', path: '/api/v1/agents', headers: jsonHeaders(user.tokens[0]),
        body: JSON.stringify({
          name: 'bench agent', type: 'REACT', llm: { model: 'gpt-4o', provider: 'openai', apiKey: 'sk-bench' },
          hasMemory: true, promptId: user.prompts[0], tags: [user.tags[0], user.tags[1]],
        }),
      })),
    };
    const patchAgent: Load = {
      expectStatus: 200,
      requests: heavy.flatMap((user) => user.agents.slice(100, 110).map((id) => ({
        method: 'PATCH', path: `/api/v1/agents/${id}`, headers: jsonHeaders(user.tokens[0]),
        body: JSON.stringify({ name: 'renamed agent', hasMemory: true }),
      }))),
    };
    const signIn: Load = {
      expectStatus: 200,
      // Each connection's sign-in still runs after the load generator stops: few connections, and
      // no unmeasured run right before a measured one (its hashes would still be running in it).
      // Two, because the service hashes one password at a time and refuses at once (503) a check
      // that would wait, its own hash included, more than about a second: with 10 connections it
      // answered ~1,800 such 503s a second between its hashes, and the case measured that guard
      // (the sign-in-flood case does) instead of sign-ins.
      connections: 2,
      settle: 0,
      requests: main.users.map((user) => ({
        method: 'POST', path: '/api/v1/auth/sign-in', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: user.email, password: PASSWORD }),
      })),
    };

    const closedLoop = async (key: CaseKey, title: string, load: Load, seconds = OPTS.duration) => {
      if (!wants(key)) return;
      const result = await sharedClosedLoop(servers, key, title, load, seconds);
      cases.push(result);
      return result;
    };
    if (wants('get-agent')) take(getAgent, await getAgent.run!({ ...ctx, main, servers }));
    await closedLoop('list-agents', 'GET /agents?limit=100', listAgents);
    const tool = await closedLoop('post-tool', 'POST /tools', postTool);
    await closedLoop('post-agent', 'POST /agents (2 tags, prompt)', postAgent);
    await closedLoop('patch-agent', 'PATCH /agents/{id}', patchAgent);
    for (const [c, name] of [[tool, 'POST /tools']] as const) {
      if (!c) continue;
      const clean = c.problems.length === 0;
      targets.push({
        target: `${name} ≥ 0.90 of bare Koa req/s (median of rounds)`,
        measured: `${c.ratios['bare Koa'].median} (rounds ${c.ratios['bare Koa'].spread.join('–')}), by CPU per request ${c.ratios['bare Koa'].cpu}; `
          + `÷ plain node:http ${c.ratios.plain.median}, by CPU ${c.ratios.plain.cpu}`,
        pass: clean && c.ratios['bare Koa'].median >= 0.9,
      });
    }
    if (wants('fixed-rate')) {
      // The service as it runs in production: the request log on (its `ms` is the service's own time).
      const logged = await service('service (request log on)', loggedDb, { logRequests: true, monitor: true });
      const rates: [string, Load, number][] = [['GET /agents/{id}', getAgentLoad_, 1000], ['POST /tools', postTool, 300]];
      const seconds = Math.max(OPTS.duration, OPTS.quick ? 2 : 5);
      const fixed: Record<string, unknown> = {};
      for (const [title, load, rate] of rates) {
        const result = await compare('fixed-rate', `${title} at ${fmt(rate)} req/s offered`, [logged, plain], (proc, s) => paced(proc, load, rate, s), {
          seconds,
          settle: 0, // paced() settles each run itself
          rounds: OPTS.openLoopRounds,
        });
        const [s, b] = result.raw as PacedResult[][];
        const serviceP99 = median(s.map((r) => r.p99));
        const baselineP99 = median(b.map((r) => r.p99));
        const inside = s.map((r) => r.inside).filter((x) => x !== undefined);
        const insideP99 = inside.length ? median(inside.map((x) => x!.p99)) : NaN;
        fixed[title] = { rate, service: result.sides[0], baseline: result.sides[1], insideP50: inside.length ? median(inside.map((x) => x!.p50)) : NaN, insideP99 };
        cases.push({ ...result, title: `${title} at ${fmt(rate)}/s offered (open loop)` });
        const clean = result.problems.length === 0;
        targets.push({
          target: `${title} at ${fmt(rate)} req/s: p99 ≤ 1.5× plain node:http's at the same rate`,
          measured: `${fmt(serviceP99, 2)} ms vs ${fmt(baselineP99, 2)} ms (${fmt(serviceP99 / baselineP99, 2)}×)`,
          pass: clean && serviceP99 <= 1.5 * baselineP99,
        });
        if (title.startsWith('GET')) {
          targets.push({
            target: `${title} at ${fmt(rate)} req/s: the service's own time p99 ≤ 1 ms (request log)`,
            measured: `${fmt(insideP99, 3)} ms (p50 ${fmt(median(inside.map((x) => x!.p50)), 3)} ms)`,
            pass: clean && insideP99 <= 1,
          });
        }
      }
      results.fixedRate = fixed;
      await stop(logged);
    }

    if (wants('sign-in')) {
      const seconds = Math.max(OPTS.duration, OPTS.quick ? 2 : 3);
      await closedLoop('sign-in', `POST /auth/sign-in (${signIn.connections} connections)`, signIn, seconds);
    }

    Object.assign(results, (await stopSharedServers(ctx, servers)).results);
  }

  if (wants('sign-in-flood')) take(signInFlood, await signInFlood.run(ctx));
  if (wants('scale')) take(scale, await scale.run(ctx));
  if (wants('search-scale')) take(searchScale, await searchScale.run(ctx));
  if (wants('agent-runs')) take(agentRuns, await agentRuns.run(ctx));

  targets.push(...runTargets(idleRssMiB));
  const lines = benchReport(startedAt, machine, { rows: cases, inProcessRows, notes, targets }, profiles);
  process.stdout.write(`${lines.join('\n')}\n`);
  if (profiles.length) results.profile = profiles;
  writeFileSync(OPTS.out, `${JSON.stringify({
    startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), options: OPTS,
    machine: { ...machine, loadAverageAtEnd: os.loadavg().map((x) => round(x, 2)) },
    startup: startup(), peaksMiB: peaksMiB(), idleRssMiB, cases, targets, ...results,
  }, null, 2)}\n`);
  log(`wrote ${resolve(OPTS.out)}`);
}

main().then(
  () => 0,
  (error: unknown) => {
    process.stderr.write(`bench failed: ${(error as Error)?.stack ?? String(error)}\n`);
    return 1;
  },
).then((code) => {
  killAll();
  if (tempDir && OPTS.keep) log(`kept ${tempDir}`);
  else if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  process.exit(code);
});
