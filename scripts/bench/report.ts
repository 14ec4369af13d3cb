// What the benchmark prints: the comparison tables, the targets with PASS/FAIL, and a summary of a
// CPU profile (hottest functions by self time).
import { readFileSync } from 'node:fs';
import { OPTS, ROOT, fmt, round } from './options.js';
import { SERVICE_START } from './processes.js';
import type { Comparison, PacedResult } from './load.js';
import type { InProcessCase } from './in-process.js';

export interface Target {
  target: string;
  measured: string;
  /** undefined: not measured in this run (skipped, with the reason in `measured`). */
  pass: boolean | undefined;
}

/** What a case reports; the run's report and results file gather every case's. */
export interface CaseReport {
  /** Rows of the comparison tables. */
  rows?: Comparison[];
  /** Rows of the in-process table. */
  inProcessRows?: InProcessCase[];
  targets?: Target[];
  /** Sentences printed under the tables. */
  notes?: string[];
  /** Written to the results file, each under its key. */
  results?: Record<string, unknown>;
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  os: string;
}

/** The whole report, as Markdown lines: the run's setting, the tables, the notes and warnings, the targets. */
export function benchReport(startedAt: Date, machine: Machine, run: Required<Omit<CaseReport, 'results'>>, profiles: string[]): string[] {
  const { rows, inProcessRows, notes, targets } = run;
  const lines: string[] = [];
  lines.push(
    `## Benchmark ${startedAt.toISOString()}${OPTS.quick ? ' (quick smoke run: figures are not meaningful)' : ''}${OPTS.cpuProf ? ' (servers under --cpu-prof: figures are skewed)' : ''}`,
  );
  lines.push('');
  lines.push(
    `${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.os}; load generated in the same machine; ` +
      `${OPTS.rounds} round(s) (open-loop cases ${OPTS.openLoopRounds}) × ${OPTS.duration} s per server ${OPTS.warmup > 0 ? `after a ${OPTS.warmup} s warm-up` : 'without warm-up'}, servers taking turns in the same order every round${OPTS.settle > 0 ? `, each run after ${OPTS.settle} s of the same load unmeasured` : ''}; medians of the rounds, latency in ms. ` +
      `Service started with \`${SERVICE_START}\`, request log off unless said.`,
  );
  lines.push('', ...comparisonTable(rows.filter((c) => c.sides.length === 3)));
  if (inProcessRows.length) lines.push('', ...inProcessTable(inProcessRows));
  const ownTables = ['agent-runs', 'openai-api', 'durable-runs'];
  const rest = rows.filter((c) => c.sides.length !== 3 && !ownTables.includes(c.key));
  if (rest.length) lines.push('', ...comparisonTable(rest));
  // Each agent-run case compares other sides (service and plain; service and the model; the service
  // idle and busy; one endpoint of the service and another; a followed background run and a foreground one).
  for (const c of rows.filter((c) => ownTables.includes(c.key))) lines.push('', ...comparisonTable([c]));
  const stalls = stallTable(rows);
  if (stalls.length)
    lines.push(
      '',
      'Where the time of the open-loop rounds went (fixed rate and open streams; ms; scripts/bench/loop-monitor.ts in the servers, /proc/<pid>/schedstat):',
      '',
      ...stalls,
    );
  if (notes.length) lines.push('', ...notes);
  const problems = rows.flatMap((c) => c.problems.map((p) => `${c.title}: ${p}`));
  if (problems.length) lines.push('', `⚠ ${problems.join('; ')}`);
  const loads = rows.map((c) => c.otherLoad).filter((x): x is number => x !== null);
  if (loads.some((x) => x > 0.1))
    lines.push(
      '',
      `⚠ Other processes used up to ${Math.round(Math.max(...loads) * 100)}% of the machine's CPU during some runs; those figures are depressed.`,
    );
  lines.push('', ...targetTable(targets));
  lines.push(...profiles);
  return lines;
}

export function comparisonTable(cases: Comparison[]): string[] {
  if (cases.length === 0) return [];
  const names = cases[0].sides.map((s) => s.name);
  const refs = names.slice(1);
  const lines = [
    `| case | ${names.map((n) => `${n} req/s | p50 | p99 | CPU µs/req`).join(' | ')} | ${refs.map((r) => `÷ ${r}: req/s (rounds); CPU`).join(' | ')} | other load |`,
    `|---|${names.map(() => '---:|---:|---:|---:').join('|')}|${refs.map(() => '---:').join('|')}|---:|`,
  ];
  for (const c of cases) {
    const warn = c.problems.length ? ' ⚠' : '';
    const cells = c.sides.map((s) => `${fmt(s.rps)} | ${fmt(s.p50, 2)} | ${fmt(s.p99, 2)} | ${fmt(s.cpuUs)}`);
    const ratios = refs.map((r) =>
      c.ratios[r]
        ? `${fmt(c.ratios[r].median, 2)} (${c.ratios[r].spread.map((x) => fmt(x, 2)).join('–')}); ${fmt(c.ratios[r].cpu, 2)}`
        : 'n/a',
    );
    lines.push(
      `| ${c.title}${warn} | ${cells.join(' | ')} | ${ratios.join(' | ')} | ${c.otherLoad === null ? 'n/a' : `${Math.round(c.otherLoad * 100)}%`} |`,
    );
  }
  return lines;
}

/** The in-process comparison: CPU per request of the two Koa apps without the network. */
export function inProcessTable(cases: InProcessCase[]): string[] {
  return [
    '| in one process, no network (scripts/bench/in-process.ts) | service CPU µs/req | bare Koa CPU µs/req | ÷ bare Koa: CPU (rounds) |',
    '|---|---:|---:|---:|',
    ...cases.map(
      (c) =>
        `| ${c.title} | ${fmt(c.serviceUs, 1)} | ${fmt(c.bareUs, 1)} | ${fmt(c.ratio, 2)} (${c.spread.map((x) => fmt(x, 2)).join('–')}) |`,
    ),
  ];
}

/**
 * Where the slow requests of paced rounds came from, round by round: the latency p99 and max next
 * to the server's event-loop delay, GC pauses and wait for a core, and the load generator's own delay.
 */
export function stallTable(cases: (Comparison & { raw?: unknown[][] })[]): string[] {
  const rows: string[] = [];
  for (const c of cases) {
    c.sides.forEach((s, i) => {
      const rounds = (c.raw?.[i] ?? []) as PacedResult[];
      rounds.forEach((r, n) => {
        const st = r.stalls;
        if (!st) return;
        rows.push(
          `| ${c.title} | ${s.name} | ${n + 1} | ${fmt(r.p99, 2)} | ${fmt(r.max, 2)} | ${fmt(st.loopP99Ms, 2)} | ${fmt(st.loopMaxMs, 2)} | ${fmt(st.gcMaxMs, 2)} (${fmt(st.gcMs, 1)}) | ${fmt(st.majorGcMaxMs, 2)} | ${st.runQueueMs === null ? 'n/a' : fmt(st.runQueueMs, 1)} | ${fmt(st.generatorLoopMaxMs, 2)} |`,
        );
      });
    });
  }
  if (rows.length === 0) return [];
  return [
    '| case | server | round | p99 | max | server loop delay: worst p99 of a second | max | GC: longest pause (all) | longest full GC | waited for a core | generator loop delay max |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ];
}

export function targetTable(targets: Target[]): string[] {
  return [
    '| target | measured | result |',
    '|---|---|---|',
    ...targets.map((t) => `| ${t.target} | ${t.measured} | ${t.pass === undefined ? 'SKIPPED' : t.pass ? 'PASS' : '**FAIL**'} |`),
  ];
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** The `top` functions by self time of a .cpuprofile, as Markdown table rows. */
export function summariseProfile(file: string, top = 30): string[] {
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
    .map(([name, us]) => `| ${round((100 * us) / total, 1)}% | ${fmt(round(us / 1000))} ms | \`${name}\` |`);
}
