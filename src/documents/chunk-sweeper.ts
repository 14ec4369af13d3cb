// Deletes chunks nobody sees in the background, a batch at a time: those of deleted documents (so
// deleting a document or an account never holds other requests while thousands of chunks go) and
// those of ingestion runs that were replaced, failed or superseded. Until swept they are invisible.
// It works through the chunk_sweeps list at start (what a stopped process left) and then every
// SWEEP_INTERVAL_MS, which also catches deletions made by other processes.
import { describeError, type Logger } from '../lib/log.js';
import type { IngestionStore } from './ingestion-store.js';
import { CHUNK_BATCH, yieldToRequests } from './ingestion.js';

export const SWEEP_INTERVAL_MS = 1_000;

export class ChunkSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: IngestionStore,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.sweep();
    this.timer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops sweeping (between batches); what is left is swept after the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private sweep(): void {
    if (this.running || this.stopped) return;
    this.running = this.run().finally(() => (this.running = undefined));
  }

  private async run(): Promise<void> {
    try {
      while (!this.stopped && this.store.sweepChunks(CHUNK_BATCH)) await yieldToRequests();
    } catch (error) {
      // The database busy for longer than its timeout, say: the next interval tries again.
      this.log.error({ msg: 'sweeping hidden chunks failed', error: describeError(error) });
    }
  }
}
