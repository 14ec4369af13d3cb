// The servers the benchmark measures, each a child process: the service (started as `npm start`
// starts it), the bare-Koa reference and the plain node:http reference. Plus what is read of them
// from /proc: memory and CPU time. And the in-process case and the open-loop load generator, each
// in a child process of its own.
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { bundleServer } from '../bundle.js';
import { serviceNodeArgs } from '../service-command.js';
import type { InProcessCase } from './in-process.js';
import type { PacedJob, PacedOutcome } from './paced-client.js';
import type { WebhookRunsJob, WebhookRunsOutcome } from './webhook-runs.js';
import { ROOT, SECRET_KEY, log, round } from './options.js';
import type { SeededUser } from './seed.js';

export interface Proc {
  name: string;
  child: ChildProcess;
  url: string;
  pid: number;
  spawnToListeningMs: number;
  spawnToFirstAnswerMs: number;
  /** Resident memory right after the first answer (MiB). */
  rssAtStartMiB: number | null;
  /** The `ms` of every request log line so far (services started with `logRequests`). */
  requestMs: number[];
  /** What scripts/bench/loop-monitor.ts reported each second (servers started with `monitor`), with when it arrived. */
  loopReports: LoopReport[];
  /** The last lines of stdout that are not request log lines (errors the service logged, its `stopped` line). */
  logLines: string[];
}

export interface LoopReport {
  at: number;
  loopP99Ms: number;
  loopMaxMs: number;
  gcCount: number;
  gcMs: number;
  gcMaxMs: number;
  majorGcMaxMs: number;
}

const children = new Set<ChildProcess>();
/** Children being stopped on purpose. */
const stopping = new WeakSet<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

/** Registers a child so that it is killed with the others (on exit, or by killAll). */
function tracked<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

export function killAll(): void {
  for (const child of children) {
    stopping.add(child);
    child.kill('SIGKILL');
  }
}

/** Calls `each` with every whole line `stream` writes, as the lines come. */
function onLines(stream: NodeJS.ReadableStream, each: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) !== -1) {
      each(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
    }
  });
}

async function startProcess(name: string, args: string[], env: Record<string, string>): Promise<Proc> {
  const started = performance.now();
  const child = tracked(spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  let stderr = '';
  /** The last lines of stdout that are not request log lines (errors the service logged). */
  const otherLines: string[] = [];
  const loopReports: LoopReport[] = [];
  onLines(child.stderr!, (line) => {
    if (line.startsWith('{"loopMonitor":'))
      loopReports.push({ at: performance.now(), ...(JSON.parse(line) as { loopMonitor: Omit<LoopReport, 'at'> }).loopMonitor });
    else stderr = `${stderr}${line}\n`.slice(-4000);
  });
  // A server that dies during a case says why (stopProcess sends SIGTERM; anything else is unexpected).
  child.on('exit', (code, signal) => {
    if (!stopping.has(child))
      log(
        `${name} (pid ${child.pid}) exited unexpectedly: code ${code}, signal ${signal}; stderr: ${stderr.trim() || '(empty)'}; last log lines: ${otherLines.join('\n') || '(none)'}`,
      );
  });
  const requestMs: number[] = [];
  const url = await new Promise<string>((resolveUrl, reject) => {
    let found = false;
    const timer = setTimeout(() => reject(new Error(`${name}: no "listening" line within 60 s; stderr: ${stderr}`)), 60_000);
    // Drained for the whole run (a full pipe would stall the server); request lines give their `ms`.
    onLines(child.stdout!, (line) => {
      if (found) {
        const ms = /"ms":([0-9.]+)/.exec(line);
        if (ms) requestMs.push(Number(ms[1]));
        else {
          otherLines.push(line.slice(0, 1000));
          if (otherLines.length > 10) otherLines.shift();
        }
        return;
      }
      try {
        const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
        if (entry.msg === 'listening' && typeof entry.url === 'string') {
          found = true;
          clearTimeout(timer);
          resolveUrl(entry.url.replace('://0.0.0.0:', '://127.0.0.1:'));
        }
      } catch {
        // not a JSON line
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
    requestMs,
    loopReports,
    logLines: otherLines,
  };
}

export interface ServiceOptions {
  nodeArgs?: string[];
  /** Write the request log (the production default); the throughput cases run without it. */
  logRequests?: boolean;
  /** Load scripts/bench/loop-monitor.ts (event-loop delay and GC, reported each second). */
  monitor?: boolean;
  env?: Record<string, string>;
}

/**
 * How the service is started: the production way (`npm run build`, then `npm run start:prod`'s
 * command line) when package.json has those scripts, else `npm start`'s.
 */
function serviceStart(): { script: string; args: string[] } {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string | undefined> };
  const prod = scripts['start:prod']
    ?.trim()
    .split(/\s+/)
    .filter((word, i) => !(i === 0 && word === 'exec'));
  if (prod && prod[0] === 'node' && scripts.build) return { script: 'start:prod', args: prod.slice(1) };
  return { script: 'start', args: serviceNodeArgs() };
}
const START = serviceStart();
export const SERVICE_START = `node ${START.args.join(' ')}`;
let built = false;
/** `npm run build`, once, before the first server starts (it empties dist/, where references are bundled too). */
function ensureBuilt(): void {
  if (START.script !== 'start:prod' || built) return;
  log('npm run build (the service is started the production way)');
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  built = true;
}

export async function startService(name: string, databasePath: string, options: ServiceOptions = {}): Promise<Proc> {
  ensureBuilt();
  const monitor = options.monitor ? await monitorArgs() : [];
  return startProcess(name, [...(options.nodeArgs ?? []), ...monitor, ...START.args], {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_PATH: databasePath,
    LOG_REQUESTS: options.logRequests ? 'on' : 'off',
    RATE_LIMIT: 'off',
    // Seeded documents are never fetched: no background ingestion during the measurements.
    INGEST: 'off',
    SECRET_KEY: SECRET_KEY.toString('hex'),
    ...options.env,
  });
}

export type ReferenceKind = 'koa' | 'plain';

/** The service's V8 flags (its start command without the loader and the entry point). */
export const V8_FLAGS = START.args.slice(0, -1).filter((arg, i, args) => arg !== '--import' && args[i - 1] !== '--import');

/**
 * A reference server (scripts/bench/reference-koa.ts or scripts/baseline-server.ts) on the same
 * database, with the service's V8 flags: the ratios compare code, not runtime settings.
 */
export async function startReference(
  kind: ReferenceKind,
  name: string,
  databasePath: string,
  env: Record<string, string> = {},
  options: { monitor?: boolean; nodeArgs?: string[] } = {},
): Promise<Proc> {
  const script = kind === 'koa' ? 'scripts/bench/reference-koa.ts' : 'scripts/baseline-server.ts';
  const monitor = options.monitor ? await monitorArgs() : [];
  return startProcess(
    name,
    [
      ...(process.env.BENCH_REFERENCE_FLAGS === 'none' ? [] : V8_FLAGS),
      ...monitor,
      ...(options.nodeArgs ?? []),
      ...(await referenceEntry(script)),
    ],
    {
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_PATH: databasePath,
      SECRET_KEY: SECRET_KEY.toString('hex'),
      ...env,
    },
  );
}

/**
 * How a reference server is run: bundled like the service when the service runs its production
 * build (into dist/bench/, where the stores it imports find the installation as the build does),
 * through tsx when the service runs through tsx.
 */
const bundledReferences = new Map<string, Promise<string>>();
async function referenceEntry(script: string): Promise<string[]> {
  if (START.script !== 'start:prod') return ['--import', 'tsx', script];
  ensureBuilt();
  const outdir = join(ROOT, 'dist', 'bench');
  let bundled = bundledReferences.get(script);
  if (!bundled) {
    bundled = bundleServer(join(ROOT, script), outdir).then(() => join(outdir, basename(script).replace(/\.ts$/, '.js')));
    bundledReferences.set(script, bundled);
  }
  return [await bundled];
}

/** `--import` of scripts/bench/loop-monitor.ts: bundled beside the references, or through tsx. */
async function monitorArgs(): Promise<string[]> {
  const script = 'scripts/bench/loop-monitor.ts';
  if (START.script !== 'start:prod') return ['--import', 'tsx', '--import', join(ROOT, script)];
  const [entry] = await referenceEntry(script);
  return ['--import', entry];
}

/** Processes the benchmark runs beside the servers (the fake model): their CPU is not "other load". */
export const helperPids = new Set<number>();

/** A helper server the measured servers talk to (scripts/bench/fake-model.ts), with the service's V8 flags. */
export async function startHelper(name: string, script: string, env: Record<string, string> = {}): Promise<Proc> {
  const proc = await startProcess(name, [...V8_FLAGS, '--import', 'tsx', script], { PORT: '0', HOST: '127.0.0.1', ...env });
  helperPids.add(proc.pid);
  proc.child.once('exit', () => helperPids.delete(proc.pid));
  return proc;
}

export async function stopProcess(proc: Proc): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  const exited = new Promise<void>((done) => proc.child.once('exit', () => done()));
  stopping.add(proc.child);
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Peak and current resident memory of a process, in MiB (Linux /proc), and the current split: `anonMiB`
 * is what the process allocated (V8's heap, malloc, stacks), `fileMiB` the files it maps (for Node,
 * mostly the node binary's own code and data: ~34 MiB in a process that only waits on a timer).
 */
export function memoryOf(pid: number): { peakRssMiB: number; rssMiB: number; anonMiB: number; fileMiB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const mib = (field: string) => round(Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024, 1);
    return { peakRssMiB: mib('VmHWM'), rssMiB: mib('VmRSS'), anonMiB: mib('RssAnon'), fileMiB: mib('RssFile') };
  } catch {
    return undefined;
  }
}

/** Nanoseconds the process's main thread has waited for a core so far (/proc/<pid>/schedstat), or undefined. */
export function runQueueWaitNs(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** USER_HZ: the unit of /proc CPU times (100 on Linux everywhere that matters). */
export const CLOCK_TICKS = 100;

/** CPU time (clock ticks) a process has used so far, or undefined when it is gone. */
export function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(rest[11]) + Number(rest[12]);
  } catch {
    return undefined;
  }
}

export interface CpuSnapshot {
  busy: number;
  total: number;
  ours: number;
}

export function cpuSnapshot(pids: number[]): CpuSnapshot | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system] = fields;
    let ours = 0;
    for (const pid of new Set([...pids, ...helperPids])) ours += cpuTicks(pid) ?? 0;
    return { busy: user + nice + system, total: fields.slice(0, 8).reduce((a, b) => a + b, 0), ours };
  } catch {
    return undefined;
  }
}

/** Share of all CPU time spent by processes outside the benchmark (0-1), approximately. */
export function otherLoad(before: CpuSnapshot | undefined, after: CpuSnapshot | undefined): number | null {
  if (!before || !after || after.total === before.total) return null;
  const foreign = after.busy - before.busy - (after.ours - before.ours);
  return round(Math.max(0, foreign) / (after.total - before.total), 2);
}

/**
 * The in-process case (scripts/bench/in-process.ts) in a child process started with the benchmark's
 * own options, on the database at `path` (written to: a copy); its results come back as JSON.
 */
export async function inProcessInChild(path: string, users: SeededUser[]): Promise<InProcessCase[]> {
  const usersFile = `${path}.users.json`;
  writeFileSync(usersFile, JSON.stringify(users));
  const child = tracked(
    spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/bench/in-process.ts'), ...process.argv.slice(2)], {
      cwd: ROOT,
      env: { ...process.env, BENCH_IN_PROCESS: JSON.stringify({ path, usersFile }) },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`the in-process case exited with code ${code}`);
  return JSON.parse(out) as InProcessCase[];
}

/**
 * The webhook case's runs (scripts/bench/webhook-runs.ts) in a child process, on the database at
 * `path` with the seeded users (the first gets the webhook); its timings come back as JSON.
 */
export async function webhookRunsInChild(job: Omit<WebhookRunsJob, 'usersFile'>, users: SeededUser[]): Promise<WebhookRunsOutcome> {
  const usersFile = `${job.path}.users.json`;
  writeFileSync(usersFile, JSON.stringify(users));
  const child = tracked(
    spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/bench/webhook-runs.ts')], {
      cwd: ROOT,
      env: { ...process.env, BENCH_WEBHOOK_RUNS: JSON.stringify({ ...job, usersFile }) },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`the webhook runs exited with code ${code}`);
  return JSON.parse(out) as WebhookRunsOutcome;
}

/**
 * The open-loop load generator (scripts/bench/paced-client.ts) in a fresh child process, its
 * requests prepared: `run()` starts the schedule, calls `measuring` when the settling part is over
 * and resolves with what was measured. `pid` is known before the run, so the CPU it uses can be
 * told apart from other load.
 */
export async function pacedClientInChild(job: PacedJob): Promise<{ pid: number; run(measuring: () => void): Promise<PacedOutcome> }> {
  // With no measured request the child would never say 'measuring' nor finish.
  if (Math.round(job.rate * job.seconds) < 1)
    throw new RangeError(`a paced run needs at least one measured request (rate ${job.rate}/s for ${job.seconds} s)`);
  const child = tracked(
    fork(join(ROOT, 'scripts/bench/paced-client.ts'), [], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      serialization: 'advanced',
      stdio: 'inherit',
    }),
  );
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', (code, signal) =>
      reject(new Error(`the paced load generator exited (code ${code}, signal ${signal}) before it reported`)),
    ),
  );
  exited.catch(() => {});
  const next = () => Promise.race([new Promise<unknown>((resolve) => child.once('message', resolve)), exited]);
  child.send(job);
  await next();
  return {
    pid: child.pid!,
    async run(measuring) {
      child.send('go');
      const said = await next();
      if (said !== 'measuring') throw new Error(`the paced load generator said ${JSON.stringify(said)} where it says 'measuring'`);
      measuring();
      return (await next()) as PacedOutcome;
    },
  };
}
