// The streaming, any-method fetch behind the SSRF guard: what the model client and the tools use
// for URLs a user gives. Fixture servers on 127.0.0.1 only.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { createConnectionPool, createGuardedFetch, createGuardedSession } from '../src/ingest/fetch.js';
import { IngestError } from '../src/ingest/errors.js';
import { startFakeOpenAI } from './fixtures/fake-openai.js';
import { startRecordingServer } from './fixtures/recording-server.js';
import { errorOf, startService, testConfig, waitFor } from './helpers.js';

let main: Awaited<ReturnType<typeof startRecordingServer>>;
let other: Awaited<ReturnType<typeof startRecordingServer>>;

before(async () => {
  other = await startRecordingServer((_req, res) => res.end('other'));
  main = await startRecordingServer((req, res, body) => {
    if (req.url === '/echo') {
      res.writeHead(201, { 'content-type': 'application/json', 'x-custom': 'yes' });
      res.end(JSON.stringify({ method: req.method, body }));
    } else if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first ');
      setTimeout(() => res.end('second'), 50);
    } else if (req.url === '/away') {
      res.writeHead(307, { location: `${other.base}/landed` });
      res.end();
    } else if (req.url === '/to-inside') {
      res.writeHead(307, { location: 'http://10.0.0.1/landed' });
      res.end();
    } else if (req.url === '/see-other') {
      res.writeHead(303, { location: '/echo' });
      res.end();
    } else if (req.url === '/big') {
      res.end('x'.repeat(10_000));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
});

after(() => {
  for (const { server } of [main, other]) {
    server.closeAllConnections();
    server.close();
  }
});

const allowLoopback = createGuardedFetch({ isAddressAllowed: (address) => address === '127.0.0.1' });

describe('createGuardedFetch', () => {
  it('sends any method with its body and answers status, headers and body', async () => {
    const response = await allowLoopback(`${main.base}/echo`, {
      method: 'PUT',
      body: 'payload',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('x-custom'), 'yes');
    assert.deepEqual(await response.json(), { method: 'PUT', body: 'payload' });
  });

  it('streams the body as it arrives', async () => {
    const response = await allowLoopback(`${main.base}/stream`);
    const reader = response.body!.getReader();
    const first = await reader.read();
    assert.equal(Buffer.from(first.value!).toString(), 'first ');
    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += Buffer.from(part.value).toString();
    assert.equal(rest, 'second');
  });

  it('refuses a loopback address unless private networks are allowed', async () => {
    const strict = createGuardedFetch();
    await assert.rejects(strict(`${main.base}/echo`), (error: unknown) => {
      assert.ok(error instanceof IngestError);
      assert.equal(error.code, 'refused_address');
      assert.match(error.message, /loopback/);
      return true;
    });
    assert.equal(main.seen.filter((s) => s.path === '/echo' && s.method === 'GET').length, 0, 'no request was made');
    const open = createGuardedFetch({ allowPrivateNetworks: true });
    assert.equal((await open(`${main.base}/echo`)).status, 201);
  });

  it('connects to the vetted address whatever the name resolves to later', async () => {
    const port = new URL(main.base).port;
    let lookups = 0;
    const pinned = createGuardedFetch({
      isAddressAllowed: (address) => address === '127.0.0.1',
      resolve: async () => {
        lookups += 1;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    const response = await pinned(`http://model.example:${port}/echo`, { method: 'POST', body: '{}' });
    assert.equal(response.status, 201);
    assert.equal(lookups, 1);
    assert.equal(main.seen.at(-1)!.headers.host, `model.example:${port}`);
  });

  it('drops credentials when a redirect leaves the origin; 303 turns into a GET', async () => {
    const response = await allowLoopback(`${main.base}/away`, {
      method: 'POST',
      body: 'x',
      headers: { authorization: 'Bearer secret', 'x-api-key': 'k', accept: 'text/plain' },
    });
    assert.equal(await response.text(), 'other');
    const landed = other.seen.at(-1)!;
    assert.equal(landed.method, 'POST', '307 keeps the method');
    assert.equal(landed.headers.authorization, undefined);
    assert.equal(landed.headers['x-api-key'], undefined);
    assert.equal(landed.headers.accept, 'text/plain');
    const seeOther = await allowLoopback(`${main.base}/see-other`, { method: 'POST', body: 'x' });
    assert.deepEqual(await seeOther.json(), { method: 'GET', body: '' });
    // Given as a Headers object: the GET after a 303 goes without the Content-Type, the caller's headers stay as they were.
    const given = new Headers({ 'content-type': 'text/plain', 'x-custom': 'kept' });
    const again = await allowLoopback(`${main.base}/see-other`, { method: 'POST', body: 'x', headers: given });
    assert.deepEqual(await again.json(), { method: 'GET', body: '' });
    const [posted, got] = main.seen.slice(-2);
    assert.deepEqual([posted.method, posted.headers['content-type'], posted.headers['x-custom']], ['POST', 'text/plain', 'kept']);
    assert.deepEqual([got.method, got.headers['content-type'], got.headers['x-custom']], ['GET', undefined, 'kept']);
    assert.deepEqual(
      [...given],
      [
        ['content-type', 'text/plain'],
        ['x-custom', 'kept'],
      ],
    );
  });

  it('fails the body past maxResponseBytes', async () => {
    const small = createGuardedFetch({ isAddressAllowed: () => true, maxResponseBytes: 1000 });
    const response = await small(`${main.base}/big`);
    await assert.rejects(response.text());
  });

  it('carries the openai client, streamed, and aborts upstream with its signal', async () => {
    const fake = await startFakeOpenAI();
    const client = new OpenAI({ apiKey: 'k', baseURL: fake.url, maxRetries: 0, fetch: allowLoopback });
    fake.reply({ text: 'a b c' });
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'a b c');

    fake.reply({ hangAfter: ['partial '] });
    const controller = new AbortController();
    const hanging = await client.chat.completions.create({ model: 'm', messages: [], stream: true }, { signal: controller.signal });
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of hanging) {
          seen.push(chunk.choices[0]?.delta.content ?? '');
          controller.abort();
        }
      })(),
    );
    assert.ok(seen.includes('partial '));
    await fake.waitForAbort(fake.requests.at(-1)!);

    const refused = new OpenAI({ apiKey: 'k', baseURL: fake.url, maxRetries: 0, fetch: createGuardedFetch() });
    await assert.rejects(refused.chat.completions.create({ model: 'm', messages: [] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIConnectionError);
      assert.ok(error.cause instanceof IngestError);
      return true;
    });
  });
});

describe('createGuardedSession', () => {
  /** The connections `server` is sent from now on (until `stop`): how many were opened, how many are open. */
  const countConnections = (server: http.Server) => {
    const counts = { opened: 0, open: 0, stop: () => void server.off('connection', count) };
    const count = (socket: import('node:net').Socket) => {
      counts.opened += 1;
      counts.open += 1;
      socket.once('close', () => (counts.open -= 1));
    };
    server.on('connection', count);
    return counts;
  };

  it("keeps one connection per origin for the session's requests, each host vetted, and ends them on close", async () => {
    const counts = countConnections(main.server);
    const port = new URL(main.base).port;
    const lookups: string[] = [];
    const session = createGuardedSession({
      isAddressAllowed: (address) => address === '127.0.0.1',
      resolve: async (hostname) => {
        lookups.push(hostname);
        return [{ address: hostname === 'inside.example' ? '10.0.0.1' : '127.0.0.1', family: 4 }];
      },
    });
    for (const body of ['1', '2', '3']) {
      const response = await session.fetch(`http://one.example:${port}/echo`, { method: 'POST', body });
      assert.deepEqual(await response.json(), { method: 'POST', body });
    }
    assert.equal(counts.opened, 1, 'three requests, one connection');
    assert.deepEqual(lookups, ['one.example'], 'the host is vetted once for the session');

    // Another host name on the same address and port: vetted, and a connection of its own.
    assert.equal((await session.fetch(`http://two.example:${port}/echo`)).status, 201);
    assert.equal(counts.opened, 2);
    assert.deepEqual(
      main.seen.slice(-4).map((seen) => seen.headers.host),
      [`one.example:${port}`, `one.example:${port}`, `one.example:${port}`, `two.example:${port}`],
    );
    // A host the guard refuses is refused every time, a kept connection to another host notwithstanding.
    for (let i = 0; i < 2; i++)
      await assert.rejects(session.fetch(`http://inside.example:${port}/echo`), (error: unknown) => {
        assert.ok(error instanceof IngestError);
        assert.equal(error.code, 'refused_address');
        return true;
      });
    assert.deepEqual(lookups, ['one.example', 'two.example', 'inside.example', 'inside.example']);
    assert.equal(counts.opened, 2);

    session.close();
    await waitFor('the connections to close', () => counts.open === 0);
    // A request after close has a connection of its own, not kept.
    assert.equal((await session.fetch(`http://one.example:${port}/echo`)).status, 201);
    await waitFor('that connection to close', () => counts.open === 0);
    counts.stop();
  });

  it('vets the origin a redirect leads to, and sends it on a connection of its own', async () => {
    const mainCounts = countConnections(main.server);
    const otherCounts = countConnections(other.server);
    const session = createGuardedSession({ isAddressAllowed: (address) => address === '127.0.0.1' });
    for (let i = 0; i < 2; i++) assert.equal(await (await session.fetch(`${main.base}/away`)).text(), 'other');
    // A redirect's connection is dropped with its unread body; the origin it leads to keeps its own.
    assert.deepEqual([mainCounts.opened, otherCounts.opened], [2, 1]);
    assert.equal(otherCounts.open, 1);
    await assert.rejects(session.fetch(`${main.base}/to-inside`), (error: unknown) => {
      assert.ok(error instanceof IngestError);
      assert.equal(error.code, 'refused_address');
      return true;
    });
    session.close();
    await waitFor('the connections to close', () => mainCounts.open === 0 && otherCounts.open === 0);
    mainCounts.stop();
    otherCounts.stop();
  });
});

describe('createGuardedSession with a connection pool', () => {
  /** The connections `server` is sent from now on (until `stop`): how many were opened, how many are open. */
  const countConnections = (server: http.Server) => {
    const counts = { opened: 0, open: 0, stop: () => void server.off('connection', count) };
    const count = (socket: import('node:net').Socket) => {
      counts.opened += 1;
      counts.open += 1;
      socket.once('close', () => (counts.open -= 1));
    };
    server.on('connection', count);
    return counts;
  };
  const port = () => new URL(main.base).port;
  /** A session of `pool` in which one.example resolves to `address` (only 127.0.0.1 and 127.0.0.2 allowed). */
  const sessionOf = (pool: ReturnType<typeof createConnectionPool>, address = '127.0.0.1', lookups: string[] = []) =>
    createGuardedSession({
      pool,
      maxResponseBytes: 1024 * 1024,
      isAddressAllowed: (vetted) => vetted === '127.0.0.1' || vetted === '127.0.0.2',
      resolve: async (hostname) => {
        lookups.push(hostname);
        return [{ address, family: 4 }];
      },
    });
  const echo = async (session: ReturnType<typeof createGuardedSession>, body: string) => {
    const response = await session.fetch(`http://one.example:${port()}/echo`, { method: 'POST', body });
    assert.deepEqual(await response.json(), { method: 'POST', body });
  };

  it("keeps a session's connection for the next session to the same origin and address, vetting the host again", async () => {
    const counts = countConnections(main.server);
    const pool = createConnectionPool({ idleMs: 5_000, maxAgents: 4, maxIdlePerAgent: 2 });
    const lookups: string[] = [];
    for (const body of ['first run', 'second run', 'third run']) {
      const session = sessionOf(pool, '127.0.0.1', lookups);
      await echo(session, `${body}: list`);
      await echo(session, `${body}: call`);
      session.close();
    }
    assert.equal(counts.opened, 1, 'six requests of three sessions, one connection');
    assert.equal(counts.open, 1, 'kept after the sessions closed');
    assert.deepEqual(lookups, ['one.example', 'one.example', 'one.example'], 'the host vetted by every session');
    pool.close();
    await waitFor('the pool to end its connection', () => counts.open === 0);
    counts.stop();
  });

  it('answers a JSON answer read whole as a Response: read once, as text, JSON, bytes or a stream, and cloned', async () => {
    const pool = createConnectionPool({ idleMs: 5_000, maxAgents: 4, maxIdlePerAgent: 2 });
    const session = sessionOf(pool);
    const post = () => session.fetch(`http://one.example:${port()}/echo`, { method: 'POST', body: 'hello' });
    const expected = { method: 'POST', body: 'hello' };

    const first = await post();
    assert.equal(first.status, 201);
    assert.match(first.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(first.bodyUsed, false);
    const copy = first.clone();
    assert.deepEqual(await first.json(), expected);
    assert.equal(first.bodyUsed, true);
    await assert.rejects(first.text(), TypeError, 'a body is read once');
    assert.deepEqual(JSON.parse(await copy.text()), expected);
    assert.deepEqual(JSON.parse(Buffer.from(await (await post()).arrayBuffer()).toString()), expected);

    // Its body as a stream, and a reader after that reads the stream.
    const streamed = await post();
    const chunks: Uint8Array[] = [];
    for await (const chunk of streamed.body!) chunks.push(chunk);
    assert.deepEqual(JSON.parse(Buffer.concat(chunks).toString()), expected);
    assert.equal(streamed.bodyUsed, true);
    await assert.rejects(streamed.json(), TypeError);
    const asked = await post();
    assert.ok(asked.body);
    assert.deepEqual(await asked.clone().json(), expected);
    assert.deepEqual(await asked.json(), expected);
    session.close();
    pool.close();
  });

  it('does not keep a connection past its idle time', async () => {
    const counts = countConnections(main.server);
    const pool = createConnectionPool({ idleMs: 150, maxAgents: 4, maxIdlePerAgent: 2 });
    const first = sessionOf(pool);
    await echo(first, 'before');
    first.close();
    assert.equal(counts.open, 1);
    await waitFor('the idle connection to end', () => counts.open === 0);
    await echo(sessionOf(pool), 'after');
    assert.equal(counts.opened, 2, 'a new connection after the idle time');
    pool.close();
    counts.stop();
  });

  it('does not cut a request slower than the idle time', async () => {
    const pool = createConnectionPool({ idleMs: 20, maxAgents: 4, maxIdlePerAgent: 2 });
    const session = sessionOf(pool);
    // The body's second part comes 50 ms after its first.
    assert.equal(await (await session.fetch(`http://one.example:${port()}/stream`)).text(), 'first second');
    await echo(session, 'and after it');
    pool.close();
  });

  it('never sends a request on a kept connection for a name that now resolves elsewhere', async () => {
    const counts = countConnections(main.server);
    const pool = createConnectionPool({ idleMs: 5_000, maxAgents: 4, maxIdlePerAgent: 2 });
    await echo(sessionOf(pool, '127.0.0.1'), 'kept');
    const seen = main.seen.length;
    // The name now resolves to an internal address: refused, the kept connection notwithstanding.
    await assert.rejects(sessionOf(pool, '10.0.0.1').fetch(`http://one.example:${port()}/echo`), (error: unknown) => {
      assert.ok(error instanceof IngestError);
      assert.equal(error.code, 'refused_address');
      return true;
    });
    // The name now resolves to another allowed address: connected there (where nothing listens),
    // not sent on the connection kept for the old one.
    await assert.rejects(sessionOf(pool, '127.0.0.2').fetch(`http://one.example:${port()}/echo`), (error: unknown) => {
      assert.ok(error instanceof IngestError);
      assert.match(error.message, /connection refused/);
      return true;
    });
    assert.equal(main.seen.length, seen, 'neither request reached the server');
    assert.deepEqual([counts.opened, counts.open], [1, 1]);
    pool.close();
    await waitFor('the pool to end its connection', () => counts.open === 0);
    counts.stop();
  });

  it("ends a session's requests under way when it closes, and only those", async () => {
    const counts = countConnections(main.server);
    const pool = createConnectionPool({ idleMs: 5_000, maxAgents: 4, maxIdlePerAgent: 2 });
    const [closing, going] = [sessionOf(pool), sessionOf(pool)];
    const cut = (await closing.fetch(`http://one.example:${port()}/stream`)).text();
    const whole = (await going.fetch(`http://one.example:${port()}/stream`)).text();
    closing.close();
    await assert.rejects(cut);
    assert.equal(await whole, 'first second');
    pool.close();
    await waitFor('every connection to end', () => counts.open === 0);
    counts.stop();
  });

  it('sends a request once more when the server closed the kept connection it went out on', async () => {
    // The server ends a connection, unanswered, at its second request: as a server does that
    // closes an idle connection just as a request is sent on it.
    const requestsOn = new WeakMap<object, number>();
    const flaky = await startRecordingServer((req, res, body) => {
      const count = (requestsOn.get(req.socket) ?? 0) + 1;
      requestsOn.set(req.socket, count);
      if (count === 2) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ body }));
    });
    const counts = countConnections(flaky.server);
    const pool = createConnectionPool({ idleMs: 5_000, maxAgents: 4, maxIdlePerAgent: 2 });
    const session = createGuardedSession({ pool, isAddressAllowed: (address) => address === '127.0.0.1' });
    for (const body of ['1', '2'])
      assert.deepEqual(await (await session.fetch(`${flaky.base}/`, { method: 'POST', body })).json(), { body });
    assert.deepEqual(
      flaky.seen.map((seen) => seen.body),
      ['1', '2', '2'],
    );
    assert.equal(counts.opened, 2);
    pool.close();
    flaky.server.closeAllConnections();
    flaky.server.close();
  });

  it('keeps at most maxAgents origins: the least recently used one ends its idle connections', async () => {
    const mainCounts = countConnections(main.server);
    const otherCounts = countConnections(other.server);
    const pool = createConnectionPool({ idleMs: 5_000, maxAgents: 1, maxIdlePerAgent: 2 });
    const session = createGuardedSession({ pool, isAddressAllowed: (address) => address === '127.0.0.1' });
    assert.equal((await session.fetch(`${main.base}/echo`)).status, 201);
    assert.equal(await (await session.fetch(`${other.base}/`)).text(), 'other');
    await waitFor('the first origin to be let go', () => mainCounts.open === 0);
    assert.equal(otherCounts.open, 1);
    pool.close();
    await waitFor('the pool to end its connection', () => otherCounts.open === 0);
    mainCounts.stop();
    otherCounts.stop();
  });
});

describe('every refusal of an internal address', () => {
  it("says the same, with the setting that lifts it: a document, a tool, an agent's baseUrl when saved and when run", async () => {
    const HINT = ' (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)';
    const fake = await startFakeOpenAI();
    const service = await startService(
      {
        allowPrivateNetworks: false,
        ingestion: testConfig({ ALLOW_PRIVATE_NETWORKS: 'off', INGEST: 'on' }).ingestion,
        // The operator's model server is trusted: only what users aim is guarded.
        runs: {
          openaiBaseUrl: fake.url,
          ollamaBaseUrl: fake.url,
          timeoutMs: 5000,
          concurrencyPerUser: 4,
          maxSteps: 4,
          backgroundTimeoutMs: 1_800_000,
          queuePerUser: 100,
          approvalTtlMs: 86_400_000,
          eventsRetentionDays: 30,
        },
      },
      undefined,
      { resolveHost: async () => [{ address: '192.168.1.20', family: 4 }] },
    );
    const { token } = await service.signUp();

    const document = await service.create(token, '/documents', { name: 'd', type: 'TXT', url: 'http://127.0.0.1:9/notes.txt' });
    const failed = await waitFor('the ingestion to fail', async () => {
      const read = await service.request('GET', `/api/v1/documents/${document.id}`, { token });
      return read.body.data.status === 'failed' ? read.body.data : undefined;
    });
    assert.equal(failed.error, `refused: 127.0.0.1 is a loopback address${HINT}`);

    const agent = await service.create(token, '/agents', { name: 'a', type: 'VENDOR_A', llm: { provider: 'openai', model: 'm' } });
    const tool = await service.create(token, '/tools', { name: 'Local', type: 'HOSTED_MODEL', metadata: { url: 'http://10.0.0.5/run' } });
    await service.create(token, '/agent-tools', { agentId: agent.id, toolId: tool.id });
    fake.reply({ toolCalls: [{ id: 't1', name: 'local', arguments: '{"input":"x"}' }] }, { text: 'done' });
    const run = await service.request('POST', `/api/v1/agents/${agent.id}/invoke`, { token, body: { input: 'hi' } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.equal(run.body.data.steps[0].error, `refused: 10.0.0.5 is a private address${HINT}`);

    const saved = await service.request('POST', '/api/v1/agents', {
      token,
      body: { name: 'b', type: 'VENDOR_A', llm: { provider: 'openai-compatible', model: 'm', baseUrl: 'http://[::1]:8000/v1' } },
    });
    assert.equal(saved.status, 422);
    assert.deepEqual(errorOf(saved).details, [{ path: 'llm.baseUrl', message: `refused: ::1 is a loopback address${HINT}` }]);

    // A host name is looked up when the agent runs.
    const named = await service.create(token, '/agents', {
      name: 'c',
      type: 'VENDOR_A',
      llm: { provider: 'openai-compatible', model: 'm', baseUrl: 'http://models.lan.test:8000/v1' },
    });
    const refused = await service.request('POST', `/api/v1/agents/${named.id}/invoke`, { token, body: { input: 'hi' } });
    assert.equal(refused.status, 422);
    assert.deepEqual(errorOf(refused).details, [
      { path: 'llm.baseUrl', message: `refused: models.lan.test resolves to a private address 192.168.1.20${HINT}` },
    ]);
  });
});
