// The ingestion queue: turns pending documents into chunks in the background, a bounded number at
// a time. Each job: fetch the URL (SSRF-guarded) or read the uploaded file, extract text for the document's type and page
// range, split it, then store the chunks a batch at a time (other requests are served in between;
// readers keep seeing the previous chunks until the last batch is in) and show them with the summary
// in one step; the chunk sweeper deletes the ones nobody sees any more. A restart re-queues whatever
// a stopped process left pending or processing, so no document stays stuck.
import { describeError, type Logger } from '../lib/log.js';
import type { Sealer } from '../lib/secrets.js';
import { formatTimestamp } from '../lib/ids.js';
import { fetchDocument } from '../ingest/fetch.js';
import { extractText, type DocumentType } from '../ingest/extract.js';
import { DEFAULT_SPLITTER, splitText } from '../ingest/splitters.js';
import { IngestError, isIngestError } from '../ingest/errors.js';
import type { IngestionStore, IngestJob } from './ingestion-store.js';
import type { FileStore } from './file-store.js';
import type { Splitter } from './schema.js';
import type { IngestionConfig } from '../config.js';

/** How far a running job has got: shown on the document while it is `processing`. */
export interface IngestProgress {
  phase: 'fetching' | 'extracting' | 'storing';
  /** Chunks stored so far, and how many there will be (known once the text is split). */
  chunksStored: number;
  chunksTotal: number | null;
}

/**
 * The most chunks one document may have (10,000 chunks of the default size ≈ 10 MB of text). It
 * bounds the database work and memory one document can cause; splitting runs in one piece, so it
 * also bounds how long that holds the event loop.
 */
export const MAX_CHUNKS = 10_000;

/**
 * Chunks stored per transaction. Measured: storing a chunk of 1,000 characters with its full-text
 * entry takes about 50 µs, so a batch holds the event loop for about 12 ms.
 */
export const CHUNK_BATCH = 250;

/** Lets queued requests run before the next batch. */
export const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

function tooManyChunks(characters: number, splitter: Splitter): IngestError {
  return new IngestError(
    'too_large',
    `the text (${characters} characters) would make more than ${MAX_CHUNKS} chunks with chunk_size ${splitter.chunk_size}: use a larger chunk_size`,
  );
}

/**
 * Waiting documents by user, taken fairly: the next job is the first waiting document of the user
 * served longest ago (round-robin), and one user never runs more than max(1, concurrency - 1) jobs,
 * so there is always a slot for someone else: documents whose URLs never answer hold up only
 * their own user's other documents.
 */
class FairQueue {
  private readonly waiting = new Map<string, string[]>();
  private readonly runningByUser = new Map<string, number>();
  private readonly lastServed = new Map<string, number>();
  private served = 0;

  constructor(private readonly perUserLimit: number) {}

  add(userId: string, id: string): void {
    const ids = this.waiting.get(userId);
    if (ids === undefined) this.waiting.set(userId, [id]);
    else if (!ids.includes(id)) ids.push(id);
  }

  /** The next document to run and its user (now counted as running), or undefined. */
  take(): { userId: string; id: string } | undefined {
    let chosen: string | undefined;
    for (const userId of this.waiting.keys()) {
      if ((this.runningByUser.get(userId) ?? 0) >= this.perUserLimit) continue;
      if (chosen === undefined || (this.lastServed.get(userId) ?? 0) < (this.lastServed.get(chosen) ?? 0)) chosen = userId;
    }
    if (chosen === undefined) return undefined;
    const ids = this.waiting.get(chosen)!;
    const id = ids.shift()!;
    if (ids.length === 0) this.waiting.delete(chosen);
    this.runningByUser.set(chosen, (this.runningByUser.get(chosen) ?? 0) + 1);
    this.lastServed.set(chosen, (this.served += 1));
    return { userId: chosen, id };
  }

  /** A job taken with take() has finished (or was never started). */
  done(userId: string): void {
    const running = (this.runningByUser.get(userId) ?? 1) - 1;
    if (running > 0) return void this.runningByUser.set(userId, running);
    this.runningByUser.delete(userId);
    // Nothing left of this user: forget them, so the maps hold only users with work.
    if (!this.waiting.has(userId)) this.lastServed.delete(userId);
  }

  get isEmpty(): boolean {
    return this.waiting.size === 0;
  }

  clear(): void {
    this.waiting.clear();
  }
}

export class IngestionQueue {
  private readonly waiting: FairQueue;
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  /** Aborts the fetches of running jobs on stop(), so shutdown does not wait for slow servers. */
  private readonly aborter = new AbortController();
  private readonly progress = new Map<string, IngestProgress>();
  /** Callers waiting for a document's job to end (GET /documents/{id}?wait=). */
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly store: IngestionStore,
    private readonly sealer: Sealer,
    private readonly config: IngestionConfig,
    private readonly log: Logger,
    private readonly files: FileStore,
  ) {
    this.waiting = new FairQueue(Math.max(1, config.concurrency - 1));
  }

  /** Re-queues what a previous process left unfinished and starts working. */
  start(): void {
    if (!this.config.enabled) return;
    for (const id of this.store.recoverPending()) this.enqueue(id);
  }

  /** Queues a document that was just created or asked to be ingested again. */
  enqueue(id: string): void {
    if (!this.config.enabled || this.stopped) return;
    const userId = this.store.ownerOf(id);
    if (userId === undefined) return;
    this.waiting.add(userId, id);
    this.pump();
  }

  /** True once stop() began: no job will end any more. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** How far the running job of a document has got; undefined when none runs. */
  progressOf(id: string): IngestProgress | undefined {
    return this.progress.get(id);
  }

  /** Resolves when a job of the document ends (ready, failed or superseded), or after `timeoutMs`. */
  waitForJobEnd(id: string, timeoutMs: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.waiters.get(id) ?? new Set<() => void>();
      this.waiters.set(id, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiters.get(id) === waiters) this.waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      waiters.add(done);
    });
  }

  private jobEnded(id: string): void {
    this.progress.delete(id);
    for (const done of [...(this.waiters.get(id) ?? [])]) done();
  }

  /** Stops taking work and waits for running jobs; what is left stays pending for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting.clear();
    // Long polls answer now (with the status as it is) instead of holding the shutdown up: the
    // server closes only once they have answered.
    for (const id of [...this.waiters.keys()]) this.jobEnded(id);
    this.aborter.abort(new Error('the service is stopping'));
    await Promise.allSettled([...this.running]);
  }

  private pump(): void {
    while (!this.stopped && this.running.size < this.config.concurrency && !this.waiting.isEmpty) {
      const next = this.waiting.take();
      if (next === undefined) return; // every waiting user is at their share
      const job = this.store.claim(next.id);
      if (!job) {
        this.waiting.done(next.userId);
        continue;
      }
      const run = this.run(job)
        // A database error (busy beyond its timeout, say) must not end the process: the document
        // stays processing and is taken up again at the next start.
        .catch((error: unknown) => this.log.error({ msg: 'ingestion job failed', documentId: job.id, error: describeError(error) }))
        .finally(() => {
          this.jobEnded(job.id);
          this.running.delete(run);
          this.waiting.done(next.userId);
          this.pump();
        });
      this.running.add(run);
    }
  }

  private fetch(job: IngestJob) {
    const authorization = job.sealedAuthorization === null ? null : JSON.parse(this.sealer.open(job.sealedAuthorization));
    return fetchDocument(job.url, {
      authorization,
      maxBytes: this.config.maxBytes,
      timeoutMs: this.config.timeoutMs,
      allowPrivateNetworks: this.config.allowPrivateNetworks,
      signal: this.aborter.signal,
    });
  }

  /** An uploaded document's bytes, as stored (re-ingesting needs no source). */
  private readUpload(job: IngestJob): { bytes: Uint8Array; contentType: string } {
    const file = this.files.read(job.id);
    // Only if the file was dropped between the claim and here (the URL changed): that run is superseded.
    if (!file) throw new IngestError('unsupported', 'the uploaded file is gone');
    return file;
  }

  private async run(job: IngestJob): Promise<void> {
    const splitter = job.splitter ?? DEFAULT_SPLITTER;
    const progress: IngestProgress = { phase: 'fetching', chunksStored: 0, chunksTotal: null };
    this.progress.set(job.id, progress);
    try {
      const fetched = job.uploaded ? this.readUpload(job) : await this.fetch(job);
      progress.phase = 'extracting';
      const extracted = await extractText(job.type as DocumentType, fetched.bytes, fetched.contentType, {
        fromPage: job.fromPage,
        toPage: job.toPage,
      });
      // Storing chunks is one synchronous transaction: a tiny chunk_size on a big text would hold the
      // event loop (and memory) for minutes. Refuse before splitting, by the most chunks it could make.
      const step = Math.max(1, splitter.chunk_size - splitter.chunk_overlap);
      if (extracted.text.length / step > MAX_CHUNKS) throw tooManyChunks(extracted.text.length, splitter);
      const chunks = splitText(extracted.text, splitter);
      if (chunks.length > MAX_CHUNKS) throw tooManyChunks(extracted.text.length, splitter);
      Object.assign(progress, { phase: 'storing', chunksTotal: chunks.length });
      for (let first = 0; first < chunks.length; first += CHUNK_BATCH) {
        if (first > 0) await yieldToRequests();
        if (this.stopped) return;
        // Superseded (re-requested or deleted): complete() below then only lists this run's chunks for sweeping.
        if (!this.store.storeChunks(job, chunks.slice(first, first + CHUNK_BATCH), first)) break;
        progress.chunksStored = Math.min(chunks.length, first + CHUNK_BATCH);
      }
      if (this.stopped) return;
      this.store.complete(job, {
        chunks: chunks.length,
        characters: extracted.text.length,
        pages: extracted.pages ?? null,
        pagesRead: extracted.pagesRead ?? null,
        splitter,
        ingestedAt: formatTimestamp(Date.now()),
      });
    } catch (error) {
      if (this.stopped) return;
      const reason = isIngestError(error) ? error.message : 'ingestion failed unexpectedly';
      if (reason === 'ingestion failed unexpectedly') {
        this.log.error({ msg: 'ingestion failed', documentId: job.id, error: describeError(error) });
      }
      this.store.fail(job, reason);
    }
  }
}
