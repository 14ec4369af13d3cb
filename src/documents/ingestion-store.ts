// SQL for the ingestion lifecycle of documents (pending → processing → ready | failed), their
// chunks and the FTS5 index over them. Only the ingestion queue and the chunk routes use it
// (searching the index: search-store.ts).
//
// A run stores its chunks in several short transactions, so other requests are served in between.
// Each chunk records the run (generation) that wrote it; readers only see the chunks of the run
// named by documents.chunks_generation, which `complete` sets in the same transaction as 'ready'.
// Until then the previous run's chunks stay visible. Chunks nobody sees any more (the other runs'
// once a run completes, fails or is superseded, and all of a deleted document's, which readers never
// reach because they start from an existing document) are deleted in the background, a batch at a
// time, from the list in chunk_sweeps (see chunk-sweeper.ts).
//
// A run the service stops puts its document back to pending (`release`); one still `processing` at
// the next start was under way when the process ended some other way (killed, out of memory, a
// crash its own document may have caused): documents.ingest_interruptions counts those, and the
// second time the document fails instead of being taken up again.
import type { Db } from '../db.js';
import { newId, timestamp } from '../lib/ids.js';
import { toPage, type Page, type PageRequest } from '../lib/paging.js';
import type { Splitter } from './schema.js';

export type IngestStatus = 'pending' | 'processing' | 'ready' | 'failed';

/**
 * Told of a document's ingestion ending (`ready` or `failed`) inside the transaction that writes
 * it, after the write: what must be kept with the change (a webhook's outbox row) is committed
 * with it or not at all. A hook that throws rolls the change back.
 */
export type DocumentChangeHook = (change: { documentId: string; userId: string; status: 'ready' | 'failed' }) => void;

/** What a worker needs to ingest one document (credentials still sealed). */
export interface IngestJob {
  id: string;
  userId: string;
  type: string;
  url: string;
  fromPage: number;
  toPage: number | null;
  splitter: Splitter | null;
  sealedAuthorization: string | null;
  generation: number;
  /** Its source is an uploaded file, read from the database instead of fetched. */
  uploaded: boolean;
}

/** The `index` a ready document shows. */
export interface IndexSummary {
  chunks: number;
  characters: number;
  pages: number | null;
  pagesRead: number | null;
  splitter: Splitter;
  ingestedAt: string;
}

export interface ChunkRow {
  id: string;
  documentId: string;
  position: number;
  content: string;
  createdAt: string;
}

export type IngestionStore = ReturnType<typeof createIngestionStore>;

/** The `error` of a document whose ingestion was under way the second time the process ended. */
export const INTERRUPTED_TWICE =
  'its ingestion was under way both times the service stopped unexpectedly (it may be what stopped it), so it is not tried again';

export function createIngestionStore(db: Db) {
  // Both name the condition of the partial index documents_to_ingest, which SQLite uses only for a
  // query that repeats it: without it they read every document, at every start.
  const failInterruptedTwice = db.prepare(
    `UPDATE documents SET status = 'failed', error = ?, index_summary = NULL
      WHERE status IN ('pending', 'processing') AND status = 'processing' AND ingest_interruptions >= 1
      RETURNING id, user_id AS userId`,
  );
  const requeueInterrupted = db.prepare(
    `UPDATE documents SET status = 'pending', ingest_interruptions = ingest_interruptions + 1
      WHERE status IN ('pending', 'processing') AND status = 'processing'`,
  );
  const selectPending = db
    .prepare(`SELECT id FROM documents WHERE status IN ('pending', 'processing') AND status = 'pending' ORDER BY seq`)
    .pluck();
  const selectOwner = db.prepare(`SELECT user_id FROM documents WHERE id = ?`).pluck();
  const claim = db.prepare(
    `UPDATE documents SET status = 'processing', error = NULL
      WHERE id = ? AND status = 'pending'
      RETURNING id, user_id AS userId, type, url, from_page AS fromPage, to_page AS toPage, splitter,
                authorization AS sealedAuthorization, ingest_generation AS generation,
                EXISTS (SELECT 1 FROM document_files f WHERE f.document_id = documents.id) AS uploaded`,
  );
  const request = db.prepare(
    `UPDATE documents SET status = 'pending', error = NULL, ingest_generation = ingest_generation + 1, ingest_interruptions = 0
      WHERE id = ? AND user_id = ?`,
  );
  const release = db.prepare(`UPDATE documents SET status = 'pending' WHERE id = ? AND ingest_generation = ? AND status = 'processing'`);
  const markReady = db.prepare(
    `UPDATE documents SET status = 'ready', error = NULL, index_summary = ?, chunks_generation = ingest_generation
      WHERE id = ? AND ingest_generation = ?`,
  );
  const requestSweep = db.prepare(`INSERT OR IGNORE INTO chunk_sweeps (document_id) VALUES (?)`);
  const nextSweep = db.prepare(`SELECT document_id FROM chunk_sweeps LIMIT 1`).pluck();
  const sweepDone = db.prepare(`DELETE FROM chunk_sweeps WHERE document_id = ?`);
  const isCurrent = db.prepare(`SELECT 1 FROM documents WHERE id = ? AND ingest_generation = ?`).pluck();
  const markFailed = db.prepare(
    `UPDATE documents SET status = 'failed', error = ?, index_summary = NULL WHERE id = ? AND ingest_generation = ?`,
  );
  // Chunks that are neither shown nor being written by a running run: all of a deleted document's,
  // a finished run's predecessors, a superseded or failed run's, or what a stopped process left.
  const deleteHiddenChunks = db.prepare(
    `DELETE FROM document_chunks WHERE seq IN (
       SELECT c.seq FROM document_chunks c LEFT JOIN documents d ON d.id = c.document_id
        WHERE c.document_id = ?
          AND (d.id IS NULL OR (c.generation IS NOT d.chunks_generation
               AND NOT (d.status = 'processing' AND c.generation = d.ingest_generation)))
        LIMIT ?)`,
  );
  const insertChunk = db.prepare(
    `INSERT INTO document_chunks (id, user_id, document_id, position, content, created_at, generation) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const chunkColumns = `id, document_id AS documentId, position, content, created_at AS createdAt`;
  const shown = `generation IS (SELECT chunks_generation FROM documents WHERE id = document_id)`;
  const selectChunkSeq = db
    .prepare(`SELECT seq FROM document_chunks WHERE id = ? AND document_id = ? AND user_id = ? AND ${shown}`)
    .pluck();
  const selectChunkPage = db.prepare(
    `SELECT ${chunkColumns} FROM document_chunks WHERE document_id = ? AND seq > ? AND ${shown} ORDER BY seq LIMIT ?`,
  );
  const changeHooks: DocumentChangeHook[] = [];
  const reportChange = (job: Pick<IngestJob, 'id' | 'userId'>, status: 'ready' | 'failed') => {
    for (const hook of changeHooks) hook({ documentId: job.id, userId: job.userId, status });
  };
  const recoverInTransaction = db.transaction((): string[] => {
    for (const job of failInterruptedTwice.all(INTERRUPTED_TWICE) as Pick<IngestJob, 'id' | 'userId'>[]) {
      requestSweep.run(job.id); // the chunks its runs had stored
      reportChange(job, 'failed');
    }
    requeueInterrupted.run();
    const pending = selectPending.all() as string[];
    // Now, not by the sweeper: the re-queued run has the same generation as what was half-written.
    for (const documentId of pending) deleteHiddenChunks.run(documentId, -1);
    return pending;
  });
  const completeInTransaction = db.transaction((job: IngestJob, summary: IndexSummary): boolean => {
    requestSweep.run(job.id); // the previous run's chunks (or this one's, if it was superseded)
    const changed = markReady.run(JSON.stringify(summary), job.id, job.generation).changes > 0;
    if (changed) reportChange(job, 'ready');
    return changed;
  });
  const failInTransaction = db.transaction((job: IngestJob, reason: string): void => {
    requestSweep.run(job.id); // this run's chunks, if it stored some
    if (markFailed.run(reason, job.id, job.generation).changes > 0) reportChange(job, 'failed');
  });
  const storeChunksInTransaction = db.transaction((job: IngestJob, chunks: string[], firstPosition: number): boolean => {
    // A document deleted or re-requested meanwhile is left alone: its newer run owns it.
    if (!isCurrent.get(job.id, job.generation)) return false;
    const now = timestamp();
    chunks.forEach((content, i) => insertChunk.run(newId(), job.userId, job.id, firstPosition + i, content, now, job.generation));
    return true;
  });

  return {
    /** Adds a hook told of every end of a document's ingestion, inside the transaction that writes it (see DocumentChangeHook). */
    onStatusChange(hook: DocumentChangeHook): void {
      changeHooks.push(hook);
    },

    /**
     * Documents a stopped process left mid-way go back to pending, without the chunks it had written,
     * unless the process had ended during their ingestion once before (since it was last requested):
     * those fail with INTERRUPTED_TWICE. Returns every pending id, oldest first.
     */
    recoverPending(): string[] {
      return recoverInTransaction();
    },

    /** Puts a run the service stopped back to pending, as if it had not begun; unless superseded or ended. */
    release(job: IngestJob): void {
      release.run(job.id, job.generation);
    },

    /** False once the document was deleted or asked to be ingested again after the run's claim. */
    isCurrent: (job: IngestJob) => isCurrent.get(job.id, job.generation) !== undefined,

    /** The user a document belongs to (the queue shares its work fairly by user); undefined when gone. */
    ownerOf: (id: string) => selectOwner.get(id) as string | undefined,

    /** Takes a pending document for processing; undefined when it is gone or no longer pending. */
    claim(id: string): IngestJob | undefined {
      const raw = claim.get(id) as (Omit<IngestJob, 'splitter' | 'uploaded'> & { splitter: string | null; uploaded: number }) | undefined;
      return raw && { ...raw, splitter: raw.splitter === null ? null : JSON.parse(raw.splitter), uploaded: raw.uploaded === 1 };
    },

    /** Asks for a (re-)ingestion of the user's document; false when there is no such document. */
    requestIngestion(userId: string, id: string): boolean {
      return request.run(id, userId).changes > 0;
    },

    /** Stores some of the run's chunks (hidden until `complete`); false when the run was superseded. */
    storeChunks(job: IngestJob, chunks: string[], firstPosition: number): boolean {
      return storeChunksInTransaction(job, chunks, firstPosition);
    },

    /** Shows the run's chunks and its summary, and lists the others for sweeping; false when superseded. */
    complete(job: IngestJob, summary: IndexSummary): boolean {
      return completeInTransaction(job, summary);
    },

    /**
     * Deletes up to `limit` chunks nobody sees of the first document on the sweep list, and takes it
     * off the list once it has none left. False when the list is empty.
     */
    sweepChunks(limit: number): boolean {
      const documentId = nextSweep.get() as string | undefined;
      if (documentId === undefined) return false;
      if (deleteHiddenChunks.run(documentId, limit).changes < limit) sweepDone.run(documentId);
      return true;
    },

    /** Records why ingestion failed (unless the job was superseded); its chunks go on the sweep list. */
    fail(job: IngestJob, reason: string): void {
      failInTransaction(job, reason);
    },

    /** The cursor of the user's chunk `id` in `documentId` (undefined for anyone else's). */
    seqOfChunk: (userId: string, documentId: string, id: string) => selectChunkSeq.get(id, documentId, userId) as number | undefined,

    /** One page of a document's chunks, in order. */
    listChunks(documentId: string, page: PageRequest): Page<ChunkRow> {
      return toPage(selectChunkPage.all(documentId, page.afterSeq, page.limit + 1) as ChunkRow[], page.limit);
    },
  };
}
