// OPENAPI specs made to stall or crash the service: YAML on which the YAML reader spends seconds
// (or prints a warning per line), and chains of `$ref`s pointing at `$ref`s. Given inline, each is
// a 422 on `metadata.spec` at once; by URL, the tool is left out with a warning, never a 500; the
// service answers /healthz all along, and a spec that cannot be read is not read again each run.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { startRecordingServer } from './fixtures/recording-server.js';
import { assertInvalid, startService, testConfig, type Json, type Reply } from './helpers.js';

/** The longest /healthz may wait while a hostile spec is read: generous for a busy machine, far below the seconds the reading took. */
const HEALTHZ_BOUND_MS = 1000;

/** A spec whose one operation's body is the first of a chain of `length` schemas, each only a `$ref` to the next. */
function chainSpec(length: number, refsPerOperation = 1, operations = 1): Json {
  const a: Json = {};
  for (let i = 0; i < length; i += 1) a[i.toString(36)] = { $ref: `#/a/${(i + 1).toString(36)}` };
  a[length.toString(36)] = {};
  const schema =
    refsPerOperation === 1 ? { $ref: '#/a/0' } : { items: Array.from({ length: refsPerOperation }, () => ({ $ref: '#/a/0' })) };
  const paths: Json = {};
  for (let o = 0; o < operations; o += 1) {
    paths[`/${o}`] = { post: { operationId: `o${o}`, requestBody: { content: { 'application/json': { schema } } } } };
  }
  return { openapi: '3.0.0', servers: [{ url: 'https://api.example.com' }], paths, a };
}

/** YAML texts the `yaml` package read in time growing with the square of their length (or, the last, with a warning per line). */
const BAD_YAML: Record<string, (size: number) => string> = {
  'closing braces': (size) => '}'.repeat(size),
  'escapes in a double-quoted string': (size) => `a: "${'x\\'.repeat(size / 3)}"`,
  'anchors without a name': (size) => `a: ${'& '.repeat(size / 2)}`,
  'unknown directives': (size) => '%a\n'.repeat(size / 4),
};

const specs = new Map<string, string>();
const fixture = await startRecordingServer((req, res) => {
  const text = specs.get(req.url ?? '');
  res.writeHead(text === undefined ? 404 : 200, { 'content-type': 'application/yaml' }).end(text ?? 'no');
});
after(() => {
  fixture.server.closeAllConnections();
  fixture.server.close();
});
const fake = await startFakeOpenAI();
const service = await startService({
  runs: {
    ...testConfig().runs,
    openaiBaseUrl: fake.url,
    openaiApiKey: 'operator-key',
    ollamaBaseUrl: fake.url,
    timeoutMs: 60_000,
    maxSteps: 4,
  },
});
const { request, create } = service;

/** Serves `text` from the fixture; returns its URL. */
function serve(path: string, text: string): string {
  specs.set(path, text);
  return `${fixture.base}${path}`;
}

const fetchesOf = (path: string) => fixture.seen.filter((seen) => seen.path === path).length;

/**
 * `work` while /healthz is asked over and over; fails when one answer came later than
 * HEALTHZ_BOUND_MS after the one before it (the service's event loop was held that long).
 */
async function withHealthzAnswering<T>(work: () => Promise<T>): Promise<T> {
  let done = false;
  const running = work().finally(() => (done = true));
  let slowest = 0;
  let last = performance.now();
  while (!done) {
    assert.equal((await fetch(`${service.url}/healthz`)).status, 200);
    const now = performance.now();
    slowest = Math.max(slowest, now - last);
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const result = await running;
  assert.ok(slowest < HEALTHZ_BOUND_MS, `/healthz waited ${Math.round(slowest)} ms`);
  return result;
}

/** An agent of `token`'s using the tools (created from `tools`); the model answers text. */
async function agentWith(token: string, tools: Json[]): Promise<Json> {
  const agent = await create(token, '/agents', { name: 'Hostile', type: 'VENDOR_A', llm: { provider: 'openai', model: 'fake-model' } });
  for (const body of tools) {
    const tool = await create(token, '/tools', body);
    await create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
  }
  return agent;
}

function assertOk(reply: Reply, what: string): void {
  assert.equal(reply.status, 200, `${what}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`);
}

describe('YAML the reader would spend seconds over', () => {
  test('inline, each shape (64 KiB) is a 422 on metadata.spec at once, on create and PATCH; nothing is printed, nothing stored', async () => {
    const { token } = await service.signUp();
    const fine = await create(token, '/tools', { name: 'fine', type: 'OPENAPI', metadata: { spec: chainSpec(1) } });
    const printed: string[] = [];
    // What the YAML reader prints goes through process.emitWarning, with the spec's text in it.
    const onWarning = (warning: Error) => {
      if (warning.name === 'YAMLWarning' || warning.message.includes('%a')) printed.push(warning.message);
    };
    process.on('warning', onWarning);
    try {
      for (const [shape, text] of Object.entries(BAD_YAML)) {
        const spec = text(60_000);
        assert.ok(JSON.stringify({ spec }).length < 64 * 1024, `${shape}: within the metadata limit`);
        const created = await withHealthzAnswering(() =>
          request('POST', '/api/v1/tools', { token, body: { name: 'yaml', type: 'OPENAPI', metadata: { spec } } }),
        );
        assert.match(
          assertInvalid(created, 'metadata.spec', shape).details![0].message,
          /^cannot be read: the spec is neither JSON nor YAML \(.+ at line \d+, column \d+\)$/,
          shape,
        );
        const patched = await withHealthzAnswering(() =>
          request('PATCH', `/api/v1/tools/${fine.id}`, { token, body: { name: 'changed', metadata: { spec } } }),
        );
        assertInvalid(patched, 'metadata.spec', shape);
      }
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(printed, [], 'the YAML reader printed warnings');
    const tools = (await request('GET', '/api/v1/tools', { token })).body.data;
    assert.deepEqual(
      tools.map((tool: Json) => tool.name),
      ['fine'],
    );
  });

  test('inline, YAML that reads as no object, or as two documents, is a 422 too; good YAML is taken', async () => {
    const { token } = await service.signUp();
    for (const [spec, message] of [
      ['just words', /^cannot be read: the spec is not a JSON or YAML object$/],
      [
        'openapi: 3.0.0\n---\nopenapi: 3.0.0\n',
        /^cannot be read: the spec is neither JSON nor YAML \(a second YAML document starts at line 2, column 1\)$/,
      ],
    ] as const) {
      const reply = await request('POST', '/api/v1/tools', { token, body: { name: 'odd', type: 'OPENAPI', metadata: { spec } } });
      assert.match(assertInvalid(reply, 'metadata.spec').details![0].message, message);
    }
    const yaml = [
      'openapi: 3.0.0',
      'servers: [{ url: "https://api.example.com" }]',
      'paths: { /pets: { get: { operationId: list } } }',
    ].join('\n');
    await create(token, '/tools', { name: 'good', type: 'OPENAPI', metadata: { spec: yaml } });
  });

  test('by URL, each shape (100 KB) leaves the tool out with a warning at once; the failure is remembered, not read again each run', async () => {
    const { token } = await service.signUp();
    for (const [index, [shape, text]] of Object.entries(BAD_YAML).entries()) {
      const path = `/bad-${index}.yaml`;
      const tool = await create(token, '/tools', { name: 'yaml', type: 'OPENAPI', metadata: { url: serve(path, text(100_000)) } });
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const listed = await withHealthzAnswering(() => request('GET', `/api/v1/tools/${tool.id}/functions`, { token }));
        assertOk(listed, shape);
        assert.deepEqual(listed.body.data.functions, [], shape);
        assert.match(
          listed.body.data.warnings.join('\n'),
          /^tool "yaml" \(OPENAPI\) is not offered: the spec is neither JSON nor YAML \(.+ at line \d+, column \d+\)$/,
          shape,
        );
      }
      assert.equal(fetchesOf(path), 1, `${shape}: fetched and read once`);
    }

    const path = '/run.yaml';
    const agent = await agentWith(token, [{ name: 'yaml', type: 'OPENAPI', metadata: { url: serve(path, '}'.repeat(100_000)) } }]);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const reply = await withHealthzAnswering(() =>
        request('POST', `/api/v1/agents/${agent.id}/invoke`, { token, body: { input: 'hi' } }),
      );
      assertOk(reply, 'invoke');
      assert.deepEqual(reply.body.data.warnings, [
        'tool "yaml" (OPENAPI) is not offered: the spec is neither JSON nor YAML (Unexpected flow-map-end token in YAML document at line 1, column 1)',
      ]);
    }
    assert.equal(fetchesOf(path), 1, 'the second run did not read the spec again');
  });
});

describe('chains of $refs each pointing at the next', () => {
  test('inline, a chain of 2,500 (60 KB) is a 422 naming the limit, not a 500', async () => {
    const { token } = await service.signUp();
    for (const length of [2_500, 2_690]) {
      const spec = chainSpec(length);
      assert.ok(JSON.stringify({ spec }).length < 64 * 1024);
      const reply = await withHealthzAnswering(() =>
        request('POST', '/api/v1/tools', { token, body: { name: 'chain', type: 'OPENAPI', metadata: { spec } } }),
      );
      assert.match(
        assertInvalid(reply, 'metadata.spec', `chain of ${length}`).details![0].message,
        /^is too large to offer: operation o0: its schema comes to more than 1000 parts once \$refs are inlined/,
      );
    }
    // A short chain is one schema, as before.
    const short = await create(token, '/tools', { name: 'short', type: 'OPENAPI', metadata: { spec: chainSpec(50) } });
    const listed = await request('GET', `/api/v1/tools/${short.id}/functions`, { token });
    assertOk(listed, 'functions');
    assert.deepEqual(listed.body.data.functions[0].parameters.properties.body, {});
  });

  test('by URL, a chain of 20,000: /functions, invoke and predict answer with the tool left out, not a 500', async () => {
    const { token } = await service.signUp();
    const url = serve('/chain-20000.json', JSON.stringify(chainSpec(20_000)));
    const agent = await agentWith(token, [{ name: 'chain', type: 'OPENAPI', metadata: { url } }]);
    const toolId = (await request('GET', '/api/v1/tools', { token })).body.data[0].id;
    const expected = [
      'tool "chain" (OPENAPI) is not offered: its spec has no operation that can be offered (operation o0 was skipped: its schema comes to more than 1000 parts once $refs are inlined (the limit for one operation))',
    ];
    const listed = await withHealthzAnswering(() => request('GET', `/api/v1/tools/${toolId}/functions`, { token }));
    assertOk(listed, 'functions');
    assert.deepEqual(listed.body.data.warnings, expected);
    const invoked = await withHealthzAnswering(() =>
      request('POST', `/api/v1/agents/${agent.id}/invoke`, { token, body: { input: 'hi' } }),
    );
    assertOk(invoked, 'invoke');
    assert.deepEqual(invoked.body.data.warnings, expected);
    const predicted = await withHealthzAnswering(() =>
      request('POST', `/api/v1/agents/${agent.id}/predict`, { token, body: { input: { input: 'hi' } } }),
    );
    assertOk(predicted, 'predict');
  });

  test('by URL, chains of 1,500 and 2,000 referenced 99 times in each of 10 operations are left out at once', async () => {
    const { token } = await service.signUp();
    for (const length of [1_500, 2_000]) {
      const url = serve(`/wide-${length}.json`, JSON.stringify(chainSpec(length, 99, 10)));
      const tool = await create(token, '/tools', { name: `wide${length}`, type: 'OPENAPI', metadata: { url } });
      const listed = await withHealthzAnswering(() => request('GET', `/api/v1/tools/${tool.id}/functions`, { token }));
      assertOk(listed, `chain of ${length}`);
      assert.deepEqual(listed.body.data.functions, []);
      assert.match(listed.body.data.warnings.join('\n'), /more than 1\d*000 parts once \$refs are inlined/);
    }
  });
});
