// Which model endpoint an agent talks to, and the `openai` client for it. The operator's endpoints
// (OPENAI_BASE_URL, OLLAMA_BASE_URL) are trusted; a `baseUrl` a user gave goes through the SSRF
// guard before the run and on every connection (the guarded fetch connects to the vetted address).
import OpenAI from 'openai';
import type { RunsConfig } from '../config.js';
import { createGuardedFetch, raceAbort, vetHost, type FetchFunction, type ResolvedAddress } from '../ingest/fetch.js';
import { isIngestError } from '../ingest/errors.js';
import type { RunLlmConfig } from '../agents/store.js';
import { invalidRun } from './failures.js';
import { keepAliveFetch } from './keep-alive-fetch.js';

export const PROVIDERS = ['openai', 'ollama', 'openai-compatible'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The provider an agent's `llm.provider` names (case-insensitive; `openai-chat` is `openai`), or undefined. */
export function normalizeProvider(provider: string): Provider | undefined {
  const name = provider.trim().toLowerCase();
  if (name === 'openai' || name === 'openai-chat') return 'openai';
  if (name === 'ollama') return 'ollama';
  if (name === 'openai-compatible') return 'openai-compatible';
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
}

// The `openai` constructor throws without a key; servers that need none ignore what is sent.
const NO_KEY = 'none';
const OLLAMA_KEY = 'ollama';

const providerList = () => PROVIDERS.map((name) => `"${name}"`).join(', ');

/** The endpoint for an agent's llm; a `validation_failed` failure naming the field when it cannot be run as configured. */
export function resolveEndpoint(llm: RunLlmConfig, config: RunsConfig): ModelEndpoint {
  const provider = normalizeProvider(llm.provider);
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
    throw invalidRun([{ path: 'llm.baseUrl', message: 'is required for provider "openai-compatible": the URL of its OpenAI-compatible API, e.g. http://host:8000/v1' }]);
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
    const hint = error.code === 'refused_address' ? ' (the operator can allow private networks with ALLOW_PRIVATE_NETWORKS=on)' : '';
    throw invalidRun([{ path: 'llm.baseUrl', message: `${error.message}${hint}` }]);
  }
}

/** The `openai` client for an endpoint: explicit key, no retries, the run's timeout, the guarded fetch for a user's URL (kept-alive node:http for the operator's). */
export function createModelClient(endpoint: ModelEndpoint, options: { timeoutMs: number; allowPrivateNetworks: boolean; fetch?: FetchFunction }): OpenAI {
  return new OpenAI({
    apiKey: endpoint.apiKey,
    baseURL: endpoint.baseURL,
    maxRetries: 0,
    timeout: options.timeoutMs,
    // Never forward the operator's OPENAI_ORG_ID / OPENAI_PROJECT_ID (read from the environment) to any endpoint.
    organization: null,
    project: null,
    fetch: endpoint.userAimed ? (options.fetch ?? createGuardedFetch({ allowPrivateNetworks: options.allowPrivateNetworks })) : (options.fetch ?? keepAliveFetch),
  });
}

/** Clients kept for reuse: constructing one costs more than the call to a fast local model. */
export const MODEL_CLIENTS_KEPT = 64;

/**
 * A small cache of `openai` clients, one per endpoint: its URL, its key, whether it is guarded, and
 * the options. A client holds its key and sends it only to its own URL, so the whole of that pair
 * is the cache key: a key never reaches another endpoint. The least recently used client goes when
 * more than `max` are kept. A client keeps no state between requests (the deadline and the signal
 * are given per request).
 */
export function createModelClients(options: { timeoutMs: number; allowPrivateNetworks: boolean; max?: number }): (endpoint: ModelEndpoint) => OpenAI {
  const max = options.max ?? MODEL_CLIENTS_KEPT;
  const clients = new Map<string, OpenAI>();
  return (endpoint) => {
    const key = JSON.stringify([endpoint.baseURL, endpoint.apiKey, endpoint.userAimed]);
    let client = clients.get(key);
    if (client) {
      clients.delete(key);
    } else {
      client = createModelClient(endpoint, options);
      if (clients.size >= max) clients.delete(clients.keys().next().value as string);
    }
    clients.set(key, client);
    return client;
  };
}
