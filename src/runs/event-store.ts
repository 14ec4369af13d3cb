// SQL for run event logs: each run's events, numbered 1, 2, 3 … within the run. The log's last
// event (done or error) is not a row: it is read from the run record (see event-log.ts).
import type { Db } from '../db.js';

/** One event of a run's log: its number, name and data as JSON text. */
export interface LoggedEvent {
  seq: number;
  name: string;
  data: string;
}

/** A row to write: the event, its run's id and the `seq` (rowid) of that run in agent_runs. */
export interface EventRow extends LoggedEvent {
  runId: string;
  runSeq: number;
}

export type RunEventStore = ReturnType<typeof createRunEventStore>;

export function createRunEventStore(db: Db) {
  const selectRunSeq = db.prepare('SELECT seq FROM agent_runs WHERE id = ?').pluck();
  const selectLastSeq = db.prepare('SELECT max(seq) FROM run_events WHERE run_seq = ?').pluck();
  // Only while `seq` is still the run's: a run deleted (with its agent) while it went on must not
  // write its events — nor under its seq once SQLite has given that seq to a newer run.
  const insertEvent = db.prepare(
    'INSERT OR IGNORE INTO run_events (run_seq, seq, name, data) SELECT seq, ?, ?, ? FROM agent_runs WHERE seq = ? AND id = ?',
  );
  const selectAfter = db.prepare('SELECT seq, name, data FROM run_events WHERE run_seq = ? AND seq > ? ORDER BY seq LIMIT ?');
  // The runs (by seq) whose events may be swept: the oldest logs first, from a cursor on.
  const selectLoggedRuns = db.prepare(
    `SELECT r.seq, r.status, r.started_at AS startedAt, r.finished_at AS finishedAt
       FROM (SELECT DISTINCT run_seq FROM run_events WHERE run_seq > ? ORDER BY run_seq LIMIT ?) AS logged
       JOIN agent_runs AS r ON r.seq = logged.run_seq`,
  );
  const deleteEvents = db.prepare('DELETE FROM run_events WHERE run_seq = ?');

  return {
    /** The rowid of a run (what its events are stored under), or undefined when it is gone. */
    runSeq(runId: string): number | undefined {
      return selectRunSeq.get(runId) as number | undefined;
    },

    /** The number of the run's last stored event (0: none). */
    lastSeq(runSeq: number): number {
      return (selectLastSeq.get(runSeq) as number | null) ?? 0;
    },

    /**
     * Writes `rows` (inside the caller's transaction, if any); a row already written is left as it
     * is, and the rows of a run that is gone are dropped.
     */
    append(rows: EventRow[]): void {
      for (const row of rows) insertEvent.run(row.seq, row.name, row.data, row.runSeq, row.runId);
    },

    /** At most `limit` of the run's events after number `after`, in order. */
    after(runSeq: number, after: number, limit: number): LoggedEvent[] {
      return selectAfter.all(runSeq, after, limit) as LoggedEvent[];
    },

    /**
     * One step of the retention sweep: looks at up to `runs` logged runs after `cursor` and deletes
     * the events of those that ended before `cutoff`. Answers the cursor to go on from, or null
     * when the sweep is done (a run that began after `cutoff` is reached: no later run can have
     * ended before it).
     */
    sweepStep(cursor: number, cutoff: string, runs: number): number | null {
      type Logged = { seq: number; status: string; startedAt: string; finishedAt: string | null };
      const logged = selectLoggedRuns.all(cursor, runs) as Logged[];
      if (logged.length === 0) return null;
      let next = cursor;
      const sweep = db.transaction(() => {
        for (const run of logged) {
          if (run.startedAt >= cutoff) return true;
          next = run.seq;
          // A run waiting for approval has a finished_at (when it began to wait) but goes on later, in the same log.
          if (run.status !== 'requires_action' && run.finishedAt !== null && run.finishedAt < cutoff) deleteEvents.run(run.seq);
        }
        return false;
      });
      return sweep() ? null : next;
    },
  };
}
