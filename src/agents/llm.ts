// An agent's `llm`: which model runs it and on which server (its own `baseUrl`/`apiKey`, or a
// connection's). Every rule about it lives here — how a body spells it, how a PATCH merges into the stored one (and when the stored key must go), which
// provider a name means, the server it points to, and why it could never run — so that saving an
// agent (the agent store) and running it (src/runs) apply the same rules to the same value.
import * as v from 'valibot';
import type { RunsConfig } from '../config.js';
import type { FieldIssue } from '../http/errors.js';
import { httpUrlSchema, jsonDepth, MAX_JSON_DEPTH, noArrays } from '../http/validate.js';
import { refusedLiteralHost } from '../ingest/fetch.js';
import { originOf } from '../lib/urls.js';

/** An agent's llm as stored and run. `apiKey` is the opened key: never present it, log it or record it. */
export interface Llm {
  model: string;
  provider: string;
  /** The model server the user gave (OpenAI-compatible); null: the operator's server for the provider. */
  baseUrl: string | null;
  apiKey: string | null;
  /**
   * The connection (src/connections/) that supplies provider, server and key instead, or null. While
   * one is named, `baseUrl` and `apiKey` are null and `provider` is the connection's.
   */
  connectionId: string | null;
}

/** A connection as a run uses it: what it puts in place of the agent's provider, server and key (opened). */
export type ConnectionSettings = Pick<Llm, 'provider' | 'baseUrl' | 'apiKey'>;

/** The llm of a PATCH: a key not sent (undefined) keeps the stored value; `baseUrl`/`apiKey` null means none. */
export type LlmChange = { [K in keyof Llm]?: Llm[K] };

// ---- Parsing the body -----------------------------------------------------------------------------

export const PROVIDER_DESCRIPTION =
  'Which model server runs the agent (any case): `openai` (also `openai-chat`), `ollama`, `openai-compatible` (give baseUrl), ' +
  'or `echo`, the built-in stand-in for trying the service and for tests: no server, any model name, it answers with the input ' +
  'and calls a tool for each input line `/tool <function> <JSON arguments>`.';

const LlmPartSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(200, 'must be at most 200 characters'),
);
export const ApiKeySchema = v.nullable(
  v.pipe(
    v.string('must be a string or null'),
    v.trim(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(4096, 'must be at most 4096 characters'),
  ),
);
const BaseUrlSchema = v.nullable(httpUrlSchema('put the key in apiKey'));
const ConnectionIdSchema = v.nullable(
  v.pipe(
    v.string('must be a string id or null'),
    v.trim(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(64, 'is too long to be an id'),
  ),
);

export const CONNECTION_ID_DESCRIPTION =
  "A connection (GET /connections) that supplies the model server, its key and the provider: one of the caller's or a built-in one. " +
  'Not together with baseUrl or apiKey; null leaves the connection.';

/**
 * The llm object as sent: `api_key` and `base_url` are accepted as other spellings (the camelCase one
 * wins when both are sent). Other keys, which clients of the original API may send (a temperature,
 * say), are accepted within the size and depth bounds and not kept: nothing would ever read them.
 */
function llmObject<
  Model extends v.GenericSchema<unknown, string | undefined>,
  Provider extends v.GenericSchema<unknown, string | undefined>,
>(model: Model, provider: Provider) {
  return v.pipe(
    noArrays(
      v.looseObject(
        {
          model,
          provider: v.pipe(provider, v.description(PROVIDER_DESCRIPTION)),
          baseUrl: v.optional(BaseUrlSchema),
          base_url: v.optional(BaseUrlSchema),
          apiKey: v.optional(ApiKeySchema),
          api_key: v.optional(ApiKeySchema),
          connectionId: v.optional(v.pipe(ConnectionIdSchema, v.description(CONNECTION_ID_DESCRIPTION))),
        },
        'must be an object with model and provider',
      ),
    ),
    v.check((llm) => jsonDepth(llm) <= MAX_JSON_DEPTH, `must be nested at most ${MAX_JSON_DEPTH} levels deep`),
    v.check((llm) => Buffer.byteLength(JSON.stringify(llm)) <= 16 * 1024, 'must be at most 16384 bytes as JSON'),
  );
}

const either = <T>(first: T | undefined, second: T | undefined): T | undefined => (first !== undefined ? first : second);

interface SentServer {
  baseUrl?: string | null;
  base_url?: string | null;
  apiKey?: string | null;
  api_key?: string | null;
  connectionId?: string | null;
}
/** The connection supplies the server and key: a second one in the same body would be ignored, so it is refused. */
const serverBesideConnection = (llm: SentServer) =>
  !!llm.connectionId && (either(llm.baseUrl, llm.base_url) ?? either(llm.apiKey, llm.api_key) ?? null) !== null;
const SERVER_BESIDE_CONNECTION = 'must not be given together with baseUrl or apiKey: the connection supplies the server and its key';

/**
 * The llm of a new agent: `{ model, provider }` with optional `baseUrl` and `apiKey`, or
 * `{ model, connectionId }` (a provider sent with it is replaced by the connection's when saved).
 */
export const LlmSchema = v.pipe(
  llmObject(LlmPartSchema, v.optional(LlmPartSchema)),
  v.forward(
    v.check((llm) => !serverBesideConnection(llm), SERVER_BESIDE_CONNECTION),
    ['connectionId'],
  ),
  v.forward(
    v.check((llm) => llm.provider !== undefined || typeof llm.connectionId === 'string', 'is required (or give llm.connectionId)'),
    ['provider'],
  ),
  v.transform((sent): Llm => ({
    model: sent.model,
    provider: sent.provider ?? '',
    baseUrl: either(sent.baseUrl, sent.base_url) ?? null,
    apiKey: either(sent.apiKey, sent.api_key) ?? null,
    connectionId: sent.connectionId ?? null,
  })),
);

/** The llm of a PATCH: every key optional; it merges into the stored one (mergeLlm). */
export const LlmChangeSchema = v.pipe(
  llmObject(v.optional(LlmPartSchema), v.optional(LlmPartSchema)),
  v.forward(
    v.check((llm) => !serverBesideConnection(llm), SERVER_BESIDE_CONNECTION),
    ['connectionId'],
  ),
  v.transform((sent): LlmChange => ({
    model: sent.model,
    provider: sent.provider,
    baseUrl: either(sent.baseUrl, sent.base_url),
    apiKey: either(sent.apiKey, sent.api_key),
    connectionId: sent.connectionId,
  })),
);

// ---- Providers ------------------------------------------------------------------------------------

export const PROVIDERS = ['openai', 'ollama', 'openai-compatible', 'echo'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The provider an `llm.provider` names (case-insensitive; `openai-chat` is `openai`), or undefined. */
export function normalizeProvider(provider: string): Provider | undefined {
  const name = provider.trim().toLowerCase();
  if (name === 'openai' || name === 'openai-chat') return 'openai';
  if (name === 'ollama') return 'ollama';
  if (name === 'openai-compatible') return 'openai-compatible';
  if (name === 'echo') return 'echo';
  return undefined;
}

const providerList = () => PROVIDERS.map((name) => `"${name}"`).join(', ');

// ---- Merging a PATCH ------------------------------------------------------------------------------

/**
 * Where a stored key would be sent: the origin of the `baseUrl`, else the operator's server for the
 * provider (named by the provider, as the operator's URL may change). A provider this service does
 * not know is its own place.
 */
function keyDestination(llm: Pick<Llm, 'provider' | 'baseUrl' | 'connectionId'>): string {
  if (llm.connectionId !== null) return `connection:${llm.connectionId}`;
  return originOf(llm.baseUrl) ?? `default:${normalizeProvider(llm.provider) ?? llm.provider.toLowerCase()}`;
}

/**
 * The llm after `change` merges into `stored`: keys not sent stay; `apiKey: null` clears the key.
 * A key was given for one server only, so when the change points the llm at another one (a
 * `baseUrl` on another origin, or another provider's default server) the stored key is dropped
 * unless the change sends a key again.
 *
 * A change that names a connection takes the server and key from it (the store sets the provider).
 * One that gives a server or key of its own, or another provider, without naming a connection leaves
 * the stored connection: what was said last wins, as clients that know nothing of connections expect.
 */
export function mergeLlm(stored: Llm, change: LlmChange): Llm {
  const leavesConnection =
    (change.baseUrl ?? null) !== null ||
    (change.apiKey ?? null) !== null ||
    (change.provider !== undefined && change.provider !== stored.provider);
  const connectionId = change.connectionId !== undefined ? change.connectionId : leavesConnection ? null : stored.connectionId;
  if (connectionId !== null)
    return { model: change.model ?? stored.model, provider: stored.provider, baseUrl: null, apiKey: null, connectionId };
  const merged: Llm = {
    model: change.model ?? stored.model,
    provider: change.provider ?? stored.provider,
    baseUrl: change.baseUrl === undefined ? stored.baseUrl : change.baseUrl,
    apiKey: change.apiKey === undefined ? stored.apiKey : change.apiKey,
    connectionId: null,
  };
  if (change.apiKey === undefined && keyDestination(merged) !== keyDestination(stored)) merged.apiKey = null;
  return merged;
}

/**
 * The llm a run uses: an agent on a connection takes the connection's provider, server and key, as
 * they are now (so a rotated key or a moved server reaches every agent at once); the problem when
 * the connection is gone.
 */
export function throughConnection(llm: Llm, connection: ConnectionSettings | undefined): Llm | { problem: FieldIssue } {
  if (llm.connectionId === null) return llm;
  if (!connection) return { problem: { path: 'llm.connectionId', message: 'names a connection that does not exist (any more)' } };
  return { ...llm, provider: connection.provider, baseUrl: connection.baseUrl, apiKey: connection.apiKey };
}

// ---- The server it points to ----------------------------------------------------------------------

/** Where a run's model calls go. */
export interface ModelEndpoint {
  baseUrl: string;
  apiKey: string;
  /** The model name sent upstream. */
  model: string;
  /** True for a `baseUrl` the user gave: every connection goes through the SSRF guard. */
  userAimed: boolean;
  /** A model answered inside the service (src/runs/echo-model.ts): nothing is sent anywhere. */
  builtIn?: 'echo';
}

/** The operator's model servers (OPENAI_BASE_URL, OPENAI_API_KEY, OLLAMA_BASE_URL), trusted. */
export type OperatorModels = Pick<RunsConfig, 'openaiBaseUrl' | 'openaiApiKey' | 'ollamaBaseUrl'>;

// A keyless endpoint still gets `Authorization: Bearer none` (as the `openai` client would send):
// servers that need no key ignore it, and a proxy in front of one sees a well-formed header.
const NO_KEY = 'none';
const OLLAMA_KEY = 'ollama';

const NEEDS_BASE_URL = 'is required for provider "openai-compatible": the URL of its OpenAI-compatible API, e.g. http://host:8000/v1';

/** A `baseUrl` as a URL the model calls can go to, or the problem with it. */
function parseBaseUrl(text: string): URL | FieldIssue {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { path: 'llm.baseUrl', message: 'is not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { path: 'llm.baseUrl', message: 'must be an http or https URL' };
  if (url.username || url.password) return { path: 'llm.baseUrl', message: 'must not hold a user name or password; give llm.apiKey' };
  return url;
}

/**
 * The endpoint an llm points to, or the problem (naming the field) that keeps it from running as
 * configured. A user's `baseUrl` never receives the operator's key; without one, the provider
 * names one of the operator's servers.
 */
export function llmEndpoint(llm: Llm, operator: OperatorModels): { endpoint: ModelEndpoint } | { problem: FieldIssue } {
  const provider = normalizeProvider(llm.provider);
  const model = llm.model;
  // The built-in model needs no server: a baseUrl or key left from another provider is not used.
  if (provider === 'echo') return { endpoint: { baseUrl: 'builtin:echo', apiKey: NO_KEY, model, userAimed: false, builtIn: 'echo' } };
  if (llm.baseUrl !== null) {
    const url = parseBaseUrl(llm.baseUrl);
    if (!(url instanceof URL)) return { problem: url };
    const apiKey = llm.apiKey ?? (provider === 'ollama' ? OLLAMA_KEY : NO_KEY);
    return { endpoint: { baseUrl: url.href.replace(/\/+$/, ''), apiKey, model, userAimed: true } };
  }
  if (provider === 'openai')
    return {
      endpoint: { baseUrl: operator.openaiBaseUrl, apiKey: llm.apiKey ?? operator.openaiApiKey ?? NO_KEY, model, userAimed: false },
    };
  if (provider === 'ollama')
    return { endpoint: { baseUrl: operator.ollamaBaseUrl, apiKey: llm.apiKey ?? OLLAMA_KEY, model, userAimed: false } };
  if (provider === 'openai-compatible') return { problem: { path: 'llm.baseUrl', message: NEEDS_BASE_URL } };
  return {
    problem: {
      path: 'llm.provider',
      message: `"${llm.provider.slice(0, 60)}" is not a provider this service runs; use one of ${providerList()} (or give llm.baseUrl)`,
    },
  };
}

// ---- The check when it is saved -------------------------------------------------------------------

/**
 * Why an llm could never run, decided when the agent is saved and without the network:
 * `openai-compatible` without a `baseUrl`, or a `baseUrl` whose host is an IP address the SSRF guard
 * refuses. A host name is looked up when the agent runs (its answer may change). An unknown
 * provider is kept: clients of the original API name providers of their own, and a run of such an
 * agent says which providers exist.
 */
export function llmProblem(llm: Pick<Llm, 'provider' | 'baseUrl'>, options: { allowPrivateNetworks: boolean }): FieldIssue | undefined {
  if (llm.baseUrl === null)
    return normalizeProvider(llm.provider) === 'openai-compatible' ? { path: 'llm.baseUrl', message: NEEDS_BASE_URL } : undefined;
  const url = parseBaseUrl(llm.baseUrl);
  if (!(url instanceof URL)) return url;
  const refused = refusedLiteralHost(url, options);
  return refused ? { path: 'llm.baseUrl', message: refused.message } : undefined;
}
