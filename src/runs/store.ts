// SQL for running agents: run records and memory (sessions and their messages).
import type { Db } from '../db.js';
import { newId, timestamp } from '../lib/ids.js';
import { toPage, type Page, type PageRequest } from '../lib/paging.js';
import { LIST_STEP_CHARS, LIST_STEPS, LIST_TEXT_CHARS, SESSION_TITLE_CHARS } from './schema.js';

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';

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
}

/** How a run ended, as recorded. */
export interface RunEnd {
  status: Exclude<RunStatus, 'running'>;
  output: string | null;
  error: string | null;
  steps: RunStep[];
  sources: RunSource[];
  warnings: string[];
  usage: RunUsage | null;
  ms: number;
}

/** The turn a successful run of an agent with memory adds to its session. */
export interface RunMemory {
  agentId: string;
  sessionId: string;
  input: string;
}

export interface SessionRow {
  id: string;
  agentId: string;
  title: string | null;
  messages: number;
  createdAt: string;
  updatedAt: string;
}

export interface MessageRow {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  runId: string | null;
  createdAt: string;
}

const RUN_COLUMNS = `id, user_id AS userId, agent_id AS agentId, parent_run_id AS parentRunId, session_id AS sessionId,
  status, input, output, error, model, steps, sources, warnings, usage,
  started_at AS startedAt, finished_at AS finishedAt, ms`;

function runFromRow(raw: Record<string, unknown>): RunRow {
  return {
    ...(raw as unknown as RunRow),
    steps: JSON.parse(raw.steps as string),
    sources: JSON.parse(raw.sources as string),
    warnings: JSON.parse(raw.warnings as string),
    usage: raw.usage === null ? null : JSON.parse(raw.usage as string),
  };
}

/** A run as a list holds it: the record with long texts cut (ending in …) and at most LIST_STEPS steps. */
export type RunListRow = RunRow & { truncated: boolean };

const cut = (value: string, chars: number) => `CASE WHEN length(${value}) > ${chars} THEN substr(${value}, 1, ${chars}) || '…' ELSE ${value} END`;
const isCut = (value: string, chars: number) => `coalesce(length(${value}) > ${chars}, 0)`;

// A list of runs is read through SQLite's JSON functions, so a run whose answer or steps are huge
// (runs recorded before the bounds, or with generous ones) never leaves SQLite whole. A step's
// input is kept as JSON when short, else as the beginning of its JSON text.
const LIST_RUN_COLUMNS = `id, user_id AS userId, agent_id AS agentId, parent_run_id AS parentRunId, session_id AS sessionId, status,
  ${cut('input', LIST_TEXT_CHARS)} AS input, ${cut('output', LIST_TEXT_CHARS)} AS output, error, model,
  (SELECT json_group_array(json_object(
      'tool', value ->> 'tool', 'toolId', value ->> 'toolId', 'function', value ->> 'function',
      'input', CASE WHEN length(value -> 'input') > ${LIST_STEP_CHARS} THEN substr(value -> 'input', 1, ${LIST_STEP_CHARS}) || '…' ELSE json(value -> 'input') END,
      'output', ${cut("value ->> 'output'", LIST_STEP_CHARS)}, 'error', ${cut("value ->> 'error'", LIST_STEP_CHARS)}, 'ms', value ->> 'ms'))
     FROM (SELECT value FROM json_each(agent_runs.steps) LIMIT ${LIST_STEPS})) AS steps,
  sources, warnings, usage, started_at AS startedAt, finished_at AS finishedAt, ms,
  (${isCut('input', LIST_TEXT_CHARS)} OR ${isCut('output', LIST_TEXT_CHARS)} OR json_array_length(steps) > ${LIST_STEPS}
    OR EXISTS (SELECT 1 FROM json_each(agent_runs.steps)
                WHERE ${isCut("value -> 'input'", LIST_STEP_CHARS)} OR ${isCut("value ->> 'output'", LIST_STEP_CHARS)} OR ${isCut("value ->> 'error'", LIST_STEP_CHARS)})) AS truncated`;

function listRunFromRow(raw: Record<string, unknown>): RunListRow {
  const run = runFromRow(raw);
  // json_object names every key; a step has `output` or `error`, not both.
  for (const step of run.steps) {
    if (step.output === null) delete step.output;
    if (step.error === null) delete step.error;
  }
  return Object.assign(run, { truncated: raw.truncated === 1 });
}

const SESSION_COLUMNS = `s.id, s.agent_id AS agentId,
  (SELECT substr(m.content, 1, ${SESSION_TITLE_CHARS}) FROM agent_messages m
    WHERE m.session_seq = s.seq AND m.role = 'user' ORDER BY m.seq LIMIT 1) AS title,
  (SELECT count(*) FROM agent_messages m WHERE m.session_seq = s.seq) AS messages,
  s.created_at AS createdAt, s.updated_at AS updatedAt`;

export type RunStore = ReturnType<typeof createRunStore>;

export function createRunStore(db: Db) {
  // Only while the agent (and the parent run) still exist: one deleted meanwhile is not an error of the database.
  const insertRun = db.prepare(
    `INSERT INTO agent_runs (id, user_id, agent_id, parent_run_id, session_id, status, input, model, started_at)
     SELECT @id, @userId, @agentId, @parentRunId, @sessionId, 'running', @input, @model, @startedAt
      WHERE EXISTS (SELECT 1 FROM agents WHERE id = @agentId AND user_id = @userId)
        AND (@parentRunId IS NULL OR EXISTS (SELECT 1 FROM agent_runs WHERE id = @parentRunId AND user_id = @userId))`,
  );
  // The start of a run is committed without waiting for the disk (see startRun); the connection's
  // synchronous=FULL is restored at once, so every other commit still waits for its fsync.
  const syncNormal = db.prepare('PRAGMA synchronous = NORMAL');
  const syncFull = db.prepare('PRAGMA synchronous = FULL');
  const finishRun = db.prepare(
    `UPDATE agent_runs SET status = ?, output = ?, error = ?, steps = ?, sources = ?, warnings = ?, usage = ?,
            finished_at = ?, ms = ?
      WHERE id = ? AND status = 'running'`,
  );
  const failInterrupted = db.prepare(
    `UPDATE agent_runs SET status = 'failed', error = ?, finished_at = ?,
            ms = CAST(round((julianday(?) - julianday(started_at)) * 86400000) AS INTEGER)
      WHERE status = 'running'`,
  );
  const selectRun = db.prepare(`SELECT ${RUN_COLUMNS} FROM agent_runs WHERE id = ? AND user_id = ?`);
  const selectRunSeq = db.prepare(`SELECT seq FROM agent_runs WHERE id = ? AND user_id = ?`).pluck();
  const selectRunSeqOfAgent = db.prepare(`SELECT seq FROM agent_runs WHERE id = ? AND agent_id = ? AND user_id = ?`).pluck();
  // Newest first: the cursor is the last (oldest) run seen, so the next page holds smaller seqs.
  const selectAgentRuns = db.prepare(
    `SELECT ${LIST_RUN_COLUMNS} FROM agent_runs WHERE agent_id = ? AND user_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
  );
  const selectUserRuns = db.prepare(`SELECT ${LIST_RUN_COLUMNS} FROM agent_runs WHERE user_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`);

  const selectSessionSeq = db.prepare(`SELECT seq FROM agent_sessions WHERE agent_id = ? AND id = ?`).pluck();
  const insertSession = db.prepare(`INSERT INTO agent_sessions (id, agent_id, created_at, updated_at) VALUES (?, ?, ?, ?)`);
  const touchSession = db.prepare(`UPDATE agent_sessions SET updated_at = ? WHERE seq = ?`);
  const selectSessions = db.prepare(
    `SELECT ${SESSION_COLUMNS} FROM agent_sessions s WHERE s.agent_id = ? AND s.seq > ? ORDER BY s.seq LIMIT ?`,
  );
  const selectSession = db.prepare(`SELECT ${SESSION_COLUMNS} FROM agent_sessions s WHERE s.agent_id = ? AND s.id = ?`);
  const deleteSession = db.prepare(`DELETE FROM agent_sessions WHERE agent_id = ? AND id = ?`);
  const selectMessages = db.prepare(
    `SELECT m.id, m.role, m.content, m.run_id AS runId, m.created_at AS createdAt
       FROM agent_messages m JOIN agent_sessions s ON s.seq = m.session_seq
      WHERE s.agent_id = ? AND s.id = ? AND m.seq > ? ORDER BY m.seq LIMIT ?`,
  );
  const selectMessageSeq = db.prepare(
    `SELECT m.seq FROM agent_messages m JOIN agent_sessions s ON s.seq = m.session_seq WHERE s.agent_id = ? AND s.id = ? AND m.id = ?`,
  ).pluck();
  // The newest `limit` messages whose sizes, added up from the newest, stay within `maxBytes`: only
  // those leave SQLite, so a session of huge answers does not fill the memory of every run replaying it.
  const selectRecentMessages = db.prepare(
    `SELECT role, content FROM (
       SELECT seq, role, content, sum(octet_length(content)) OVER (ORDER BY seq DESC) AS total FROM (
         SELECT m.seq, m.role, m.content FROM agent_messages m JOIN agent_sessions s ON s.seq = m.session_seq
          WHERE s.agent_id = @agentId AND s.id = @sessionId ORDER BY m.seq DESC LIMIT @limit
       )
     ) WHERE total <= @maxBytes ORDER BY seq`,
  );
  const insertMessage = db.prepare(
    `INSERT INTO agent_messages (id, session_seq, agent_id, role, content, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );

  const ensureSession = (agentId: string, sessionId: string, now: string): number => {
    const seq = selectSessionSeq.get(agentId, sessionId) as number | undefined;
    if (seq !== undefined) return seq;
    return Number(insertSession.run(sessionId, agentId, now, now).lastInsertRowid);
  };

  const finishInTransaction = db.transaction(
    (runId: string, end: RunEnd, memory: RunMemory | null): boolean => {
      const now = timestamp();
      const changed = finishRun.run(
        end.status, end.output, end.error, JSON.stringify(end.steps), JSON.stringify(end.sources), JSON.stringify(end.warnings),
        end.usage === null ? null : JSON.stringify(end.usage), now, end.ms, runId,
      ).changes > 0;
      // Only a successful turn is remembered: a failed one would teach the model a half answer.
      if (changed && memory && end.status === 'succeeded' && end.output !== null) {
        const sessionSeq = ensureSession(memory.agentId, memory.sessionId, now);
        insertMessage.run(newId(), sessionSeq, memory.agentId, 'user', memory.input, runId, now);
        insertMessage.run(newId(), sessionSeq, memory.agentId, 'assistant', end.output, runId, now);
        touchSession.run(now, sessionSeq);
      }
      return changed;
    },
  );

  // Ends of runs waiting for the next commit (see finishRunSoon).
  type Queued = { runId: string; end: RunEnd; memory: RunMemory | null; resolve(changed: boolean): void; reject(error: unknown): void };
  let queued: Queued[] = [];
  const commitQueued = () => {
    const batch = queued;
    queued = [];
    const results: ({ ok: true; changed: boolean } | { ok: false; error: unknown })[] = [];
    try {
      // One transaction, one fsync; each end in a savepoint of its own (a nested better-sqlite3
      // transaction), so one that fails is rolled back alone and the others still commit.
      db.transaction(() => {
        for (const item of batch) {
          try {
            results.push({ ok: true, changed: finishInTransaction(item.runId, item.end, item.memory) });
          } catch (error) {
            results.push({ ok: false, error });
          }
        }
      })();
    } catch (error) {
      // The commit itself failed: nothing of the batch was written.
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, k) => {
      const result = results[k];
      if (result.ok) item.resolve(result.changed);
      else item.reject(result.error);
    });
  };

  return {
    /**
     * Records a new run as `running`; its id and start time, or undefined when the agent (or the
     * parent run) is gone. This one commit does not wait for an fsync of the WAL (synchronous=NORMAL
     * for it alone): it sits before the model call of every run, and what a power cut could lose is
     * only the record that a run had begun. The run's end is committed with synchronous=FULL, which
     * makes the WAL, this row included, durable; a run left `running` by a crash is marked failed at
     * the next start.
     */
    startRun(input: { userId: string; agentId: string; parentRunId: string | null; sessionId: string | null; input: string; model: string }): { id: string; startedAt: string } | undefined {
      const id = newId();
      const startedAt = timestamp();
      syncNormal.run();
      try {
        // Not `{ ...input, id, startedAt }`: see presentAgent in src/agents/present.ts.
        return insertRun.run(Object.assign({}, input, { id, startedAt })).changes > 0 ? { id, startedAt } : undefined;
      } finally {
        syncFull.run();
      }
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
     * one transaction (and one fsync of the WAL, synchronous=FULL) for all of them instead of one
     * each. Resolves once the end is durable, so an answer sent after it promises no more than
     * `finishRun` would.
     */
    finishRunSoon(runId: string, end: RunEnd, memory: RunMemory | null): Promise<boolean> {
      return new Promise((resolve, reject) => {
        if (queued.length === 0) setImmediate(commitQueued);
        queued.push({ runId, end, memory, resolve, reject });
      });
    },

    /** Marks runs left `running` by a stopped process as failed; returns how many. */
    failInterruptedRuns(reason: string): number {
      const now = timestamp();
      return failInterrupted.run(reason, now, now).changes;
    },

    getRun(userId: string, id: string): RunRow | undefined {
      const raw = selectRun.get(id, userId) as Record<string, unknown> | undefined;
      return raw === undefined ? undefined : runFromRow(raw);
    },

    /** The keyset cursor of one of the user's runs (optionally: of this agent). */
    seqOfRun(userId: string, id: string, agentId?: string): number | undefined {
      return (agentId === undefined ? selectRunSeq.get(id, userId) : selectRunSeqOfAgent.get(id, agentId, userId)) as number | undefined;
    },

    /** A page of the agent's runs as a list holds them, newest first (`afterSeq` 0: from the newest). */
    listAgentRuns(userId: string, agentId: string, page: PageRequest): Page<RunListRow> {
      const raws = selectAgentRuns.all(agentId, userId, page.afterSeq || Number.MAX_SAFE_INTEGER, page.limit + 1) as Record<string, unknown>[];
      return toPage(raws.map(listRunFromRow), page.limit);
    },

    /** A page of all the user's runs as a list holds them, newest first. */
    listUserRuns(userId: string, page: PageRequest): Page<RunListRow> {
      const raws = selectUserRuns.all(userId, page.afterSeq || Number.MAX_SAFE_INTEGER, page.limit + 1) as Record<string, unknown>[];
      return toPage(raws.map(listRunFromRow), page.limit);
    },

    /**
     * The last `limit` messages of a session, oldest first (empty for a new session): the newest
     * whole turns that fit in `maxBytes` of UTF-8 together.
     */
    recentMessages(agentId: string, sessionId: string, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): { role: 'user' | 'assistant'; content: string }[] {
      const messages = selectRecentMessages.all({ agentId, sessionId, limit, maxBytes }) as { role: 'user' | 'assistant'; content: string }[];
      // An answer whose question did not fit is left out too: a turn is replayed whole or not at all.
      return messages[0]?.role === 'assistant' ? messages.slice(1) : messages;
    },

    /** The cursor of a session of the agent (for paging sessions). */
    seqOfSession(agentId: string, sessionId: string): number | undefined {
      return selectSessionSeq.get(agentId, sessionId) as number | undefined;
    },
    listSessions(agentId: string, page: PageRequest): Page<SessionRow> {
      return toPage(selectSessions.all(agentId, page.afterSeq, page.limit + 1) as SessionRow[], page.limit);
    },
    getSession(agentId: string, sessionId: string): SessionRow | undefined {
      return selectSession.get(agentId, sessionId) as SessionRow | undefined;
    },
    /** Deletes a session and its messages; false when the agent has no such session. */
    deleteSession(agentId: string, sessionId: string): boolean {
      return deleteSession.run(agentId, sessionId).changes > 0;
    },
    seqOfMessage(agentId: string, sessionId: string, messageId: string): number | undefined {
      return selectMessageSeq.get(agentId, sessionId, messageId) as number | undefined;
    },
    listMessages(agentId: string, sessionId: string, page: PageRequest): Page<MessageRow> {
      return toPage(selectMessages.all(agentId, sessionId, page.afterSeq, page.limit + 1) as MessageRow[], page.limit);
    },
  };
}
