// The JSON shape of a document: never its `authorization` (credentials).
import type { Caller } from '../http/context.js';
import { presentUser } from '../users/present.js';
import type { DocumentRow } from './store.js';

/** A document with its owner as the nested `user`. */
export function presentDocument(document: DocumentRow, owner: Caller) {
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
    /** Ingestion: pending → processing → ready | failed (with `error` saying why). */
    status: document.status,
    error: document.error,
    /** What the last successful ingestion produced (chunks, characters, pages, splitter, ingestedAt). */
    index: document.index,
    Agent: null,
  };
}
