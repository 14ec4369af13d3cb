// The container image's build, without a Docker engine: the Dockerfile is read, each stage's COPY
// instructions lay out exactly the files that stage would have in a temporary directory (the build
// context filtered by .dockerignore, or another stage's files for `COPY --from`), and the stage's
// commands run there: `npm run build` in the build stage, `npm run start:prod` in the runtime stage,
// which must then answer /healthz and serve the console, and the operator scripts must run there.
// A file the build needs that the Dockerfile does not copy fails here as it fails in `docker build`,
// and so does a package the runtime needs that is only a development dependency.
//
// What stands in for the rest of the image: `npm ci` is replaced by a link to this checkout's
// node_modules/ (installed from the same package-lock.json; a real `npm ci` needs the registry and
// minutes of compiling), and `npm prune --omit=dev` by a node_modules/ of links to only the
// packages package-lock.json does not mark `dev` (what the prune keeps). The runtime stage's other
// RUN lines (tini, the Litestream link, the data directory's owner) are system set-up outside the
// application's files; only the data directory is made.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, relative } from 'node:path';
import { linkProductionPackages, root, runCommand, startServiceProcess } from './run-script.js';

/** One `COPY [--from=stage] <source>... <destination>` of a stage. */
interface Copy {
  from?: string;
  sources: string[];
  destination: string;
}

interface Stage {
  name: string;
  workdir: string;
  env: Record<string, string>;
  copies: Copy[];
  runs: string[];
}

/** The Dockerfile's stages, with the instructions this test acts on (continued lines joined, comments dropped). */
function parseDockerfile(text: string): Stage[] {
  const lines: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw)) continue;
    const line = pending + raw.trim();
    if (line.endsWith('\\')) pending = `${line.slice(0, -1)} `;
    else {
      pending = '';
      if (line) lines.push(line);
    }
  }
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, keyword, rest] = /^(\S+)\s+(.*)$/.exec(line) ?? [];
    const instruction = keyword?.toUpperCase();
    if (instruction === 'FROM') {
      const name = /\sAS\s+(\S+)$/i.exec(rest)?.[1] ?? String(stages.length);
      stages.push({ name, workdir: '/', env: {}, copies: [], runs: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) continue;
    if (instruction === 'WORKDIR') stage.workdir = posix.resolve(stage.workdir, rest);
    else if (instruction === 'RUN') stage.runs.push(rest);
    else if (instruction === 'ENV') {
      for (const [, key, value] of rest.matchAll(/(\w+)=(\S+)/g)) stage.env[key] = value;
    } else if (instruction === 'COPY' || instruction === 'ADD') {
      assert.equal(instruction, 'COPY', `ADD is not laid out by this test: ${line}`);
      const words = rest.startsWith('[') ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
      let from: string | undefined;
      while (words[0]?.startsWith('--')) {
        const flag = words.shift()!;
        if (flag.startsWith('--from=')) from = flag.slice('--from='.length);
      }
      const destination = words.pop()!;
      stage.copies.push({ from, sources: words, destination });
    }
  }
  return stages;
}

/** .dockerignore as a test: true for a context path (relative, `/`-separated) that `docker build` leaves out. */
function dockerIgnore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const keep = line.startsWith('!');
      const pattern = posix.normalize((keep ? line.slice(1) : line).replace(/^\/+/, ''));
      const source = pattern
        .split(/(\*\*|\*|\?)/)
        .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('');
      return { keep, regex: new RegExp(`^${source}$`) };
    });
  return (path) => {
    // A pattern that names a directory leaves out everything under it; the last matching rule wins.
    const prefixes = path.split('/').map((_, index, parts) => parts.slice(0, index + 1).join('/'));
    let ignored = false;
    for (const rule of rules) if (prefixes.some((prefix) => rule.regex.test(prefix))) ignored = !rule.keep;
    return ignored;
  };
}

/**
 * Lays out a stage's COPYs in `dir` (which stands for its WORKDIR): a directory's contents go into the
 * destination, a file goes into it when it ends in `/` (or several sources are given), else becomes it.
 */
function layOut(
  stage: Stage,
  dir: string,
  stageDirs: Map<string, { stage: Stage; dir: string }>,
  ignored: (path: string) => boolean,
): void {
  const inStage = (workdir: string, base: string, path: string) => {
    const inside = posix.relative(workdir, posix.resolve(workdir, path));
    assert.ok(!inside.startsWith('..'), `${path} is outside the stage's WORKDIR ${workdir}: this test lays out only the WORKDIR`);
    return join(base, inside);
  };
  for (const copy of stage.copies) {
    const into = copy.destination.endsWith('/') || copy.sources.length > 1;
    for (const source of copy.sources) {
      let from: string;
      let filter = (_path: string) => true;
      if (copy.from !== undefined) {
        const other = stageDirs.get(copy.from);
        assert.ok(other, `COPY --from=${copy.from}: no earlier stage of that name`);
        from = inStage(other.stage.workdir, other.dir, source);
      } else {
        from = join(root, source);
        filter = (path) => !ignored(relative(root, path).split('\\').join('/'));
        assert.ok(!ignored(posix.normalize(source)), `COPY ${source}: .dockerignore leaves it out of the build context`);
      }
      // `docker build` stops here too: "COPY failed: ... not found".
      assert.ok(existsSync(from), `COPY ${source} ${copy.destination}: ${source} does not exist`);
      const target = inStage(stage.workdir, dir, copy.destination);
      const to = statSync(from).isDirectory() ? target : into ? join(target, basename(source)) : target;
      mkdirSync(dirname(to), { recursive: true });
      cpSync(from, to, { recursive: true, filter });
    }
  }
}

/** The development tools the image must run without: the TypeScript loader, the bundler, the console's UI library. */
const DEVELOPMENT_TOOLS = ['tsx', 'esbuild', 'preact'];

const dockerfile = parseDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'));
const ignored = dockerIgnore(existsSync(join(root, '.dockerignore')) ? readFileSync(join(root, '.dockerignore'), 'utf8') : '');
const work = mkdtempSync(join(tmpdir(), 'ams-docker-'));
after(() => rmSync(work, { recursive: true, force: true }));
const stageDirs = new Map<string, { stage: Stage; dir: string }>();

describe('the container image builds from the files its Dockerfile copies', () => {
  const [build, runtime] = [dockerfile.at(0)!, dockerfile.at(-1)!];

  test('the Dockerfile has a build stage and a runtime stage that copies from it', () => {
    assert.equal(dockerfile.length, 2, dockerfile.map((stage) => stage.name).join(', '));
    assert.equal(build.name, 'build');
    assert.ok(runtime.copies.some((copy) => copy.from === 'build'));
    // The commands stood in for below.
    assert.ok(
      build.runs.some((run) => /\bnpm ci\b/.test(run)),
      build.runs.join('\n'),
    );
    assert.ok(
      build.runs.some((run) => /\bnpm run build\b.*\bnpm prune --omit=dev\b/.test(run)),
      build.runs.join('\n'),
    );
  });

  test('the build stage: `npm run build` type-checks and bundles with only the copied files', async () => {
    const dir = join(work, 'build');
    mkdirSync(dir);
    layOut(build, dir, stageDirs, ignored);
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir'); // stands for `npm ci`

    const result = await runCommand('npm', ['run', 'build'], { npm_config_update_notifier: 'false' }, undefined, dir);
    assert.equal(result.code, 0, `npm run build failed in the build stage's files:\n${result.stdout}\n${result.stderr}`);
    assert.ok(existsSync(join(dir, 'dist', 'main.js')));

    // `npm prune --omit=dev`: what the runtime stage copies from here has no development tools.
    const kept = linkProductionPackages(dir);
    assert.deepEqual(
      DEVELOPMENT_TOOLS.filter((name) => kept.includes(name)),
      [],
      'package.json must list these as devDependencies: the image carries no development tooling',
    );
    stageDirs.set(build.name, { stage: build, dir });
  });

  test('the runtime stage: `npm run start:prod` with the copied files answers /healthz, serves the console and runs the operator scripts', async (t) => {
    assert.ok(stageDirs.has(build.name), 'the build stage did not build (see the test above)');
    const dir = join(work, 'runtime');
    mkdirSync(dir);
    layOut(runtime, dir, stageDirs, ignored);
    mkdirSync(join(dir, 'data')); // the volume's directory, made by a RUN line
    // The build's output only: no TypeScript sources, no compiler settings, no development packages.
    assert.ok(!existsSync(join(dir, 'src')), 'the runtime stage copies src/');
    assert.ok(!existsSync(join(dir, 'tsconfig.json')), 'the runtime stage copies tsconfig.json');
    assert.deepEqual(
      readdirSync(join(dir, 'scripts'), { recursive: true }).filter((file) => String(file).endsWith('.ts')),
      [],
    );
    for (const name of DEVELOPMENT_TOOLS)
      assert.ok(!existsSync(join(dir, 'node_modules', name)), `node_modules/${name} in the runtime stage`);

    // The image's environment, except where the service listens and where its data is.
    const env = {
      ...runtime.env,
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_PATH: join(dir, 'data', 'service.db'),
      npm_config_update_notifier: 'false',
    };
    const service = await startServiceProcess(env, 30_000, dir, { file: 'npm', args: ['run', 'start:prod'], detached: true });
    t.after(() => service.stop());

    const health = await service.request('GET', '/healthz');
    assert.equal(health.status, 200, health.text);
    assert.equal(health.body.data.status, 'ok');
    // The console's files were bundled by the build stage and reached the runtime stage.
    const page = await service.request('GET', '/');
    assert.equal(page.status, 200, page.text.slice(0, 300));
    const files = [...page.text.matchAll(/(?:src|href)="console\/(app\.[\w-]+\.(?:js|css))"/g)].map((match) => match[1]);
    assert.equal(files.length, 2, page.text);
    for (const file of files) {
      const asset = await service.request('GET', `/console/${file}`);
      assert.equal(asset.status, 200, file);
      assert.ok(asset.text.length > 1000, `${file} has ${asset.text.length} characters`);
    }

    // The operator scripts, as the README runs them in the container (`docker exec <container> npm
    // run ...`), beside the running service and on its database.
    const operator = (args: string[], input?: string) => runCommand('npm', ['run', '-s', ...args], env, input, dir);
    const created = await operator(['user:create', '--', '--email', 'Ops@Example.com', '--name', 'Ops'], 'a long password\n');
    assert.equal(created.code, 0, created.stderr);
    const users = await operator(['user:list', '--', '--json']);
    assert.equal(users.code, 0, users.stderr);
    assert.deepEqual(
      (JSON.parse(users.stdout) as { email: string; name: string }[]).map(({ email, name }) => ({ email, name })),
      [{ email: 'ops@example.com', name: 'Ops' }],
    );
    const stats = await operator(['db:stats', '--', '--json']);
    assert.equal(stats.code, 0, stats.stderr);
    assert.equal(JSON.parse(stats.stdout).rows.users, 1);
    const backup = await operator(['backup', '--', join(dir, 'data', 'backup.db')]);
    assert.equal(backup.code, 0, backup.stderr);
    assert.ok(existsSync(join(dir, 'data', 'backup.db')));
  });
});
