// SQL for connections: a user's model server and its key (sealed, opened only to call the server).
// Agents name one in `llm_connection_id`; this store refuses to delete a connection they use and
// carries a provider change over to them, so that an agent's `llm.provider` stays the connection's.
import type { Db } from '../db.js';
import type { Sealer } from '../lib/secrets.js';
import type { ConnectionSettings } from '../agents/llm.js';
import { conflict } from '../http/errors.js';
import { boolean, columnMap } from '../lib/columns.js';
import { newId, timestamp } from '../lib/ids.js';
import { ownedTable } from '../lib/owned-table.js';
import { sameOrigin } from '../lib/urls.js';
import { builtinConnection, builtinSettings } from './builtin.js';
import type { ConnectionChange, ConnectionInput, ConnectionProvider } from './schema.js';

export interface ConnectionRow {
  id: string;
  /** null for a built-in connection. */
  userId: string | null;
  name: string;
  provider: ConnectionProvider;
  /** null for a built-in connection (the operator's server is not shown). */
  baseUrl: string | null;
  hasApiKey: boolean;
  builtIn: boolean;
  createdAt: string;
  updatedAt: string;
}

const CONNECTION_ROW = columnMap<ConnectionRow>({
  id: 'id',
  userId: 'user_id',
  name: 'name',
  provider: 'provider',
  baseUrl: 'base_url',
  hasApiKey: boolean((c) => `${c}.api_key IS NOT NULL`),
  builtIn: boolean(() => '0'),
  createdAt: 'created_at',
  updatedAt: 'updated_at',
});

export type ConnectionStore = ReturnType<typeof createConnectionStore>;

export function createConnectionStore(db: Db, sealer: Sealer) {
  const table = ownedTable(db, 'connections', CONNECTION_ROW);
  const insert = db.prepare(
    `INSERT INTO connections (id, user_id, name, provider, base_url, api_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare(
    `UPDATE connections SET name = ?, provider = ?, base_url = ?, api_key = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
  );
  const selectStored = db.prepare(`SELECT provider, base_url AS baseUrl, api_key AS apiKey FROM connections WHERE id = ? AND user_id = ?`);
  const countAgents = db.prepare(`SELECT count(*) FROM agents WHERE user_id = ? AND llm_connection_id = ?`).pluck();
  const updateAgentsProvider = db.prepare(`UPDATE agents SET llm_provider = ? WHERE user_id = ? AND llm_connection_id = ?`);
  const deleteById = db.prepare(`DELETE FROM connections WHERE id = ? AND user_id = ?`);
  const sealOrNull = (value: string | null) => (value === null ? null : sealer.seal(value));

  type Stored = { provider: ConnectionProvider; baseUrl: string; apiKey: string | null };

  return {
    get: table.get,
    seqOf: table.seqOf,
    list: table.list,

    create(userId: string, input: ConnectionInput): ConnectionRow {
      const id = newId();
      const now = timestamp();
      insert.run(id, userId, input.name, input.provider, input.baseUrl, sealOrNull(input.apiKey), now, now);
      return table.get(userId, id)!;
    },

    /**
     * Applies a partial change in one transaction; undefined when the user has no such connection.
     * The key was given for one server: a `baseUrl` on another origin drops it unless the change
     * sends a key again. A new provider becomes the provider of every agent using the connection.
     */
    update: db.transaction((userId: string, id: string, change: ConnectionChange): ConnectionRow | undefined => {
      const stored = selectStored.get(id, userId) as Stored | undefined;
      if (!stored) return undefined;
      const current = table.get(userId, id)!;
      const baseUrl = change.baseUrl ?? stored.baseUrl;
      const apiKey = change.apiKey !== undefined ? sealOrNull(change.apiKey) : sameOrigin(baseUrl, stored.baseUrl) ? stored.apiKey : null;
      const provider = change.provider ?? stored.provider;
      update.run(change.name ?? current.name, provider, baseUrl, apiKey, timestamp(), id, userId);
      if (provider !== stored.provider) updateAgentsProvider.run(provider, userId, id);
      return table.get(userId, id);
    }),

    /** Deletes the connection; a 409 naming how many of the user's agents still use it. */
    delete: db.transaction((userId: string, id: string): boolean => {
      const using = countAgents.get(userId, id) as number;
      if (using > 0) {
        throw conflict(
          `${using} ${using === 1 ? 'agent uses' : 'agents use'} this connection: give ${using === 1 ? 'it' : 'them'} another connection or server (llm.connectionId) first.`,
        );
      }
      return deleteById.run(id, userId).changes > 0;
    }),

    /** The provider of a connection the user may name (theirs or a built-in one), or undefined. */
    providerOf(userId: string, id: string): ConnectionProvider | undefined {
      const builtin = builtinConnection(id);
      if (builtin) return builtin.provider;
      return (selectStored.get(id, userId) as Stored | undefined)?.provider;
    },

    /** What the connection puts in an agent's llm at run time, its key opened (never present or log it). */
    settingsFor(userId: string, id: string): ConnectionSettings | undefined {
      const builtin = builtinConnection(id);
      if (builtin) return builtinSettings(builtin);
      const stored = selectStored.get(id, userId) as Stored | undefined;
      if (!stored) return undefined;
      return { provider: stored.provider, baseUrl: stored.baseUrl, apiKey: stored.apiKey === null ? null : sealer.open(stored.apiKey) };
    },
  };
}
