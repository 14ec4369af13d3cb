// Every store of the service (all of its SQL), each preparing its statements once per database.
import type { Db } from './db.js';
import type { Sealer } from './lib/secrets.js';
import { createApiTokenStore } from './api-tokens/store.js';
import { createAgentStore } from './agents/store.js';
import { createDocumentStore } from './documents/store.js';
import { createIngestionStore } from './documents/ingestion-store.js';
import { createSearchStore } from './documents/search-store.js';
import { createFileStore } from './documents/file-store.js';
import { createAgentDocumentStore, createAgentToolStore } from './links/store.js';
import { createPromptStore } from './prompts/store.js';
import { createTagStore } from './tags/store.js';
import { createToolStore } from './tools/store.js';
import { createUserStore } from './users/store.js';
import { createMemoryStore } from './runs/memory-store.js';
import { createRunStore } from './runs/store.js';
import { createRunEventStore } from './runs/event-store.js';
import { createWebhookStore } from './webhooks/store.js';
import { createConnectionStore } from './connections/store.js';

export type Stores = ReturnType<typeof createStores>;

/** `allowPrivateNetworks`: the ALLOW_PRIVATE_NETWORKS setting, which decides which model URLs an agent may be saved with. */
export function createStores(db: Db, sealer: Sealer, options: { allowPrivateNetworks?: boolean } = {}) {
  const allowPrivateNetworks = options.allowPrivateNetworks ?? false;
  const memory = createMemoryStore(db);
  return {
    users: createUserStore(db),
    apiTokens: createApiTokenStore(db),
    prompts: createPromptStore(db),
    tags: createTagStore(db),
    tools: createToolStore(db, sealer),
    documents: createDocumentStore(db, sealer),
    chunks: createIngestionStore(db),
    files: createFileStore(db),
    search: createSearchStore(db),
    agents: createAgentStore(db, sealer, { allowPrivateNetworks }),
    connections: createConnectionStore(db, sealer),
    agentDocuments: createAgentDocumentStore(db),
    agentTools: createAgentToolStore(db),
    runs: createRunStore(db, memory),
    runEvents: createRunEventStore(db),
    webhooks: createWebhookStore(db, sealer),
    memory,
  };
}
