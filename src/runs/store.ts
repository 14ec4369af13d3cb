// SQL for running agents: run records. A run's end and the turn it adds to its session's memory
// (kept on the run's record, see memory-store.ts) are committed together.
import { unsynced, walSyncer, type Db } from '../db.js';
import { boolean, columnMap, expression, json, type FieldSpecs } from '../lib/columns.js';
import { newId, timestamp } from '../lib/ids.js';
import { toPage, type Page, type PageRequest } from '../lib/paging.js';
import { LIST_STEP_CHARS, LIST_STEPS, LIST_TEXT_CHARS } from './schema.js';
import { createMemoryStore, type MemoryStore, type RunMemory } from './memory-store.js';

export type RunStatus = 'queued' | 'running' | 'requires_action' | 'succeeded' | 'failed' | 'cancelled';
/** The statuses of a run still under way (waiting for a slot, running, or waiting for approval). */
export const UNDER_WAY: readonly RunStatus[] = ['queued', 'running', 'requires_action'];

/** A tool call waiting for a person's approval, as `GET /runs/{id}` shows it. */
export interface PendingAction {
  id: string;
  tool: string;
  function: string;
  input: unknown;
  /** Set when the call is one of a nested agent's (an AGENT tool's run): that run's id and agent. */
  runId?: string;
  agentId?: string;
}

/**
 * Told of a run's change of status inside the transaction that writes it, after the write (so a
 * read of the run sees the new status): what must be kept with the change — a webhook's outbox row,
 * the run's last events — is committed with it or not at all. A hook that throws rolls the change back.
 */
export type RunChangeHook = (change: { runId: string; userId: string; status: RunStatus }) => void;

/** One tool call of a run, as recorded. */
export interface RunStep {
  tool: string;
  toolId: string;
  function: string;
  input: unknown;
  output?: string;
  error?: string;
  ms: number;
}

/** A chunk of one of the agent's documents that was put before the model. */
export interface RunSource {
  documentId: string;
  documentName: string;
  chunkId: string;
  position: number;
  /** Plain text around the matched words. */
  snippet: string;
}

export interface RunUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface RunRow {
  id: string;
  userId: string;
  agentId: string;
  parentRunId: string | null;
  sessionId: string | null;
  status: RunStatus;
  input: string;
  output: string | null;
  error: string | null;
  model: string;
  steps: RunStep[];
  sources: RunSource[];
  warnings: string[];
  usage: RunUsage | null;
  startedAt: string;
  finishedAt: string | null;
  ms: number | null;
  /** It goes on without its client (`background: true`). */
  background: boolean;
  /** The calls waiting for approval (empty unless `requires_action`). */
  actions: PendingAction[];
  /** The code of a failure (`error` event), null otherwise. */
  errorCode: string | null;
}

/** How a run ended, as recorded. */
export interface RunEnd {
  status: 'succeeded' | 'failed' | 'cancelled';
  output: string | null;
  error: string | null;
  /** The failure's code (for the `error` event that ends the run's log). */
  errorCode?: string | null;
  steps: RunStep[];
  sources: RunSource[];
  warnings: string[];
  usage: RunUsage | null;
  ms: number;
}

const RUN_FIELDS: FieldSpecs<RunRow> = {
  id: 'id',
  userId: 'user_id',
  agentId: 'agent_id',
  parentRunId: 'parent_run_id',
  sessionId: 'session_id',
  status: 'status',
  input: 'input',
  output: 'output',
  error: 'error',
  model: 'model',
  steps: json('steps'),
  sources: json('sources'),
  warnings: json('warnings'),
  usage: json('usage'),
  startedAt: 'started_at',
  finishedAt: 'finished_at',
  ms: 'ms',
  background: boolean('background'),
  actions: json('actions'),
  errorCode: 'error_code',
};
const RUN_ROW = columnMap<RunRow>(RUN_FIELDS);

/** A run as a list holds it: the record with long texts cut (ending in …) and at most LIST_STEPS steps. */
export type RunListRow = RunRow & { truncated: boolean };

const cut = (value: string, chars: number) =>
  `CASE WHEN length(${value}) > ${chars} THEN substr(${value}, 1, ${chars}) || '…' ELSE ${value} END`;
const isCut = (value: string, chars: number) => `coalesce(length(${value}) > ${chars}, 0)`;

// A list of runs is read through SQLite's JSON functions, so a run whose answer or steps are huge
// (runs recorded before the bounds, or with generous ones) never leaves SQLite whole. A step's
// input is kept as JSON when short, else as the beginning of its JSON text.
const LIST_RUN_ROW = columnMap<RunListRow>({
  ...RUN_FIELDS,
  input: expression((r) => cut(`${r}.input`, LIST_TEXT_CHARS)),
  output: expression((r) => cut(`${r}.output`, LIST_TEXT_CHARS)),
  steps: json(
    (r) => `(SELECT json_group_array(json_object(
      'tool', value ->> 'tool', 'toolId', value ->> 'toolId', 'function', value ->> 'function',
      'input', CASE WHEN length(value -> 'input') > ${LIST_STEP_CHARS} THEN substr(value -> 'input', 1, ${LIST_STEP_CHARS}) || '…' ELSE json(value -> 'input') END,
      'output', ${cut("value ->> 'output'", LIST_STEP_CHARS)}, 'error', ${cut("value ->> 'error'", LIST_STEP_CHARS)}, 'ms', value ->> 'ms'))
     FROM (SELECT value FROM json_each(${r}.steps) LIMIT ${LIST_STEPS}))`,
  ),
  truncated: boolean(
    (
      r,
    ) => `(${isCut(`${r}.input`, LIST_TEXT_CHARS)} OR ${isCut(`${r}.output`, LIST_TEXT_CHARS)} OR json_array_length(${r}.steps) > ${LIST_STEPS}
    OR EXISTS (SELECT 1 FROM json_each(${r}.steps)
                WHERE ${isCut("value -> 'input'", LIST_STEP_CHARS)} OR ${isCut("value ->> 'output'", LIST_STEP_CHARS)} OR ${isCut("value ->> 'error'", LIST_STEP_CHARS)}))`,
  ),
});
const RUN_COLUMNS = RUN_ROW.select('agent_runs');
const LIST_RUN_COLUMNS = LIST_RUN_ROW.select('agent_runs');

function listRunFromRow(raw: Record<string, unknown>): RunListRow {
  const run = LIST_RUN_ROW.fromRow(raw);
  // json_object names every key; a step has `output` or `error`, not both.
  for (const step of run.steps) {
    if (step.output === null) delete step.output;
    if (step.error === null) delete step.error;
  }
  return run;
}

export type RunStore = ReturnType<typeof createRunStore>;

/** `syncWal` makes the commits so far durable (walSyncer; tests pace it). */
export function createRunStore(db: Db, memoryStore: MemoryStore = createMemoryStore(db), syncWal: () => Promise<void> = walSyncer(db)) {
  // Only while the agent (and the parent run) still exist: one deleted meanwhile is not an error of the database.
  const insertRun = db.prepare(
    `INSERT INTO agent_runs (id, user_id, agent_id, parent_run_id, session_id, status, input, model, started_at, background)
     SELECT @id, @userId, @agentId, @parentRunId, @sessionId, @status, @input, @model, @startedAt, @background
      WHERE EXISTS (SELECT 1 FROM agents WHERE id = @agentId AND user_id = @userId)
        AND (@parentRunId IS NULL OR EXISTS (SELECT 1 FROM agent_runs WHERE id = @parentRunId AND user_id = @userId))`,
  );
  // Each change of status returns the run's owner, which its hooks are told (no second lookup).
  const finishRun = db
    .prepare(
      `UPDATE agent_runs SET status = ?, output = ?, error = ?, error_code = ?, steps = ?, sources = ?, warnings = ?, usage = ?,
            finished_at = ?, ms = ?, actions = '[]', state = NULL, session_seq = ?, turn_seq = ?
      WHERE id = ? AND status IN ('queued', 'running', 'requires_action') RETURNING user_id`,
    )
    .pluck();
  // A run that ends without having run its course (interrupted, cancelled while waiting, expired): its record as it stands.
  const failUnderWay = db
    .prepare(
      `UPDATE agent_runs SET status = ?, error = ?, error_code = ?, finished_at = ?, actions = '[]', state = NULL,
            ms = CAST(round((julianday(?) - julianday(started_at)) * 86400000) AS INTEGER)
      WHERE id = ? AND status IN ('queued', 'running', 'requires_action') RETURNING user_id`,
    )
    .pluck();
  // Both run at every start: they name the condition of the partial index agent_runs_under_way,
  // which SQLite uses only for a query that repeats it (else they read every run ever made).
  const selectInterrupted = db
    .prepare(`SELECT id FROM agent_runs WHERE status IN ('queued', 'running', 'requires_action') AND status IN ('queued', 'running')`)
    .pluck();
  // Nested runs waiting on a run above them that no longer waits (it was interrupted while it went
  // on, before it took them up): nothing will ever take them up.
  const selectOrphanedWaits = db
    .prepare(
      `SELECT c.id FROM agent_runs c JOIN agent_runs p ON p.id = c.parent_run_id
        WHERE c.status IN ('queued', 'running', 'requires_action') AND c.status = 'requires_action' AND p.status != 'requires_action'`,
    )
    .pluck();
  // Top-level runs only: a nested run waits with (and expires with) the run above it.
  const selectWaitingSince = db
    .prepare(
      `SELECT id FROM agent_runs WHERE status IN ('queued', 'running', 'requires_action') AND status = 'requires_action'
          AND parent_run_id IS NULL AND finished_at < ? ORDER BY seq LIMIT ?`,
    )
    .pluck();
  const markRunning = db
    .prepare(
      `UPDATE agent_runs SET status = 'running', actions = '[]', state = NULL, finished_at = NULL
        WHERE id = ? AND status IN ('queued', 'requires_action') RETURNING user_id`,
    )
    .pluck();
  // An answered run waiting for a slot: what it resumes from (`state`) is kept until it goes on.
  const markQueued = db
    .prepare(
      `UPDATE agent_runs SET status = 'queued', actions = '[]', finished_at = NULL
        WHERE id = ? AND status = 'requires_action' RETURNING user_id`,
    )
    .pluck();
  // A waiting run keeps its progress so far; finished_at holds when it began to wait (cleared when it goes on).
  const pauseRun = db
    .prepare(
      `UPDATE agent_runs SET status = 'requires_action', actions = ?, state = ?, steps = ?, sources = ?, warnings = ?, usage = ?, finished_at = ?
        WHERE id = ? AND status = 'running' RETURNING user_id`,
    )
    .pluck();
  // A waiting run's, or an answered one's queued for a slot (it goes on from it).
  const selectState = db.prepare(`SELECT state FROM agent_runs WHERE id = ? AND status IN ('requires_action', 'queued')`).pluck();
  const selectRun = db.prepare(`SELECT ${RUN_COLUMNS} FROM agent_runs WHERE id = ? AND user_id = ?`);
  const deleteRun = db.prepare(`DELETE FROM agent_runs WHERE id = ? AND user_id = ? AND status <> 'running'`);
  // A deleted run takes its turn of its session with it: what was said is gone, not just unlinked.
  const deleteInTransaction = db.transaction((userId: string, id: string): boolean => {
    if (selectRunSeq.get(id, userId) === undefined) return false;
    memoryStore.forgetRun(id);
    return deleteRun.run(id, userId).changes > 0;
  });
  const changeHooks: RunChangeHook[] = [];
  /** Tells the hooks of a change; `userId` undefined: the statement changed nothing, so nothing is told. */
  const reportChange = (runId: string, userId: string | undefined, status: RunStatus): boolean => {
    if (userId === undefined) return false;
    for (const hook of changeHooks) hook({ runId, userId, status });
    return true;
  };
  const selectRunSeq = db.prepare(`SELECT seq FROM agent_runs WHERE id = ? AND user_id = ?`).pluck();
  const selectRunSeqOfAgent = db.prepare(`SELECT seq FROM agent_runs WHERE id = ? AND agent_id = ? AND user_id = ?`).pluck();
  // Newest first: the cursor is the last (oldest) run seen, so the next page holds smaller seqs.
  const selectAgentRuns = db.prepare(
    `SELECT ${LIST_RUN_COLUMNS} FROM agent_runs WHERE agent_id = ? AND user_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
  );
  const selectUserRuns = db.prepare(`SELECT ${LIST_RUN_COLUMNS} FROM agent_runs WHERE user_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`);

  const finishInTransaction = db.transaction((runId: string, end: RunEnd, turn: RunMemory | null): boolean => {
    const now = timestamp();
    // Only a successful turn is remembered (a failed one would teach the model a half answer): its
    // place in its session first, so that the end's own row names it.
    const place = turn && end.status === 'succeeded' && end.output !== null ? memoryStore.placeTurn(runId, turn, now) : undefined;
    const owner = finishRun.get(
      end.status,
      end.output,
      end.error,
      end.errorCode ?? null,
      JSON.stringify(end.steps),
      JSON.stringify(end.sources),
      JSON.stringify(end.warnings),
      end.usage === null ? null : JSON.stringify(end.usage),
      now,
      end.ms,
      place?.sessionSeq ?? null,
      place?.turnSeq ?? null,
      runId,
    ) as string | undefined;
    return reportChange(runId, owner, end.status);
  });

  // Ends of runs waiting for the next commit (see finishRunSoon).
  type Queued = {
    runId: string;
    end: RunEnd;
    memory: RunMemory | null;
    committed?: () => void;
    resolve(changed: boolean): void;
    reject(error: unknown): void;
  };
  let queued: Queued[] = [];
  // While a batch of ends is being written: what waits for it to be on disk (see afterDurable).
  let durableWaiters: (() => void)[] | null = null;
  const commitQueued = () => {
    const batch = queued;
    queued = [];
    const results: ({ ok: true; changed: boolean } | { ok: false; error: unknown })[] = [];
    const waiters: (() => void)[] = [];
    // Whatever the sync comes to: what waits is told, so nothing waits for ever.
    const tellWaiters = () => {
      for (const waiter of waiters) waiter();
    };
    durableWaiters = waiters;
    try {
      // One transaction; each end in a savepoint of its own (a nested better-sqlite3 transaction),
      // so one that fails is rolled back alone and the others still commit. Committed without an
      // fsync inside the commit (it would hold every request meanwhile): the WAL is synced on the
      // thread pool below before anyone is told.
      unsynced(db, () =>
        db.transaction(() => {
          for (const item of batch) {
            try {
              results.push({ ok: true, changed: finishInTransaction(item.runId, item.end, item.memory) });
            } catch (error) {
              results.push({ ok: false, error });
            }
          }
        })(),
      );
    } catch (error) {
      // The commit itself failed: nothing of the batch was written.
      for (const item of batch) item.reject(error);
      tellWaiters();
      return;
    } finally {
      durableWaiters = null;
    }
    // Readers see the ends from here on: what goes with an end being seen happens now, not after the
    // fsync. A hook that throws fails its own end's promise, and keeps no other end waiting.
    batch.forEach((item, k) => {
      if (!results[k].ok || !item.committed) return;
      try {
        item.committed();
      } catch (error) {
        results[k] = { ok: false, error };
      }
    });
    syncWal().then(
      () => {
        batch.forEach((item, k) => {
          const result = results[k];
          if (result.ok) item.resolve(result.changed);
          else item.reject(result.error);
        });
        tellWaiters();
      },
      (error: unknown) => {
        for (const item of batch) item.reject(error);
        tellWaiters();
      },
    );
  };

  return {
    /**
     * Calls `fn` once what is being written now is on disk: for a change hook of a run's end
     * committed by finishRunSoon, after its WAL sync (the commit itself does not wait for the disk);
     * anywhere else at once (those commits wait for their fsync).
     */
    afterDurable(fn: () => void): void {
      if (durableWaiters) durableWaiters.push(fn);
      else fn();
    },

    /** Adds a hook told of every change of a run's status, inside the transaction that writes it (see RunChangeHook). */
    onChange(hook: RunChangeHook): void {
      changeHooks.push(hook);
    },

    /**
     * Records a new run as `running`; its id and start time, or undefined when the agent (or the
     * parent run) is gone. This one commit does not wait for an fsync of the WAL (synchronous=NORMAL
     * for it alone): it sits before the model call of every run, and what a power cut could lose is
     * only the record that a run had begun. The run's end is made durable (the WAL synced) before
     * anyone is told, which makes this row durable too; a run left `running` by a crash is marked failed at
     * the next start.
     */
    startRun(input: {
      userId: string;
      agentId: string;
      parentRunId: string | null;
      sessionId: string | null;
      input: string;
      model: string;
      /** `queued`: a background run waiting for a slot. */
      status?: 'queued' | 'running';
      background?: boolean;
    }): { id: string; startedAt: string } | undefined {
      const id = newId();
      const startedAt = timestamp();
      // Not `{ ...input, id, startedAt }`: see presentAgent in src/agents/present.ts.
      const row = Object.assign({}, input, { id, startedAt, status: input.status ?? 'running', background: input.background ? 1 : 0 });
      return unsynced(db, () => insertRun.run(row).changes > 0) ? { id, startedAt } : undefined;
    },

    /**
     * Records how a run ended (only a run still `running`: the first end wins) and, for a
     * successful run of an agent with memory, the turn (input and answer) in its session.
     * False when the run had already ended (or its agent was deleted meanwhile).
     */
    finishRun(runId: string, end: RunEnd, memory: RunMemory | null): boolean {
      return finishInTransaction(runId, end, memory);
    },

    /**
     * As `finishRun`, committed with the other ends recorded in the same turn of the event loop:
     * one transaction for all of them instead of one each, its fsync of the WAL made on the thread
     * pool (walSyncer in src/db.ts) and shared with other commits waiting for one, instead of
     * inside the commit, where it would hold every other request. Resolves once the end is durable,
     * so an answer sent after it promises no more than `finishRun` would. `committed` is called
     * once the end is committed (readers see it), before the fsync.
     */
    finishRunSoon(runId: string, end: RunEnd, memory: RunMemory | null, committed?: () => void): Promise<boolean> {
      return new Promise((resolve, reject) => {
        if (queued.length === 0) setImmediate(commitQueued);
        queued.push({ runId, end, memory, committed, resolve, reject });
      });
    },

    /**
     * Marks runs left `queued` or `running` by a stopped process as failed (`code` for their log's
     * end), and the nested runs that waited on them (level by level); returns how many.
     */
    failInterruptedRuns(reason: string, code: string): number {
      return db.transaction(() => {
        let count = 0;
        for (const runId of selectInterrupted.all() as string[]) {
          if (this.endUnderWay(runId, 'failed', reason, code)) count += 1;
        }
        // Level by level: a nested run ended here may have left one below it waiting.
        for (;;) {
          const orphans = (selectOrphanedWaits.all() as string[]).filter((runId) => this.endUnderWay(runId, 'failed', reason, code));
          if (orphans.length === 0) break;
          count += orphans.length;
        }
        return count;
      })();
    },

    /** Ends a run still under way as it stands (interrupted, cancelled while waiting, approval expired); false when it had ended. */
    endUnderWay(runId: string, status: 'failed' | 'cancelled', reason: string, code: string): boolean {
      return db.transaction(() => {
        const now = timestamp();
        return reportChange(runId, failUnderWay.get(status, reason, code, now, now, runId) as string | undefined, status);
      })();
    },

    /** A queued or waiting run goes on: `running` again (its hooks told); false when it is no longer queued or waiting. */
    markRunning(runId: string): boolean {
      return db.transaction(() => {
        return reportChange(runId, markRunning.get(runId) as string | undefined, 'running');
      })();
    },

    /** A waiting run, answered, waits for a slot: `queued` (its hooks told); false when it no longer waits. */
    markQueued(runId: string): boolean {
      return db.transaction(() => {
        return reportChange(runId, markQueued.get(runId) as string | undefined, 'queued');
      })();
    },

    /**
     * A running run waits for approval of `actions`: its progress so far and `state` (what it
     * resumes from) are written, and it is `requires_action`. False when it was no longer running.
     */
    pauseRun(
      runId: string,
      pause: {
        actions: PendingAction[];
        state: unknown;
        steps: RunStep[];
        sources: RunSource[];
        warnings: string[];
        usage: RunUsage | null;
      },
    ): boolean {
      return db.transaction(() => {
        const owner = pauseRun.get(
          JSON.stringify(pause.actions),
          JSON.stringify(pause.state),
          JSON.stringify(pause.steps),
          JSON.stringify(pause.sources),
          JSON.stringify(pause.warnings),
          pause.usage === null ? null : JSON.stringify(pause.usage),
          timestamp(),
          runId,
        ) as string | undefined;
        return reportChange(runId, owner, 'requires_action');
      })();
    },

    /** What a waiting run resumes from (as pauseRun was given it), or undefined when it is not waiting. */
    stateOf(runId: string): unknown {
      const raw = selectState.get(runId) as string | null | undefined;
      return raw == null ? undefined : JSON.parse(raw);
    },

    /** Up to `limit` top-level runs that have waited for approval since before `before` (a timestamp), oldest first. */
    waitingSince(before: string, limit: number): string[] {
      return selectWaitingSince.all(before, limit) as string[];
    },

    /** Runs `fn` in one transaction (nested: a savepoint). */
    transaction<T>(fn: () => T): T {
      return db.transaction(fn)();
    },

    /**
     * Runs `fn` in one transaction committed without an fsync (synchronous=NORMAL): a write the
     * next fsync'd commit makes durable, and a power cut (not a crash) before it may lose. The run
     * event log's batches: a run's last events are committed with its end.
     */
    transactionUnsynced<T>(fn: () => T): T {
      return unsynced(db, db.transaction(fn));
    },

    getRun(userId: string, id: string): RunRow | undefined {
      const raw = selectRun.get(id, userId) as Record<string, unknown> | undefined;
      return raw === undefined ? undefined : RUN_ROW.fromRow(raw);
    },

    /**
     * Deletes one of the user's finished runs (its child runs and its session turn with it); false
     * when the user has no such run. A run under way is not deleted (false too): check first.
     */
    deleteRun(userId: string, id: string): boolean {
      return deleteInTransaction(userId, id);
    },

    /** The keyset cursor of one of the user's runs (optionally: of this agent). */
    seqOfRun(userId: string, id: string, agentId?: string): number | undefined {
      return (agentId === undefined ? selectRunSeq.get(id, userId) : selectRunSeqOfAgent.get(id, agentId, userId)) as number | undefined;
    },

    /** A page of the agent's runs as a list holds them, newest first (`afterSeq` 0: from the newest). */
    listAgentRuns(userId: string, agentId: string, page: PageRequest): Page<RunListRow> {
      const raws = selectAgentRuns.all(agentId, userId, page.afterSeq || Number.MAX_SAFE_INTEGER, page.limit + 1) as Record<
        string,
        unknown
      >[];
      return toPage(raws.map(listRunFromRow), page.limit);
    },

    /** A page of all the user's runs as a list holds them, newest first. */
    listUserRuns(userId: string, page: PageRequest): Page<RunListRow> {
      const raws = selectUserRuns.all(userId, page.afterSeq || Number.MAX_SAFE_INTEGER, page.limit + 1) as Record<string, unknown>[];
      return toPage(raws.map(listRunFromRow), page.limit);
    },
  };
}
