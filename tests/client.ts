// The one HTTP client of the tests: it speaks the service's wire format (the `{ success, data }`
// envelope, the `Autorization` header original clients send) to a service at a base URL, whether
// started in this process (helpers.ts) or as a real process (run-script.ts). Also: signing up, walking
// a paged list, and factories that create one record of each kind with defaults a test may override.
import assert from 'node:assert/strict';

/** A record as the service returns it. */
export type Json = Record<string, any>;

export interface Reply {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or the text when it is not JSON (undefined when empty). */
  body: any;
  /** The body exactly as received. */
  text: string;
}

export interface RequestOptions {
  token?: string;
  /** Send the token as the standard `Authorization` instead of `Autorization`, the spelling original clients send. */
  header?: 'Autorization' | 'Authorization';
  body?: unknown;
  /** A raw body sent as is (with `contentType`, default application/json). */
  raw?: string | Uint8Array<ArrayBuffer>;
  contentType?: string;
  /** Extra headers; a `content-type` given here is sent as is. */
  headers?: Record<string, string>;
}

/** A new user, signed in. */
export interface SignedUp {
  user: { id: string; email: string; name: string };
  token: string;
  email: string;
  password: string;
}

/** A request body for a factory: any field overrides the default. */
type Fields = Record<string, unknown>;

export interface Client {
  url: string;
  /** Sends `method path` (a full path such as `/api/v1/tools`); the body is parsed as JSON when it is JSON. */
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  /** POSTs `body` to `/api/v1${path}` as the holder of `token`, asserts 201 and returns the new record. */
  create(token: string, path: string, body: unknown): Promise<Json>;
  /** Signs up a new user and signs in: returns the user and a bearer token. */
  signUp(name?: string): Promise<SignedUp>;
  /** Signs in and returns the bearer token (asserts 200). */
  signIn(email: string, password: string): Promise<string>;
  /**
   * Every record of a list (`path` below `/api/v1`, query allowed), following its
   * `Link: <...>; rel="next"` header page by page as a client would; asserts 200 on every page.
   */
  listAll(token: string, path: string): Promise<Json[]>;
  /** Factories: one new record with a unique name and the fewest fields that make it valid; `fields` override. */
  createTool(token: string, fields?: Fields): Promise<Json>;
  createTag(token: string, fields?: Fields): Promise<Json>;
  createDocument(token: string, fields?: Fields): Promise<Json>;
  createPrompt(token: string, fields?: Fields): Promise<Json>;
  createAgent(token: string, fields?: Fields): Promise<Json>;
}

/** The target of a `Link: <url>; rel="next"` header as a path on the service (pathname and query), or null. */
export function nextPath(reply: Reply): string | null {
  const link = reply.headers.get('link');
  if (link === null) return null;
  const match = /^<([^>]+)>;\s*rel="next"$/.exec(link);
  assert.ok(match, `a Link header of the form <url>; rel="next": ${link}`);
  const target = new URL(match[1], 'http://relative.invalid');
  return target.pathname + target.search;
}

let userCounter = 0;
let recordCounter = 0;
/** A name no other record made by these factories has (names are unique per user for tags). */
const unique = (kind: string) => `${kind} ${++recordCounter}`;

/** A client of the service at `url` (no trailing slash). */
export function createClient(url: string): Client {
  async function request(method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers[options.header ?? 'Autorization'] = `Bearer ${options.token}`;
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    const typed = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
    if (body !== undefined && !typed) headers['content-type'] = options.contentType ?? 'application/json';
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // left as text: a test asserting the envelope will fail on it
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  async function create(token: string, path: string, body: unknown): Promise<Json> {
    const reply = await request('POST', `/api/v1${path}`, { token, body });
    assert.equal(reply.status, 201, `POST ${path}: ${JSON.stringify(reply.body)}`);
    return reply.body.data;
  }

  async function signIn(email: string, password: string): Promise<string> {
    const reply = await request('POST', '/api/v1/auth/sign-in', { body: { email, password } });
    assert.equal(reply.status, 200, `sign-in: ${JSON.stringify(reply.body)}`);
    return reply.body.data.token;
  }

  async function signUp(name = 'Test User'): Promise<SignedUp> {
    userCounter += 1;
    const email = `user${userCounter}.${Date.now()}@example.com`;
    const password = 'correct horse battery';
    const up = await request('POST', '/api/v1/auth/sign-up', { body: { name, email, password } });
    assert.equal(up.status, 201, `sign-up: ${JSON.stringify(up.body)}`);
    return { user: up.body.data.user, token: await signIn(email, password), email, password };
  }

  async function listAll(token: string, path: string): Promise<Json[]> {
    const records: Json[] = [];
    for (let next: string | null = `/api/v1${path}`; next !== null;) {
      const page = await request('GET', next, { token });
      assert.equal(page.status, 200, `GET ${next}: ${JSON.stringify(page.body)}`);
      records.push(...page.body.data);
      next = nextPath(page);
    }
    return records;
  }

  return {
    url,
    request,
    create,
    signUp,
    signIn,
    listAll,
    createTool: (token, fields = {}) => create(token, '/tools', { name: unique('tool'), type: 'SEARCH', ...fields }),
    createTag: (token, fields = {}) => create(token, '/tags', { name: unique('tag'), ...fields }),
    createDocument: (token, fields = {}) =>
      create(token, '/documents', { name: unique('document'), type: 'PDF', url: 'https://example.com/handbook.pdf', ...fields }),
    createPrompt: (token, fields = {}) =>
      create(token, '/prompts', {
        name: unique('prompt'),
        template: 'Summarise {text} in {words} words.',
        input_variables: ['text', 'words'],
        ...fields,
      }),
    createAgent: (token, fields = {}) =>
      create(token, '/agents', { name: unique('agent'), type: 'REACT', llm: { model: 'm', provider: 'p' }, ...fields }),
  };
}
