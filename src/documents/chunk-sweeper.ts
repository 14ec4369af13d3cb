// Deletes the chunks of deleted documents in the background, a batch at a time, so that deleting a
// document or an account never holds other requests while thousands of chunks are removed. Until
// they are swept the chunks are invisible (every reader starts from an existing document). It runs
// at start (what a stopped process left) and then looks for work every SWEEP_INTERVAL_MS, which also
// catches deletions made by other processes.
import type { Logger } from '../lib/log.js';
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
      while (!this.stopped && this.store.sweepDeletedChunks(CHUNK_BATCH)) await yieldToRequests();
    } catch (error) {
      // The database busy for longer than its timeout, say: the next interval tries again.
      this.log.error({ msg: 'sweeping deleted chunks failed', error: error instanceof Error ? error.message : String(error) });
    }
  }
}
