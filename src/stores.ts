// Every store of the service (all of its SQL), each preparing its statements once per database.
import type { Db } from './db.js';
import type { Sealer } from './lib/secrets.js';
import { createApiTokenStore } from './api-tokens/store.js';
import { createAgentStore } from './agents/store.js';
import { createDocumentStore } from './documents/store.js';
import { createIngestionStore } from './documents/ingestion-store.js';
import { createAgentDocumentStore, createAgentToolStore } from './links/store.js';
import { createPromptStore } from './prompts/store.js';
import { createTagStore } from './tags/store.js';
import { createToolStore } from './tools/store.js';
import { createUserStore } from './users/store.js';
import { createRunStore } from './runs/store.js';

export type Stores = ReturnType<typeof createStores>;

export function createStores(db: Db, sealer: Sealer) {
  return {
    users: createUserStore(db),
    apiTokens: createApiTokenStore(db),
    prompts: createPromptStore(db),
    tags: createTagStore(db),
    tools: createToolStore(db, sealer),
    documents: createDocumentStore(db, sealer),
    chunks: createIngestionStore(db),
    agents: createAgentStore(db, sealer),
    agentDocuments: createAgentDocumentStore(db),
    agentTools: createAgentToolStore(db),
    runs: createRunStore(db),
  };
}
