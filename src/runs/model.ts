// The model endpoint of a run: the one the agent's llm points to (its rules: src/agents/llm.ts), as
// a run failure when it cannot run. The operator's endpoints (OPENAI_BASE_URL, OLLAMA_BASE_URL) are
// trusted; a `baseUrl` a user gave goes through the SSRF guard before the run and on every
// connection (src/runs/chat-api.ts connects to it through the guarded fetch).
import type { RunsConfig } from '../config.js';
import { raceAbort } from '../lib/abort.js';
import { vetHost, type ResolvedAddress } from '../ingest/fetch.js';
import { isIngestError } from '../ingest/errors.js';
import { llmEndpoint, throughConnection, type ConnectionSettings, type Llm, type ModelEndpoint } from '../agents/llm.js';
import { invalidRun } from './failures.js';

export type { ModelEndpoint } from '../agents/llm.js';

/**
 * The endpoint the agent's llm points to; a `validation_failed` failure naming the field when it
 * cannot be run as configured. An agent on a connection gets the connection's provider, server and
 * key as they are now (`connectionOf` reads it, key opened), so a key rotated on the connection
 * reaches its agents at their next run.
 */
export function resolveEndpoint(llm: Llm, config: RunsConfig, connectionOf: (id: string) => ConnectionSettings | undefined): ModelEndpoint {
  const connected = throughConnection(llm, llm.connectionId === null ? undefined : connectionOf(llm.connectionId));
  if ('problem' in connected) throw invalidRun([connected.problem]);
  const resolved = llmEndpoint(connected, config);
  if ('problem' in resolved) throw invalidRun([resolved.problem]);
  return resolved.endpoint;
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
    await raceAbort(
      vetHost(new URL(endpoint.baseUrl), { allowPrivateNetworks: options.allowPrivateNetworks, resolve: options.resolve }),
      options.signal,
    );
  } catch (error) {
    if (!isIngestError(error)) throw error;
    throw invalidRun([{ path: 'llm.baseUrl', message: error.message }]);
  }
}
