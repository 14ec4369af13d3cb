// The production start: the compiled dist/ (`npm run build`, which `npm test` runs first) started
// as `npm run start:prod` and the container do it, with plain node and no TypeScript loader. It runs
// from a directory laid out like the container's (no src/, and only the production packages: no
// tsx, esbuild or Preact), so a file the compiled code still looked for under src/, or a
// development package it still needed, would fail here. .ci/run runs the suite on every Node line package.json's
// engines admits, the container's among them, so this covers each.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeInstallDir, productionCommand, root, startServiceProcess, type ServiceProcess } from './run-script.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';

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
  const install = makeInstallDir();
  const databasePath = join(install, 'data', 'service.db');
  let service: ServiceProcess;

  before(async () => {
    // The fake model and the tool's API below listen on 127.0.0.1.
    service = await startServiceProcess(
      { DATABASE_PATH: databasePath, ALLOW_PRIVATE_NETWORKS: 'on' },
      20_000,
      install,
      productionCommand(),
    );
  });

  test('the process runs JavaScript only: no tsx loader among its arguments', () => {
    const args = readFileSync(`/proc/${service.child.pid}/cmdline`, 'utf8').split('\0');
    assert.ok(args.includes('dist/main.js'), args.join(' '));
    assert.ok(!args.some((arg) => arg.includes('tsx')), args.join(' '));
  });

  test('healthz, sign-up, sign-in, create and read an agent', async (t) => {
    const rss = rssMiB(service.child.pid!);
    if (rss !== undefined) t.diagnostic(`RSS after start: ${rss.toFixed(1)} MiB on node ${process.version}`);

    const health = await service.request('GET', '/healthz');
    assert.equal(health.status, 200, health.text);
    assert.equal(health.body.data.status, 'ok');

    const { token } = await service.signUp('Prod'); // sign-up, then sign-in
    const created = await service.create(token, '/agents', {
      name: 'Compiled',
      type: 'REACT',
      llm: { model: 'model-x', provider: 'provider-y', api_key: 'sk-prod-start' },
    });
    const read = await service.request('GET', `/api/v1/agents/${created.id}`, { token });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.data.name, 'Compiled');
    assert.doesNotMatch(read.text, /sk-prod-start/);
  });

  test('files the compiled code reads at run time are found from dist/', async () => {
    // The OpenAPI version comes from package.json, the docs page script from dist/docs/.
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const openapi = await service.request('GET', '/api/v1/openapi.json');
    assert.equal(openapi.status, 200);
    assert.equal(openapi.body.info.version, version);
    const script = await service.request('GET', '/docs/swagger-init.js');
    assert.equal(script.status, 200);
    assert.equal(script.text, readFileSync(join(root, 'src', 'docs', 'swagger-init.js'), 'utf8'));
  });

  test('the console is served from the bundle the build made: the page, its script and its stylesheet', async () => {
    // No src/ here, and no bundling at run time: the build wrote the console's files into dist/.
    const page = await service.request('GET', '/');
    assert.equal(page.status, 200, page.text.slice(0, 300));
    assert.match(page.text, /<div id="app">/);
    const files = [...page.text.matchAll(/(?:src|href)="console\/(app\.[\w-]+\.(?:js|css))"/g)].map((match) => match[1]);
    assert.equal(files.length, 2, page.text);
    for (const file of files) {
      const asset = await service.request('GET', `/console/${file}`);
      assert.equal(asset.status, 200, file);
      assert.ok(asset.text.length > 1000, `${file} has ${asset.text.length} characters`);
    }
  });

  test('an agent runs in the build: a streamed invoke whose model calls an OPENAPI tool described in YAML', async (t) => {
    // The model client, the JSON Schema validator and the YAML reader are loaded on first use, from
    // the build's chunks: this is the request that loads them.
    const fake = await startFakeOpenAI();
    const api = createServer((req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url })),
    );
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => api.close(resolve)));
    const spec = [
      'openapi: 3.0.0',
      'info: { title: Echo, version: "1" }',
      `servers: [{ url: "http://127.0.0.1:${(api.address() as AddressInfo).port}" }]`,
      'paths:',
      '  /echo/{word}:',
      '    get:',
      '      operationId: echo',
      '      parameters: [{ name: word, in: path, required: true, schema: { type: string } }]',
    ].join('\n');

    const { token } = await service.signUp('Runner');
    const agent = await service.create(token, '/agents', {
      name: 'Runner',
      type: 'VENDOR_A',
      llm: { provider: 'openai', model: 'm', baseUrl: fake.url },
    });
    const tool = await service.create(token, '/tools', { name: 'Echo', type: 'OPENAPI', metadata: { spec } });
    await service.create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
    fake.reply({ toolCalls: [{ name: 'echo_echo', arguments: '{"word":"otter"}' }] }, { text: 'It said otter.' });

    const response = await fetch(`${service.url}/api/v1/agents/${agent.id}/invoke`, {
      method: 'POST',
      headers: { Autorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'Echo otter', stream: true }),
    });
    assert.equal(response.status, 200);
    const text = await response.text();
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((match) => match[1]);
    assert.equal(events[0], 'run', text);
    assert.equal(events.at(-1), 'done', text);
    assert.match(text, /"output":"\{\\"path\\":\\"\/echo\/otter\\"\}"/);
    assert.match(text, /It said otter\./);
    assert.deepEqual(
      fake.requests[0].body.tools.map((entry: { function: { name: string } }) => entry.function.name),
      ['echo_echo'],
    );
  });

  test("/mcp answers from the build: the MCP SDK, loaded at the first request, lists the caller's agents", async () => {
    const { token } = await service.signUp('Mcp');
    await service.create(token, '/agents', { name: 'Bundled', type: 'REACT', llm: { model: 'm', provider: 'openai' } });
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const client = new Client({ name: 'prod-start', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), ['bundled', 'search_documents']);
    await client.close();
  });

  test('SIGTERM stops it cleanly and the WAL is folded back into the database', async () => {
    assert.equal(await service.stop(), 0, service.stderrText());
    assert.equal(statSync(`${databasePath}-wal`, { throwIfNoEntry: false })?.size ?? 0, 0);
  });
});
