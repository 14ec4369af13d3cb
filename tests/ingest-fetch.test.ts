// fetchDocument against fixture HTTP servers on 127.0.0.1: statuses, redirects, the SSRF guard,
// the size cap, the deadline and credentials. No request ever goes anywhere but loopback: the
// private addresses below are refused before any connection is made.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { blockedAddressReason, isPublicAddress } from '../src/ingest/addresses.js';
import { IngestError } from '../src/ingest/errors.js';
import { authorizationHeaders, fetchDocument, vetHost } from '../src/ingest/fetch.js';
import { rejection } from './helpers.js';

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
}

function startServer(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  return new Promise<{ server: http.Server; base: string; port: number; seen: Seen[] }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, base: `http://127.0.0.1:${port}`, port, seen });
    });
  });
}

function stop(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const MiB = 1024 * 1024;
const SECRET = 's3cret-token-value';
const LOOPBACK_ONLY = { isAddressAllowed: (address: string) => address === '127.0.0.1' };

let main: Awaited<ReturnType<typeof startServer>>;
let other: Awaited<ReturnType<typeof startServer>>; // another origin (another port)

before(async () => {
  other = await startServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('other origin');
  });
  main = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const chain = /^\/r\/(\d+)$/.exec(url.pathname);
    if (url.pathname === '/hello') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('hello world');
    } else if (url.pathname === '/missing') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('nope');
    } else if (url.pathname === '/private') {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('who are you');
    } else if (chain) {
      const left = Number(chain[1]);
      res.writeHead(left % 2 ? 302 : 301, { location: left > 1 ? `/r/${left - 1}` : `${main.base}/hello` });
      res.end();
    } else if (url.pathname === '/redirect') {
      res.writeHead(307, { location: url.searchParams.get('to') ?? '/hello' });
      res.end();
    } else if (url.pathname === '/no-location') {
      res.writeHead(302);
      res.end();
    } else if (url.pathname === '/big-stream') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }); // chunked, no Content-Length
      const piece = Buffer.alloc(64 * 1024, 97);
      let sent = 0;
      const write = () => {
        while (sent < 3 * MiB) {
          sent += piece.length;
          if (!res.write(piece)) return void res.once('drain', write);
        }
        res.end();
      };
      res.on('error', () => {});
      write();
    } else if (url.pathname === '/big-declared') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(5 * MiB) });
      res.write(Buffer.alloc(1024)); // and never the rest
    } else if (url.pathname === '/gzip-bomb') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(3 * MiB, 32)));
    } else if (url.pathname === '/gzip') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.from('compressed hello')));
    } else if (url.pathname === '/hang') {
      // never answers
    } else if (url.pathname === '/slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a little, then nothing');
    } else if (url.pathname === '/echo-auth') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ authorization: req.headers.authorization ?? null, key: req.headers['x-api-key'] ?? null }));
    } else {
      res.writeHead(500);
      res.end();
    }
  });
});

after(async () => {
  await stop(main.server);
  await stop(other.server);
});

describe('fetchDocument: statuses and redirects', () => {
  it('fetches a 200 with its content type and final URL', async () => {
    const got = await fetchDocument(`${main.base}/hello`, { allowPrivateNetworks: true });
    assert.equal(got.bytes.toString(), 'hello world');
    assert.equal(got.contentType, 'text/plain; charset=utf-8');
    assert.equal(got.finalUrl, `${main.base}/hello`);
    const headers = main.seen.at(-1)!.headers;
    assert.match(String(headers['user-agent']), /agent-service/);
    assert.equal(headers.authorization, undefined);
  });

  it('reports a 404 in words', async () => {
    const error = await rejection(fetchDocument(`${main.base}/missing`, { allowPrivateNetworks: true }));
    assert.equal(error.code, 'http_status');
    assert.equal(error.message, 'the URL answered 404 Not Found');
  });

  it('follows a redirect chain of up to 5 hops, relative and absolute', async () => {
    const got = await fetchDocument(`${main.base}/r/5`, { allowPrivateNetworks: true });
    assert.equal(got.bytes.toString(), 'hello world');
    assert.equal(got.finalUrl, `${main.base}/hello`);
  });

  it('refuses a sixth redirect', async () => {
    const error = await rejection(fetchDocument(`${main.base}/r/6`, { allowPrivateNetworks: true }));
    assert.equal(error.code, 'too_many_redirects');
    assert.equal(error.message, 'the URL redirected more than 5 times');
    const fewer = await rejection(fetchDocument(`${main.base}/r/3`, { allowPrivateNetworks: true, maxRedirects: 2 }));
    assert.equal(fewer.message, 'the URL redirected more than 2 times');
  });

  it('refuses a redirect without Location or to another scheme', async () => {
    const none = await rejection(fetchDocument(`${main.base}/no-location`, { allowPrivateNetworks: true }));
    assert.equal(none.message, 'the URL answered 302 Found without a Location');
    const file = await rejection(fetchDocument(`${main.base}/redirect?to=file:///etc/passwd`, { allowPrivateNetworks: true }));
    assert.equal(file.code, 'bad_url');
    assert.equal(file.message, 'a redirect uses file; only http and https URLs are fetched');
  });

  it('fetches http(s) URLs only', async () => {
    assert.equal((await rejection(fetchDocument('ftp://example.com/x'))).code, 'bad_url');
    assert.equal((await rejection(fetchDocument('not a url'))).message, 'the URL is not a valid URL');
  });

  it('decodes a gzip body', async () => {
    const got = await fetchDocument(`${main.base}/gzip`, { allowPrivateNetworks: true });
    assert.equal(got.bytes.toString(), 'compressed hello');
    assert.match(String(main.seen.at(-1)!.headers['accept-encoding']), /gzip/);
  });
});

describe('fetchDocument: the SSRF guard', () => {
  it('refuses the first hop to loopback unless private networks are allowed', async () => {
    const before = main.seen.length;
    const error = await rejection(fetchDocument(`${main.base}/hello`));
    assert.equal(error.code, 'refused_address');
    assert.equal(
      error.message,
      'refused: 127.0.0.1 is a loopback address (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)',
    );
    assert.equal(main.seen.length, before, 'no request reached the server');
    const named = await rejection(fetchDocument(`http://localhost:${main.port}/hello`));
    assert.match(
      named.message,
      /^refused: localhost resolves to a loopback address (127\.0\.0\.1|::1) \(the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on\)$/,
    );
    const mapped = await rejection(fetchDocument(`http://[::ffff:127.0.0.1]:${main.port}/hello`));
    assert.equal(
      mapped.message,
      'refused: ::ffff:7f00:1 is a loopback address (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)',
    );
  });

  it('checks every redirect hop: a redirect to a private address is refused', async () => {
    for (const [target, message] of [
      [
        'http://10.0.0.5/secret',
        'refused: 10.0.0.5 is a private address (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)',
      ],
      [
        'http://169.254.169.254/latest/meta-data/',
        'refused: 169.254.169.254 is a link-local address (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)',
      ],
      [
        'http://[fd00::1]/',
        'refused: fd00::1 is a unique-local address (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)',
      ],
      [
        'http://100.64.1.1/',
        'refused: 100.64.1.1 is a carrier-grade NAT address (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)',
      ],
    ]) {
      const error = await rejection(fetchDocument(`${main.base}/redirect?to=${encodeURIComponent(target)}`, LOOPBACK_ONLY));
      assert.equal(error.code, 'refused_address');
      assert.equal(error.message, message);
    }
  });

  it('checks every address a redirect target resolves to', async () => {
    const resolve = async (host: string) =>
      host === 'internal.example'
        ? [{ address: '10.0.0.5', family: 4 }]
        : host === 'mixed.example'
          ? [
              { address: '93.184.215.14', family: 4 },
              { address: '192.168.1.20', family: 4 },
            ]
          : [];
    const internal = await rejection(
      fetchDocument(`${main.base}/redirect?to=${encodeURIComponent('http://internal.example/doc')}`, { ...LOOPBACK_ONLY, resolve }),
    );
    assert.equal(
      internal.message,
      'refused: internal.example resolves to a private address 10.0.0.5 (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)',
    );
    const mixed = await rejection(vetHost(new URL('http://mixed.example/'), { resolve }));
    assert.equal(
      mixed.message,
      'refused: mixed.example resolves to a private address 192.168.1.20 (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)',
    );
    const unknown = await rejection(vetHost(new URL('http://nowhere.example/'), { resolve }));
    assert.equal(unknown.code, 'dns');
  });

  it('connects to exactly the address it vetted (no second DNS lookup)', async () => {
    let lookups = 0;
    const resolve = async (host: string) => {
      lookups += 1;
      assert.equal(host, 'docs.fixture.test');
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const got = await fetchDocument(`http://docs.fixture.test:${main.port}/hello`, { ...LOOPBACK_ONLY, resolve });
    assert.equal(got.bytes.toString(), 'hello world');
    assert.equal(lookups, 1);
    assert.equal(main.seen.at(-1)!.headers.host, `docs.fixture.test:${main.port}`);
  });

  it('classifies addresses', () => {
    const refused: Record<string, string> = {
      '127.0.0.1': 'a loopback',
      '127.255.0.9': 'a loopback',
      '10.1.2.3': 'a private',
      '172.16.0.1': 'a private',
      '172.31.255.255': 'a private',
      '192.168.0.1': 'a private',
      '169.254.169.254': 'a link-local',
      '100.64.0.1': 'a carrier-grade NAT',
      '100.127.255.255': 'a carrier-grade NAT',
      '0.0.0.0': 'a reserved "this network"',
      '224.0.0.251': 'a multicast',
      '239.255.255.250': 'a multicast',
      '240.0.0.1': 'a reserved',
      '255.255.255.255': 'a reserved',
      '192.0.2.10': 'a documentation',
      '198.18.0.1': 'a benchmarking',
      '::': 'an unspecified',
      '::1': 'a loopback',
      'fe80::1': 'a link-local',
      'febf::1': 'a link-local',
      'fc00::1': 'a unique-local',
      'fdff::1': 'a unique-local',
      'ff02::1': 'a multicast',
      '::ffff:10.0.0.1': 'a private',
      '::ffff:7f00:1': 'a loopback',
      '::ffff:169.254.169.254': 'a link-local',
      '::127.0.0.1': 'a loopback',
      '64:ff9b::a00:1': 'a private',
      '2002:c0a8:101::1': 'a private',
      '2001:db8::1': 'a documentation',
      '100::1': 'a discard-only',
      'not-an-ip': 'an unparseable',
    };
    for (const [address, reason] of Object.entries(refused)) assert.equal(blockedAddressReason(address), reason, address);
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.215.14',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
    ]) {
      assert.ok(isPublicAddress(address), address);
    }
  });
});

describe('fetchDocument: size and time', () => {
  it('stops a streamed body at the size cap', async () => {
    const error = await rejection(fetchDocument(`${main.base}/big-stream`, { allowPrivateNetworks: true, maxBytes: MiB }));
    assert.equal(error.code, 'too_large');
    assert.equal(error.message, 'the document is larger than 1 MiB');
  });

  it('refuses up front a body whose Content-Length is over the cap', async () => {
    const started = Date.now();
    const error = await rejection(
      fetchDocument(`${main.base}/big-declared`, { allowPrivateNetworks: true, maxBytes: MiB, timeoutMs: 5000 }),
    );
    assert.equal(error.code, 'too_large');
    assert.equal(error.message, 'the document is larger than 1 MiB (the server announced 5 MiB)');
    assert.ok(Date.now() - started < 4000, 'did not wait for the body');
  });

  it('counts decompressed bytes against the cap', async () => {
    const error = await rejection(fetchDocument(`${main.base}/gzip-bomb`, { allowPrivateNetworks: true, maxBytes: MiB }));
    assert.equal(error.message, 'the document is larger than 1 MiB');
  });

  it('gives up on a server that never answers', async () => {
    const started = Date.now();
    const error = await rejection(fetchDocument(`${main.base}/hang`, { allowPrivateNetworks: true, timeoutMs: 300 }));
    assert.equal(error.code, 'timeout');
    assert.equal(error.message, 'the URL did not answer within 300 ms');
    assert.ok(Date.now() - started < 3000);
  });

  it('gives up on a body that stops coming', async () => {
    const error = await rejection(fetchDocument(`${main.base}/slow-body`, { allowPrivateNetworks: true, timeoutMs: 1500 }));
    assert.equal(error.code, 'timeout');
    assert.equal(error.message, 'the URL did not answer within 1.5 seconds');
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    setTimeout(() => controller.abort(reason), 100);
    await assert.rejects(
      fetchDocument(`${main.base}/hang`, { allowPrivateNetworks: true, signal: controller.signal }),
      (error) => error === reason,
    );
  });
});

describe('fetchDocument: credentials', () => {
  it('sends a bearer token, a token, basic credentials or headers', async () => {
    const echo = async (authorization: Record<string, unknown>) =>
      JSON.parse((await fetchDocument(`${main.base}/echo-auth`, { allowPrivateNetworks: true, authorization })).bytes.toString());
    assert.deepEqual(await echo({ bearer: SECRET }), { authorization: `Bearer ${SECRET}`, key: null });
    assert.deepEqual(await echo({ token: SECRET }), { authorization: `Bearer ${SECRET}`, key: null });
    assert.deepEqual(await echo({ username: 'ann', password: 'pw:1' }), {
      authorization: `Basic ${Buffer.from('ann:pw:1').toString('base64')}`,
      key: null,
    });
    assert.deepEqual(await echo({ headers: { 'X-Api-Key': SECRET } }), { authorization: null, key: SECRET });
    assert.deepEqual(await echo({ authorization: `Token ${SECRET}` }), { authorization: `Token ${SECRET}`, key: null });
    assert.deepEqual(await echo({}), { authorization: null, key: null });
  });

  it('keeps credentials on a same-origin redirect', async () => {
    const got = await fetchDocument(`${main.base}/redirect?to=/echo-auth`, {
      allowPrivateNetworks: true,
      authorization: { bearer: SECRET },
    });
    assert.equal(JSON.parse(got.bytes.toString()).authorization, `Bearer ${SECRET}`);
  });

  it('does not send credentials to another origin a redirect leads to', async () => {
    const before = other.seen.length;
    const got = await fetchDocument(`${main.base}/redirect?to=${encodeURIComponent(`${other.base}/page`)}`, {
      allowPrivateNetworks: true,
      authorization: { bearer: SECRET, headers: { 'X-Api-Key': SECRET } },
    });
    assert.equal(got.bytes.toString(), 'other origin');
    assert.equal(got.finalUrl, `${other.base}/page`);
    assert.equal(other.seen.length, before + 1);
    const headers = other.seen.at(-1)!.headers;
    assert.equal(headers.authorization, undefined);
    assert.equal(headers['x-api-key'], undefined);
    assert.equal(main.seen.at(-1)!.headers.authorization, `Bearer ${SECRET}`);
  });

  it('keeps credentials out of error messages and the final URL', async () => {
    const error = await rejection(fetchDocument(`${main.base}/private`, { allowPrivateNetworks: true, authorization: { bearer: SECRET } }));
    assert.equal(error.message, "the URL answered 401 Unauthorized (check the document's authorization)");
    const inUrl = await fetchDocument(`http://ann:${SECRET}@127.0.0.1:${main.port}/echo-auth`, { allowPrivateNetworks: true });
    assert.equal(JSON.parse(inUrl.bytes.toString()).authorization, `Basic ${Buffer.from(`ann:${SECRET}`).toString('base64')}`);
    assert.equal(inUrl.finalUrl, `${main.base}/echo-auth`);
    const bad = await rejection(
      fetchDocument(`${main.base}/hello`, { allowPrivateNetworks: true, authorization: { bearer: SECRET, token: SECRET } }),
    );
    assert.equal(bad.code, 'bad_authorization');
    assert.ok(!bad.message.includes(SECRET));
  });

  it('refuses authorization shapes it does not understand', () => {
    const refuses = (authorization: Record<string, unknown>, pattern: RegExp) =>
      assert.throws(
        () => authorizationHeaders(authorization),
        (error: unknown) => error instanceof IngestError && pattern.test(error.message),
      );
    refuses({ apiKey: SECRET }, /unknown field\(s\) "apiKey"/);
    refuses({ bearer: '' }, /"bearer" must be a non-empty string/);
    refuses({ bearer: `${SECRET}\r\nX-Evil: 1` }, /line break/);
    refuses({ headers: { Host: 'evil' } }, /header "Host" cannot be set/);
    refuses({ headers: { 'bad name': 'x' } }, /not a valid header name/);
    refuses({ bearer: SECRET, headers: { Authorization: 'x' } }, /Authorization twice/);
    assert.deepEqual(authorizationHeaders(null), {});
    assert.deepEqual(authorizationHeaders({ type: 'bearer', token: 'abc' }), { authorization: 'Bearer abc' });
  });
});
