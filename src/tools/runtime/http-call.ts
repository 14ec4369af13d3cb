// The HTTP side every web tool shares: one request through the fetch the run was given (the
// SSRF-safe one in the service), a deadline, a capped body, and error messages fit for the model
// and the run record: they name the host and the status, never a header, a key or a query. A
// service may echo the request: the tool's secrets are redacted from the body before it is cut,
// and the beginning of a secret a cut falls inside is redacted too.
import * as v from 'valibot';
import { cutToBytes } from '../../lib/utf8.js';
import { FORBIDDEN_HEADERS } from '../../ingest/fetch.js';
import type { Keeper } from './keeper.js';

/** A fetch-compatible function (the service passes its SSRF-guarded fetcher). */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Requests that share kept-alive connections until `close` (in the service: the guarded fetch's session). */
export interface FetchSessionLike {
  fetch: FetchLike;
  close(): void;
}

/** How tools reach the network: the fetcher, and how long one request may take (default TOOL_TIMEOUT_MS). */
export interface ToolHttp {
  fetch: FetchLike;
  /** Opens a session of the same fetcher, for a tool that sends a run's requests to one server (MCP); its answers cut off past `maxResponseBytes`. */
  session?: (limits: { maxResponseBytes: number }) => FetchSessionLike;
  timeoutMs?: number;
  /** The tool's secrets (its header values, its keys), redacted from what a request answers. */
  secrets?: readonly string[];
  /** Where a tool keeps what it opened (an MCP server's connected client) for the next run; without it, closed when the run ends. */
  keeper?: Keeper;
}

/** Largest response body a tool hands back to the model. */
export const TOOL_RESPONSE_MAX_BYTES = 64 * 1024;
/** Longest a single tool request may take (less when the run's deadline is nearer). */
export const TOOL_TIMEOUT_MS = 30_000;

/** A failure whose message is safe to show to the model, the user and the logs. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
}

export interface HttpCall {
  url: URL;
  method: string;
  headers?: Record<string, string>;
  /** A JSON body (sent with Content-Type: application/json). */
  json?: unknown;
}

export interface HttpCallOptions {
  fetch: FetchLike;
  signal: AbortSignal;
  /** ms since epoch when the whole run must end. */
  deadline: number;
  maxBytes?: number;
  timeoutMs?: number;
  /** Redacted from the answer before it is cut (see ToolHttp). */
  secrets?: readonly string[];
}

export interface HttpAnswer {
  status: number;
  contentType: string;
  text: string;
  truncated: boolean;
}

function formatKiB(bytes: number): string {
  return `${Math.round(bytes / 1024)} KiB`;
}

/** Reads at most `maxBytes` of the body, then stops the download. */
async function readCapped(response: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = maxBytes - total;
    if (value.byteLength > room) {
      chunks.push(value.subarray(0, room));
      total += room;
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    total += value.byteLength;
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks, total));
  return { text: truncated ? text.replace(/\uFFFD$/, '') : text, truncated };
}

/** What a fetch failure says, in words that hold no secret: the fetcher's own safe message, a timeout, or the host. */
function describeFailure(error: unknown, url: URL, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `${url.host} did not answer within ${Math.round(timeoutMs / 100) / 10} s`;
  const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string } } | undefined;
  // The service's fetcher throws IngestError, whose messages are written to be shown (host, never path or headers).
  if (err?.name === 'IngestError' && typeof err.message === 'string') return err.message;
  const code = err?.cause?.code ?? err?.code;
  if (code === 'ECONNREFUSED') return `could not connect to ${url.host}: connection refused`;
  if (code === 'ENOTFOUND') return `the host ${url.hostname} could not be found`;
  return `could not reach ${url.host}${code ? ` (${code})` : ''}`;
}

/** Sends one request; answers 2xx bodies (capped), throws ToolError for anything else. */
export async function callHttp(call: HttpCall, options: HttpCallOptions): Promise<HttpAnswer> {
  const maxBytes = options.maxBytes ?? TOOL_RESPONSE_MAX_BYTES;
  const secrets = options.secrets ?? [];
  const timeoutMs = Math.max(0, Math.min(options.timeoutMs ?? TOOL_TIMEOUT_MS, options.deadline - Date.now()));
  if (options.signal.aborted) throw options.signal.reason;
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(new ToolError('timeout')), timeoutMs);
  const signal = AbortSignal.any([options.signal, timer.signal]);
  const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5', ...call.headers };
  let body: string | undefined;
  if (call.json !== undefined) {
    body = JSON.stringify(call.json);
    headers['content-type'] = 'application/json';
  }
  try {
    let response: Response;
    try {
      response = await options.fetch(call.url, { method: call.method, headers, body, signal, redirect: 'manual' });
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason;
      throw new ToolError(describeFailure(error, call.url, timer.signal.aborted, timeoutMs));
    }
    let read: { text: string; truncated: boolean };
    try {
      // Past the cap, as much as the longest secret more: a secret the cap falls inside is read whole and redacted.
      read = await readCapped(response, maxBytes + Math.max(0, ...secrets.map((secret) => Buffer.byteLength(secret))));
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason;
      throw new ToolError(
        timer.signal.aborted ? describeFailure(error, call.url, true, timeoutMs) : `the answer from ${call.url.host} was cut off`,
      );
    }
    if (response.status >= 300 && response.status < 400) {
      throw new ToolError(`${call.url.host} answered HTTP ${response.status} (a redirect, which tools do not follow)`);
    }
    const whole = redactSecrets(read.text, secrets);
    if (response.status < 200 || response.status > 299) {
      const said = cutRedacted(whole.replace(/\s+/g, ' ').trim(), secrets, (text) => text.slice(0, 300));
      throw new ToolError(`${call.url.host} answered HTTP ${response.status}${said ? `: ${said}` : ''}`);
    }
    const text = cutRedacted(whole, secrets, (text) => cutToBytes(text, maxBytes));
    const truncated = read.truncated || text !== whole;
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      text: truncated ? `${text}\n[the answer was cut at ${formatKiB(maxBytes)}]` : text,
      truncated,
    };
  } finally {
    clearTimeout(timeout);
  }
}

const REDACTED = '[redacted]';

/**
 * A secret as it is, and as JSON writers put it inside a string: `"`, `\` and control characters
 * escaped (every writer), then `/` escaped too (PHP's), then every character past ASCII as `\uxxxx`
 * (Python's); the longest first, so that no shorter form cuts into a longer one.
 */
function writtenForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const ascii = json.replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const forms = new Set([secret, json, ascii, json.replaceAll('/', '\\/'), ascii.replaceAll('/', '\\/')]);
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * Replaces every occurrence of a secret (a metadata header value, a key) in `text` with
 * `[redacted]`, also where a server wrote it inside a JSON string. A secret under 4 characters is
 * left: redacting every `2` of `X-Version: 2` would garble the answer, and no key is that short.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    for (const form of writtenForms(secret)) if (out.includes(form)) out = out.split(form).join(REDACTED);
  }
  return out;
}

/** The shortest beginning of a secret that is redacted where a cut leaves it at the end of a text. */
export const SECRET_PREFIX_MIN_CHARS = 8;

/**
 * `text` (already redacted) cut by `cut`; when that shortened it, the beginning of a secret left at
 * the end (SECRET_PREFIX_MIN_CHARS or more of its first characters) is redacted as well, and a
 * `[redacted]` the cut fell inside is kept whole (so the text may pass the cut by a few characters).
 */
export function cutRedacted(text: string, secrets: readonly string[], cut: (text: string) => string): string {
  const kept = cut(text);
  if (kept === text) return kept;
  let end = kept.length;
  const marker = kept.length === 0 ? -1 : text.lastIndexOf(REDACTED, kept.length - 1);
  if (marker !== -1 && marker + REDACTED.length > kept.length) end = marker;
  for (const secret of secrets) end = Math.min(end, kept.length - prefixAtEnd(kept, secret));
  return end === kept.length ? kept : `${kept.slice(0, end)}${REDACTED}`;
}

/**
 * How many of `secret`'s first characters (at least SECRET_PREFIX_MIN_CHARS, else 0) `text` ends
 * with. Knuth-Morris-Pratt over the text's last characters, so a long secret costs its length.
 */
function prefixAtEnd(text: string, secret: string): number {
  if (secret.length < SECRET_PREFIX_MIN_CHARS) return 0;
  const fallback = new Array<number>(secret.length).fill(0);
  for (let i = 1, k = 0; i < secret.length; i += 1) {
    while (k > 0 && secret[i] !== secret[k]) k = fallback[k - 1];
    if (secret[i] === secret[k]) k += 1;
    fallback[i] = k;
  }
  let matched = 0;
  for (let i = Math.max(0, text.length - secret.length); i < text.length; i += 1) {
    if (matched === secret.length) matched = fallback[matched - 1];
    while (matched > 0 && text[i] !== secret[matched]) matched = fallback[matched - 1];
    if (text[i] === secret[matched]) matched += 1;
  }
  return matched >= SECRET_PREFIX_MIN_CHARS ? matched : 0;
}

export type MetadataResult<T> = { ok: true; value: T } | { ok: false; reason: string };

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// A tool's body is JSON the service writes, so its Content-Type is the service's too.
const TOOL_FORBIDDEN_HEADERS = new Set([...FORBIDDEN_HEADERS, 'content-type']);

/** `metadata.headers` as request headers (absent → none), or why they cannot be sent. Never echoes a value. */
export function headersFromMetadata(metadata: Record<string, unknown>): MetadataResult<Record<string, string>> {
  const raw = metadata.headers;
  if (raw === undefined || raw === null) return { ok: true, value: {} };
  if (typeof raw !== 'object' || Array.isArray(raw))
    return { ok: false, reason: 'metadata.headers must be an object of header names and values' };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!HEADER_NAME.test(name)) return { ok: false, reason: `metadata.headers has an invalid header name "${name.slice(0, 40)}"` };
    if (TOOL_FORBIDDEN_HEADERS.has(name.toLowerCase())) return { ok: false, reason: `metadata.headers cannot set "${name}"` };
    if (typeof value !== 'string' && typeof value !== 'number') return { ok: false, reason: `metadata.headers "${name}" must be a string` };
    if (/[\r\n\0]/.test(String(value))) return { ok: false, reason: `metadata.headers "${name}" holds a line break` };
    headers[name] = String(value);
  }
  return { ok: true, value: headers };
}

/** `metadata.url` as an absolute http(s) URL, or why not. */
export function urlFromMetadata(metadata: Record<string, unknown>, field = 'url'): MetadataResult<URL> {
  const raw = metadata[field];
  if (raw === undefined || raw === null || raw === '') return { ok: false, reason: `metadata.${field} is missing` };
  if (typeof raw !== 'string') return { ok: false, reason: `metadata.${field} must be a string` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: `metadata.${field} is not an absolute URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: `metadata.${field} must be an http or https URL` };
  return { ok: true, value: url };
}

/** The `url` and optional `headers` a web tool needs, or why they are unusable. */
export function targetFromMetadata(metadata: Record<string, unknown>): MetadataResult<{ url: URL; headers: Record<string, string> }> {
  const url = urlFromMetadata(metadata);
  if (!url.ok) return url;
  const headers = headersFromMetadata(metadata);
  if (!headers.ok) return headers;
  return { ok: true, value: { url: url.value, headers: headers.value } };
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const headersShape = v.pipe(
  v.custom<Record<string, unknown>>(isPlainObject, 'must be an object of header names and values'),
  v.record(v.string(), v.union([v.string(), v.number()], 'must be a string')),
);

/**
 * The types of the `url` and `headers` a web tool's metadata may give (what they say is read when a
 * run builds the tool): the kinds the original API's clients create are kept as lenient as it was.
 */
export const webTargetEntries = {
  url: v.nullish(v.string('must be a string')),
  headers: v.nullish(headersShape),
};

/**
 * The metadata schema of a web tool whose `url` and `headers` are checked when the tool is written
 * as a run reads them (urlFromMetadata, headersFromMetadata), besides `entries`: for the kinds that
 * came after the original API (MCP), so that a tool that could never connect is a 422 instead.
 * `described` names what the URL must point to (said too when it is missing).
 */
export function strictWebTargetSchema(described: string, entries: v.ObjectEntries) {
  const url = v.pipe(
    v.string(`must be the URL of ${described}`),
    v.check((text) => urlFromMetadata({ url: text }).ok, 'must be an absolute http or https URL'),
  );
  const headers = v.pipe(
    headersShape,
    v.rawCheck(({ dataset, addIssue }) => {
      const checked = dataset.typed ? headersFromMetadata({ headers: dataset.value }) : undefined;
      if (checked && !checked.ok) addIssue({ message: checked.reason.replace('metadata.headers ', '') });
    }),
  );
  return v.pipe(
    v.looseObject({ ...entries, url: v.optional(url), headers: v.nullish(headers) }),
    // A missing key would otherwise be valibot's "Invalid key" message.
    v.forward(
      v.check((metadata) => metadata.url !== undefined, `is required: the URL of ${described}`),
      ['url'],
    ),
  );
}
