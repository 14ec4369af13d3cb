// The scale case (--only scale): GET by id and pages of one user's agents at 1,000 agents vs a
// million (--quick: 100,000) in one file, each size in a database and a service of its own.
import { join } from 'node:path';
import { OPTS, fmt, log, round } from '../options.js';
import { databaseMiB, scalePlan, seedAgents, type Seeded, type SeededUser } from '../seed.js';
import type { Proc } from '../processes.js';
import { bearer, compare, measure, probe, type Comparison, type Load } from '../load.js';
import type { OwnCase } from '../case.js';
import type { BenchContext } from '../context.js';
import type { CaseReport, Target } from '../report.js';

const sizes = [1000, OPTS.scaleAgents];

/** What is measured at both sizes, over the one user's agents (spread over the whole list). */
const LOADS: [string, (user: SeededUser) => Load][] = [
  [
    'GET /agents/{id}',
    (user) => {
      const n = user.agents.length;
      const spread = Array.from({ length: 500 }, (_, k) => user.agents[Math.floor((k * (n - 1)) / 499)]);
      return {
        expectStatus: 200,
        requests: spread.map((id, k) => ({ path: `/api/v1/agents/${id}`, headers: bearer(user.tokens[k % user.tokens.length]) })),
      };
    },
  ],
  [
    'GET /agents?limit=100 (first page)',
    (user) => ({ expectStatus: 200, requests: user.tokens.map((token) => ({ path: '/api/v1/agents?limit=100', headers: bearer(token) })) }),
  ],
  [
    'GET /agents?limit=100&after= (200 from the end)',
    (user) => ({
      expectStatus: 200,
      requests: user.tokens.map((token) => ({
        path: `/api/v1/agents?limit=100&after=${user.agents[user.agents.length - 201]}`,
        headers: bearer(token),
      })),
    }),
  ],
];
const target = (title: string) => `${title} at ${fmt(sizes[1])} agents within 1.5× of 1,000 (req/s)`;

export const scale: OwnCase = {
  name: 'scale',
  uses: 'own servers',
  targets: LOADS.map(([title]) => target(title)),
  run,
};

async function run(ctx: BenchContext): Promise<CaseReport> {
  const seededBySize: (Seeded & { mib: number })[] = [];
  for (const agents of sizes) {
    const seeded = seedAgents(join(ctx.dir, `scale-${agents}.db`), scalePlan(agents), ctx.passwordHash);
    const mib = databaseMiB(seeded.path);
    log(`seeded ${fmt(agents)} agents in ${fmt(seeded.ms)} ms: ${fmt(mib)} MiB, ${JSON.stringify(seeded.counts)}`);
    seededBySize.push({ ...seeded, mib });
  }
  const procsBySize: Proc[] = [];
  for (const [i, agents] of sizes.entries()) procsBySize.push(await ctx.service(`service@${fmt(agents)}`, seededBySize[i].path));
  const seeding = sizes.map((agents, i) => ({
    agents,
    ms: seededBySize[i].ms,
    mib: round(seededBySize[i].mib, 1),
    bytesPerAgent: Math.round((seededBySize[i].mib * 2 ** 20) / agents),
    counts: seededBySize[i].counts,
  }));
  const results: Record<string, unknown> = { seeding };
  const rows: Comparison[] = [];
  const targets: Target[] = [];
  for (const [title, loadOf] of LOADS) {
    const loads = seededBySize.map((s) => loadOf(s.users[0]));
    for (const [i, proc] of procsBySize.entries()) await probe(proc, loads[i].requests.at(-1)!, 200);
    const result = await compare('scale', `${title}: ${fmt(sizes[0])} vs ${fmt(sizes[1])} agents`, procsBySize, (proc, s) =>
      measure(proc, loads[procsBySize.indexOf(proc)], s),
    );
    rows.push(result);
    // ratios[large] = req/s at 1,000 ÷ req/s at the large size: the slowdown.
    const slowdown = Object.values(result.ratios)[0];
    const p99s = result.sides.map((s) => s.p99);
    results[title] = { slowdown, sides: result.sides.map(({ rounds, ...s }) => s) };
    targets.push({
      target: target(title),
      measured: `${slowdown.median}× (rounds ${slowdown.spread.join('–')}); p99 ${fmt(p99s[0], 2)} → ${fmt(p99s[1], 2)} ms`,
      pass: result.problems.length === 0 && slowdown.median <= 1.5,
    });
  }
  const big = seeding[1];
  const note = `Seeding ${fmt(big.agents)} agents (with their tags, tools, documents, prompts and links) in one transaction took ${fmt(big.ms / 1000, 1)} s; the file is ${fmt(big.mib)} MiB, ${fmt(big.bytesPerAgent)} bytes per agent.`;
  for (const proc of procsBySize) await ctx.stop(proc);
  return { rows, targets, notes: [note], results: { scale: results } };
}
