// Running the operator scripts (scripts/*.ts) and the real service (src/main.ts) as processes, the
// way an operator does, each against a database path the test chooses.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));

export interface ScriptResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A clean environment: only PATH and what the test gives (so a developer's settings never leak in). */
const cleanEnv = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env });

/** Runs `node --import tsx <script> ...args` (or any command) to the end, feeding `input` on stdin. */
export function runScript(script: string, args: string[], env: Record<string, string>, input?: string): Promise<ScriptResult> {
  return runCommand(process.execPath, ['--import', 'tsx', script, ...args], env, input);
}

export function runCommand(command: string, args: string[], env: Record<string, string>, input?: string): Promise<ScriptResult> {
  const child = spawn(command, args, { cwd: root, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
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

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the real service (`node --import tsx src/main.ts`) on a free port; resolves once it listens. */
export function startServiceProcess(env: Record<string, string>, timeoutMs = 20_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', RATE_LIMIT: 'off', LOG_REQUESTS: 'off', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Never leave a process behind when a test fails half-way. (Not node:test's `after`: called
  // inside a test, it would stop the service when that test ends, and a service may span tests.)
  const killLeftover = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killLeftover);
  child.once('exit', () => process.off('exit', killLeftover));
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not listen within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /"msg":"listening","url":"([^"]+)"/.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1],
        child,
        stop: () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited with ${code} before listening: ${stderr}`));
    });
  });
}
