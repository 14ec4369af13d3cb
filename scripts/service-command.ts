// How the service is started, read from the one place that says it: package.json's `start` script.
// The benchmark and the tests start the service exactly this way; a test keeps the Dockerfile's CMD
// the same. (The V8 flags in it keep peak memory down: see README "Performance".)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The arguments `npm start` passes to node, e.g. ['--max-semi-space-size=4', '--import', 'tsx', 'src/main.ts']. */
export function serviceNodeArgs(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  // `exec`: the shell npm runs the script in becomes node, so the SIGTERM npm passes on reaches the
  // service (a shell would die of it and leave node running).
  const [exec, command, ...args] = scripts.start.trim().split(/\s+/);
  if (exec !== 'exec' || command !== 'node' || args.at(-1) !== 'src/main.ts') {
    throw new Error(`package.json "start" must be "exec node [flags] src/main.ts", not: ${scripts.start}`);
  }
  return args;
}
