// The built-in connections: the operator's model servers (OPENAI_BASE_URL with OPENAI_API_KEY,
// OLLAMA_BASE_URL) as connections every user may name. They are not rows: their ids are fixed and
// what they point to is the operator's settings, read when a run or a model list needs them.
import type { ConnectionSettings } from '../agents/llm.js';
import type { ConnectionProvider } from './schema.js';

export interface BuiltinConnection {
  id: string;
  name: string;
  provider: ConnectionProvider;
}

export const BUILTIN_CONNECTIONS: readonly BuiltinConnection[] = [
  { id: 'builtin-openai', name: "OpenAI (the operator's)", provider: 'openai' },
  { id: 'builtin-ollama', name: "Ollama (the operator's)", provider: 'ollama' },
];

/** The built-in connection with this id, or undefined. */
export function builtinConnection(id: string): BuiltinConnection | undefined {
  return BUILTIN_CONNECTIONS.find((connection) => connection.id === id);
}

/**
 * What a built-in connection puts in an agent's llm: its provider without a server or key of its
 * own, which is how an llm names the operator's server for a provider (src/agents/llm.ts llmEndpoint).
 */
export function builtinSettings(connection: BuiltinConnection): ConnectionSettings {
  return { provider: connection.provider, baseUrl: null, apiKey: null };
}
