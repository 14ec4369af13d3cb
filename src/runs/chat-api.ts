// The model call on the wire: POST <baseUrl>/chat/completions of an OpenAI-compatible API, its
// answer read whole (JSON) or as it streams (server-sent events), written by hand rather than
// through the `openai` client. The first token of every streamed run waits on this path: measured
// against the benchmark's fake model, the client spent about 0.5 ms of it building the request and
// turning the node:http response into a web stream, a quarter of what the service may add.
//
// The operator's endpoints (OPENAI_BASE_URL, OLLAMA_BASE_URL) are trusted and reached over
// kept-alive node:http(s) connections, redirects not followed (an API that redirects is answered
// as it is). A user's baseUrl goes through the guarded fetch: the SSRF guard vets every connection
// and every redirect. Whatever goes wrong comes back as a RunFailure in words, never with the key;
// when the run's signal aborts, its reason is thrown instead (the engine says what it means).
import http from 'node:http';
import { finished, Readable } from 'node:stream';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import { createGuardedSession, type ConnectionPool, type FetchFunction, type FetchSession, type GuardedAnswer } from '../ingest/fetch.js';
import { isIngestError } from '../ingest/errors.js';
import { https } from '../lib/builtins.js';
import { ACCEPT_ENCODING, decodedBody } from '../lib/content-encoding.js';
import { redact, RunFailure } from './failures.js';
import type { ModelEndpoint } from './model.js';
import { MAX_EVENT_CHARS, serverEventReader, type ServerEvent } from './server-events.js';

/** What a call sends besides `stream`: the model, the messages, the tools, the stop words. */
export type ChatParams = Omit<ChatCompletionCreateParamsBase, 'stream' | 'stream_options'>;

export interface ChatApi {
  /** A plain call: the whole answer. */
  complete(endpoint: ModelEndpoint, params: ChatParams, signal: AbortSignal): Promise<ChatCompletion>;
  /**
   * A streamed call: each chunk handed to `onChunk` as it comes (the last one carries the usage,
   * when the server reports it); resolves once the answer has ended.
   */
  stream(endpoint: ModelEndpoint, params: ChatParams, signal: AbortSignal, onChunk: (chunk: ChatCompletionChunk) => void): Promise<void>;
}

/** More than this from one call fails it: a model's answer is far smaller, an endless one would fill the memory. */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** How much of an error answer is read for its message. */
const MAX_ERROR_BYTES = 64 * 1024;

/** An answer as it arrives: its status, and its body (content-decoded). */
interface Answer {
  status: number;
  body: AsyncIterable<Uint8Array | string>;
}

type Send = (url: URL, headers: Record<string, string>, body: string, signal: AbortSignal) => Promise<Answer>;

const httpAgent = new http.Agent({ keepAlive: true, scheduling: 'lifo' });
let httpsAgent: http.Agent | undefined;

/** The operator's endpoints: node:http(s) over kept-alive connections. */
const sendKeptAlive: Send = (url, headers, body, signal) =>
  new Promise((resolve, reject) => {
    const agent = url.protocol === 'https:' ? (httpsAgent ??= new (https().Agent)({ keepAlive: true, scheduling: 'lifo' })) : httpAgent;
    // Object.assign rather than a spread with new keys, which on Node 20 builds a new hidden class
    // per call (see presentAgent in src/agents/present.ts); the same for the bodies below.
    const request = (url.protocol === 'https:' ? https() : http).request({
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: Object.assign({}, headers, { 'accept-encoding': ACCEPT_ENCODING, 'content-length': String(Buffer.byteLength(body)) }),
      agent,
      signal,
    });
    request.once('response', (response) => {
      response.on('error', () => {}); // errors reach the reader through its iterator; never unhandled
      // An encoding it does not know is read as it is.
      resolve({ status: response.statusCode ?? 0, body: decodedBody(response) ?? response });
    });
    request.on('error', reject); // a later error (after the response) reaches the reader through the body
    request.end(body);
  });

/**
 * A user's endpoint: the guarded fetch (SSRF guard on every connection), through a session of its
 * own per call, ended once the answer has been read (or given up on). The answer's body is the
 * Node stream itself, read through its events like an operator's endpoint's: a web stream between
 * cost a third more CPU per streamed chunk.
 */
function sendGuarded(openSession: () => FetchSession): Send {
  return async (url, headers, body, signal) => {
    const session = openSession();
    let answer: GuardedAnswer;
    try {
      answer = await session.send(url, { method: 'POST', headers, body, signal });
    } catch (error) {
      session.close();
      throw error;
    }
    const { stream } = answer;
    if (stream === null) session.close();
    else finished(stream, () => session.close());
    return { status: answer.status, body: stream ?? Readable.from([]) };
  };
}

/** A fetch given in place of the guard (tests): its answer's web stream read piece by piece. */
function sendFetched(fetch: FetchFunction): Send {
  return async (url, headers, body, signal) => {
    const response = await fetch(url, { method: 'POST', headers, body, signal });
    return { status: response.status, body: (response.body ?? Readable.from([])) as AsyncIterable<Uint8Array> };
  };
}

/**
 * Hands each piece of `body` to `onPart` as it comes; resolves at its end, rejects when it breaks
 * or `onPart` throws (the body is then destroyed). A node stream is read through its events, not
 * its async iterator: no promise per piece.
 */
function readParts(body: AsyncIterable<Uint8Array | string>, onPart: (part: Uint8Array | string) => void): Promise<void> {
  if (!(body instanceof Readable)) {
    return (async () => {
      for await (const part of body) onPart(part);
    })();
  }
  return new Promise((resolve, reject) => {
    let failed = false;
    body.on('data', (part: Uint8Array | string) => {
      // Pieces already read may still come after destroy(): none reaches `onPart` after it threw.
      if (failed) return;
      try {
        onPart(part);
      } catch (error) {
        failed = true;
        reject(error);
        body.destroy();
      }
    });
    finished(body, (error) => (error ? reject(error) : resolve()));
  });
}

/** The host an endpoint's failures name (never the path: it may hold a key). */
const hostOf = (endpoint: ModelEndpoint) => new URL(endpoint.baseUrl).host;

/** The answer's text, up to `max` bytes; past it, a RunFailure (`tooLarge`) or, when `tooLarge` is null, what came so far. */
async function readText(body: AsyncIterable<Uint8Array | string>, max: number, tooLarge: (() => RunFailure) | null): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for await (const part of body) {
    bytes += part.length;
    text += typeof part === 'string' ? part : decoder.decode(part, { stream: true });
    if (bytes > max) {
      if (tooLarge) throw tooLarge();
      return text;
    }
  }
  return text + decoder.decode();
}

/** The message in an error body: OpenAI's `{ error: { message } }`, Ollama's `{ error: "..." }`, or the text itself. */
function errorText(text: string): string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return text.trim();
  }
  const error = (json as { error?: unknown } | null)?.error ?? json;
  if (typeof error === 'string') return error.trim();
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message === 'string' && message.trim() !== '') return message.trim();
  return JSON.stringify(error);
}

function statusFailure(status: number, text: string, endpoint: ModelEndpoint): RunFailure {
  const meaning = status === 401 || status === 403 ? " (check the agent's llm.apiKey or the operator's key)" : '';
  const said = errorText(text);
  return new RunFailure(
    'upstream_error',
    redact(`The model endpoint ${hostOf(endpoint)} answered ${status}${meaning}: ${said || 'no message'}`, endpoint),
  );
}

const unreadable = (endpoint: ModelEndpoint, why: string) =>
  new RunFailure(
    'upstream_error',
    redact(`The model endpoint ${hostOf(endpoint)} sent an answer that could not be read: ${why}`, endpoint),
  );

const answerTooLarge = (endpoint: ModelEndpoint) => () =>
  new RunFailure(
    'upstream_error',
    `The model endpoint ${hostOf(endpoint)} sent an answer larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB.`,
  );

const eventTooLarge = (endpoint: ModelEndpoint) => () =>
  new RunFailure(
    'upstream_error',
    `The model endpoint ${hostOf(endpoint)} streamed an event (or a line) longer than ${MAX_EVENT_CHARS / 1024 / 1024} Mi characters; the run was stopped.`,
  );

/** Why the endpoint could not be reached (nothing of it answered). */
function unreachable(error: unknown, endpoint: ModelEndpoint): RunFailure {
  const host = hostOf(endpoint);
  if (isIngestError(error))
    return new RunFailure('upstream_error', redact(`Could not reach the model endpoint ${host}: ${error.message}`, endpoint));
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return new RunFailure('upstream_error', `Could not reach the model endpoint ${host}${code ? ` (${code})` : ''}.`);
}

/** The connection broke while the answer came in (reset, closed early). */
function broken(error: unknown, endpoint: ModelEndpoint): RunFailure {
  if (error instanceof RunFailure) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? (error as { cause?: NodeJS.ErrnoException } | undefined)?.cause?.code;
  return new RunFailure(
    'upstream_error',
    `The connection to the model endpoint ${hostOf(endpoint)} broke before the answer was complete${code ? ` (${code})` : ''}.`,
  );
}

/**
 * The chat-completions call for every endpoint. A user's endpoints get the guarded fetch: with
 * `pool`, their connections are kept between calls (each call vets the host again and uses only a
 * connection to an address it vetted); `fetch` replaces it in tests.
 */
export function createChatApi(options: { allowPrivateNetworks: boolean; fetch?: FetchFunction; pool?: ConnectionPool }): ChatApi {
  const { allowPrivateNetworks, fetch, pool } = options;
  const sendGuardedFetch = fetch ? sendFetched(fetch) : sendGuarded(() => createGuardedSession({ allowPrivateNetworks, pool }));

  /** Sends the call; resolves with a 2xx answer, throws a RunFailure for anything else. */
  async function open(endpoint: ModelEndpoint, body: object, accept: string, signal: AbortSignal): Promise<Answer> {
    if (signal.aborted) throw signal.reason;
    const headers = { 'content-type': 'application/json', accept, authorization: `Bearer ${endpoint.apiKey}` };
    const send = endpoint.userAimed ? sendGuardedFetch : sendKeptAlive;
    let answer: Answer;
    try {
      answer = await send(new URL(`${endpoint.baseUrl}/chat/completions`), headers, JSON.stringify(body), signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw unreachable(error, endpoint);
    }
    if (answer.status >= 200 && answer.status < 300) return answer;
    let text: string;
    try {
      text = await readText(answer.body, MAX_ERROR_BYTES, null);
    } catch {
      if (signal.aborted) throw signal.reason;
      text = '';
    }
    throw statusFailure(answer.status, text, endpoint);
  }

  return {
    async complete(endpoint, params, signal) {
      const answer = await open(endpoint, Object.assign({}, params, { stream: false }), 'application/json', signal);
      let text: string;
      try {
        text = await readText(answer.body, MAX_ANSWER_BYTES, answerTooLarge(endpoint));
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw broken(error, endpoint);
      }
      let completion: unknown;
      try {
        completion = JSON.parse(text);
      } catch {
        throw unreadable(endpoint, 'it is not JSON');
      }
      if (typeof completion !== 'object' || completion === null) throw unreadable(endpoint, 'it is not a JSON object');
      return completion as ChatCompletion;
    },

    // One callback per chunk, synchronous from the piece that completes it to `onChunk`: with a
    // hundred runs streaming, the service reads ten thousand chunks a second, and a promise (or an
    // async generator's step) per chunk at each layer was a large part of its CPU.
    async stream(endpoint, params, signal, onChunk) {
      const answer = await open(
        endpoint,
        Object.assign({}, params, { stream: true, stream_options: { include_usage: true } }),
        'text/event-stream',
        signal,
      );
      let done = false;
      const onEvent = ({ event, data }: ServerEvent) => {
        // Read on to the end after [DONE], so the kept-alive connection can be used again.
        if (done || data === '[DONE]') {
          done = true;
          return;
        }
        let chunk: unknown;
        try {
          chunk = JSON.parse(data);
        } catch {
          throw unreadable(endpoint, 'an event is not JSON');
        }
        const error = (chunk as { error?: unknown } | null)?.error;
        if (event === 'error' || (error !== undefined && error !== null)) {
          const said = errorText(JSON.stringify(error ?? chunk));
          throw new RunFailure(
            'upstream_error',
            redact(`The model endpoint ${hostOf(endpoint)} reported an error while answering: ${said || 'no message'}`, endpoint),
          );
        }
        if (typeof chunk !== 'object' || chunk === null) return;
        try {
          onChunk(chunk as ChatCompletionChunk);
        } catch (error) {
          throw (taken = { error });
        }
      };
      /** What `onChunk` threw (passed on as it is: it is not the connection's fault). */
      let taken: { error: unknown } | undefined;
      const reader = serverEventReader(
        { maxBytes: MAX_ANSWER_BYTES, tooLarge: answerTooLarge(endpoint), eventTooLarge: eventTooLarge(endpoint) },
        onEvent,
      );
      try {
        await readParts(answer.body, reader.push);
        reader.end();
      } catch (error) {
        if (taken && error === taken) throw taken.error;
        if (signal.aborted) throw signal.reason;
        throw broken(error, endpoint);
      }
    },
  };
}
