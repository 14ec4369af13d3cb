// `/connections`: a model server set up once (its URL, provider and key) that agents name with
// `llm.connectionId`; the operator's servers listed beside the caller's as read-only built-in
// connections; the server's model list; and "test connection".
import { forbidden, notFound, ApiError } from '../http/errors.js';
import { checkPublicUrl, publicUrlText, type PublicUrlRule } from '../http/public-url.js';
import { resourceRoutes, type OwnedStore } from '../http/resource-routes.js';
import { defineRoute, type Route } from '../http/route.js';
import { timestamp } from '../lib/ids.js';
import type { PageRequest } from '../lib/paging.js';
import { BUILTIN_CONNECTIONS, builtinConnection } from './builtin.js';
import { ModelListError, MODEL_CACHE_MS, type ModelLister } from './models.js';
import { presentConnection } from './present.js';
import {
  ConnectionSchema,
  CreateConnectionSchema,
  ModelListSchema,
  TestConnectionSchema,
  TestResultSchema,
  UpdateConnectionSchema,
  type ConnectionChange,
  type ConnectionInput,
} from './schema.js';
import type { ConnectionRow, ConnectionStore } from './store.js';

/** With the rule a connection's baseUrl is checked by when it is stored. */
export interface ConnectionRouteDeps extends PublicUrlRule {
  connections: ConnectionStore;
  models: ModelLister;
  /** Whether the operator set OPENAI_API_KEY (shown as the built-in OpenAI connection's `hasApiKey`). */
  operatorHasOpenAIKey: boolean;
}

const TAG = 'Connections';
const missing = () => notFound('Connection');
const readOnly = () => forbidden("A built-in connection is the operator's setting (OPENAI_*/OLLAMA_*): it cannot be changed or deleted.");
const SSRF_TEXT = publicUrlText('The baseUrl');

// The built-in connections page before the caller's own, as if created first: these keyset positions
// come before every row's (rows' `seq` start at 1; 0 is "from the start").
const BUILTIN_SEQ = new Map(BUILTIN_CONNECTIONS.map((connection, index) => [connection.id, index - BUILTIN_CONNECTIONS.length]));

export function connectionRoutes(deps: ConnectionRouteDeps): Route[] {
  const { connections, models } = deps;
  const since = timestamp();
  const builtinRows: ConnectionRow[] = BUILTIN_CONNECTIONS.map((connection) => ({
    id: connection.id,
    userId: null,
    name: connection.name,
    provider: connection.provider,
    baseUrl: null,
    hasApiKey: connection.provider === 'openai' && deps.operatorHasOpenAIKey,
    builtIn: true,
    createdAt: since,
    updatedAt: since,
  }));
  const builtinRow = (id: string) => builtinRows.find((row) => row.id === id);

  /** The caller's connections with the built-in ones in front; the built-in ones are read-only. */
  const store: OwnedStore<ConnectionRow, ConnectionInput, ConnectionChange, {}> = {
    seqOf: (userId, id) => BUILTIN_SEQ.get(id) ?? connections.seqOf(userId, id),
    get: (userId, id) => builtinRow(id) ?? connections.get(userId, id),
    list(userId, { limit, afterSeq }: PageRequest) {
      const builtins = builtinRows.filter((row) => afterSeq === 0 || BUILTIN_SEQ.get(row.id)! > afterSeq);
      if (builtins.length > limit) return { rows: builtins.slice(0, limit), hasMore: true };
      const own = connections.list(userId, { limit: limit - builtins.length, afterSeq: Math.max(afterSeq, 0) });
      return { rows: [...builtins, ...own.rows], hasMore: own.hasMore };
    },
    create: (userId, input) => connections.create(userId, input),
    update(userId, id, change) {
      if (builtinConnection(id)) throw readOnly();
      return connections.update(userId, id, change);
    },
    delete(userId, id) {
      if (builtinConnection(id)) throw readOnly();
      const deleted = connections.delete(userId, id);
      if (deleted) models.forget(id);
      return deleted;
    },
  };

  const resource = resourceRoutes({
    path: '/connections',
    tag: TAG,
    names: { one: 'connection', One: 'Connection', Many: 'Connections', what: 'Connection' },
    schema: ConnectionSchema,
    present: presentConnection,
    store,
    list: {
      description: "The built-in connections (`builtin-openai`, `builtin-ollama`: the operator's servers) come first, then the caller's.",
    },
    create: {
      body: CreateConnectionSchema,
      description: `The key is stored sealed and never returned (\`hasApiKey\` says whether one is set). ${SSRF_TEXT}`,
      check: (input) => checkPublicUrl(input.baseUrl, 'baseUrl', deps),
    },
    update: {
      body: UpdateConnectionSchema,
      errors: [403],
      description:
        'Every agent using the connection runs with the change from its next run on (a new key reaches them all). A `baseUrl` on another ' +
        `origin drops the stored key unless \`apiKey\` is sent again; \`apiKey: null\` clears it. A built-in connection is a 403. ${SSRF_TEXT}`,
      check: (change) => checkPublicUrl(change.baseUrl, 'baseUrl', deps),
      after: (row) => models.forget(row.id),
    },
    delete: {
      answers: 'null',
      errors: [403, 409],
      description: 'Refused with 409 (saying how many) while agents use it; a built-in connection is a 403.',
    },
  });

  /** The connection's key in the model cache and what it puts in a run, or a 404. */
  function settingsOf(userId: string, id: string) {
    const settings = connections.settingsFor(userId, id);
    if (!settings) throw missing();
    return settings;
  }

  const listModels = defineRoute({
    method: 'get',
    path: '/connections/:id/models',
    operationId: 'listConnectionModels',
    summary: "List a connection's models",
    description:
      `Asks the server (\`GET {baseUrl}/models\`, with the connection's key) which models it offers; the answer is reused for ${MODEL_CACHE_MS / 1000} s ` +
      '(a PATCH of the connection forgets it). 502 `upstream_error` saying what is wrong when the server cannot be asked: ' +
      'unreachable, the key refused, or not an OpenAI-compatible model list.',
    tag: TAG,
    auth: true,
    errors: [502],
    success: { status: 200, description: 'The model ids, as the server lists them.', data: ModelListSchema },
    handler: async ({ caller, params }) => {
      try {
        return { models: await models.list(params.id, settingsOf(caller.id, params.id)) };
      } catch (error) {
        if (error instanceof ModelListError) throw new ApiError(502, 'upstream_error', error.message);
        throw error;
      }
    },
  });

  const test = defineRoute({
    method: 'post',
    path: '/connections/:id/test',
    operationId: 'testConnection',
    summary: 'Test a connection',
    description:
      'Asks the server for its models now and answers 200 `{ ok, message }` either way: `message` says in words what works or what is ' +
      'wrong (unreachable, the key refused with 401/403, not an OpenAI-compatible API, or, when `model` is given, no such model).',
    tag: TAG,
    auth: true,
    body: TestConnectionSchema,
    success: { status: 200, description: 'Whether the server answers as a model server should, in words.', data: TestResultSchema },
    handler: ({ caller, params, body }) => models.test(params.id, settingsOf(caller.id, params.id), body.model),
  });

  return [...resource, listModels, test];
}
