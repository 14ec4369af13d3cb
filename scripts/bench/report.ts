// What the benchmark prints: the comparison tables, the targets with PASS/FAIL, and a summary of a
// CPU profile (hottest functions by self time).
import { readFileSync } from 'node:fs';
import { ROOT, fmt, round } from './options.js';
import type { Comparison, PacedResult } from './load.js';
import type { InProcessCase } from './in-process.js';

export interface Target {
  target: string;
  measured: string;
  /** undefined: not measured in this run (skipped, with the reason in `measured`). */
  pass: boolean | undefined;
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
    const ratios = refs.map((r) => (c.ratios[r] ? `${fmt(c.ratios[r].median, 2)} (${c.ratios[r].spread.map((x) => fmt(x, 2)).join('–')}); ${fmt(c.ratios[r].cpu, 2)}` : 'n/a'));
    lines.push(`| ${c.title}${warn} | ${cells.join(' | ')} | ${ratios.join(' | ')} | ${c.otherLoad === null ? 'n/a' : `${Math.round(c.otherLoad * 100)}%`} |`);
  }
  return lines;
}

/** The in-process comparison: CPU per request of the two Koa apps without the network. */
export function inProcessTable(cases: InProcessCase[]): string[] {
  return [
    '| in one process, no network (scripts/bench/in-process.ts) | service CPU µs/req | bare Koa CPU µs/req | ÷ bare Koa: CPU (rounds) |',
    '|---|---:|---:|---:|',
    ...cases.map((c) => `| ${c.title} | ${fmt(c.serviceUs, 1)} | ${fmt(c.bareUs, 1)} | ${fmt(c.ratio, 2)} (${c.spread.map((x) => fmt(x, 2)).join('–')}) |`),
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
        rows.push(`| ${c.title} | ${s.name} | ${n + 1} | ${fmt(r.p99, 2)} | ${fmt(r.max, 2)} | ${fmt(st.loopP99Ms, 2)} | ${fmt(st.loopMaxMs, 2)} | ${fmt(st.gcMaxMs, 2)} (${fmt(st.gcMs, 1)}) | ${fmt(st.majorGcMaxMs, 2)} | ${st.runQueueMs === null ? 'n/a' : fmt(st.runQueueMs, 1)} | ${fmt(st.generatorLoopMaxMs, 2)} |`);
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
