// Hostile input: a seeded, repeatable fuzz run of random JSON values and malformed
// bodies against every write endpoint never gets a 5xx or a body outside the envelope, and leaves the
// database consistent and untouched records untouched; `__proto__`/`constructor` keys pollute nothing;
// SQL metacharacters are stored literally; concurrent duplicate sign-ups give exactly one 201.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { startService } from './helpers.js';

const SEED = 0x5eed4;
const CASES = 3000;
const IN_FLIGHT = 16;

// What the prototypes look like before any request: compared after the fuzz run.
const objectPrototypeKeys = Reflect.ownKeys(Object.prototype).map(String).sort();
const arrayPrototypeKeys = Reflect.ownKeys(Array.prototype).map(String).sort();

/** Unexpected errors the service logged, by request id: shown next to a failing request. */
const serverErrors = new Map<string, string>();
const service = await startService(
  {},
  {
    info: () => {},
    error: (fields) => {
      const error = fields.error as { name?: string; message?: string; stack?: string } | undefined;
      serverErrors.set(String(fields.requestId), `${error?.name}: ${error?.message} ${error?.stack?.split('\n')[1]?.trim() ?? ''}`);
    },
  },
);

// ---- A seeded generator ---------------------------------------------------------------------------

/** mulberry32: a tiny, fast 32-bit PRNG; the same seed gives the same run. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = mulberry32(SEED);
const below = (n: number) => Math.floor(random() * n);
const chance = (p: number) => random() < p;
const pick = <T>(items: readonly T[]): T => items[below(items.length)];

/** JSON text spliced in as is: numbers JSON.stringify cannot write (1e999), deep nesting, duplicate keys. */
class Raw {
  constructor(readonly text: string) {}
}

/** An object literal whose keys are all own data properties, even `__proto__`. */
function obj(entries: [string, unknown][]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
  return result;
}

/** JSON text of a generated value (own `__proto__` keys and Raw pieces included). */
function serialize(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .map((key) => `${JSON.stringify(key)}:${serialize(record[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Longer than any cap (templates take 100 000 characters), and long in UTF-8 bytes. */
const LONG_ASCII = 'x'.repeat(100_001);
const LONG_UNICODE = 'é😀'.repeat(20_000);

/** Strings that have broken services before. */
const NASTY_STRINGS = [
  '',
  ' ',
  '\t\n\r',
  'a',
  "Robert'); DROP TABLE tools;--",
  "' OR '1'='1",
  '"; DELETE FROM users; --',
  "'; DROP TABLE users; --",
  '%',
  '_',
  '\\',
  '\\"',
  '\u0000',
  'nul\u0000byte',
  '😀🚀👩‍👩‍👧',
  'Zażółć gęślą jaźń',
  '\u202eevil',
  '\ufeffbom',
  '\ud800',
  'a\udfffb',
  '<script>alert(1)</script>',
  '{{7*7}}',
  '{who}',
  '{',
  '}',
  '${jndi:ldap://x/a}',
  '../../etc/passwd',
  'null',
  'true',
  '0',
  '-1',
  'NaN',
  'Infinity',
  '1e309',
  '12',
  ' 7 ',
  '0x10',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'SEARCH',
  'search',
  'SEARCH ',
  'REACT',
  'react',
  'VENDOR_A',
  'PDF',
  'pdf',
  'URL',
  'character',
  'CharacterTextSplitter',
  '#fff',
  '#0e8a16',
  '#ggg',
  '#12345',
  'red',
  'javascript:alert(1)',
  'http://',
  'https://example.com/x.pdf',
  'ftp://example.com/a',
  'file:///etc/passwd',
  'https://user:pass@[::1]:99999/',
  'a@b.co',
  'not an email',
  'A@EXAMPLE.COM',
  'a'.repeat(200),
  'a'.repeat(201),
  'a'.repeat(1025),
  'b'.repeat(5_000),
];

const NASTY_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  -0.5,
  2,
  7,
  1e308,
  -1e308,
  2 ** 31,
  2 ** 32 + 1,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 63),
  1e-320,
  999_999,
  1_000_000,
  1_000_001,
  100_000,
  100_001,
];
const RAW_NUMBERS = ['1e999', '-1e999', '1E400', '-0.0', '0.0000000000000000000000001', '123456789012345678901234567890', '1.0', '1e2'];

const HOSTILE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'polluted',
  'isAdmin',
  'userId',
  'id',
  'seq',
  'user_id',
  'password_hash',
  '',
];
const FIELD_NAMES = [
  'name',
  'email',
  'password',
  'currentPassword',
  'description',
  'type',
  'metadata',
  'url',
  'from_page',
  'to_page',
  'authorization',
  'splitter',
  'chunk_size',
  'chunk_overlap',
  'llm',
  'model',
  'provider',
  'hasMemory',
  'promptId',
  'documentId',
  'agentId',
  'toolId',
  'tags',
  'template',
  'input_variables',
  'color',
];

/** A random string: printable ASCII, then code points from all over Unicode (lone surrogates included). */
function randomString(): string {
  const length = chance(0.1) ? below(400) : below(24);
  let text = '';
  for (let i = 0; i < length; i += 1) {
    const roll = random();
    if (roll < 0.6) text += String.fromCharCode(32 + below(95));
    else if (roll < 0.75) text += pick(["'", '"', ';', '--', '\\', '{', '}', '%', '\u0000', '\n']);
    else if (roll < 0.95) text += String.fromCodePoint(below(0x10ffff - 0xe000) + 0xe000);
    else text += String.fromCharCode(0xd800 + below(0x800));
  }
  return text;
}

/** Nesting far beyond anything a client needs: `[[[...]]]` or `{"a":{"a":...}}`. */
function deepNesting(): Raw {
  // Around SQLite's JSON depth limit (1000) and the JavaScript stack's, and far beyond both.
  const depth = pick([100, 1_500, 3_000, 5_000, 100, 1_500, 3_000, 5_000, 50_000]);
  return depth === 50_000 || chance(0.5)
    ? new Raw('['.repeat(depth) + ']'.repeat(depth))
    : new Raw('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
}

function randomLeaf(): unknown {
  const roll = random();
  if (roll < 0.08) return null;
  if (roll < 0.16) return chance(0.5);
  if (roll < 0.3) return pick(NASTY_NUMBERS);
  if (roll < 0.36) return new Raw(pick(RAW_NUMBERS));
  if (roll < 0.4) return random() * 2 ** below(64) * (chance(0.5) ? -1 : 1);
  if (roll < 0.698) return pick(NASTY_STRINGS);
  if (roll < 0.7) return pick([LONG_ASCII, LONG_UNICODE]);
  return randomString();
}

/** Any JSON value: nested objects and arrays of random depth, hostile keys, nasty leaves. */
function randomValue(depth = 0): unknown {
  const roll = random();
  if (depth >= 5 || roll < 0.5) return randomLeaf();
  if (roll < 0.52) return deepNesting();
  if (roll < 0.72) return Array.from({ length: below(6) }, () => randomValue(depth + 1));
  const keys = Array.from({ length: below(7) }, () =>
    chance(0.4) ? pick(FIELD_NAMES) : chance(0.5) ? pick(HOSTILE_KEYS) : randomString(),
  );
  return obj(keys.map((key) => [key, randomValue(depth + 1)]));
}

// ---- The service's records and endpoints ----------------------------------------------------------

/** One record of every kind, and the paths that read each back. */
interface RecordSet {
  userId: string;
  promptId: string;
  tagId: string;
  toolId: string;
  documentId: string;
  agentId: string;
  agentDocumentId: string;
  agentToolId: string;
  apiTokenId: string;
  paths: string[];
}

async function createRecordSet(token: string, userId: string, label: string): Promise<RecordSet> {
  const { id: promptId } = await service.createPrompt(token, {
    name: `${label} prompt`,
    template: 'Hello {who}',
    input_variables: ['who'],
  });
  const { id: tagId } = await service.createTag(token, { name: `${label} tag`, color: '#abcdef' });
  const { id: toolId } = await service.createTool(token, {
    name: `${label} tool`,
    type: 'AUTOMATION_NLA',
    metadata: { automation_nla_api_key: 'secret' },
  });
  const { id: documentId } = await service.createDocument(token, {
    name: `${label} document`,
    type: 'PDF',
    url: 'https://example.com/a.pdf',
    from_page: 2,
    to_page: '9',
    authorization: { bearer: 'secret' },
    splitter: { type: 'recursive', chunk_size: 400, chunk_overlap: 40 },
    metadata: { lang: 'en' },
  });
  const { id: agentId } = await service.createAgent(token, {
    name: `${label} agent`,
    type: 'REACT',
    llm: { model: 'gpt-4o', provider: 'openai', apiKey: 'secret' },
    hasMemory: true,
    promptId,
    documentId,
    tags: [tagId],
  });
  const create = async (path: string, body: unknown): Promise<string> => (await service.create(token, path, body)).id;
  const agentDocumentId = await create('/agent-documents', { agentId, documentId });
  const agentToolId = await create('/agent-tools', { agentId, toolId });
  const apiTokenId = await create('/api-tokens', { description: `${label} token` });
  const paths = [
    `/prompts/${promptId}`,
    `/tags/${tagId}`,
    `/tools/${toolId}`,
    `/documents/${documentId}`,
    `/agents/${agentId}`,
    `/agent-documents/${agentDocumentId}`,
    `/agent-tools/${agentToolId}`,
    `/api-tokens/${apiTokenId}`,
  ].map((path) => `/api/v1${path}`);
  return { userId, promptId, tagId, toolId, documentId, agentId, agentDocumentId, agentToolId, apiTokenId, paths };
}

/** The exact response text of every path: records the fuzz must leave alone. */
async function snapshot(token: string, paths: string[]): Promise<string[]> {
  return Promise.all(
    paths.map(async (path) => {
      const reply = await service.request('GET', path, { token });
      return `${reply.status} ${reply.text}`;
    }),
  );
}

/** One request of the fuzz run, with everything needed to send it again by hand. */
interface FuzzCase {
  index: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** The case as a reproducible request: method, path, headers (no token) and body bytes (long runs elided). */
function describeCase(fuzz: FuzzCase): string {
  let body = 'none';
  if (fuzz.body !== undefined) {
    const text = fuzz.body.toString('utf8');
    const exact = Buffer.from(text, 'utf8').equals(fuzz.body);
    const elide = (shown: string) => (shown.length > 300 ? `${shown.slice(0, 200)}…${shown.slice(-60)}` : shown);
    const shown = exact ? JSON.stringify(elide(text)) : `base64:${elide(fuzz.body.toString('base64'))}`;
    body = `${fuzz.body.length} bytes ${shown}`;
  }
  const headers = Object.fromEntries(
    Object.entries(fuzz.headers).filter(([name]) => !/^(autorization|authorization|x-request-id)$/i.test(name)),
  );
  const auth = Object.keys(fuzz.headers).some((name) => /^(autorization|authorization)$/i.test(name)) ? ' (with a bearer)' : '';
  return `#${fuzz.index} ${fuzz.method} ${fuzz.path}${auth} headers=${JSON.stringify(headers)} body=${body}`;
}

/** Every problem with a reply, or none: a 5xx, or anything but the envelope. */
function envelopeProblems(status: number, contentType: string, text: string): string[] {
  if (status >= 500) return [`status ${status}`];
  if (!/^application\/json/.test(contentType)) return [`content-type ${contentType}`];
  let body: { success?: unknown; data?: unknown; error?: { code?: unknown; message?: unknown } };
  try {
    body = JSON.parse(text);
  } catch {
    return [`not JSON: ${text.slice(0, 200)}`];
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return ['body is not an object'];
  if (typeof body.success !== 'boolean') return ['success is not a boolean'];
  if (body.success !== status < 300) return [`success ${body.success} with status ${status}`];
  if (body.success) return 'data' in body ? [] : ['success without data'];
  const problems: string[] = [];
  if (body.data !== null) problems.push('failure with data not null');
  if (typeof body.error?.code !== 'string') problems.push('failure without error.code');
  if (typeof body.error?.message !== 'string') problems.push('failure without error.message');
  return problems;
}

// ---- Fixtures ---------------------------------------------------------------------------------------

/** The fuzzing user: its "targets" are PATCHed and named in bodies, its "witnesses" never are. */
let fuzzer: { token: string; email: string; userId: string };
let targets: RecordSet;
let witnesses: RecordSet;
/** Another user: its ids are sent by the fuzzer (they must act as missing), its records must not change. */
let other: { token: string; set: RecordSet };
/** The account PATCH and DELETE /auth/me are fuzzed with; its password never appears in a fuzz body. */
let account: { token: string; email: string; password: string };
let witnessSnapshot: string[];
let otherSnapshot: string[];

before(async () => {
  const signedUp = await service.signUp('Fuzzer');
  fuzzer = { token: signedUp.token, email: signedUp.email, userId: signedUp.user.id };
  targets = await createRecordSet(fuzzer.token, fuzzer.userId, 'target');
  witnesses = await createRecordSet(fuzzer.token, fuzzer.userId, 'witness');
  const otherUser = await service.signUp('Other');
  other = { token: otherUser.token, set: await createRecordSet(otherUser.token, otherUser.user.id, 'other') };
  const accountUser = await service.signUp('Account');
  account = { token: accountUser.token, email: accountUser.email, password: accountUser.password };
  witnessSnapshot = await snapshot(fuzzer.token, witnesses.paths);
  otherSnapshot = await snapshot(other.token, other.set.paths);
});

// ---- The fuzz cases ---------------------------------------------------------------------------------

interface Endpoint {
  method: 'POST' | 'PATCH' | 'DELETE';
  path: string;
  /** The bearer sent: none (sign-up, sign-in), the fuzzer's, or the account's (/auth/me). */
  auth: 'none' | 'fuzzer' | 'account';
  /** A body the endpoint would accept (or nearly): the start of every plausible-but-wrong variant. */
  valid: () => Record<string, unknown>;
}

const HOSTILE_IDS = ["' OR 1=1 --", '..%2F..%2Fapi-tokens', '%00', 'x'.repeat(65), '__proto__', 'constructor', '😀', '1', '-1', 'null'];

function endpoints(): Endpoint[] {
  const ids = {
    prompt: () => pick([targets.promptId, other.set.promptId]),
    tag: () => pick([targets.tagId, other.set.tagId]),
    tool: () => pick([targets.toolId, other.set.toolId]),
    document: () => pick([targets.documentId, other.set.documentId]),
    agent: () => pick([targets.agentId, other.set.agentId]),
    user: () => pick([fuzzer.userId, other.set.userId]),
  };
  const name = () => (chance(0.5) ? `fuzz ${below(1e6)}` : randomString());
  const agent = () => ({
    name: name(),
    type: pick(['REACT', 'VENDOR_A']),
    llm: { model: 'gpt-4o', provider: 'openai' },
    hasMemory: chance(0.5),
    promptId: ids.prompt(),
    documentId: ids.document(),
    tags: chance(0.5) ? [ids.tag()] : [{ id: ids.tag() }],
  });
  const document = () => ({
    name: name(),
    type: pick(['TXT', 'PDF', 'VIDEO', 'CSV', 'URL']),
    url: 'https://example.com/doc.pdf',
    from_page: 1,
    to_page: '12',
    authorization: { token: 'x' },
    splitter: { type: 'CharacterTextSplitter', chunk_size: 500, chunk_overlap: 50 },
    metadata: { k: 'v' },
  });
  const prompt = () => ({ name: name(), template: 'Tell {who} about {topic}', input_variables: ['who', 'topic'] });
  const tag = () => ({ name: name(), color: pick(['#abc', '#abcd', '#a1b2c3', '#a1b2c3d4']), userId: ids.user() });
  const tool = () => ({ name: name(), type: pick(['SEARCH', 'AUTOMATION_NLA', 'OPENAPI']), metadata: { automation_nla_api_key: 'k' } });
  return [
    {
      method: 'POST',
      path: '/auth/sign-up',
      auth: 'none',
      valid: () => ({ name: name(), email: `fuzz${below(1e9)}@example.com`, password: 'a fuzzed password' }),
    },
    {
      method: 'POST',
      path: '/auth/sign-in',
      auth: 'none',
      valid: () => ({ email: pick([fuzzer.email, fuzzer.email.toUpperCase(), 'nobody@example.com']), password: 'a wrong password' }),
    },
    { method: 'POST', path: '/api-tokens', auth: 'fuzzer', valid: () => ({ description: name() }) },
    { method: 'POST', path: '/tools', auth: 'fuzzer', valid: tool },
    { method: 'POST', path: '/documents', auth: 'fuzzer', valid: document },
    {
      method: 'POST',
      path: '/agents',
      auth: 'fuzzer',
      valid: () => (chance(0.8) ? agent() : { agentId: ids.agent(), documentId: ids.document() }),
    },
    { method: 'POST', path: '/prompts', auth: 'fuzzer', valid: prompt },
    { method: 'POST', path: '/tags', auth: 'fuzzer', valid: tag },
    { method: 'POST', path: '/agent-documents', auth: 'fuzzer', valid: () => ({ agentId: ids.agent(), documentId: ids.document() }) },
    { method: 'POST', path: '/agent-tools', auth: 'fuzzer', valid: () => ({ agentId: ids.agent(), toolId: ids.tool() }) },
    {
      method: 'PATCH',
      path: '/auth/me',
      auth: 'account',
      valid: () => (chance(0.5) ? { name: name() } : { password: 'a new password', currentPassword: 'not the password' }),
    },
    {
      method: 'PATCH',
      path: `/api-tokens/{${targets.apiTokenId}|${other.set.apiTokenId}}`,
      auth: 'fuzzer',
      valid: () => ({ description: name() }),
    },
    { method: 'PATCH', path: `/tools/{${targets.toolId}|${other.set.toolId}}`, auth: 'fuzzer', valid: tool },
    { method: 'PATCH', path: `/documents/{${targets.documentId}|${other.set.documentId}}`, auth: 'fuzzer', valid: document },
    { method: 'PATCH', path: `/agents/{${targets.agentId}|${other.set.agentId}}`, auth: 'fuzzer', valid: agent },
    { method: 'PATCH', path: `/prompts/{${targets.promptId}|${other.set.promptId}}`, auth: 'fuzzer', valid: prompt },
    { method: 'PATCH', path: `/tags/{${targets.tagId}|${other.set.tagId}}`, auth: 'fuzzer', valid: tag },
    {
      method: 'DELETE',
      path: '/auth/me',
      auth: 'account',
      valid: () => ({ password: pick(['a wrong password', 'x', account.password.toUpperCase()]) }),
    },
  ];
}

/** The concrete path of a case: `{target|other}` becomes the target id mostly, else the other user's or a hostile one. */
function concretePath(template: string): string {
  const match = /\{([^|}]+)\|([^}]+)\}/.exec(template);
  if (!match) return template;
  const id = chance(0.85) ? match[1] : chance(0.6) ? match[2] : pick(HOSTILE_IDS);
  // Hostile ids that hold a % are already percent-encoded: keep their escapes as written.
  return template.replace(match[0], encodeURIComponent(id).replace(/%25/g, '%'));
}

/** A plausible body gone wrong in one to three places (or left valid, now and then). */
function plausibleVariant(valid: Record<string, unknown>): unknown {
  let entries = Object.entries(valid);
  const changes = chance(0.1) ? 0 : 1 + below(3);
  for (let i = 0; i < changes; i += 1) {
    const roll = random();
    if (roll < 0.2 && entries.length > 0) {
      entries.splice(below(entries.length), 1);
    } else if (roll < 0.85) {
      const key = entries.length > 0 && chance(0.7) ? pick(entries)[0] : chance(0.5) ? pick(HOSTILE_KEYS) : pick(FIELD_NAMES);
      const value = chance(0.4) ? randomLeaf() : chance(0.8) ? randomValue(1) : deepNesting();
      entries = [...entries.filter(([existing]) => existing !== key), [key, value]];
    } else {
      // The same key twice, the second with a wrong value: JSON text only a hostile client writes.
      const key = entries.length > 0 ? pick(entries)[0] : 'name';
      entries.push([key, randomLeaf()]);
    }
  }
  const hasDuplicates = new Set(entries.map(([key]) => key)).size !== entries.length;
  if (hasDuplicates) return new Raw(`{${entries.map(([key, value]) => `${JSON.stringify(key)}:${serialize(value)}`).join(',')}}`);
  return obj(entries);
}

const WRONG_CONTENT_TYPES = [
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  '*/*',
  'application/jsonp',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=bogus',
  'APPLICATION/JSON',
  'application/merge-patch+json',
  'application/json;;;',
  'json',
];

const OVER_LIMIT = Buffer.from(`{"name":"${'a'.repeat(1024 * 1024 + 10)}"}`);

/** Byte sequences that are not UTF-8: a stray continuation, an overlong slash, a surrogate, a cut sequence. */
const INVALID_UTF8 = [[0xff], [0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]];

/** A body that is not (quite) a JSON request: returns the bytes and the headers to send them with. */
function malformedBody(valid: Record<string, unknown>): { body?: Buffer; headers: Record<string, string> } {
  const json = 'application/json';
  const text = serialize(plausibleVariant(valid));
  switch (below(10)) {
    case 0:
      return { body: Buffer.from(text.slice(0, below(text.length))), headers: { 'content-type': json } };
    case 1: {
      const bytes = Buffer.from(text);
      const at = below(bytes.length + 1);
      return {
        body: Buffer.concat([bytes.subarray(0, at), Buffer.from(pick(INVALID_UTF8)), bytes.subarray(at)]),
        headers: { 'content-type': json },
      };
    }
    case 2:
    case 3:
      return { body: Buffer.from(text), headers: { 'content-type': pick(WRONG_CONTENT_TYPES) } };
    case 4:
      // No content type at all.
      return { body: Buffer.from(text), headers: {} };
    case 5:
      return { body: Buffer.alloc(0), headers: { 'content-type': json } };
    case 6: {
      const odd = pick([
        '',
        ' ',
        '\n\t',
        'null',
        '\ufeff{}',
        `\ufeff${text}`,
        `${text}x`,
        `${text}${text}`,
        '{}{}',
        '\u0000',
        '"',
        "{'a':1}",
        'undefined',
        'NaN',
        '[',
        '{"a":1,}',
      ]);
      return { body: Buffer.from(odd), headers: { 'content-type': json } };
    }
    case 7: {
      const [encoding, body] = pick([
        ['gzip', gzipSync(text)],
        ['gzip', Buffer.from(text)],
        ['deflate', Buffer.from(text)],
        ['br', Buffer.from(text)],
        ['bogus', Buffer.from(text)],
        ['identity', Buffer.from(text)],
        ['gzip, gzip', gzipSync(gzipSync(text))],
      ] as [string, Buffer][]);
      return { body, headers: { 'content-type': json, 'content-encoding': encoding } };
    }
    case 8:
      return { body: Buffer.from(serialize(randomValue())), headers: { 'content-type': pick(['text/plain', json]) } };
    default:
      // A very long string in a plausible body.
      return {
        body: Buffer.from(serialize(obj([...Object.entries(valid), [pick(FIELD_NAMES), pick([LONG_ASCII, LONG_UNICODE])]]))),
        headers: { 'content-type': json },
      };
  }
}

/** The seeded list of cases: every write endpoint in turn, each with a random, plausible or malformed body. */
function fuzzCases(): FuzzCase[] {
  const all = endpoints();
  return Array.from({ length: CASES }, (_, index) => {
    const endpoint = all[index % all.length];
    const headers: Record<string, string> = { 'x-request-id': `fuzz-${index}` };
    const token = endpoint.auth === 'fuzzer' ? fuzzer.token : endpoint.auth === 'account' ? account.token : undefined;
    if (token !== undefined) {
      const roll = random();
      if (roll < 0.9) headers[chance(0.5) ? 'Autorization' : 'Authorization'] = `Bearer ${token}`;
      else if (roll < 0.95)
        headers.Autorization = pick([
          'Bearer',
          'Bearer ',
          `Basic ${token}`,
          `Bearer ${token}x`,
          `bearer   ${token}  `,
          'Bearer ' + 'a'.repeat(300),
        ]);
    }
    let body: Buffer | undefined;
    const roll = random();
    if (index % 500 === 250) {
      // Now and then a body over the 1 MiB limit.
      body = OVER_LIMIT;
      headers['content-type'] = 'application/json';
    } else if (roll < 0.3) {
      body = Buffer.from(serialize(randomValue()));
      headers['content-type'] = 'application/json';
    } else if (roll < 0.75) {
      body = Buffer.from(serialize(plausibleVariant(endpoint.valid())));
      headers['content-type'] = 'application/json';
    } else {
      const malformed = malformedBody(endpoint.valid());
      body = malformed.body;
      Object.assign(headers, malformed.headers);
    }
    return { index, method: endpoint.method, path: `/api/v1${concretePath(endpoint.path)}`, headers, body };
  });
}

/** Sends one case; returns what is wrong with its reply (empty when nothing is). */
async function send(fuzz: FuzzCase): Promise<string[]> {
  const raw = fuzz.body === undefined ? undefined : new Uint8Array(fuzz.body);
  const reply = await service.request(fuzz.method, fuzz.path, { headers: fuzz.headers, raw });
  return envelopeProblems(reply.status, reply.headers.get('content-type') ?? '', reply.text);
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function inPool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

// ---- The tests ---------------------------------------------------------------------------------------

describe('hostile input', () => {
  test('20 concurrent sign-ups with the same email (in any case, with white space): exactly one 201, the rest 409', async () => {
    const spellings = ['same@example.com', 'SAME@example.com', ' same@Example.COM ', 'Same@EXAMPLE.com'];
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        service.request('POST', '/api/v1/auth/sign-up', {
          body: { name: `Same ${i}`, email: spellings[i % spellings.length], password: 'correct horse battery' },
        }),
      ),
    );
    const statuses = replies.map((reply) => reply.status).sort();
    assert.deepEqual(statuses, [201, ...Array(19).fill(409)], JSON.stringify(replies.map((reply) => reply.body)));
    for (const reply of replies.filter((one) => one.status === 409)) assert.equal(reply.body.error.code, 'conflict');
    assert.equal(service.db.prepare('SELECT count(*) FROM users WHERE email = ?').pluck().get('same@example.com'), 1);
  });

  test("SQL metacharacters are stored and returned literally: a tool named Robert'); DROP TABLE tools;--", async () => {
    const names = [
      "Robert'); DROP TABLE tools;--",
      "' OR '1'='1",
      '"; DELETE FROM users; --',
      "x' UNION SELECT token FROM api_tokens --",
      '100% _true_ \\ \'"',
    ];
    for (const name of names) {
      const made = await service.request('POST', '/api/v1/tools', {
        token: fuzzer.token,
        body: { name, type: 'SEARCH', metadata: { q: name } },
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      assert.equal(made.body.data.name, name);
      const read = await service.request('GET', `/api/v1/tools/${made.body.data.id}`, { token: fuzzer.token });
      assert.equal(read.status, 200);
      assert.equal(read.body.data.name, name);
      assert.equal(
        service.db.prepare('SELECT name FROM tools WHERE id = ?').pluck().get(made.body.data.id),
        name,
        'the column holds the text as sent',
      );
    }
    const template = 'SELECT * FROM {table}; -- \' " ;';
    const prompt = await service.request('POST', '/api/v1/prompts', {
      token: fuzzer.token,
      body: { name: "p'; DROP TABLE prompts;--", template, input_variables: ['table'] },
    });
    assert.equal(prompt.status, 201, JSON.stringify(prompt.body));
    const readPrompt = await service.request('GET', `/api/v1/prompts/${prompt.body.data.id}`, { token: fuzzer.token });
    assert.equal(readPrompt.body.data.template, template);
    assert.equal(readPrompt.body.data.name, "p'; DROP TABLE prompts;--");

    const tables = service.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    for (const table of ['api_tokens', 'prompts', 'tools', 'users']) assert.ok(tables.includes(table), `table ${table} is still there`);
    const listed = await service.request('GET', '/api/v1/tools?limit=1000', { token: fuzzer.token });
    for (const name of names)
      assert.ok(
        listed.body.data.some((tool: { name: string }) => tool.name === name),
        `${name} is listed`,
      );
  });

  test('a __proto__ key in a body is no field: it neither fills a missing one nor changes a default', async () => {
    const tag = await service.request('POST', '/api/v1/tags', {
      token: fuzzer.token,
      raw: '{"name":"proto tag","__proto__":{"color":"#ffffff","userId":"someone"}}',
    });
    assert.equal(tag.status, 201, JSON.stringify(tag.body));
    assert.equal(tag.body.data.color, '#0e8a16', 'the default colour, not one inherited from __proto__');
    assert.equal(tag.body.data.userId, fuzzer.userId);

    const tool = await service.request('POST', '/api/v1/tools', {
      token: fuzzer.token,
      raw: '{"name":"proto tool","__proto__":{"type":"SEARCH"}}',
    });
    assert.equal(tool.status, 422, 'type is missing: __proto__ does not supply it');

    const agent = await service.request('POST', '/api/v1/agents', {
      token: fuzzer.token,
      raw: '{"name":"proto agent","type":"REACT","llm":{"model":"m","provider":"p","__proto__":{"polluted":"llm"}},"constructor":{"prototype":{"polluted":"ctor"}},"__proto__":{"polluted":"body"}}',
    });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
  });

  test('JSON nested 1500 and 5000 deep in an object field: a 422, or stored and readable wherever it appears', async () => {
    const { token } = await service.signUp('Deep');
    const problems: string[] = [];
    const expect = async (method: string, path: string, statuses: number[], raw?: string) => {
      const reply = await service.request(method, `/api/v1${path}`, { token, raw });
      if (!statuses.includes(reply.status))
        problems.push(
          `${method} ${path} ${raw === undefined ? '' : `${raw.slice(0, 90)}… `}→ ${reply.status} ${JSON.stringify(reply.body)}`,
        );
      return reply;
    };
    for (const depth of [1500, 5000]) {
      const deep = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      await expect('POST', '/tools', [201, 422], `{"name":"deep ${depth}","type":"SEARCH","metadata":${deep}}`);
      await expect(
        'POST',
        '/documents',
        [201, 422],
        `{"name":"deep ${depth}","type":"PDF","url":"https://example.com/a.pdf","authorization":${deep}}`,
      );
      await expect(
        'POST',
        '/agents',
        [201, 422],
        `{"name":"deep ${depth}","type":"REACT","llm":{"model":"m","provider":"p","extra":${deep}}}`,
      );
      const document = await expect(
        'POST',
        '/documents',
        [201, 422],
        `{"name":"deep ${depth}","type":"PDF","url":"https://example.com/a.pdf","metadata":${deep}}`,
      );
      if (document.status !== 201) continue;
      const documentId = document.body.data.id;
      const agent = await expect(
        'POST',
        '/agents',
        [201],
        `{"name":"with deep ${depth}","type":"REACT","llm":{"model":"m","provider":"p"},"documentId":"${documentId}"}`,
      );
      const plain = await expect('POST', '/agents', [201], `{"name":"plain ${depth}","type":"REACT","llm":{"model":"m","provider":"p"}}`);
      await expect('POST', '/agent-documents', [201], `{"agentId":"${plain.body.data?.id}","documentId":"${documentId}"}`);
      await expect('GET', `/documents/${documentId}`, [200]);
      if (agent.status === 201) await expect('GET', `/agents/${agent.body.data.id}`, [200]);
      await expect('GET', '/agents', [200]);
      await expect('GET', '/agent-documents', [200]);
    }
    assert.deepEqual(problems, []);
  });

  test(`seed 0x${SEED.toString(16)}: ${CASES} random and malformed bodies to every write endpoint: never a 5xx, always the envelope`, async (t) => {
    const cases = fuzzCases();
    // Bad replies grouped by what went wrong (and what the server logged), each with its shortest case.
    const failures = new Map<string, { count: number; shortest: FuzzCase }>();
    await inPool(cases, IN_FLIGHT, async (fuzz) => {
      let problems: string[];
      try {
        problems = await send(fuzz);
      } catch (error) {
        problems = [`request failed: ${(error as Error).message} (${String((error as { cause?: unknown }).cause)})`];
      }
      if (problems.length === 0) return;
      const logged = serverErrors.get(`fuzz-${fuzz.index}`);
      const key = `${problems.join('; ')}${logged ? ` [server: ${logged}]` : ''}`;
      const group = failures.get(key);
      if (!group) failures.set(key, { count: 1, shortest: fuzz });
      else {
        group.count += 1;
        if ((fuzz.body?.length ?? 0) < (group.shortest.body?.length ?? 0)) group.shortest = fuzz;
      }
    });
    const report = [...failures].map(([key, { count, shortest }]) => `${count}× ${key} — e.g. ${describeCase(shortest)}`);
    t.diagnostic(`${cases.length} requests, ${[...failures.values()].reduce((sum, group) => sum + group.count, 0)} bad replies`);
    assert.deepEqual(report.sort(), []);
  });

  test('after the fuzz run: the database passes integrity_check and foreign_key_check', () => {
    assert.deepEqual(service.db.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    assert.deepEqual(service.db.pragma('foreign_key_check'), []);
  });

  test('after the fuzz run: everything the fuzzer owns reads back, in its lists and one by one', async () => {
    const bad: string[] = [];
    const read = async (path: string) => {
      const reply = await service.request('GET', path, { token: fuzzer.token });
      const problems = envelopeProblems(reply.status, reply.headers.get('content-type') ?? '', reply.text);
      if (reply.status !== 200) problems.push(`status ${reply.status}`);
      if (problems.length > 0) bad.push(`GET ${path}: ${problems.join('; ')} ${reply.text.slice(0, 200)}`);
    };
    const resources = ['api-tokens', 'tools', 'documents', 'agents', 'prompts', 'tags', 'agent-documents', 'agent-tools'];
    const records: string[] = [];
    for (const resource of resources) {
      const listed = await service.listAll(fuzzer.token, `/${resource}?limit=1000`);
      records.push(...listed.map((record) => `/api/v1/${resource}/${record.id}`));
    }
    await inPool(records, IN_FLIGHT, async (path) => void (await read(path)));
    assert.ok(records.length > resources.length * 2, `only ${records.length} records`);
    assert.deepEqual(bad, []);
  });

  test("after the fuzz run: records the fuzz never named, and the other user's records, are byte-identical", async () => {
    assert.deepEqual(await snapshot(fuzzer.token, witnesses.paths), witnessSnapshot);
    assert.deepEqual(await snapshot(other.token, other.set.paths), otherSnapshot);
    for (const reply of witnessSnapshot) assert.match(reply, /^200 /);
  });

  test('after the fuzz run: the account behind DELETE /auth/me still exists, with its password', async () => {
    const me = await service.request('GET', '/api/v1/auth/me', { token: account.token });
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.data.email, account.email);
    const signIn = await service.request('POST', '/api/v1/auth/sign-in', { body: { email: account.email, password: account.password } });
    assert.equal(signIn.status, 200, JSON.stringify(signIn.body));
  });

  test('after the fuzz run: Object.prototype and Array.prototype are untouched', () => {
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
    assert.deepEqual(Reflect.ownKeys(Object.prototype).map(String).sort(), objectPrototypeKeys);
    assert.deepEqual(Reflect.ownKeys(Array.prototype).map(String).sort(), arrayPrototypeKeys);
  });
});
