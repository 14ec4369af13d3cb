// The search-scale case (--only search-scale): one user's document searches while other users'
// chunks grow tenfold, each size in a database and a service of its own. The search of one user
// should not slow down as the rest of the file grows.
import { join } from 'node:path';
import { OPTS, fmt, log, round } from '../options.js';
import { COMMON_WORD, RARE_WORD, databaseMiB, seedSearch } from '../seed.js';
import type { Proc } from '../processes.js';
import { bearer, compare, measure, probe, type Comparison, type Load } from '../load.js';
import type { OwnCase } from '../case.js';
import type { BenchContext } from '../context.js';
import type { CaseReport, Target } from '../report.js';

const WORDS = [
  [RARE_WORD, "rare word (10 of the user's chunks)"],
  [COMMON_WORD, 'common word (half the chunks)'],
] as const;
const target = (what: string) => `search p99, ${what}, flat (≤ 1.5×) when others' chunks grow tenfold`;

export const searchScale: OwnCase = {
  name: 'search-scale',
  uses: 'own servers',
  targets: WORDS.map(([, what]) => target(what)),
  run,
};

async function run(ctx: BenchContext): Promise<CaseReport> {
  const sizes = [OPTS.searchChunks / 10, OPTS.searchChunks];
  const seeded = sizes.map((others) => {
    const s = seedSearch(join(ctx.dir, `search-${others}.db`), others, ctx.passwordHash);
    log(
      `seeded search database: the user's 10,000 chunks and ${fmt(others)} of others in ${fmt(s.ms)} ms (${fmt(databaseMiB(s.path))} MiB)`,
    );
    return s;
  });
  const procsBySize: Proc[] = [];
  for (const [i, others] of sizes.entries()) procsBySize.push(await ctx.service(`service@${fmt(others)} others' chunks`, seeded[i].path));
  const search: Record<string, unknown> = {
    seeding: sizes.map((others, i) => ({ others, ms: seeded[i].ms, mib: round(databaseMiB(seeded[i].path), 1) })),
  };
  const rows: Comparison[] = [];
  const targets: Target[] = [];
  for (const [word, what] of WORDS) {
    const loads = seeded.map((s): Load => ({
      expectStatus: 200,
      connections: 4,
      requests: [{ path: `/api/v1/documents/search?q=${word}`, headers: bearer(s.user.tokens[0]) }],
    }));
    for (const [i, proc] of procsBySize.entries()) await probe(proc, loads[i].requests[0], 200);
    const result = await compare(
      'search-scale',
      `search, ${what}: others ${fmt(sizes[0])} vs ${fmt(sizes[1])} chunks (4 connections)`,
      procsBySize,
      (proc, s) => measure(proc, loads[procsBySize.indexOf(proc)], s),
    );
    rows.push(result);
    const [small, large] = result.sides;
    search[word] = result.sides.map(({ rounds, ...s }) => s);
    targets.push({
      target: target(what),
      measured: `${fmt(small.p99, 2)} → ${fmt(large.p99, 2)} ms (${fmt(large.p99 / small.p99, 2)}×)`,
      pass: result.problems.length === 0 && large.p99 <= 1.5 * small.p99,
    });
  }
  for (const proc of procsBySize) await ctx.stop(proc);
  return { rows, targets, results: { search } };
}
