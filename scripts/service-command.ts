// How the service is started, read from the one place that says it: package.json's `start` script
// (TypeScript through tsx, for development) and `start:prod` (the compiled dist/, for production).
// The benchmark and the tests start the service these ways; a test keeps the Dockerfile's CMD equal
// to `start:prod`. (The V8 flags keep peak memory down: see docs/operations.md, "Production start".)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function nodeArgsOf(script: 'start' | 'start:prod', entry: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  // `exec`: the shell npm runs the script in becomes node, so the SIGTERM npm passes on reaches the
  // service (a shell would die of it and leave node running).
  const [exec, command, ...args] = (scripts[script] ?? '').trim().split(/\s+/);
  if (exec !== 'exec' || command !== 'node' || args.at(-1) !== entry) {
    throw new Error(`package.json "${script}" must be "exec node [flags] ${entry}", not: ${scripts[script]}`);
  }
  return args;
}

/** The arguments `npm start` passes to node, e.g. ['--max-semi-space-size=4', '--import', 'tsx', 'src/main.ts']. */
export function serviceNodeArgs(): string[] {
  return nodeArgsOf('start', 'src/main.ts');
}

/** The arguments `npm run start:prod` passes to node (after `npm run build`), e.g. ['--max-semi-space-size=4', 'dist/main.js']. */
export function productionNodeArgs(): string[] {
  return nodeArgsOf('start:prod', 'dist/main.js');
}
