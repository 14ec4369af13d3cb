// Asking a connection's server which models it offers (`GET {baseUrl}/models`, OpenAI's list shape,
// which Ollama, vLLM and the like answer too): for the console's model picker, cached briefly, and
// for "test connection", which says in words what is wrong. A user's server is reached through the
// SSRF guard; the operator's (a built-in connection) is trusted, as runs trust it. Whatever the
// server answers is bounded: 1 MiB, 10 s, at most MAX_MODELS ids of at most 200 characters.
import { llmEndpoint, type ConnectionSettings, type ModelEndpoint, type OperatorModels } from '../agents/llm.js';
import { isIngestError } from '../ingest/errors.js';
import { createGuardedFetch, type ResolvedAddress } from '../ingest/fetch.js';

const MAX_BYTES = 1024 * 1024;
const TIMEOUT_MS = 10_000;
const MAX_MODELS = 5000;
const MAX_MODEL_ID = 200;
/** How long a model list is reused; a PATCH or delete of the connection forgets it at once. */
export const MODEL_CACHE_MS = 60_000;
/** Model lists kept at most (the oldest goes first): a bound on memory whatever the number of connections. */
const MAX_CACHED = 1000;

/** Why the model list could not be had, in words for the connection's owner (never a key). */
export class ModelListError extends Error {
  override readonly name = 'ModelListError';
}

export interface ModelTest {
  ok: boolean;
  message: string;
}

export interface ModelListerOptions {
  allowPrivateNetworks: boolean;
  operator: OperatorModels;
  /** Tests only: answers the DNS lookups of the SSRF guard. */
  resolveHost?: (host: string) => Promise<ResolvedAddress[]>;
}

export type ModelLister = ReturnType<typeof createModelLister>;

export function createModelLister(options: ModelListerOptions) {
  const userFetch = createGuardedFetch({
    allowPrivateNetworks: options.allowPrivateNetworks,
    resolve: options.resolveHost,
    maxResponseBytes: MAX_BYTES,
  });
  const operatorFetch = createGuardedFetch({ isAddressAllowed: () => true, resolve: options.resolveHost, maxResponseBytes: MAX_BYTES });
  // A list being fetched is cached as its promise, so that requests arriving meanwhile share one call.
  const cache = new Map<string, { at: number; models: Promise<string[]> }>();

  function endpointOf(settings: ConnectionSettings): ModelEndpoint {
    const resolved = llmEndpoint({ model: '', ...settings, connectionId: null }, options.operator);
    if ('problem' in resolved) throw new ModelListError(`${resolved.problem.path.replace(/^llm\./, '')} ${resolved.problem.message}`);
    return resolved.endpoint;
  }

  async function fetchModels(settings: ConnectionSettings): Promise<string[]> {
    const endpoint = endpointOf(settings);
    const host = new URL(endpoint.baseUrl).host;
    const fetch = endpoint.userAimed ? userFetch : operatorFetch;
    let text: string;
    let status: number;
    try {
      const response = await fetch(`${endpoint.baseUrl}/models`, {
        headers: { accept: 'application/json', authorization: `Bearer ${endpoint.apiKey}` },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      status = response.status;
      if (!response.ok) {
        await response.body?.cancel();
      } else {
        text = await response.text();
      }
    } catch (error) {
      throw failure(error, host);
    }
    if (status === 401 || status === 403)
      throw new ModelListError(`${host} refused the key (HTTP ${status}): check the connection's API key.`);
    if (status < 200 || status > 299)
      throw new ModelListError(
        `${host} answered HTTP ${status} to GET /models: is baseUrl the server's OpenAI-compatible API (usually ending in /v1)?`,
      );
    return parseModelList(text!, host);
  }

  return {
    /** The ids of the models the server offers, reused for MODEL_CACHE_MS; a ModelListError says why not. */
    list(key: string, settings: ConnectionSettings): Promise<string[]> {
      const now = Date.now();
      const cached = cache.get(key);
      if (cached && now - cached.at < MODEL_CACHE_MS) return cached.models;
      const entry = { at: now, models: fetchModels(settings) };
      cache.delete(key);
      cache.set(key, entry);
      if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
      // A failure is not kept: the next request asks again.
      entry.models.catch(() => cache.get(key) === entry && cache.delete(key));
      return entry.models;
    },

    /** Forgets the cached list (the connection changed or is gone). */
    forget(key: string): void {
      cache.delete(key);
    },

    /** "Test connection": asks the server now (and caches its answer); `model` must be among its models. */
    async test(key: string, settings: ConnectionSettings, model?: string): Promise<ModelTest> {
      this.forget(key);
      let models: string[];
      try {
        models = await this.list(key, settings);
      } catch (error) {
        if (error instanceof ModelListError) return { ok: false, message: error.message };
        throw error;
      }
      if (model !== undefined && !models.includes(model)) {
        const shown = models
          .slice(0, 20)
          .map((id) => `"${id}"`)
          .join(', ');
        const more = models.length > 20 ? ` and ${models.length - 20} more` : '';
        return {
          ok: false,
          message:
            models.length === 0
              ? `The server has no model "${model}": it lists no models.`
              : `The server has no model "${model}"; it offers ${shown}${more}.`,
        };
      }
      if (model !== undefined) return { ok: true, message: `Connected: the server offers the model "${model}".` };
      return { ok: true, message: `Connected: the server lists ${models.length} ${models.length === 1 ? 'model' : 'models'}.` };
    },
  };
}

/** A failed request as words: unreachable (with why), refused by the SSRF guard, too slow or too large. */
function failure(error: unknown, host: string): ModelListError {
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return new ModelListError(`${host} is unreachable: no answer within ${TIMEOUT_MS / 1000} seconds.`);
  if (isIngestError(error)) {
    if (error.code === 'refused_address') return new ModelListError(`The address is ${error.message}.`);
    if (error.code === 'too_large') return new ModelListError(`${host} answered a model list larger than 1 MiB.`);
    return new ModelListError(`${host} is unreachable: ${error.message}.`);
  }
  return new ModelListError(`${host} is unreachable.`);
}

/** The model ids of OpenAI's list shape `{ data: [{ id }] }`, bounded; a ModelListError for anything else. */
function parseModelList(text: string, host: string): string[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ModelListError(`${host} did not answer GET /models with JSON: is baseUrl the server's OpenAI-compatible API?`);
  }
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new ModelListError(`${host} did not answer GET /models with a model list ({ "data": [...] }).`);
  const ids = new Set<string>();
  for (const item of data) {
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof id === 'string' && id.length > 0 && id.length <= MAX_MODEL_ID) ids.add(id);
    if (ids.size >= MAX_MODELS) break;
  }
  return [...ids];
}
