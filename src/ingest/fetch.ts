// Every request to a URL a user aims (documents, a model's baseUrl, tools) goes through here: http(s)
// only; every hop's host resolved and vetted (no loopback, private, link-local or other internal
// address unless allowed) and then connected to at exactly the address that was vetted, so a second
// DNS answer cannot slip in (no DNS-rebinding window); redirects followed by hand (at most 5),
// credentials only ever sent to the URL's own origin. `createGuardedFetch` is that as a `fetch` (any
// method, the body streamed); `fetchDocument` uses it with a size cap and a deadline for a document.
import http from 'node:http';
import { isIP, type LookupFunction } from 'node:net';
import { Readable, Transform, pipeline } from 'node:stream';
import { blockedAddressReason } from './addresses.js';
import { IngestError, formatBytes, formatDuration, isIngestError } from './errors.js';
import { raceAbort } from '../lib/abort.js';
import { ACCEPT_ENCODING, contentEncoding, decodedBody } from '../lib/content-encoding.js';
import { dnsPromises, https } from '../lib/builtins.js';

export const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_REDIRECTS = 5;
const USER_AGENT = 'agent-service-ingest/1.0';

/** A resolved address of a host, as `dns.lookup` gives it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * A document's `authorization`, the request's credentials. Accepted shapes (keys may be combined
 * only as noted; `type` is ignored, any other key is an error):
 * - `{ bearer: "…" }` or `{ token: "…" }` → `Authorization: Bearer …`
 * - `{ username: "…", password: "…" }` → `Authorization: Basic base64(username:password)`
 * - `{ authorization: "Scheme value" }` → that `Authorization` header as is
 * - `{ headers: { "X-Api-Key": "…", … } }` → those headers (alone or beside one of the above)
 * - `null`, `{}` → no credentials (then a `user:password@` in the URL, if any, is sent as Basic).
 */
export type Authorization = Record<string, unknown>;

export interface FetchOptions {
  /** Credentials (see `Authorization`); sent to the URL's origin only, never to another origin a redirect leads to. */
  authorization?: Authorization | null;
  /** Largest body accepted, after content decoding (default 20 MiB). */
  maxBytes?: number;
  /** Deadline for the whole fetch, DNS, redirects and body included (default 30 s). */
  timeoutMs?: number;
  /** Let hosts resolve to loopback/private/internal addresses (default false; tests and LAN setups). */
  allowPrivateNetworks?: boolean;
  /** How many redirects are followed (default 5); one more is an error. */
  maxRedirects?: number;
  /** Aborts the fetch; it then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Replaces the address rule (allowPrivateNetworks is then ignored): true lets the fetch connect to `address`. For tests. */
  isAddressAllowed?: (address: string) => boolean;
  /** Replaces `dns.lookup(host, { all: true })`. For tests. */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
}

export interface FetchedDocument {
  /** The body, content-decoded (gzip, deflate, br). */
  bytes: Buffer;
  /** The final response's Content-Type header as sent, or null. */
  contentType: string | null;
  /** The URL that answered, after redirects. */
  finalUrl: string;
}

/** Headers a user may not set on a request the service sends (the connection and framing are the service's). */
export const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'expect',
  'accept-encoding',
  'proxy-connection',
]);
const KNOWN_AUTH_KEYS = new Set(['bearer', 'token', 'username', 'password', 'authorization', 'headers', 'type']);

function badAuthorization(detail: string): IngestError {
  return new IngestError('bad_authorization', `the document's authorization ${detail}`);
}

function nonEmptyString(value: unknown, key: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw badAuthorization(`field "${key}" must be a non-empty string`);
  if (/[\r\n\0]/.test(value)) throw badAuthorization(`field "${key}" holds a line break or NUL, which a header cannot carry`);
  return value.trim();
}

/** The request headers an `authorization` object stands for (see `Authorization`); throws IngestError('bad_authorization') on any other shape. */
export function authorizationHeaders(authorization: Authorization | null | undefined): Record<string, string> {
  if (authorization === null || authorization === undefined) return {};
  if (typeof authorization !== 'object' || Array.isArray(authorization)) throw badAuthorization('must be an object');
  const unknown = Object.keys(authorization).filter((key) => !KNOWN_AUTH_KEYS.has(key) && key !== 'Authorization');
  if (unknown.length > 0) {
    throw badAuthorization(
      `has unknown field(s) ${unknown.map((key) => `"${key.slice(0, 40)}"`).join(', ')}; use bearer, token, username/password, authorization or headers`,
    );
  }
  const auth = authorization as Record<string, unknown>;
  const headers: Record<string, string> = {};
  if (auth.headers !== undefined) {
    if (typeof auth.headers !== 'object' || auth.headers === null || Array.isArray(auth.headers)) {
      throw badAuthorization('field "headers" must be an object of header names and values');
    }
    for (const [name, raw] of Object.entries(auth.headers)) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
        throw badAuthorization(`header name "${name.slice(0, 40)}" is not a valid header name`);
      if (FORBIDDEN_HEADERS.has(name.toLowerCase())) throw badAuthorization(`header "${name}" cannot be set`);
      if (typeof raw !== 'string' && typeof raw !== 'number') throw badAuthorization(`header "${name}" must have a string value`);
      const value = String(raw);
      if (/[\r\n\0]/.test(value)) throw badAuthorization(`header "${name}" holds a line break or NUL`);
      headers[name.toLowerCase()] = value;
    }
  }
  const schemes: string[] = [];
  if (auth.bearer !== undefined) schemes.push('bearer');
  if (auth.token !== undefined) schemes.push('token');
  if (auth.username !== undefined || auth.password !== undefined) schemes.push('username/password');
  const raw = auth.authorization ?? auth.Authorization;
  if (raw !== undefined) schemes.push('authorization');
  if (schemes.length > 1) throw badAuthorization(`has more than one credential (${schemes.join(', ')}); give one`);
  if (schemes.length === 1 && headers.authorization !== undefined) {
    throw badAuthorization(`sets Authorization twice (${schemes[0]} and headers); give one`);
  }
  if (auth.bearer !== undefined) headers.authorization = `Bearer ${nonEmptyString(auth.bearer, 'bearer')}`;
  else if (auth.token !== undefined) headers.authorization = `Bearer ${nonEmptyString(auth.token, 'token')}`;
  else if (raw !== undefined) headers.authorization = nonEmptyString(raw, 'authorization');
  else if (auth.username !== undefined || auth.password !== undefined) {
    const username = typeof auth.username === 'string' ? auth.username : undefined;
    const password = auth.password === undefined ? '' : auth.password;
    if (username === undefined || username.includes(':')) throw badAuthorization('field "username" must be a string without ":"');
    if (typeof password !== 'string') throw badAuthorization('field "password" must be a string');
    headers.authorization = `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
  }
  return headers;
}

/** `text` as an http(s) URL, or IngestError('bad_url'). `what` names it in the message. */
function parseHttpUrl(text: string, base?: URL, what = 'the URL'): URL {
  let url: URL;
  try {
    url = base ? new URL(text, base) : new URL(text);
  } catch {
    throw new IngestError('bad_url', `${what} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new IngestError('bad_url', `${what} uses ${url.protocol.replace(/:$/, '')}; only http and https URLs are fetched`);
  }
  if (url.hostname === '') throw new IngestError('bad_url', `${what} has no host`);
  return url;
}

function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

async function defaultResolve(hostname: string): Promise<ResolvedAddress[]> {
  return dnsPromises().lookup(hostname, { all: true, verbatim: true });
}

/**
 * The one refusal of an internal address, whatever the URL was for (a document, a tool, a model's
 * baseUrl): `what` says which address, and the words say how an operator lifts the guard.
 */
function refusedAddress(what: string): IngestError {
  return new IngestError('refused_address', `refused: ${what} (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)`);
}

type AddressRule = Pick<FetchOptions, 'allowPrivateNetworks' | 'isAddressAllowed'>;

function addressReason(address: string, options: AddressRule): string | null {
  if (options.isAddressAllowed) return options.isAddressAllowed(address) ? null : (blockedAddressReason(address) ?? 'a disallowed');
  return options.allowPrivateNetworks ? null : blockedAddressReason(address);
}

/**
 * The refusal of `url` when its host is an IP address the rule refuses, decided without the network
 * (a host name is undefined here: only its lookup can tell). What vetHost throws for such a URL.
 */
export function refusedLiteralHost(url: URL, options: AddressRule = {}): IngestError | undefined {
  const host = bareHost(url);
  if (!isIP(host)) return undefined;
  const reason = addressReason(host, options);
  return reason ? refusedAddress(`${host} is ${reason} address`) : undefined;
}

/**
 * The addresses `url`'s host may be connected to: all its resolved addresses when every one passes
 * the address rule, else IngestError('refused_address'); IngestError('dns') when it does not resolve.
 */
export async function vetHost(
  url: URL,
  options: Pick<FetchOptions, 'allowPrivateNetworks' | 'isAddressAllowed' | 'resolve'> = {},
): Promise<ResolvedAddress[]> {
  const host = bareHost(url);
  const literal = isIP(host);
  if (literal) {
    const refused = refusedLiteralHost(url, options);
    if (refused) throw refused;
    return [{ address: host, family: literal }];
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await (options.resolve ?? defaultResolve)(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const detail = code === 'ENOTFOUND' || code === 'ENODATA' ? '' : code ? ` (${code})` : '';
    throw new IngestError('dns', `the host ${host} could not be found${detail}`);
  }
  if (addresses.length === 0) throw new IngestError('dns', `the host ${host} could not be found`);
  for (const { address } of addresses) {
    const reason = addressReason(address, options);
    if (reason) throw refusedAddress(`${host} resolves to ${reason} address ${address}`);
  }
  return addresses;
}

/** A `lookup` for node:net that answers only with the vetted addresses, whatever is asked. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    const list = wanted.length > 0 ? wanted : addresses;
    if (options.all)
      callback(
        null,
        list.map(({ address, family }) => ({ address, family })),
      );
    else callback(null, list[0].address, list[0].family);
  };
}

/** Where a hop goes: the vetted addresses, and the session's kept-alive agent for its origin (or none: a connection of its own). */
interface Route {
  addresses: ResolvedAddress[];
  agent: http.Agent | false;
  /** Where the requests under way are noted, for a session to end them when it closes (its agent being shared). */
  requests?: Set<http.ClientRequest>;
}

/** A kept connection the server closed as the request was sent on it: nothing was answered, so it is sent once more. */
const resent = (error: unknown, request: http.ClientRequest) =>
  request.reusedSocket && ['ECONNRESET', 'EPIPE'].includes((error as NodeJS.ErrnoException).code ?? '');

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Buffer | null,
  route: Route,
  signal: AbortSignal | undefined,
  again = true,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https() : http).request({
      protocol: url.protocol,
      host: bareHost(url),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method,
      headers,
      agent: route.agent,
      lookup: pinnedLookup(route.addresses),
      signal,
    });
    const { requests } = route;
    if (requests) {
      requests.add(request);
      request.once('close', () => requests.delete(request));
    }
    let answered = false;
    request.once('response', (response) => {
      answered = true;
      response.on('error', () => {}); // errors reach the reader through its iterator; never unhandled
      resolve(response);
    });
    // A later error (after the response) has nothing left to reject.
    request.on('error', (error) => {
      if (!answered && again && !signal?.aborted && resent(error, request))
        send(url, method, headers, body, route, signal, false).then(resolve, reject);
      else reject(error);
    });
    request.end(body ?? undefined);
  });
}

function decoded(response: http.IncomingMessage): Readable {
  const body = decodedBody(response);
  if (body === undefined)
    throw new IngestError(
      'unsupported',
      `the URL answered with an unsupported Content-Encoding "${contentEncoding(response).slice(0, 40)}"`,
    );
  return body;
}

function tooLarge(maxBytes: number, declared?: number): IngestError {
  const said = declared === undefined ? '' : ` (the server announced ${formatBytes(declared)})`;
  return new IngestError('too_large', `the document is larger than ${formatBytes(maxBytes)}${said}`);
}

/** An IngestError for whatever a hop threw, naming the host but nothing of the path, query or headers. */
function networkError(error: unknown, url: URL): IngestError {
  if (isIngestError(error)) return error;
  const host = url.host;
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (code === 'ECONNREFUSED') return new IngestError('network', `could not connect to ${host}: connection refused`);
  if (code === 'ECONNRESET' || code === 'EPIPE') return new IngestError('network', `the connection to ${host} was reset`);
  if (code === 'ETIMEDOUT') return new IngestError('network', `could not connect to ${host}: timed out`);
  if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH') return new IngestError('network', `could not connect to ${host}: unreachable`);
  if (code.startsWith('HPE_')) return new IngestError('network', `${host} sent an invalid HTTP response (${code})`);
  if (code.startsWith('Z_') || code.startsWith('ERR_BROTLI') || code.startsWith('ERR__ERROR')) {
    return new IngestError('network', `the response from ${host} could not be decompressed (${code})`);
  }
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || /CERT|SELF_SIGNED|VERIFY/.test(code)) {
    return new IngestError('network', `the TLS connection to ${host} failed (${code})`);
  }
  if (code === 'ERR_STREAM_PREMATURE_CLOSE' || (error as Error | undefined)?.message === 'aborted') {
    return new IngestError('network', `the connection to ${host} closed before the whole document arrived`);
  }
  return new IngestError('network', `could not fetch from ${host}${code ? ` (${code})` : ''}`);
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** GETs `url` under the SSRF, redirect, size and time rules above (through the guarded fetch below); rejects with IngestError (or `signal`'s reason). */
export async function fetchDocument(url: string, options: FetchOptions = {}): Promise<FetchedDocument> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const start = parseHttpUrl(url);
  const credentials = authorizationHeaders(options.authorization);
  if (!credentials.authorization && (start.username || start.password)) {
    credentials.authorization = authorizationHeaders({
      username: decodeURIComponent(start.username),
      password: decodeURIComponent(start.password),
    }).authorization;
  }
  const guardedFetch = createGuardedFetch({ ...options, keepContentLength: true });

  const deadline = new AbortController();
  const timedOut = new IngestError('timeout', `the URL did not answer within ${formatDuration(timeoutMs)}`);
  const timer = setTimeout(() => deadline.abort(timedOut), timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline.signal, options.signal]) : deadline.signal;
  let current = start;
  try {
    const response = await guardedFetch(start.href, { headers: { accept: '*/*', ...credentials }, signal });
    current = new URL(response.url);
    const status = response.status;
    if (REDIRECTS.has(status)) {
      await response.body?.cancel();
      throw new IngestError('http_status', `the URL answered ${status} ${http.STATUS_CODES[status] ?? ''} without a Location`.trimEnd());
    }
    if (status < 200 || status > 299) {
      await response.body?.cancel();
      const reason = http.STATUS_CODES[status] ?? response.statusText ?? '';
      const hint =
        status === 401 || status === 403
          ? Object.keys(credentials).length > 0
            ? " (check the document's authorization)"
            : ' (the document may need an authorization)'
          : '';
      throw new IngestError('http_status', `the URL answered ${status} ${reason}`.trimEnd() + hint);
    }
    const declared = Number(response.headers.get('content-length'));
    if (response.headers.has('content-length') && Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel();
      throw tooLarge(maxBytes, declared);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    if (response.body) {
      const reader = response.body.getReader();
      for (let part = await reader.read(); !part.done; part = await reader.read()) {
        total += part.value.byteLength;
        if (total > maxBytes) {
          await reader.cancel();
          throw tooLarge(maxBytes);
        }
        chunks.push(Buffer.from(part.value.buffer, part.value.byteOffset, part.value.byteLength));
      }
    }
    const finalUrl = new URL(current.href);
    finalUrl.username = '';
    finalUrl.password = '';
    return { bytes: Buffer.concat(chunks, total), contentType: response.headers.get('content-type'), finalUrl: finalUrl.href };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw networkError(error, current);
  } finally {
    clearTimeout(timer);
  }
}

// ---- Any request, streamed: a `fetch` for the model client and the tools --------------------------

/** What `createGuardedFetch` enforces beyond the address rule. */
export interface GuardedFetchOptions extends Pick<FetchOptions, 'allowPrivateNetworks' | 'isAddressAllowed' | 'resolve' | 'maxRedirects'> {
  /** Largest response body (after content decoding); reading past it fails. Default: no cap. */
  maxResponseBytes?: number;
  /** Keep the Content-Length header of a response that is not content-encoded (document fetching checks it first). */
  keepContentLength?: boolean;
}

/** The signature of the global `fetch`: what the model call and the tools are given. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Headers sent only to the origin the caller addressed, never to one a redirect leads to. */
const SAFE_ACROSS_ORIGINS = new Set(['accept', 'accept-language', 'content-type', 'user-agent']);
const NOT_FORWARDED = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
  'accept-encoding',
]);
const NO_BODY_STATUSES = new Set([101, 204, 205, 304]);

async function requestBody(body: BodyInit | null | undefined): Promise<Buffer | null> {
  if (body === null || body === undefined) return null;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // URLSearchParams, FormData, Blob, ReadableStream: let the platform serialise it.
  return Buffer.from(await new Response(body).arrayBuffer());
}

/** `stream` cut off with IngestError('too_large') once more than `maxBytes` have passed. */
function capped(stream: Readable, maxBytes: number): Readable {
  let total = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      total += chunk.length;
      if (total > maxBytes) callback(new IngestError('too_large', `the response is larger than ${formatBytes(maxBytes)}`));
      else callback(null, chunk);
    },
  });
  return pipeline(stream, guard, () => {});
}

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(contentType);

/** The whole of `stream`, or IngestError('too_large') once more than `maxBytes` have come (the stream then ended). */
function readWhole(stream: Readable, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    stream.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total <= maxBytes) return void chunks.push(chunk);
      stream.destroy();
      reject(new IngestError('too_large', `the response is larger than ${formatBytes(maxBytes)}`));
    });
    let ended = false;
    stream.once('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks, total));
    });
    stream.once('error', reject);
    // Closed before its end (aborted, the connection lost): what an unfinished read says. (An
    // error is made only then: making one, with its stack, costs more than the rest of the read.)
    stream.once('close', () => {
      if (!ended) reject(Object.assign(new Error('aborted'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}

/**
 * A `fetch` that goes through the SSRF guard: every hop's host is vetted and then connected to at
 * exactly the vetted address, any method and body, the response body streamed (content-decoded).
 * Redirects are followed by hand (a 303, or a 301/302 of a POST, becomes a body-less GET) and
 * headers other than a few harmless ones are dropped when a redirect leaves the first origin.
 * Failures reject with IngestError (a message safe to show), an abort with the signal's reason.
 */
export function createGuardedFetch(options: GuardedFetchOptions = {}): FetchFunction {
  return guardedFetchThrough(options, async (url) => ({ addresses: await vetHost(url, options), agent: false }));
}

/**
 * The guarded fetch of createGuardedFetch on the kept-alive connections of `pool`: every request
 * vets its host anew and is given the pool's agent for the addresses the guard allowed, so a kept
 * connection only ever carries requests to the origin and addresses it was opened for. For
 * requests that come one by one over time to the same few servers (webhook deliveries).
 */
export function createPooledFetch(options: GuardedFetchOptions & { pool: ConnectionPool }): FetchFunction {
  return guardedFetchThrough(options, async (url) => {
    const addresses = await vetHost(url, options);
    return { addresses, agent: options.pool.agentFor(url, addresses) };
  });
}

/** A guarded fetch whose connections are kept alive between requests, until `close`. */
export interface FetchSession {
  fetch: FetchFunction;
  /** The same request as `fetch`, its answer as Node reads it (no web stream made for its body). */
  send: GuardedSend;
  /**
   * Ends the session: its requests still under way are ended; its idle connections are ended too,
   * or, with a pool, left to the pool. A later request has a connection of its own.
   */
  close(): void;
}

/** Origins a session keeps connections to; a request to one more has a connection of its own. */
const SESSION_MAX_ORIGINS = 8;

/**
 * Kept-alive connections shared by sessions (one run's requests to an MCP server, the next run's):
 * one agent per origin and set of vetted addresses, whose every connection goes to those addresses
 * (its lookup answers nothing else). The pool vets nothing itself: a session vets the host first
 * and asks for the agent of what the vetting answered, so a name whose lookup now answers other
 * addresses gets another agent (and is refused before that if they are not allowed), and a kept
 * connection only ever carries requests to the origin and address it was opened for.
 */
export interface ConnectionPool {
  /** The agent for `url`'s origin (scheme, host name, port) connecting only to `addresses`. */
  agentFor(url: URL, addresses: ResolvedAddress[]): http.Agent;
  /** Ends every connection of the pool, idle or in use. */
  close(): void;
}

export interface ConnectionPoolOptions {
  /** How long an idle connection is kept (ms); shorter when the server announces a shorter keep-alive. */
  idleMs: number;
  /** Origins and address sets kept at most (the least recently used one's connections end first). */
  maxAgents: number;
  /** Idle connections kept per agent at most. */
  maxIdlePerAgent: number;
}

/**
 * The service's pool of connections to users' servers (MCP servers, model endpoints), kept between
 * runs: each for 4 s idle (less than the 5 s a Node server keeps an idle connection by default,
 * and shorter when the server announces less), to at most 64 origins and address sets, 4 idle
 * connections each.
 */
export const KEPT_CONNECTIONS: ConnectionPoolOptions = { idleMs: 4_000, maxAgents: 64, maxIdlePerAgent: 4 };

export function createConnectionPool(options: ConnectionPoolOptions): ConnectionPool {
  const agents = new Map<string, http.Agent>();
  /** An agent out of the pool: its idle connections end now, the ones in use when their request ends. */
  const retire = (agent: http.Agent) => {
    agent.keepSocketAlive = () => false;
    for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  };
  return {
    agentFor(url, addresses) {
      const pinned = [...addresses].sort((a, b) => a.family - b.family || (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
      const key = `${url.origin} ${pinned.map(({ address }) => address).join(' ')}`;
      let agent = agents.get(key);
      if (agent) agents.delete(key);
      else {
        const agentOptions = {
          keepAlive: true,
          maxFreeSockets: options.maxIdlePerAgent,
          timeout: options.idleMs,
          lookup: pinnedLookup(pinned),
        };
        agent = url.protocol === 'https:' ? new (https().Agent)(agentOptions) : new http.Agent(agentOptions);
      }
      // The most recently used last: a Map keeps the order things were set in.
      agents.set(key, agent);
      if (agents.size > options.maxAgents) {
        const [oldestKey, oldest] = agents.entries().next().value!;
        agents.delete(oldestKey);
        retire(oldest);
      }
      return agent;
    },
    close() {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  };
}

/**
 * The guarded fetch of createGuardedFetch, for a short series of requests (one run's requests to
 * an MCP server): each origin's host is vetted once, at its first request of the session, and its
 * connections are kept alive for the next. Each origin has an agent whose every connection goes to
 * the addresses vetted for it (its lookup answers nothing else), so a kept connection only ever
 * carries requests to the origin it was opened for; a redirect to another origin is vetted and
 * connected on its own. Without `pool` the agents are the session's own, and `close` ends their
 * connections; with one they come from the pool and outlive the session, for the next session to
 * the same origin and vetted addresses (which vets the host again). `close` ends the requests
 * still under way either way; the caller calls it when the series ends.
 */
export function createGuardedSession(options: GuardedFetchOptions & { pool?: ConnectionPool } = {}): FetchSession {
  const { pool } = options;
  const origins = new Map<string, Promise<Route>>();
  const agents: http.Agent[] = [];
  /** The session's requests under way (with a pool, whose close leaves the agents be). */
  const requests = new Set<http.ClientRequest>();
  let closed = false;
  const open = async (url: URL): Promise<Route> => {
    const addresses = await vetHost(url, options);
    if (pool) return { addresses, agent: pool.agentFor(url, addresses), requests };
    // The agent's own lookup, as well as each request's, answers only the vetted addresses.
    const agentOptions = { keepAlive: true, maxFreeSockets: 4, lookup: pinnedLookup(addresses) };
    const agent = url.protocol === 'https:' ? new (https().Agent)(agentOptions) : new http.Agent(agentOptions);
    agents.push(agent);
    if (closed) agent.destroy();
    return { addresses, agent };
  };
  const route = async (url: URL): Promise<Route> => {
    let routing = origins.get(url.origin);
    if (!routing && (closed || origins.size >= SESSION_MAX_ORIGINS)) return { addresses: await vetHost(url, options), agent: false };
    if (!routing) {
      const opening = open(url);
      routing = opening;
      origins.set(url.origin, opening);
      // A failed lookup or a refusal is not remembered: the next request asks again.
      opening.catch(() => {
        if (origins.get(url.origin) === opening) origins.delete(url.origin);
      });
    }
    const kept = await routing;
    return closed ? { addresses: kept.addresses, agent: false } : kept;
  };
  return {
    // A JSON answer (an MCP server's, one at a time) is read whole, within the cap: a buffer is
    // handed on more cheaply than a stream piped through a transform and into a web stream.
    fetch: guardedFetchThrough(options, route, true),
    send: guardedSendThrough(options, route, false),
    close() {
      closed = true;
      for (const agent of agents) agent.destroy();
      for (const request of requests) request.destroy();
      requests.clear();
    },
  };
}

/**
 * A response whose body was read whole: `json()`, `text()` and the other readers answer from the
 * buffer. A Response made from a buffer builds a web stream at once and reads through it, which
 * costs more than the rest of an MCP server's answer on its way to the client; here one is made
 * only when `body` (or a clone) is asked for, and from then on a plain Response of the bytes answers.
 */
class WholeResponse extends Response {
  readonly #bytes: Buffer;
  #used = false;
  #plain: Response | null = null;

  constructor(bytes: Buffer, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
  }

  /** The same answer as a Response made from the bytes, its body not read. */
  #asPlain(): Response {
    // Once read, the body is gone (null), as a read Response's is unusable.
    this.#plain ??= new Response(this.#used ? null : new Uint8Array(this.#bytes), this);
    return this.#plain;
  }

  /** The bytes, once: a body is read only once, as with any Response. */
  #take(): Promise<Buffer> {
    if (this.#used) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    if (this.#plain !== null) return this.#plain.arrayBuffer().then((buffer) => Buffer.from(buffer));
    this.#used = true;
    return Promise.resolve(this.#bytes);
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    return this.#asPlain().body;
  }

  override get bodyUsed(): boolean {
    return this.#used || (this.#plain?.bodyUsed ?? false);
  }

  override text(): Promise<string> {
    return this.#take().then((bytes) => bytes.toString('utf8'));
  }

  override json(): Promise<unknown> {
    return this.#take().then((bytes) => JSON.parse(bytes.toString('utf8')) as unknown);
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return this.#take().then((bytes) => new Uint8Array(bytes).buffer);
  }

  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#take().then((bytes) => new Uint8Array(bytes));
  }

  override blob(): Promise<Blob> {
    const type = this.headers.get('content-type') ?? '';
    return this.#take().then((bytes) => new Blob([new Uint8Array(bytes)], { type }));
  }

  override clone(): Response {
    const copy = this.#asPlain().clone();
    Object.defineProperty(copy, 'url', { value: this.url });
    return copy;
  }
}

/**
 * An answer of the guarded fetch before it is made a Response: its body as Node reads it (decoded,
 * within the cap), or read whole (`whole`: a JSON answer, when asked for). A caller that reads many
 * small pieces (a model's stream) reads `stream` through its events, without a web stream between.
 */
export interface GuardedAnswer {
  status: number;
  statusText: string;
  headers: Headers;
  url: string;
  stream: Readable | null;
  whole: Buffer | null;
}

export type GuardedSend = (input: string | URL | Request, init?: RequestInit) => Promise<GuardedAnswer>;

function guardedFetchThrough(options: GuardedFetchOptions, routeOf: (url: URL) => Promise<Route>, wholeJson = false): FetchFunction {
  const send = guardedSendThrough(options, routeOf, wholeJson);
  return async function guardedFetch(input, init) {
    const { status, statusText, headers, url, stream, whole } = await send(input, init);
    const responseInit = { status, statusText, headers };
    const answer = whole
      ? new WholeResponse(whole, responseInit)
      : new Response(stream ? (Readable.toWeb(stream) as ReadableStream<Uint8Array>) : null, responseInit);
    Object.defineProperty(answer, 'url', { value: url });
    return answer;
  };
}

function guardedSendThrough(options: GuardedFetchOptions, routeOf: (url: URL) => Promise<Route>, wholeJson: boolean): GuardedSend {
  const cap = options.maxResponseBytes;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  return async function guardedSend(input, init = {}) {
    const request = input instanceof Request ? input : undefined;
    let current = parseHttpUrl(request ? request.url : String(input));
    let method = (init.method ?? request?.method ?? 'GET').toUpperCase();
    // Headers as given (a Headers object is already checked and is not copied unless a redirect changes them).
    const headersInit = init.headers ?? request?.headers;
    let given = headersInit instanceof Headers ? headersInit : new Headers(headersInit);
    let body = await requestBody(init.body ?? (request?.body ? await request.arrayBuffer() : null));
    const signal = init.signal ?? request?.signal ?? undefined;
    const origin = current.origin;
    const follow = (init.redirect ?? request?.redirect ?? 'follow') === 'follow';
    if (signal?.aborted) throw signal.reason;

    for (let redirects = 0; ; redirects += 1) {
      const routing = routeOf(current);
      const route = signal ? await raceAbort(routing, signal) : await routing;
      const headers: Record<string, string> = { 'user-agent': USER_AGENT, 'accept-encoding': ACCEPT_ENCODING };
      given.forEach((value, name) => {
        if (NOT_FORWARDED.has(name)) return;
        if (current.origin !== origin && !SAFE_ACROSS_ORIGINS.has(name)) return;
        headers[name] = value;
      });
      if (body !== null) headers['content-length'] = String(body.length);
      let response: http.IncomingMessage;
      try {
        response = await send(current, method, headers, body, route, signal);
      } catch (error) {
        throw signal?.aborted ? signal.reason : networkError(error, current);
      }
      const status = response.statusCode ?? 0;
      if (follow && REDIRECTS.has(status) && response.headers.location) {
        response.destroy();
        if (redirects >= maxRedirects) throw new IngestError('too_many_redirects', `the URL redirected more than ${maxRedirects} times`);
        current = parseHttpUrl(response.headers.location, current, 'a redirect');
        if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
          method = method === 'HEAD' ? 'HEAD' : 'GET';
          body = null;
          if (given === headersInit) given = new Headers(given);
          given.delete('content-type');
        }
        continue;
      }
      const responseHeaders = new Headers();
      const encoded = contentEncoding(response) !== 'identity';
      for (const [name, value] of Object.entries(response.headers)) {
        if (value === undefined || name === 'content-encoding') continue;
        if (name === 'content-length' && (encoded || !options.keepContentLength)) continue;
        for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, one);
      }
      let stream: Readable | null = null;
      let whole: Buffer | null = null;
      if (!NO_BODY_STATUSES.has(status) && method !== 'HEAD') {
        try {
          stream = decoded(response);
        } catch (error) {
          response.destroy();
          throw error;
        }
        if (cap !== undefined && wholeJson && isJson(response.headers['content-type'])) {
          try {
            whole = await readWhole(stream, cap);
          } catch (error) {
            response.destroy();
            throw signal?.aborted ? signal.reason : networkError(error, current);
          }
        } else if (cap !== undefined) stream = capped(stream, cap);
      } else {
        response.destroy();
      }
      return {
        status: status < 200 || status > 599 ? 502 : status,
        statusText: response.statusMessage ?? '',
        headers: responseHeaders,
        url: current.href,
        stream: whole ? null : stream,
        whole,
      };
    }
  };
}
