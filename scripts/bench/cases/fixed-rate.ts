// The fixed-rate case (--only fixed-rate): GET /agents/{id} at 1,000 req/s and POST /tools at 300
// req/s offered, open loop (load.ts, paced), the service as it runs in production (request log on)
// vs plain node:http; the service's p99 should stay within 1.5× of plain's at the same rate.
import { OPTS, fmt, median } from '../options.js';
import { compare, paced, type Comparison, type Load, type PacedResult } from '../load.js';
import { getAgentLoad, postToolLoad, type MainDatabase } from '../shared-servers.js';
import type { SharedCase } from '../case.js';
import type { Target } from '../report.js';

/** What is offered at which rate; the service's own time is checked for the GET. */
const RATES: [string, (main: MainDatabase) => Load, number][] = [
  ['GET /agents/{id}', getAgentLoad, 1000],
  ['POST /tools', postToolLoad, 300],
];
const p99Target = (title: string, rate: number) => `${title} at ${fmt(rate)} req/s: p99 ≤ 1.5× plain node:http's at the same rate`;
const ownTimeTarget = (title: string, rate: number) => `${title} at ${fmt(rate)} req/s: the service's own time p99 ≤ 1 ms (request log)`;

export const fixedRate: SharedCase = {
  name: 'fixed-rate',
  uses: 'shared servers',
  targets: RATES.flatMap(([title, , rate]) => [p99Target(title, rate), ...(title.startsWith('GET') ? [ownTimeTarget(title, rate)] : [])]),
  async run(ctx) {
    const { main, servers } = ctx;
    // The service as it runs in production: the request log on (its `ms` is the service's own time).
    const logged = await ctx.service('service (request log on)', servers.loggedDb, { logRequests: true, monitor: true });
    const seconds = Math.max(OPTS.duration, OPTS.quick ? 2 : 5);
    const fixed: Record<string, unknown> = {};
    const rows: Comparison[] = [];
    const targets: Target[] = [];
    for (const [title, loadOf, rate] of RATES) {
      const load = loadOf(main);
      const result = await compare(
        'fixed-rate',
        `${title} at ${fmt(rate)} req/s offered`,
        [logged, servers.plain],
        (proc, s) => paced(proc, load, rate, s),
        {
          seconds,
          settle: 0, // paced() settles each run itself
          rounds: OPTS.openLoopRounds,
        },
      );
      const [s, b] = result.raw as PacedResult[][];
      const serviceP99 = median(s.map((r) => r.p99));
      const baselineP99 = median(b.map((r) => r.p99));
      const inside = s.map((r) => r.inside).filter((x) => x !== undefined);
      const insideP99 = inside.length ? median(inside.map((x) => x!.p99)) : NaN;
      fixed[title] = {
        rate,
        service: result.sides[0],
        baseline: result.sides[1],
        insideP50: inside.length ? median(inside.map((x) => x!.p50)) : NaN,
        insideP99,
      };
      rows.push({ ...result, title: `${title} at ${fmt(rate)}/s offered (open loop)` });
      const clean = result.problems.length === 0;
      targets.push({
        target: p99Target(title, rate),
        measured: `${fmt(serviceP99, 2)} ms vs ${fmt(baselineP99, 2)} ms (${fmt(serviceP99 / baselineP99, 2)}×)`,
        pass: clean && serviceP99 <= 1.5 * baselineP99,
      });
      if (title.startsWith('GET')) {
        targets.push({
          target: ownTimeTarget(title, rate),
          measured: `${fmt(insideP99, 3)} ms (p50 ${fmt(median(inside.map((x) => x!.p50)), 3)} ms)`,
          pass: clean && insideP99 <= 1,
        });
      }
    }
    await ctx.stop(logged);
    return { rows, targets, results: { fixedRate: fixed } };
  },
};
