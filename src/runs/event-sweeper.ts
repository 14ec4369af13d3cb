// Keeps run event logs for RUN_EVENTS_RETENTION days after their run ended (0: for ever). The
// sweep runs off the request path, a little at a time: a few hundred runs' logs per transaction,
// other work let in between, once an hour (and soon after a start).
import { formatTimestamp } from '../lib/ids.js';
import { describeError, type Logger } from '../lib/log.js';
import type { RunEventStore } from './event-store.js';

const SWEEP_EVERY_MS = 60 * 60 * 1000;
const FIRST_SWEEP_MS = 60 * 1000;
/** Runs looked at per transaction. */
const RUNS_PER_STEP = 200;
const DAY_MS = 86_400_000;

export function createEventSweeper(store: RunEventStore, retentionDays: number, log: Logger, everyMs = SWEEP_EVERY_MS) {
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  let stopped = false;

  /** One whole sweep, in steps with other work between them. */
  async function sweep(): Promise<void> {
    const cutoff = formatTimestamp(Date.now() - retentionDays * DAY_MS);
    let cursor: number | null = 0;
    while (cursor !== null && !stopped) {
      cursor = store.sweepStep(cursor, cutoff, RUNS_PER_STEP);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  function schedule(delay: number): void {
    timer = setTimeout(() => {
      sweeping = sweep()
        .catch((error) => log.error({ msg: 'sweeping old run events failed; retrying later', error: describeError(error) }))
        .finally(() => {
          sweeping = undefined;
          if (!stopped) schedule(everyMs);
        });
    }, delay);
    timer.unref();
  }

  return {
    start(firstMs = FIRST_SWEEP_MS): void {
      if (retentionDays === 0) return;
      stopped = false;
      schedule(Math.min(firstMs, everyMs));
    },
    /** Sweeps now (tests), resolving when done. */
    sweepNow: () => sweep(),
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await sweeping;
    },
  };
}
