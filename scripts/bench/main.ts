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
// Each case is a module in cases/ (what it measures is said at its top), run from the table below
// (case.ts says how): the cases on the main database beside the shared servers first
// (shared-servers.ts), then the cases that start servers of their own. This file parses nothing
// itself (options.ts does), runs the selected cases, then prints the tables and the targets and
// writes every figure to the results file (--out).
//
// Figures drift ±10% between runs and move with whatever else the machine runs: the "other load"
// column estimates the share of CPU that processes outside the benchmark used meanwhile.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { hashPassword } from '../../src/auth/password.js';
import { MIN_SCRYPT } from '../../src/config.js';
import { CASE_KEYS, OPTS, PASSWORD, log, round, wants } from './options.js';
import { killAll } from './processes.js';
import type { Comparison } from './load.js';
import type { InProcessCase } from './in-process.js';
import { benchReport, type CaseReport, type Target } from './report.js';
import { createContext } from './context.js';
import { seedMainDatabase, startSharedServers, stopSharedServers } from './shared-servers.js';
import type { BenchCase, SharedCase } from './case.js';
import { getAgent } from './cases/get-agent.js';
import { listAgents } from './cases/list-agents.js';
import { postTool } from './cases/post-tool.js';
import { postAgent } from './cases/post-agent.js';
import { patchAgent } from './cases/patch-agent.js';
import { inProcess } from './cases/in-process.js';
import { fixedRate } from './cases/fixed-rate.js';
import { signIn } from './cases/sign-in.js';
import { signInFlood } from './cases/sign-in-flood.js';
import { scale } from './cases/scale.js';
import { searchScale } from './cases/search-scale.js';
import { agentRuns } from './cases/agent-runs.js';
import { openaiApi } from './cases/openai-api.js';
import { durableRuns } from './cases/durable-runs.js';
import { webhooks } from './cases/webhooks.js';
import { mcp } from './cases/mcp.js';
import { uploads } from './cases/uploads.js';

/** Every case, in the order they run (and report). */
const CASES: BenchCase[] = [
  getAgent,
  listAgents,
  postTool,
  postAgent,
  patchAgent,
  inProcess,
  fixedRate,
  signIn,
  signInFlood,
  scale,
  searchScale,
  agentRuns,
  openaiApi,
  durableRuns,
  webhooks,
  mcp,
  uploads,
];
if (CASES.map((c) => c.name).join() !== CASE_KEYS.join())
  throw new Error('the table of cases and CASE_KEYS (options.ts) name different cases');

let tempDir: string | undefined;

async function main(): Promise<void> {
  const startedAt = new Date();
  const dir = (tempDir = mkdtempSync(join(os.tmpdir(), 'ams-bench-')));
  log(
    `temporary databases in ${dir}; ${OPTS.quick ? 'quick' : 'full'} run: ${OPTS.rounds} round(s) of ${OPTS.duration} s, warm-up ${OPTS.warmup} s, ${OPTS.connections} connections`,
  );
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

  const rows: Comparison[] = [];
  const inProcessRows: InProcessCase[] = [];
  const targets: Target[] = [];
  const notes: string[] = [];
  const results: Record<string, unknown> = {};
  const gather = (report: CaseReport) => {
    rows.push(...(report.rows ?? []));
    inProcessRows.push(...(report.inProcessRows ?? []));
    targets.push(...(report.targets ?? []));
    notes.push(...(report.notes ?? []));
    Object.assign(results, report.results);
  };
  /** Once a case is over: it reported the targets it declares, no more, no fewer. */
  const reportedBy = new Map<BenchCase, string[]>();
  const take = (c: BenchCase, report: CaseReport) => {
    reportedBy.set(c, [...(reportedBy.get(c) ?? []), ...(report.targets ?? []).map((t) => t.target)]);
    gather(report);
  };
  const over = (c: BenchCase) => {
    const reported = reportedBy.get(c) ?? [];
    if (reported.join('\n') !== c.targets.join('\n'))
      throw new Error(`case ${c.name} reported the targets ${JSON.stringify(reported)}, declared ${JSON.stringify(c.targets)}`);
  };

  const selected = CASES.filter((c) => wants(c.name));
  const shared = selected.filter((c): c is SharedCase => c.uses === 'shared servers');
  let idleRssMiB: number | undefined;
  if (shared.length) {
    const { main, report } = seedMainDatabase(ctx);
    gather(report);
    for (const c of shared) if (c.beforeServers) take(c, await c.beforeServers({ ...ctx, main }));
    const servers = await startSharedServers(ctx, main);
    idleRssMiB = servers.idleRssMiB;
    for (const c of shared) if (c.run) take(c, await c.run({ ...ctx, main, servers }));
    gather(await stopSharedServers(ctx, servers));
    shared.forEach(over);
  }
  for (const c of selected) {
    if (c.uses !== 'own servers') continue;
    take(c, await c.run(ctx));
    over(c);
  }

  targets.push(...runTargets(idleRssMiB));
  process.stdout.write(`${benchReport(startedAt, machine, { rows, inProcessRows, notes, targets }, profiles).join('\n')}\n`);
  if (profiles.length) results.profile = profiles;
  writeFileSync(
    OPTS.out,
    `${JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        options: OPTS,
        machine: { ...machine, loadAverageAtEnd: os.loadavg().map((x) => round(x, 2)) },
        startup: startup(),
        peaksMiB: peaksMiB(),
        idleRssMiB,
        cases: rows,
        targets,
        ...results,
      },
      null,
      2,
    )}\n`,
  );
  log(`wrote ${resolve(OPTS.out)}`);
}

main()
  .then(
    () => 0,
    (error: unknown) => {
      process.stderr.write(`bench failed: ${(error as Error)?.stack ?? String(error)}\n`);
      return 1;
    },
  )
  .then((code) => {
    killAll();
    if (tempDir && OPTS.keep) log(`kept ${tempDir}`);
    else if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    process.exit(code);
  });
