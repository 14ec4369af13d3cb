// Running the operator scripts (scripts/*.ts) and the real service (src/main.ts) as processes, the
// way an operator does, each against a database path the test chooses. They run in a temporary
// working directory (not the repository), so a developer's own .env never reaches them.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { productionNodeArgs, serviceNodeArgs } from '../scripts/service-command.js';
import { createClient, type Client } from './client.js';

export const root = fileURLToPath(new URL('..', import.meta.url));

/** The working directory of the processes this test file starts: empty unless a test writes to it (a .env). */
export const workDir = mkdtempSync(join(tmpdir(), 'ams-cwd-'));
after(() => rmSync(workDir, { recursive: true, force: true }));

/**
 * Node arguments that work from any directory: `--import tsx` by the loader's absolute URL and a
 * relative script by its path in the repository.
 */
export function absoluteNodeArgs(args: string[]): string[] {
  return args.map((arg, index) => {
    if (arg === 'tsx' && args[index - 1] === '--import') return import.meta.resolve('tsx');
    if (/^(src|scripts)\/.+\.ts$/.test(arg) && !isAbsolute(arg)) return join(root, arg);
    return arg;
  });
}

export interface ScriptResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A clean environment: only PATH and what the test gives (so a developer's settings never leak in). */
const cleanEnv = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env });

/** Runs `node --import tsx <script> ...args` (or any command) to the end, feeding `input` on stdin. */
export function runScript(
  script: string,
  args: string[],
  env: Record<string, string>,
  input?: string,
  cwd = workDir,
): Promise<ScriptResult> {
  return runCommand(process.execPath, [...absoluteNodeArgs(['--import', 'tsx', script]), ...args], env, input, cwd);
}

/** Runs any command to the end; in the repository unless `cwd` says otherwise (npm needs package.json). */
export function runCommand(
  command: string,
  args: string[],
  env: Record<string, string>,
  input?: string,
  cwd = root,
): Promise<ScriptResult> {
  const child = spawn(command, args, { cwd, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(input ?? '');
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A running `src/main.ts` process, with what it has written so far. */
export interface SpawnedService {
  child: ChildProcess;
  /** Everything the process has written to stdout so far. */
  stdoutText(): string;
  /** Everything the process has written to stderr so far. */
  stderrText(): string;
  /** Resolves with the exit code (null after a signal) once the process has exited. */
  exited: Promise<number | null>;
  /** Resolves with the URL of the `listening` log line; rejects if the process exits first or stays silent for `timeoutMs`. */
  listening(timeoutMs?: number): Promise<string>;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** A listening service process, with the tests' client aimed at it. */
export interface ServiceProcess extends SpawnedService, Client {}

// Never leave a process behind when a test fails half-way: whatever still runs when the test file
// ends is killed. (A file-level hook, registered as a test file imports this module: node:test's
// `after` called inside a test would stop the service when that test ends, and a service may span
// tests. A process 'exit' handler is not enough: the live child's pipes keep the file from exiting.)
const running = new Set<ChildProcess>();
const groupLeaders = new WeakSet<ChildProcess>();
after(() => {
  for (const child of running) {
    // A detached child leads its own process group: end the whole group (a wrapper's service too).
    if (!groupLeaders.has(child) || child.pid === undefined) child.kill('SIGKILL');
    else {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
  }
});

/** What runs the service: by default `npm start`'s command (TypeScript through tsx). */
export interface ServiceCommand {
  file: string;
  args: string[];
  /** In a process group of its own, so a test can SIGKILL the whole group (a wrapper and the service). */
  detached?: boolean;
}

/** `npm start`: node with its flags, TypeScript through tsx (works from any directory). */
export const developmentCommand = (): ServiceCommand => ({ file: process.execPath, args: absoluteNodeArgs(serviceNodeArgs()) });

/** `npm run start:prod`: the compiled `dist/main.js`, relative to the working directory (see `makeInstallDir`). */
export const productionCommand = (): ServiceCommand => ({ file: process.execPath, args: productionNodeArgs() });

/**
 * What `npm prune --omit=dev` leaves in `dir`/node_modules: a link to each package of this
 * checkout's install that package-lock.json does not mark as a development one (a package's own
 * nested node_modules/ comes with it). Node follows a link to the package's real place, so a
 * production package could still find a development one there; the application's own files
 * (dist/, scripts/operator.js) cannot: they resolve packages from `dir`/node_modules.
 */
export function linkProductionPackages(dir: string): string[] {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const names = Object.entries(lock.packages)
    .filter(([path, entry]) => /^node_modules\/(@[^/]+\/)?[^/@][^/]*$/.test(path) && !entry.dev)
    .map(([path]) => path.slice('node_modules/'.length))
    // An optional package for another platform is in the lock but not installed.
    .filter((name) => existsSync(join(root, 'node_modules', name)));
  rmSync(join(dir, 'node_modules'), { recursive: true, force: true });
  for (const name of names) {
    mkdirSync(dirname(join(dir, 'node_modules', name)), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir');
  }
  return names;
}

/**
 * A temporary directory laid out like the container's /app: dist/ (built by `npm run build`, which
 * `npm test` runs first), schema.sql, migrations/, package.json, litestream.yml, the entry point
 * script and node_modules/ with the production packages only (`linkProductionPackages`), but no src/
 * and no tsx, esbuild or Preact: compiled code that still looked under src/ or for them fails.
 */
export function makeInstallDir(): string {
  if (!existsSync(join(root, 'dist', 'main.js'))) throw new Error('dist/main.js is missing: run `npm run build` (npm test does it first)');
  const dir = mkdtempSync(join(tmpdir(), 'ams-install-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const entry of ['dist', 'schema.sql', 'migrations', 'package.json', 'litestream.yml', 'scripts/docker-entrypoint.sh']) {
    cpSync(join(root, entry), join(dir, entry), { recursive: true });
  }
  linkProductionPackages(dir);
  return dir;
}

/**
 * Spawns the real service (as `npm start` does, or as `command` says) with `env` on top of a clean
 * environment (PORT 0, HOST 127.0.0.1, rate limiting and request logs off unless `env` says
 * otherwise), without waiting for it: for a test that expects it to refuse to start. Most tests want
 * `startServiceProcess`.
 */
export function spawnServiceProcess(
  env: Record<string, string>,
  cwd = workDir,
  command: ServiceCommand = developmentCommand(),
): SpawnedService {
  const child = spawn(command.file, command.args, {
    cwd,
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', RATE_LIMIT: 'off', LOG_REQUESTS: 'off', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: command.detached ?? false,
  });
  running.add(child);
  if (command.detached) groupLeaders.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));

  function listening(timeoutMs = 20_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no "listening" line within ${timeoutMs} ms; stdout: ${stdout} stderr: ${stderr}`));
      }, timeoutMs);
      const look = () => {
        // Only complete lines: the last piece may still be arriving.
        for (const line of stdout.split('\n').slice(0, -1)) {
          let entry: { msg?: string; url?: string };
          try {
            entry = JSON.parse(line);
          } catch {
            continue;
          }
          if (entry.msg === 'listening' && typeof entry.url === 'string') {
            clearTimeout(timer);
            child.stdout!.off('data', look);
            child.off('exit', early);
            resolve(entry.url);
            return;
          }
        }
      };
      const early = (code: number | null) => {
        clearTimeout(timer);
        child.stdout!.off('data', look);
        reject(new Error(`the service exited with ${code} before listening; stderr: ${stderr}`));
      };
      child.stdout!.on('data', look);
      child.once('exit', early);
      look();
      if (child.exitCode !== null || child.signalCode !== null) early(child.exitCode);
    });
  }

  return {
    child,
    stdoutText: () => stdout,
    stderrText: () => stderr,
    exited,
    listening,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Starts the real service (see `spawnServiceProcess`) on a free port; resolves once it listens. */
export async function startServiceProcess(
  env: Record<string, string>,
  timeoutMs = 20_000,
  cwd = workDir,
  command: ServiceCommand = developmentCommand(),
): Promise<ServiceProcess> {
  const service = spawnServiceProcess(env, cwd, command);
  return { ...service, ...createClient(await service.listening(timeoutMs)) };
}
