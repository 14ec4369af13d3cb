// The ingestion queue: turns pending documents into chunks in the background, a bounded number at
// a time. Each job: fetch the URL (SSRF-guarded) or read the uploaded file, extract text for the document's type and page
// range, split it, then store the chunks a batch at a time (other requests are served in between;
// readers keep seeing the previous chunks until the last batch is in) and show them with the summary
// in one step; the chunk sweeper deletes the ones nobody sees any more. A restart re-queues whatever
// a stopped process left pending or processing, so no document stays stuck; but a document whose
// ingestion was under way when the process ended twice fails instead (see recoverPending), so one
// that crashes the process cannot do it at every start.
import { describeError, type Logger } from '../lib/log.js';
import type { Sealer } from '../lib/secrets.js';
import { formatTimestamp } from '../lib/ids.js';
import { fetchDocument } from '../ingest/fetch.js';
import { raceAbort } from '../lib/abort.js';
import { extractText, type DocumentType } from '../ingest/extract.js';
import { DEFAULT_SPLITTER, SplitLimitError, splitTextInSlices } from '../ingest/splitters.js';
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
 * The most chunks one document may have (10,000 chunks of the default size ≈ 10 MB of text). With
 * MAX_CHUNK_TEXT_RATIO it bounds the database work and memory one document can cause: the splitter
 * stops as soon as either would be passed.
 */
export const MAX_CHUNKS = 10_000;

/**
 * The most characters a document's chunks may hold together, as a multiple of its text's: overlaps
 * repeat text, and LangChain's overlap counts the pieces' characters but not the separators between
 * them, so a large chunk_overlap on text of tiny paragraphs moves each chunk on by one paragraph (a
 * 50 KB text would make 200 MB of chunks).
 */
export const MAX_CHUNK_TEXT_RATIO = 4;

/**
 * Chunks stored per transaction, and the most characters they may hold (one chunk longer than that
 * is a batch of its own). Measured: storing a chunk of 1,000 characters with its full-text entry
 * takes about 50 µs, so a batch holds the event loop for about 12 ms.
 */
export const CHUNK_BATCH = 250;
export const CHUNK_BATCH_CHARACTERS = 250_000;

/** Lets queued requests run before the next batch. */
export const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

function tooManyChunks(characters: number, splitter: Splitter): IngestError {
  return new IngestError(
    'too_large',
    `the text (${characters} characters) would make more than ${MAX_CHUNKS} chunks with chunk_size ${splitter.chunk_size}: use a larger chunk_size`,
  );
}

function tooManyChunkCharacters(characters: number, splitter: Splitter): IngestError {
  return new IngestError(
    'too_large',
    `the chunks would hold more than ${MAX_CHUNK_TEXT_RATIO} times the text's ${characters} characters ` +
      `(chunk_overlap ${splitter.chunk_overlap} with chunk_size ${splitter.chunk_size} repeats too much of it): use a smaller chunk_overlap`,
  );
}

/** The end of the chunks to store in one transaction from `first` (at least one chunk). */
function batchEnd(chunks: readonly string[], first: number): number {
  let end = first + 1;
  let characters = chunks[first].length;
  while (end < chunks.length && end - first < CHUNK_BATCH && characters + chunks[end].length <= CHUNK_BATCH_CHARACTERS) {
    characters += chunks[end].length;
    end += 1;
  }
  return end;
}

/** One run of a document's ingestion: what it works on, how far it has got, and its stop switch. */
interface Run {
  job: IngestJob;
  progress: IngestProgress;
  /** Aborted when the service stops or a newer request supersedes the run. */
  aborter: AbortController;
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
  /** The newest run of each document being ingested (a superseded one may still be ending). */
  private readonly runs = new Map<string, Run>();
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
    // A run of an earlier request would go on until its fetch ends (a URL that never answers holds
    // it for INGEST_TIMEOUT_MS), keeping its user's slot from the new one: it stops now.
    const previous = this.runs.get(id);
    if (previous && !this.store.isCurrent(previous.job)) previous.aborter.abort(new Error('superseded by a newer request'));
    this.waiting.add(userId, id);
    this.pump();
  }

  /** True once stop() began: no job will end any more. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** How far the running job of a document has got; undefined when none runs. */
  progressOf(id: string): IngestProgress | undefined {
    return this.runs.get(id)?.progress;
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

  private wakeWaiters(id: string): void {
    for (const done of [...(this.waiters.get(id) ?? [])]) done();
  }

  /** Stops taking work and waits for running jobs; what is left stays pending for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting.clear();
    // Long polls answer now (with the status as it is) instead of holding the shutdown up: the
    // server closes only once they have answered.
    for (const id of [...this.waiters.keys()]) this.wakeWaiters(id);
    const interrupted = [...this.runs.values()].map((run) => run.job);
    this.aborter.abort(new Error('the service is stopping'));
    await Promise.allSettled([...this.running]);
    // Runs cut short by this stop go back to pending: the next start takes them up again without
    // counting this stop as one that happened while their ingestion ran (see recoverPending).
    for (const job of interrupted) {
      try {
        this.store.release(job);
      } catch (error) {
        this.log.error({ msg: 'putting an interrupted ingestion back to pending failed', documentId: job.id, error: describeError(error) });
      }
    }
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
      const run: Run = {
        job,
        progress: { phase: 'fetching', chunksStored: 0, chunksTotal: null },
        aborter: new AbortController(),
      };
      this.runs.set(job.id, run);
      const ended = this.run(run)
        // A database error (busy beyond its timeout, say) must not end the process: the document
        // stays processing and is taken up again at the next start.
        .catch((error: unknown) => this.log.error({ msg: 'ingestion job failed', documentId: job.id, error: describeError(error) }))
        .finally(() => {
          // A superseded run leaves the state of the newer run of its document alone.
          if (this.runs.get(job.id) === run) this.runs.delete(job.id);
          this.wakeWaiters(job.id);
          this.running.delete(ended);
          this.waiting.done(next.userId);
          this.pump();
        });
      this.running.add(ended);
    }
  }

  private fetch(job: IngestJob, signal: AbortSignal) {
    const authorization = job.sealedAuthorization === null ? null : JSON.parse(this.sealer.open(job.sealedAuthorization));
    return fetchDocument(job.url, {
      authorization,
      maxBytes: this.config.maxBytes,
      timeoutMs: this.config.timeoutMs,
      allowPrivateNetworks: this.config.allowPrivateNetworks,
      signal,
    });
  }

  /** An uploaded document's bytes, as stored (re-ingesting needs no source). */
  private readUpload(job: IngestJob): { bytes: Uint8Array; contentType: string } {
    const file = this.files.read(job.id);
    // Only if the file was dropped between the claim and here (the URL changed): that run is superseded.
    if (!file) throw new IngestError('unsupported', 'the uploaded file is gone');
    return file;
  }

  private async run({ job, progress, aborter }: Run): Promise<void> {
    const splitter = job.splitter ?? DEFAULT_SPLITTER;
    // Stopping the service or a newer request ends the run: it then records nothing.
    const signal = AbortSignal.any([this.aborter.signal, aborter.signal]);
    try {
      const fetched = job.uploaded ? this.readUpload(job) : await this.fetch(job, signal);
      progress.phase = 'extracting';
      const extracted = await raceAbort(
        extractText(job.type as DocumentType, fetched.bytes, fetched.contentType, { fromPage: job.fromPage, toPage: job.toPage }),
        signal,
      );
      // Refuse at once a text that would make too many chunks even if each moved on by chunk_size -
      // chunk_overlap; the splitter stops at the limits anyway (overlaps can move chunks on by less).
      const characters = extracted.text.length;
      const step = Math.max(1, splitter.chunk_size - splitter.chunk_overlap);
      if (characters / step > MAX_CHUNKS) throw tooManyChunks(characters, splitter);
      const limits = { maxChunks: MAX_CHUNKS, maxCharacters: MAX_CHUNK_TEXT_RATIO * characters };
      const chunks = await splitTextInSlices(extracted.text, splitter, limits, signal).catch((error: unknown) => {
        if (!(error instanceof SplitLimitError)) throw error;
        throw error.limit === 'chunks' ? tooManyChunks(characters, splitter) : tooManyChunkCharacters(characters, splitter);
      });
      Object.assign(progress, { phase: 'storing', chunksTotal: chunks.length });
      for (let first = 0; first < chunks.length;) {
        if (first > 0) await yieldToRequests();
        if (signal.aborted) return;
        const end = batchEnd(chunks, first);
        // Superseded (re-requested or deleted): complete() below then only lists this run's chunks for sweeping.
        if (!this.store.storeChunks(job, chunks.slice(first, end), first)) break;
        progress.chunksStored = first = end;
      }
      if (signal.aborted) return;
      this.store.complete(job, {
        chunks: chunks.length,
        characters,
        pages: extracted.pages ?? null,
        pagesRead: extracted.pagesRead ?? null,
        splitter,
        ingestedAt: formatTimestamp(Date.now()),
      });
    } catch (error) {
      if (signal.aborted) return;
      const reason = isIngestError(error) ? error.message : 'ingestion failed unexpectedly';
      if (reason === 'ingestion failed unexpectedly') {
        this.log.error({ msg: 'ingestion failed', documentId: job.id, error: describeError(error) });
      }
      this.store.fail(job, reason);
    }
  }
}
