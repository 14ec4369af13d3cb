// The production start: the compiled dist/ (`npm run build`, which `npm test` runs first) started
// as `npm run start:prod` and the container do it, with plain node and no TypeScript loader. It runs
// from a directory laid out like the container's (dist/, schema.sql, migrations/, package.json,
// node_modules/ — no src/), so a file the compiled code still looked for under src/ would fail here.
// The suite runs on Node 20 and on the container's Node line (.ci/run), so this covers both.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { productionCommand, root, startServiceProcess, type ServiceProcess } from './run-script.js';

const install = mkdtempSync(join(tmpdir(), 'ams-prod-'));
const databasePath = join(install, 'data', 'service.db');
after(() => rmSync(install, { recursive: true, force: true }));

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(url: string, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.Autorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

/** Resident memory of a process in MiB (Linux). */
function rssMiB(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

describe('production start: compiled dist/main.js with plain node', () => {
  let service: ServiceProcess;

  before(async () => {
    assert.ok(existsSync(join(root, 'dist', 'main.js')), 'dist/main.js is missing: run `npm run build` (npm test does it first)');
    for (const entry of ['dist', 'schema.sql', 'migrations', 'package.json']) cpSync(join(root, entry), join(install, entry), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(install, 'node_modules'), 'dir');
    service = await startServiceProcess({ DATABASE_PATH: databasePath }, 20_000, { ...productionCommand(), cwd: install });
  });

  test('the process runs JavaScript only: no tsx loader among its arguments', () => {
    const args = readFileSync(`/proc/${service.child.pid}/cmdline`, 'utf8').split('\0');
    assert.ok(args.includes('dist/main.js'), args.join(' '));
    assert.ok(!args.some((arg) => arg.includes('tsx')), args.join(' '));
  });

  test('healthz, sign-up, sign-in, create and read an agent', async (t) => {
    const rss = rssMiB(service.child.pid!);
    if (rss !== undefined) t.diagnostic(`RSS after start: ${rss.toFixed(1)} MiB on node ${process.version}`);

    const health = await call(service.url, 'GET', '/healthz');
    assert.equal(health.status, 200, JSON.stringify(health.body));
    assert.equal(health.body.data.status, 'ok');

    const email = 'prod.start@example.com';
    const password = 'correct horse battery';
    const up = await call(service.url, 'POST', '/api/v1/auth/sign-up', undefined, { name: 'Prod', email, password });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const signIn = await call(service.url, 'POST', '/api/v1/auth/sign-in', undefined, { email, password });
    assert.equal(signIn.status, 200, JSON.stringify(signIn.body));
    const token = signIn.body.data.token as string;

    const created = await call(service.url, 'POST', '/api/v1/agents', token, {
      name: 'Compiled',
      type: 'REACT',
      llm: { model: 'model-x', provider: 'provider-y', api_key: 'sk-prod-start' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const read = await call(service.url, 'GET', `/api/v1/agents/${created.body.data.id}`, token);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.data.name, 'Compiled');
    assert.doesNotMatch(JSON.stringify(read.body), /sk-prod-start/);
  });

  test('files the compiled code reads at run time are found from dist/', async () => {
    // The OpenAPI version comes from package.json, the docs page script from dist/docs/.
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const openapi = await call(service.url, 'GET', '/api/v1/openapi.json');
    assert.equal(openapi.status, 200);
    assert.equal(openapi.body.info.version, version);
    const script = await fetch(`${service.url}/docs/swagger-init.js`);
    assert.equal(script.status, 200);
    assert.equal(await script.text(), readFileSync(join(root, 'src', 'docs', 'swagger-init.js'), 'utf8'));
  });

  test('SIGTERM stops it cleanly and the WAL is folded back into the database', async () => {
    assert.equal(await service.stop(), 0, service.stderrText());
    assert.equal(statSync(`${databasePath}-wal`, { throwIfNoEntry: false })?.size ?? 0, 0);
  });
});
