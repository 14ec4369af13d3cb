// The README's shell examples, run as a newcomer runs them, so they cannot drift from the service.
//
// Which blocks run: every ```sh block whose fence is preceded by the line `<!-- readme-test -->`
// (an HTML comment: invisible on GitHub). They run in the order they appear, in one bash session,
// against a live service process (`npm start`'s command, on a temporary database, PORT=0), the way
// the walk-through says to start it (ALLOW_PRIVATE_NETWORKS=on). Every sh block of the walk-through
// must be marked; Running agents marks those that need nothing but this service (not the ones
// that start a model server or create tools aimed at hosts on the internet).
//
// How they run, and what is checked:
// - `http://127.0.0.1:3000` is replaced by the live service's URL, and the walk-through's file
//   server port 8000 by a free port (tests run side by side); nothing else is changed;
// - the session runs under `set -euo pipefail`, and `curl` is a function adding `--fail-with-body`,
//   so an HTTP error answer (the 422 of a missing prompt variable, say) fails the block that got it;
// - each block must exit 0, and each line `# → <text>` in a block is a line its output must hold,
//   in that order (the README shows those lines as what the command before prints).
// curl, jq and python3 must be installed (the walk-through uses them); without one the test skips
// saying which.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, startServiceProcess } from './run-script.js';

const MARK = '<!-- readme-test -->';
const EXPECTED = '# → ';

interface Block {
  /** The README line the block's code starts on (1-based). */
  line: number;
  section: string;
  code: string;
  /** The lines its output must hold, in order. */
  expected: string[];
}

/** The ```sh blocks of the README with the `##` section each is in, and whether it is marked to run. */
function shellBlocks(readme: string): (Block & { marked: boolean })[] {
  const lines = readme.split('\n');
  const blocks: (Block & { marked: boolean })[] = [];
  let section = '';
  for (let at = 0; at < lines.length; at += 1) {
    if (lines[at].startsWith('## ')) section = lines[at].slice(3).trim();
    if (lines[at].trim() !== '```sh') continue;
    let previous = at - 1;
    while (previous >= 0 && lines[previous].trim() === '') previous -= 1;
    const start = at + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== '```') end += 1;
    const code = lines.slice(start, end);
    blocks.push({
      line: start + 1,
      section,
      code: code.join('\n'),
      expected: code.filter((line) => line.startsWith(EXPECTED)).map((line) => line.slice(EXPECTED.length).trimEnd()),
      marked: previous >= 0 && lines[previous].trim() === MARK,
    });
    at = end;
  }
  return blocks;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const missing = ['curl', 'jq', 'python3'].filter((command) => spawnSync('sh', ['-c', `command -v ${command}`]).status !== 0);

test('the shell blocks of the walk-through and Running agents run in order against a live service and print what the README says', async (t) => {
  if (missing.length > 0) return t.skip(`needs ${missing.join(', ')} (the walk-through uses them)`);
  const blocks = shellBlocks(readFileSync(join(root, 'README.md'), 'utf8'));
  const walkThrough = blocks.filter((block) => block.section === 'Walk-through with curl');
  assert.ok(walkThrough.length > 0, 'the README has a walk-through with sh blocks');
  for (const block of walkThrough) assert.ok(block.marked, `the walk-through's block at README line ${block.line} is marked ${MARK}`);
  const running = blocks.filter((block) => block.marked && block.section === 'Running agents');
  assert.ok(running.length > 0, `Running agents has blocks marked ${MARK}`);
  const toRun = blocks.filter((block) => block.marked);
  assert.deepEqual(
    toRun.filter((block) => !['Walk-through with curl', 'Running agents'].includes(block.section)).map((block) => block.line),
    [],
    'only the walk-through and Running agents are run',
  );

  const dir = mkdtempSync(join(tmpdir(), 'ams-readme-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const service = await startServiceProcess({ DATABASE_PATH: join(dir, 'service.db'), ALLOW_PRIVATE_NETWORKS: 'on' }, 60_000);
  after(() => service.stop());
  const filePort = String(await freePort());

  // One script: the blocks in order, each followed by a marker line, so the output splits by block.
  const marker = (index: number) => `@@ readme block ${index} done @@`;
  const script = [
    'set -euo pipefail',
    'curl() { command curl --fail-with-body "$@"; }',
    ...toRun.map((block, index) =>
      [
        block.code
          .replaceAll('http://127.0.0.1:3000', service.url)
          .replaceAll('127.0.0.1:8000', `127.0.0.1:${filePort}`)
          .replaceAll('http.server 8000', `http.server ${filePort}`),
        `echo '${marker(index)}'`,
      ].join('\n'),
    ),
  ].join('\n');
  // In a process group of its own: the walk-through leaves its file server running in the
  // background, and the whole group is ended afterwards.
  const bash = spawn('bash', ['-c', script], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, TMPDIR: dir, LANG: 'C.UTF-8' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  bash.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const endGroup = () => {
    try {
      process.kill(-bash.pid!, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  };
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(endGroup, 180_000);
    // The file server still holds the output pipes (python3 may hand them on to it): end it as bash ends.
    bash.on('exit', endGroup);
    bash.on('close', (exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
  });

  const outputs = stdout.split(/^@@ readme block \d+ done @@\n/m);
  for (const [index, block] of toRun.entries()) {
    const output = outputs[index] ?? '';
    const where = `the README's block at line ${block.line} (${block.section})`;
    if (index >= outputs.length - 1) {
      assert.fail(`${where} failed (bash exited ${code}).\nIts output:\n${output}\nstderr:\n${stderr}\nThe block:\n${block.code}`);
    }
    const lines = output.split('\n').map((line) => line.trimEnd());
    let from = 0;
    for (const expected of block.expected) {
      const found = lines.indexOf(expected, from);
      assert.ok(found !== -1, `${where} prints "${expected}" (after what it printed before).\nIts output:\n${output}\nstderr:\n${stderr}`);
      from = found + 1;
    }
  }
  assert.equal(code, 0, stderr);
});
