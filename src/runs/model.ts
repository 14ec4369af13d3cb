// Which model endpoint an agent talks to. The operator's endpoints (OPENAI_BASE_URL,
// OLLAMA_BASE_URL) are trusted; a `baseUrl` a user gave goes through the SSRF guard before the run
// and on every connection (src/runs/chat-api.ts connects to it through the guarded fetch).
import type { RunsConfig } from '../config.js';
import type { FieldIssue } from '../http/errors.js';
import { raceAbort, refusedLiteralHost, vetHost, type ResolvedAddress } from '../ingest/fetch.js';
import { isIngestError } from '../ingest/errors.js';
import type { RunLlmConfig } from '../agents/store.js';
import { invalidRun } from './failures.js';

export const PROVIDERS = ['openai', 'ollama', 'openai-compatible', 'echo'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The provider an agent's `llm.provider` names (case-insensitive; `openai-chat` is `openai`), or undefined. */
export function normalizeProvider(provider: string): Provider | undefined {
  const name = provider.trim().toLowerCase();
  if (name === 'openai' || name === 'openai-chat') return 'openai';
  if (name === 'ollama') return 'ollama';
  if (name === 'openai-compatible') return 'openai-compatible';
  if (name === 'echo') return 'echo';
  return undefined;
}

/** Where a run's model calls go. */
export interface ModelEndpoint {
  baseURL: string;
  apiKey: string;
  /** The model name sent upstream. */
  model: string;
  /** True for a `baseUrl` the user gave: every connection goes through the SSRF guard. */
  userAimed: boolean;
  /** A model answered inside the service (src/runs/echo-model.ts): nothing is sent anywhere. */
  builtIn?: 'echo';
}

// A keyless endpoint still gets `Authorization: Bearer none` (as the `openai` client would send):
// servers that need no key ignore it, and a proxy in front of one sees a well-formed header.
const NO_KEY = 'none';
const OLLAMA_KEY = 'ollama';

const providerList = () => PROVIDERS.map((name) => `"${name}"`).join(', ');

/** The endpoint for an agent's llm; a `validation_failed` failure naming the field when it cannot be run as configured. */
export function resolveEndpoint(llm: RunLlmConfig, config: RunsConfig): ModelEndpoint {
  const provider = normalizeProvider(llm.provider);
  // The built-in model needs no server: a baseUrl or key left from another provider is not used.
  if (provider === 'echo') return { baseURL: 'builtin:echo', apiKey: NO_KEY, model: llm.model, userAimed: false, builtIn: 'echo' };
  const userBase = llm.baseUrl === null ? null : parseBaseUrl(llm.baseUrl);
  if (userBase !== null) {
    // A user's endpoint never receives the operator's key.
    const apiKey = llm.apiKey ?? (provider === 'ollama' ? OLLAMA_KEY : NO_KEY);
    return { baseURL: userBase, apiKey, model: llm.model, userAimed: true };
  }
  if (provider === 'openai') {
    return { baseURL: config.openaiBaseUrl, apiKey: llm.apiKey ?? config.openaiApiKey ?? NO_KEY, model: llm.model, userAimed: false };
  }
  if (provider === 'ollama') {
    return { baseURL: config.ollamaBaseUrl, apiKey: llm.apiKey ?? OLLAMA_KEY, model: llm.model, userAimed: false };
  }
  if (provider === 'openai-compatible') {
    throw invalidRun([{ path: 'llm.baseUrl', message: NEEDS_BASE_URL }]);
  }
  throw invalidRun([
    { path: 'llm.provider', message: `"${llm.provider.slice(0, 60)}" is not a provider this service runs; use one of ${providerList()} (or give llm.baseUrl)` },
  ]);
}

function parseBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidRun([{ path: 'llm.baseUrl', message: 'is not a valid URL' }]);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidRun([{ path: 'llm.baseUrl', message: 'must be an http or https URL' }]);
  if (url.username || url.password) throw invalidRun([{ path: 'llm.baseUrl', message: 'must not hold a user name or password; give llm.apiKey' }]);
  return url.href.replace(/\/+$/, '');
}

/**
 * Checks a user's endpoint against the SSRF guard before the run starts: a `validation_failed`
 * failure saying why it is refused. The host's lookup has no deadline of its own (a DNS server may
 * never answer): it rejects with `signal`'s reason when the run's deadline or a shutdown aborts it.
 */
export async function checkEndpoint(
  endpoint: ModelEndpoint,
  options: { allowPrivateNetworks: boolean; signal: AbortSignal; resolve?: (host: string) => Promise<ResolvedAddress[]> },
): Promise<void> {
  if (!endpoint.userAimed) return;
  try {
    await raceAbort(vetHost(new URL(endpoint.baseURL), { allowPrivateNetworks: options.allowPrivateNetworks, resolve: options.resolve }), options.signal);
  } catch (error) {
    if (!isIngestError(error)) throw error;
    throw invalidRun([{ path: 'llm.baseUrl', message: error.message }]);
  }
}

const NEEDS_BASE_URL = 'is required for provider "openai-compatible": the URL of its OpenAI-compatible API, e.g. http://host:8000/v1';

/**
 * Why an agent's llm could never run, decided when the agent is saved and without the network:
 * `openai-compatible` without a `baseUrl`, or a `baseUrl` whose host is an IP address the guard
 * refuses. A host name is looked up when the agent runs (its answer may change). An unknown
 * provider is kept: clients of the original API name providers of their own, and a run of such an
 * agent says which providers exist.
 */
export function llmProblem(llm: { provider: string; baseUrl: string | null }, options: { allowPrivateNetworks: boolean }): FieldIssue | undefined {
  if (llm.baseUrl === null) return normalizeProvider(llm.provider) === 'openai-compatible' ? { path: 'llm.baseUrl', message: NEEDS_BASE_URL } : undefined;
  let url: URL;
  try {
    url = new URL(llm.baseUrl);
  } catch {
    return { path: 'llm.baseUrl', message: 'is not a valid URL' };
  }
  const refused = refusedLiteralHost(url, options);
  return refused ? { path: 'llm.baseUrl', message: refused.message } : undefined;
}
