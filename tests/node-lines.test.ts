// The Node lines the service runs on (package.json "engines", each run by .ci/run): on each of them
// the SQLite driver survives the garbage collection of its prepared statements, and on any other
// line the service and the operator scripts refuse to start with one line saying which lines to use.
// (On Node 24.21 with better-sqlite3 12.11.1, the first collection of a statement ends the process:
// "Assertion failed: (env) != nullptr" in node::RemoveEnvironmentCleanupHook.)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serviceNodeArgs } from '../scripts/service-command.js';
import { supportedNodeMajors, unsupportedNodeLine } from '../src/lib/node-lines.js';
import { absoluteNodeArgs, root, runCommand, spawnServiceProcess } from './run-script.js';

const engines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

/** A child process that prepares (and iterates) many distinct statements, collecting garbage as it goes. */
const collectStatements = `
import Database from 'better-sqlite3';
const db = new Database(':memory:');
db.exec('CREATE TABLE t (n INTEGER)');
db.prepare('INSERT INTO t VALUES (1), (2)').run();
for (let i = 1; i <= 20000; i += 1) {
  db.prepare('SELECT n + ' + i + ' AS v FROM t').get();
  for (const row of db.prepare('SELECT n * ' + i + ' AS v FROM t').iterate()) void row;
  if (i % 2000 === 0) globalThis.gc();
}
db.close();
process.stdout.write('collected on ' + process.version);
`;

/** Node arguments that make the running line look like `version` before anything else loads. */
const pretendNode = (version: string) => [
  '--import',
  `data:text/javascript,Object.defineProperty(process.versions, "node", { value: ${JSON.stringify(version)} })`,
];

describe('Node lines', () => {
  test('engines lists whole major lines, and the line running this test is one of them', () => {
    const majors = supportedNodeMajors(engines);
    assert.ok(majors.includes(20), engines);
    assert.ok(majors.includes(Number(process.versions.node.split('.')[0])), `${process.version} is not in engines "${engines}"`);
    assert.equal(unsupportedNodeLine(), undefined);
    assert.throws(() => supportedNodeMajors('>=20'), /whole major lines/);
  });

  test('prepared statements and their iterators are garbage-collected without ending the process', async () => {
    const result = await runCommand(process.execPath, ['--expose-gc', '--input-type=module', '-e', collectStatements], {});
    assert.equal(result.code, 0, `exit ${result.code} on ${process.version}\n${result.stderr.slice(0, 2000)}`);
    assert.equal(result.stdout, `collected on ${process.version}`);
  });

  test('the service refuses to start on a line engines does not list, with one line saying which to use', async () => {
    const majors = supportedNodeMajors(engines);
    assert.ok(!majors.includes(24), 'Node 24 stays refused while its garbage collection of statements aborts');
    const service = spawnServiceProcess({}, undefined, {
      file: process.execPath,
      args: [...pretendNode('24.21.0'), ...absoluteNodeArgs(serviceNodeArgs())],
    });
    assert.equal(await service.exited, 1, service.stderrText());
    const names = `${majors.slice(0, -1).join(', ')} or ${majors.at(-1)}`;
    assert.equal(
      service.stderrText(),
      `cannot start: Node 24.21.0 is not supported: run the service on Node ${names} (the lines it is tested on)\n`,
    );
    assert.equal(service.stdoutText(), '');
    // Every line engines lists is admitted, every other one refused.
    for (const major of [18, 19, 20, 21, 22, 23, 24, 25, 26, 27]) {
      const refusal = unsupportedNodeLine(`${major}.1.0`);
      if (majors.includes(major)) assert.equal(refusal, undefined);
      else assert.equal(refusal, `Node ${major}.1.0 is not supported: run the service on Node ${names} (the lines it is tested on)`);
    }
  });

  test('so do the operator scripts, before they open the database', async () => {
    const result = await runCommand(
      process.execPath,
      [...pretendNode('24.21.0'), ...absoluteNodeArgs(['--import', 'tsx', 'scripts/admin-user-list.ts'])],
      {},
    );
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stderr, `error: ${unsupportedNodeLine('24.21.0')}\n`);
  });
});
