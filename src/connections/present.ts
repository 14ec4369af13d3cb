// The JSON shape of a connection: never its key, only whether one is stored.
import type { Connection } from './schema.js';
import type { ConnectionRow } from './store.js';

export function presentConnection(connection: ConnectionRow): Connection {
  return {
    id: connection.id,
    userId: connection.userId,
    name: connection.name,
    provider: connection.provider,
    baseUrl: connection.baseUrl,
    hasApiKey: connection.hasApiKey,
    builtIn: connection.builtIn,
    createdAt: connection.createdAt,
    updatedAt: connection.updatedAt,
  };
}
