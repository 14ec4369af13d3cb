// The benchmark's command line, shared constants and its progress log.
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export const CASE_KEYS = [
  'get-agent',
  'list-agents',
  'post-tool',
  'post-agent',
  'patch-agent',
  'in-process',
  'fixed-rate',
  'sign-in',
  'sign-in-flood',
  'scale',
  'search-scale',
  'agent-runs',
  'openai-api',
  'durable-runs',
  'webhooks',
  'mcp',
  'uploads',
] as const;
export type CaseKey = (typeof CASE_KEYS)[number];

const { values: argv } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    'open-loop-rounds': { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    settle: { type: 'string' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string' },
    'scale-agents': { type: 'string' },
    'search-chunks': { type: 'string' },
    out: { type: 'string', default: 'bench-results.json' },
    'cpu-prof': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (argv.help) {
  process.stdout
    .write(`npm run bench -- [--quick] [--rounds N] [--open-loop-rounds N] [--duration S] [--warmup S] [--settle S] [--connections N]
  [--only ${CASE_KEYS.join(',')}]
  [--scale-agents N] [--search-chunks N] [--out FILE] [--cpu-prof] [--keep]\n`);
  process.exit(0);
}

const positive = (text: string | undefined, fallback: number, name: string, allowZero = false): number => {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!(value > 0 || (allowZero && value === 0))) throw new Error(`--${name} must be a positive number`);
  return value;
};

const rounds = Math.round(positive(argv.rounds, argv.quick ? 1 : 5, 'rounds'));
export const OPTS = {
  quick: argv.quick,
  rounds,
  /**
   * Rounds of the open-loop cases (fixed rate, open streams): a round's p99 at 1,000 req/s is its
   * 50th-slowest request, so a few stalls of the shared machine decide it; more rounds, a steadier median.
   */
  openLoopRounds: Math.round(positive(argv['open-loop-rounds'], argv.quick ? 1 : Math.max(7, rounds), 'open-loop-rounds')),
  duration: positive(argv.duration, argv.quick ? 1 : 5, 'duration'),
  /** 0: no warm-up (--quick). */
  warmup: positive(argv.warmup, argv.quick ? 0 : 2, 'warmup', true),
  /** Unmeasured load right before each measured run (0: none, --quick): every run starts warm. */
  settle: positive(argv.settle, argv.quick ? 0 : 1, 'settle', true),
  connections: Math.round(positive(argv.connections, 50, 'connections')),
  /** Agents in the large database of the scale case (a million; --quick: 100,000). */
  scaleAgents: Math.round(positive(argv['scale-agents'], argv.quick ? 100_000 : 1_000_000, 'scale-agents')),
  /** Other users' chunks in the large search database (a million; --quick: 100,000); the small one has a tenth. */
  searchChunks: Math.round(positive(argv['search-chunks'], argv.quick ? 100_000 : 1_000_000, 'search-chunks')),
  cpuProf: argv['cpu-prof'],
  keep: argv.keep,
  out: argv.out!,
  only: argv.only ? (argv.only.split(',').map((key) => key.trim()) as CaseKey[]) : [...CASE_KEYS],
};
for (const key of OPTS.only)
  if (!CASE_KEYS.includes(key)) throw new Error(`--only: unknown case "${key}" (known: ${CASE_KEYS.join(', ')})`);

export const wants = (key: CaseKey) => OPTS.only.includes(key);

/** The key that seals secrets at rest, given to every server as SECRET_KEY. */
export const SECRET_KEY = randomBytes(32);
export const PASSWORD = 'bench password, long enough';

const BENCH_START = performance.now();
export const log = (text: string) =>
  process.stderr.write(`[bench ${((performance.now() - BENCH_START) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);

export function round(value: number, digits = 0): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The p-th percentile of ascending `sorted` values (nearest rank). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
