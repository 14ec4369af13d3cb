// What every case is given: where its databases go, the seeded users' password hash, and a way to
// start and stop services. The services are kept track of here for what spans the whole run: the
// targets on peak memory and start-up, and (with --cpu-prof) the servers' CPU profiles.
import { mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { OPTS, fmt, log } from './options.js';
import { SERVICE_START, memoryOf, startService, stopProcess, type Proc, type ServiceOptions } from './processes.js';
import { summariseProfile, type Target } from './report.js';

export interface BenchContext {
  /** The run's temporary directory: each case seeds its databases here. */
  dir: string;
  /** The seeded users' password (PASSWORD) hashed at the service's default cost. */
  passwordHash: string;
  /** Node arguments that profile a server under --cpu-prof (none without it). */
  profileArgs: string[];
  /** Starts the service on the database at `path`; its start-up and peak memory count in the run's targets. */
  service(name: string, path: string, options?: ServiceOptions): Promise<Proc>;
  /** Stops a server, noting a service's peak memory first (it is gone with the process). */
  stop(proc: Proc): Promise<void>;
  /** With --cpu-prof, adds the hottest functions of a stopped server's main thread to the report. */
  summariseProfileOf(proc: Proc): void;
}

/** The context, and what it gathered of the whole run once the cases are over. */
export function createContext(dir: string, passwordHash: string) {
  const allServices: Proc[] = [];
  const peakOf = (proc: Proc) => memoryOf(proc.pid)?.peakRssMiB ?? NaN;
  const peaks = new Map<string, number>();

  const profileDir = resolve('bench-profiles');
  if (OPTS.cpuProf) mkdirSync(profileDir, { recursive: true });
  const profilesBefore = new Set(OPTS.cpuProf ? readdirSync(profileDir) : []);
  /** Report lines: a table of each profiled server's hottest functions. */
  const profiles: string[] = [];

  const ctx: BenchContext = {
    dir,
    passwordHash,
    profileArgs: OPTS.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    async service(name, path, options = {}) {
      const proc = await startService(name, path, options);
      allServices.push(proc);
      log(`${name} up at ${proc.url}: first answer ${proc.spawnToFirstAnswerMs} ms after spawn, RSS ${proc.rssAtStartMiB} MiB`);
      return proc;
    },
    async stop(proc) {
      const peak = peakOf(proc);
      if (allServices.includes(proc) && Number.isFinite(peak)) peaks.set(proc.name, peak);
      await stopProcess(proc);
    },
    summariseProfileOf(proc) {
      // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread (tsx's loader has its own).
      const fresh = readdirSync(profileDir).filter(
        (f) => f.endsWith('.cpuprofile') && f.includes(`.${proc.pid}.0.`) && !profilesBefore.has(f),
      );
      if (fresh.length === 0) return;
      const file = join(profileDir, fresh.sort().at(-1)!);
      profiles.push(
        '',
        `CPU profile of ${proc.name}'s main thread: ${file} (self time; share of the non-idle time)`,
        '',
        '| self | time | function |',
        '|---:|---:|---|',
        ...summariseProfile(file),
      );
    },
  };

  /**
   * The targets on memory and start-up over every service the run started: the idle RSS of the
   * shared service (when it ran), the highest peak RSS, the slowest first answer.
   */
  function runTargets(idleRssMiB: number | undefined): Target[] {
    const targets: Target[] = [];
    for (const proc of allServices) if (!peaks.has(proc.name)) peaks.set(proc.name, peakOf(proc));
    const peakEntries = [...peaks.entries()].filter(([, v]) => Number.isFinite(v));
    if (idleRssMiB !== undefined) {
      targets.push({
        target: `idle RSS ≤ 90 MB (started with \`${SERVICE_START}\`)`,
        measured: `${fmt(idleRssMiB * 1.048576)} MB (${idleRssMiB} MiB)`,
        pass: idleRssMiB * 1.048576 <= 90,
      });
    }
    if (peakEntries.length) {
      const [worstName, worst] = peakEntries.sort((a, b) => b[1] - a[1])[0];
      targets.push({
        target: 'peak RSS ≤ 150 MB through the bench',
        measured: `${fmt(worst * 1.048576)} MB (${worstName}); ${peakEntries.map(([n, v]) => `${n} ${fmt(v)} MiB`).join(', ')}`,
        pass: worst * 1.048576 <= 150,
      });
    }
    if (allServices.length) {
      const slowest = allServices.reduce((a, b) => (b.spawnToFirstAnswerMs > a.spawnToFirstAnswerMs ? b : a));
      targets.push({
        target: 'first answered request ≤ 1 s after spawn',
        measured: `slowest ${fmt(slowest.spawnToFirstAnswerMs)} ms (${slowest.name}); ${allServices.map((p) => `${p.name} ${fmt(p.spawnToFirstAnswerMs)}`).join(', ')}`,
        pass: slowest.spawnToFirstAnswerMs <= 1000,
      });
    }
    return targets;
  }

  return {
    ctx,
    runTargets,
    profiles,
    /** Each service's start-up, for the results file. */
    startup: () =>
      allServices.map((p) => ({
        name: p.name,
        spawnToListeningMs: p.spawnToListeningMs,
        spawnToFirstAnswerMs: p.spawnToFirstAnswerMs,
        rssAtStartMiB: p.rssAtStartMiB,
      })),
    peaksMiB: () => Object.fromEntries(peaks),
  };
}
