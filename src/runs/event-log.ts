// Every run's events, kept: the log observes all runs through the engine, numbers each run's
// events 1, 2, 3 …, hands them at once to whoever follows the run, and writes them to the database
// in batches — all runs' new events in one transaction every FLUSH_MS, so the commits stay a few a
// second however many runs stream. Tokens are merged: the first of a burst goes out at once, the
// ones after it in one event at most every TOKEN_MERGE_MS. A run's events still unwritten when its
// status changes (it ends, or waits for approval) are written in the transaction that records the
// change, so a recorded end never lacks the events before it.
//
// The log's last event (`done` or `error`) is not stored: it is the run record's end, made from the
// record when a finished run is read — so a log always ends, even after a crash cut it short.
// `requires_action` is stored: a run answered goes on in the same log after it.
import type { Logger } from '../lib/log.js';
import { describeError } from '../lib/log.js';
import type { RunEvent, RunInfo } from './events.js';
import type { LoggedEvent, RunEventStore } from './event-store.js';
import type { RunRow, RunStore } from './store.js';
import { presentRunResult } from './present.js';

/** How late a token may be sent to a follower, merged with the ones after it. */
export const TOKEN_MERGE_MS = 100;
/** How often the new events of all runs are written (one transaction). */
export const FLUSH_MS = 200;

/**
 * How far past its last stored event the end of an interrupted run's log is numbered. Its last
 * events before the crash may have reached followers without being written (at most FLUSH_MS of
 * them, unless writes were failing); numbering the end past them means a follower that resumes
 * after the last event it saw still gets the end.
 */
export const LOST_EVENTS_GAP = 1000;

/** A numbered event of a run's log, as a follower gets it (`data` as JSON text). */
export type NumberedEvent = LoggedEvent;

export type EventFollower = (event: NumberedEvent) => void;

/** A run whose events are coming: what is not yet written, who follows it. */
interface LiveRun {
  runSeq: number;
  next: number;
  unwritten: NumberedEvent[];
  followers: Set<EventFollower>;
  tokens: string[];
  tokenTimer: NodeJS.Timeout | null;
  lastTokenAt: number;
}

export type EventLog = ReturnType<typeof createEventLog>;

export function createEventLog(deps: { events: RunEventStore; runs: RunStore; log: Logger; flushMs?: number; mergeMs?: number }) {
  const { events: store, runs, log } = deps;
  const flushMs = deps.flushMs ?? FLUSH_MS;
  const mergeMs = deps.mergeMs ?? TOKEN_MERGE_MS;
  const live = new Map<string, LiveRun>();
  const stats = { commits: 0, rows: 0, bytes: 0 };
  let flushTimer: NodeJS.Timeout | null = null;

  function numbered(runId: string, run: LiveRun, name: string, data: string): void {
    const event = { seq: run.next++, name, data };
    run.unwritten.push(event);
    for (const follower of run.followers) {
      try {
        follower(event);
      } catch (error) {
        log.error({ msg: 'a follower of a run log failed', runId, error: describeError(error) });
      }
    }
    if (flushTimer === null) {
      flushTimer = setTimeout(flush, flushMs);
      flushTimer.unref();
    }
  }

  function sendTokens(runId: string, run: LiveRun): void {
    if (run.tokenTimer !== null) clearTimeout(run.tokenTimer);
    run.tokenTimer = null;
    if (run.tokens.length === 0) return;
    const text = run.tokens.join('');
    run.tokens = [];
    run.lastTokenAt = performance.now();
    numbered(runId, run, 'token', JSON.stringify({ text }));
  }

  function liveRun(runId: string): LiveRun | undefined {
    let run = live.get(runId);
    if (run) return run;
    const runSeq = store.runSeq(runId);
    if (runSeq === undefined) return undefined;
    run = {
      runSeq,
      next: store.lastSeq(runSeq) + 1,
      unwritten: [],
      followers: new Set(),
      tokens: [],
      tokenTimer: null,
      lastTokenAt: -Infinity,
    };
    live.set(runId, run);
    return run;
  }

  /** Writes the unwritten events of `only` (one run) or of every run; inside the caller's transaction when there is one. */
  function write(only?: string): void {
    const rows = [];
    const written: LiveRun[] = [];
    for (const [runId, run] of only === undefined ? live : [[only, live.get(only)] as const]) {
      if (!run) continue;
      if (only !== undefined) sendTokens(runId, run);
      for (const event of run.unwritten) rows.push({ runId, runSeq: run.runSeq, ...event });
      written.push(run);
    }
    if (rows.length === 0) return;
    store.append(rows);
    // Only once they are in: a write that fails leaves them to the next.
    for (const run of written) run.unwritten = [];
    stats.rows += rows.length;
    for (const row of rows) stats.bytes += row.data.length + row.name.length + 16;
  }

  function flush(): void {
    flushTimer = null;
    try {
      let any = false;
      for (const run of live.values()) any ||= run.unwritten.length > 0;
      if (!any) return;
      runs.transactionUnsynced(() => write());
      stats.commits += 1;
    } catch (error) {
      // The events stay unwritten and are tried again with the next flush or the run's end.
      log.error({ msg: 'could not write run events', error: describeError(error) });
    }
  }

  // A run's change of status is committed with its events so far (see the top of this file). A run
  // that waits has sent its last event for now (`requires_action`, written here): when it goes on,
  // a new entry continues its numbering from the database.
  runs.onChange(({ runId, status }) => {
    write(runId);
    if (status === 'requires_action') live.delete(runId);
  });

  return {
    /** The engine's observer: every event of every run. */
    observe(info: RunInfo, event: RunEvent): void {
      const run = liveRun(info.runId);
      if (!run) return;
      if (event.name === 'token') {
        run.tokens.push(event.data.text);
        const since = performance.now() - run.lastTokenAt;
        if (since >= mergeMs) sendTokens(info.runId, run);
        else if (run.tokenTimer === null) {
          run.tokenTimer = setTimeout(() => sendTokens(info.runId, run), mergeMs - since);
          run.tokenTimer.unref();
        }
        return;
      }
      sendTokens(info.runId, run);
      if (event.name === 'done' || event.name === 'error') {
        // The record holds the end; followers get it numbered as a replay numbers it.
        const code = event.name === 'error' ? event.data.code : undefined;
        const end = { seq: endSeqAfter(run.next - 1, code), name: event.name, data: JSON.stringify(event.data) };
        for (const follower of run.followers) follower(end);
        try {
          write(info.runId);
        } finally {
          // Even when the write failed: an ended run is followed no more, and kept no longer.
          live.delete(info.runId);
        }
        return;
      }
      numbered(info.runId, run, event.name, JSON.stringify(event.data));
    },

    /**
     * Up to `limit` events of `run` after number `after`, its end included once it ended; `more`
     * says a full page was read and more may follow. When the page is the last and the run is
     * still going, `follow` (if given) is subscribed in the same step, so no event falls between.
     * `follow` then gets every later event; the answer's `unfollow` removes it.
     */
    read(run: RunRow, after: number, limit: number, follow?: EventFollower) {
      // A run taken up after approval is `running` (or, answered while every slot was taken,
      // `queued`) before it sends anything: followed from now on.
      const current = live.get(run.id) ?? (run.status === 'running' || run.status === 'queued' ? liveRun(run.id) : undefined);
      const runSeq = current?.runSeq ?? store.runSeq(run.id);
      const page: NumberedEvent[] = runSeq === undefined ? [] : store.after(runSeq, after, limit);
      if (current) {
        const last = page.length > 0 ? page[page.length - 1].seq : after;
        for (const event of current.unwritten) {
          if (page.length < limit && event.seq > last) page.push(event);
        }
      }
      if (page.length >= limit) return { events: page, more: true, ended: false, unfollow: () => {} };
      if (current) {
        if (!follow) return { events: page, more: false, ended: false, unfollow: () => {} };
        current.followers.add(follow);
        return { events: page, more: false, ended: false, unfollow: () => current.followers.delete(follow) };
      }
      const end = endOf(run);
      const lastSeq = page.length > 0 ? page[page.length - 1].seq : runSeq === undefined ? 0 : store.lastSeq(runSeq);
      const endSeq = endSeqAfter(lastSeq, run.errorCode);
      if (end && endSeq > after) page.push({ seq: endSeq, ...end });
      return { events: page, more: false, ended: true, unfollow: () => {} };
    },

    /** The run is being followed live (its events are coming). */
    isLive: (runId: string) => live.has(runId),

    /** Writes what waits to be written (at shutdown). */
    flush,

    /** Commits, rows and bytes written so far (the bench reads them). */
    stats: () => ({ ...stats }),
  };
}

/**
 * The number of a log's end, its last event being `lastSeq`: the next, or past LOST_EVENTS_GAP for
 * an interrupted run, live and on replay alike (a follower that saw the end never gets it again).
 */
function endSeqAfter(lastSeq: number, code: string | null | undefined): number {
  return lastSeq + 1 + (code === 'interrupted' ? LOST_EVENTS_GAP : 0);
}

/** The event that ends a finished run's log, made from its record; undefined while it is not finished. */
function endOf(run: RunRow): { name: string; data: string } | undefined {
  if (run.status === 'succeeded') return { name: 'done', data: JSON.stringify(presentRunResult(run)) };
  if (run.status === 'failed' || run.status === 'cancelled') {
    const code = run.errorCode ?? (run.status === 'cancelled' ? 'cancelled' : 'internal');
    return { name: 'error', data: JSON.stringify({ code, message: run.error ?? '' }) };
  }
  return undefined;
}
