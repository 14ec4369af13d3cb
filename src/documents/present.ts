// The JSON shape of a document: never its `authorization` (credentials).
import type { Caller } from '../http/context.js';
import { presentUser } from '../users/present.js';
import type { UserRow } from '../users/store.js';
import type { Document } from './schema.js';
import type { DocumentRow } from './store.js';
import type { IngestProgress } from './ingestion.js';

/** A document with its owner (the caller, or the user as stored) as the nested `user`. */
export function presentDocument(document: DocumentRow, owner: Caller | UserRow, progress?: IngestProgress): Document {
  return {
    id: document.id,
    userId: document.userId,
    user: presentUser(owner),
    name: document.name,
    type: document.type,
    url: document.url,
    from_page: document.fromPage,
    to_page: document.toPage,
    splitter: document.splitter,
    metadata: document.metadata,
    createdAt: document.createdAt,
    updatedAt: document.updatedAt,
    status: document.status,
    error: document.error,
    index: document.index,
    ...(document.status === 'processing' && progress ? { progress: { ...progress } } : {}),
    hasAuthorization: document.hasAuthorization,
    Agent: null,
  };
}
