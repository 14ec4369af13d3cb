// The Node.js lines the service runs on: package.json's `engines.node`, a list of whole major lines
// ("20.x || 22.x || 26.x"), each of which .ci/run runs the whole test suite on. On any other line the
// service and the operator scripts refuse to start: the SQLite driver (better-sqlite3, native code
// built against the running Node) is only known to work where it was tested. On Node 24, for one,
// the first garbage collection of a prepared statement aborts the whole process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths.js';

/** The major versions an `engines.node` of the form "20.x || 22.x" admits; any other form is an error. */
export function supportedNodeMajors(engines: string): number[] {
  const lines = engines.split('||').map((line) => /^\s*(\d+)\.x\s*$/.exec(line)?.[1]);
  if (lines.length === 0 || lines.some((line) => line === undefined)) {
    throw new Error(`package.json engines.node must list whole major lines ("20.x || 22.x"), not: ${engines}`);
  }
  return lines.map(Number);
}

/** The `engines.node` of package.json. */
export function packageNodeEngines(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
}

/** The one line that refuses a start on `version` (e.g. "24.21.0"), or undefined when its line is supported. */
export function unsupportedNodeLine(version = process.versions.node, engines = packageNodeEngines()): string | undefined {
  const majors = supportedNodeMajors(engines);
  if (majors.includes(Number(version.split('.')[0]))) return undefined;
  const names = majors.length === 1 ? `${majors[0]}` : `${majors.slice(0, -1).join(', ')} or ${majors.at(-1)}`;
  return `Node ${version} is not supported: run the service on Node ${names} (the lines it is tested on)`;
}
