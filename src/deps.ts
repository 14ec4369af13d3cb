// What route modules are given: the stores (all SQL), the configuration and the auth middleware.
import type { Config } from './config.js';
import type { Db } from './db.js';
import type { AppMiddleware } from './http/context.js';
import type { RateLimits } from './http/rate-limit.js';
import type { PasswordHasher } from './auth/password.js';
import type { Sealer } from './lib/secrets.js';
import { createApiTokenStore } from './api-tokens/store.js';
import { createAgentStore } from './agents/store.js';
import { createDocumentStore, documentFromJson, documentJsonSql } from './documents/store.js';
import { createLinkStore } from './links/store.js';
import { createIngestionStore } from './documents/ingestion-store.js';
import type { IngestionQueue } from './documents/ingestion.js';
import { createPromptStore } from './prompts/store.js';
import { createTagStore } from './tags/store.js';
import { createToolStore, toolJsonSql, type ToolRow } from './tools/store.js';
import { createUserStore } from './users/store.js';

export type Stores = ReturnType<typeof createStores>;

/** Prepares every statement of every store, once per database. */
export function createStores(db: Db, sealer: Sealer) {
  return {
    users: createUserStore(db),
    apiTokens: createApiTokenStore(db),
    prompts: createPromptStore(db),
    tags: createTagStore(db),
    tools: createToolStore(db, sealer),
    documents: createDocumentStore(db, sealer),
    ingestion: createIngestionStore(db),
    agents: createAgentStore(db, sealer),
    agentDocuments: createLinkStore(db, {
      table: 'agent_documents',
      targetTable: 'documents',
      targetColumn: 'document_id',
      targetField: 'documentId',
      targetName: 'document',
      targetJsonSql: documentJsonSql,
      targetFromJson: documentFromJson,
    }),
    agentTools: createLinkStore(db, {
      table: 'agent_tools',
      targetTable: 'tools',
      targetColumn: 'tool_id',
      targetField: 'toolId',
      targetName: 'tool',
      targetJsonSql: toolJsonSql,
      targetFromJson: (raw) => raw as unknown as ToolRow,
    }),
  };
}

export interface Deps {
  config: Config;
  stores: Stores;
  rateLimits: RateLimits;
  /** Computes password hashes a bounded number at a time. */
  passwords: PasswordHasher;
  /** Background ingestion of documents: routes enqueue created or changed documents. */
  ingestion: IngestionQueue;
  /** Route middleware: only callers with a valid token pass; sets `ctx.state.caller`. */
  requireCaller: AppMiddleware;
}
