// SQL for the memory of agents: sessions and their messages (each turn a user's input and the
// answer), replayed to the model by the runs of an agent with memory.
//
// A turn is kept on its run's record: the run's input and output are the turn's two messages, and
// the run's session_seq and turn_seq (set in the transaction that records the run's end, see
// finishRun in store.ts) put it in its session, numbered in the order the turns ended. Writing a
// turn is then a session upsert and one index entry (agent_runs_by_session), where a message row of
// its own cost four b-trees. Messages without a run of this kind stay rows of agent_messages: the
// turns of older versions, and the sessions an import brings in. Those are always the oldest of their
// session (nothing else is ever added to them), so a session reads as its agent_messages rows in
// order, then its runs' turns in the order they ended.
import type { Db } from '../db.js';
import { toPage, type Page, type PageRequest } from '../lib/paging.js';
import { SESSION_TITLE_CHARS } from './schema.js';

/** The session a successful run of an agent with memory adds its turn to. */
export interface RunMemory {
  agentId: string;
  sessionId: string;
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

type Message = { role: 'user' | 'assistant'; content: string };
/** A run's turn as a page reads it. */
type TurnRow = { turnSeq: number; id: string; input: string; output: string; finishedAt: string };

/**
 * Where a message stands in its session (the order of a page, and its cursor): an agent_messages
 * row at its seq; a run's turn after every one of those, its question at TURNS + 2 × its turn_seq
 * and its answer one further.
 */
const TURNS = 2 ** 50;
const turnPosition = (turnSeq: number, role: 'user' | 'assistant') => TURNS + 2 * turnSeq + (role === 'user' ? 0 : 1);

/**
 * The ids of a run's two messages, made from the run's id (a UUID v4, see newId): its last twelve
 * hex digits, random in every UUID v4, XORed with a mask of the message's role. Unique as the run's
 * id is, and a message id leads back to its run through the run's own unique index (runsOfMessage).
 */
const MASKS = { user: [0x3c5a96, 0xe1d24b], assistant: [0xa7e3c1, 0x5b8f2d] } as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function maskTail(id: string, [high, low]: readonly [number, number]): string {
  const hex = (text: string, mask: number) => (parseInt(text, 16) ^ mask).toString(16).padStart(6, '0');
  return `${id.slice(0, 24)}${hex(id.slice(24, 30), high)}${hex(id.slice(30, 36), low)}`;
}

function turnMessageId(runId: string, role: 'user' | 'assistant'): string {
  return maskTail(runId, MASKS[role]);
}

/** The run a message id of a turn would belong to, one candidate per role (the mask is its own inverse). */
function runsOfMessage(messageId: string): { user: string; assistant: string } | undefined {
  if (!UUID.test(messageId)) return undefined;
  return { user: maskTail(messageId, MASKS.user), assistant: maskTail(messageId, MASKS.assistant) };
}

const SESSION_COLUMNS = `s.id, s.agent_id AS agentId,
  coalesce(
    (SELECT substr(m.content, 1, ${SESSION_TITLE_CHARS}) FROM agent_messages m
      WHERE m.session_seq = s.seq AND m.role = 'user' ORDER BY m.seq LIMIT 1),
    (SELECT substr(r.input, 1, ${SESSION_TITLE_CHARS}) FROM agent_runs r WHERE r.session_seq = s.seq ORDER BY r.turn_seq LIMIT 1)
  ) AS title,
  (SELECT count(*) FROM agent_messages m WHERE m.session_seq = s.seq)
    + 2 * (SELECT count(*) FROM agent_runs r WHERE r.session_seq = s.seq) AS messages,
  s.created_at AS createdAt, s.updated_at AS updatedAt`;

/** How many messages an agent's sessions hold, as SQL over the agent's alias `a` (for its record). */
export const agentMessagesSql = (a: string) =>
  `((SELECT count(*) FROM agent_sessions s JOIN agent_messages m ON m.session_seq = s.seq WHERE s.agent_id = ${a}.id)
    + 2 * (SELECT count(*) FROM agent_sessions s JOIN agent_runs r ON r.session_seq = s.seq WHERE s.agent_id = ${a}.id))`;

export type MemoryStore = ReturnType<typeof createMemoryStore>;

/**
 * Stored messages (an import's, an older version's) as the turns a model is given: one question,
 * then its answer. Messages of one role in a row (two questions before an answer, an answer in
 * parts) are joined into one, and an answer before any question (its question did not fit, or the
 * import began with it) and a question left without its answer at the end are left out: a turn is
 * replayed whole or not at all. Chat templates that insist on alternating roles (Mistral's,
 * Gemma's, served by vLLM or llama.cpp) refuse a conversation with two questions in a row.
 */
export function wholeTurns(rows: Message[]): Message[] {
  const turns: Message[] = [];
  for (const row of rows) {
    const last = turns.at(-1);
    if (last?.role === row.role) last.content += `\n\n${row.content}`;
    else if (last !== undefined || row.role === 'user') turns.push({ role: row.role, content: row.content });
  }
  if (turns.at(-1)?.role === 'user') turns.pop();
  return turns;
}

export function createMemoryStore(db: Db) {
  const selectSessionSeq = db.prepare(`SELECT seq FROM agent_sessions WHERE agent_id = ? AND id = ?`).pluck();
  const sessionSeqOf = (agentId: string, sessionId: string) => selectSessionSeq.get(agentId, sessionId) as number | undefined;
  // A turn's session: created, or (already there) its updated_at and its count of turns moved on;
  // one statement either way, answering the session and the turn's number in it. Only while its run
  // is still under way: a run whose end is not recorded adds no turn (and no session).
  const upsertSession = db.prepare(
    `INSERT INTO agent_sessions (id, agent_id, created_at, updated_at, last_turn)
     SELECT @sessionId, @agentId, @now, @now, 1
      WHERE EXISTS (SELECT 1 FROM agent_runs WHERE id = @runId AND status IN ('queued', 'running', 'requires_action'))
     ON CONFLICT (agent_id, id) DO UPDATE SET updated_at = excluded.updated_at, last_turn = last_turn + 1
     RETURNING seq AS sessionSeq, last_turn AS turnSeq`,
  );
  const selectSessions = db.prepare(
    `SELECT ${SESSION_COLUMNS} FROM agent_sessions s WHERE s.agent_id = ? AND s.seq > ? ORDER BY s.seq LIMIT ?`,
  );
  const selectSession = db.prepare(`SELECT ${SESSION_COLUMNS} FROM agent_sessions s WHERE s.agent_id = ? AND s.id = ?`);
  // The runs keep their records; only their turns leave the session with it.
  const unlinkTurns = db.prepare(`UPDATE agent_runs SET session_seq = NULL, turn_seq = NULL WHERE session_seq = ?`);
  const deleteSession = db.prepare(`DELETE FROM agent_sessions WHERE seq = ?`);
  const selectRows = db.prepare(
    `SELECT seq AS position, id, role, content, run_id AS runId, created_at AS createdAt
       FROM agent_messages WHERE session_seq = ? AND seq > ? ORDER BY seq LIMIT ?`,
  );
  const selectTurns = db.prepare(
    `SELECT turn_seq AS turnSeq, id, input, output, finished_at AS finishedAt FROM agent_runs
      WHERE session_seq = ? AND turn_seq >= ? ORDER BY turn_seq LIMIT ?`,
  );
  const selectRowSeq = db.prepare(`SELECT seq FROM agent_messages WHERE session_seq = ? AND id = ?`).pluck();
  const selectTurnSeq = db.prepare(`SELECT turn_seq FROM agent_runs WHERE id = ? AND session_seq = ?`).pluck();
  // The newest messages (turns), each with the size of it and those newer added up: only the contents
  // within `maxBytes` leave SQLite (the others come back null, from where the budget ran out), so a
  // session of huge answers does not fill the memory of every run replaying it.
  const selectRecentRows = db.prepare(
    `SELECT CASE WHEN total <= @maxBytes THEN role END AS role, CASE WHEN total <= @maxBytes THEN content END AS content, total FROM (
       SELECT seq, role, content, sum(octet_length(content)) OVER (ORDER BY seq DESC) AS total FROM (
         SELECT seq, role, content FROM agent_messages WHERE session_seq = @sessionSeq ORDER BY seq DESC LIMIT @limit
       )
     ) ORDER BY seq DESC`,
  );
  const selectRecentTurns = db.prepare(
    `SELECT CASE WHEN total <= @maxBytes THEN input END AS input, CASE WHEN total <= @maxBytes THEN output END AS output, total FROM (
       SELECT turn_seq, input, output, sum(octet_length(input) + octet_length(output)) OVER (ORDER BY turn_seq DESC) AS total FROM (
         SELECT turn_seq, input, output FROM agent_runs WHERE session_seq = @sessionSeq ORDER BY turn_seq DESC LIMIT @limit
       )
     ) ORDER BY turn_seq DESC`,
  );
  // An older version's turn of a run is a pair of agent_messages rows, found by its run within its session.
  const deleteRunRows = db.prepare(
    `DELETE FROM agent_messages
      WHERE session_seq = (SELECT s.seq FROM agent_runs r JOIN agent_sessions s ON s.agent_id = r.agent_id AND s.id = r.session_id
                            WHERE r.id = @runId)
        AND run_id = @runId`,
  );
  const deleteInTransaction = db.transaction((sessionSeq: number) => {
    unlinkTurns.run(sessionSeq);
    deleteSession.run(sessionSeq);
  });

  /** The turn messages of `runs` (oldest first) after `afterPosition`, with their positions. */
  function turnMessages(runs: TurnRow[], afterPosition: number): (MessageRow & { position: number })[] {
    return runs.flatMap((run) =>
      (['user', 'assistant'] as const)
        .map((role) => ({
          position: turnPosition(run.turnSeq, role),
          id: turnMessageId(run.id, role),
          role,
          content: role === 'user' ? run.input : run.output,
          runId: run.id,
          createdAt: run.finishedAt,
        }))
        .filter((message) => message.position > afterPosition),
    );
  }

  return {
    /**
     * The place of a run's turn: its session (created, or its updated_at moved on) and its number
     * there, for the run's session_seq and turn_seq. Call inside the transaction that records the
     * run's end, before the end is written; undefined when the run is no longer under way (its end
     * will not be recorded).
     */
    placeTurn(runId: string, turn: RunMemory, now: string): { sessionSeq: number; turnSeq: number } | undefined {
      return upsertSession.get({ runId, sessionId: turn.sessionId, agentId: turn.agentId, now }) as
        { sessionSeq: number; turnSeq: number } | undefined;
    },

    /** Deletes what an older version stored of a run's turn; call inside the transaction that deletes the run, before the run's row goes (its own turn goes with it). */
    forgetRun(runId: string): void {
      deleteRunRows.run({ runId });
    },

    /**
     * At most the last `limit` messages of a session, oldest first (empty for a new session): the
     * newest whole turns that fit in `maxBytes` of UTF-8 together, stored messages as wholeTurns
     * makes them.
     */
    recentMessages(agentId: string, sessionId: string, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): Message[] {
      const sessionSeq = sessionSeqOf(agentId, sessionId);
      if (sessionSeq === undefined) return [];
      const wantedTurns = Math.floor(limit / 2);
      const turns = selectRecentTurns.all({ sessionSeq, limit: wantedTurns, maxBytes }) as {
        input: string | null;
        output: string | null;
        total: number;
      }[];
      const fitting = turns.filter((turn) => turn.input !== null);
      const messages = fitting.reverse().flatMap((turn): Message[] => [
        { role: 'user', content: turn.input! },
        { role: 'assistant', content: turn.output! },
      ]);
      // Older messages only once the session's run turns are all taken (and all fitted).
      if (fitting.length < turns.length || turns.length === wantedTurns) return messages;
      const used = turns.at(-1)?.total ?? 0;
      const rows = (
        selectRecentRows.all({ sessionSeq, limit: limit - messages.length, maxBytes: maxBytes - used }) as {
          role: Message['role'] | null;
          content: string | null;
        }[]
      )
        .filter((row) => row.role !== null)
        .reverse() as Message[];
      return [...wholeTurns(rows), ...messages];
    },

    /** The cursor of a session of the agent (for paging sessions). */
    seqOfSession(agentId: string, sessionId: string): number | undefined {
      return sessionSeqOf(agentId, sessionId);
    },
    listSessions(agentId: string, page: PageRequest): Page<SessionRow> {
      return toPage(selectSessions.all(agentId, page.afterSeq, page.limit + 1) as SessionRow[], page.limit);
    },
    getSession(agentId: string, sessionId: string): SessionRow | undefined {
      return selectSession.get(agentId, sessionId) as SessionRow | undefined;
    },
    /** Deletes a session and its messages (its runs' records stay); false when the agent has no such session. */
    deleteSession(agentId: string, sessionId: string): boolean {
      const sessionSeq = sessionSeqOf(agentId, sessionId);
      if (sessionSeq === undefined) return false;
      deleteInTransaction(sessionSeq);
      return true;
    },
    /** The cursor of a message of the session (its position, see TURNS). */
    seqOfMessage(agentId: string, sessionId: string, messageId: string): number | undefined {
      const sessionSeq = sessionSeqOf(agentId, sessionId);
      if (sessionSeq === undefined) return undefined;
      const rowSeq = selectRowSeq.get(sessionSeq, messageId) as number | undefined;
      if (rowSeq !== undefined) return rowSeq;
      const runs = runsOfMessage(messageId);
      if (!runs) return undefined;
      for (const role of ['user', 'assistant'] as const) {
        const turnSeq = selectTurnSeq.get(runs[role], sessionSeq) as number | undefined;
        if (turnSeq !== undefined) return turnPosition(turnSeq, role);
      }
      return undefined;
    },
    /** A session's messages in order, `limit` at most after the cursor `afterSeq` (a position). */
    listMessages(agentId: string, sessionId: string, page: PageRequest): Page<MessageRow> {
      const sessionSeq = sessionSeqOf(agentId, sessionId);
      if (sessionSeq === undefined) return { rows: [], hasMore: false };
      const wanted = page.limit + 1;
      const rows = (page.afterSeq < TURNS ? selectRows.all(sessionSeq, page.afterSeq, wanted) : []) as (MessageRow & {
        position: number;
      })[];
      if (rows.length < wanted) {
        const firstTurn = page.afterSeq < TURNS ? 0 : Math.floor((page.afterSeq - TURNS) / 2);
        const runs = selectTurns.all(sessionSeq, firstTurn, Math.ceil((wanted - rows.length) / 2) + 1) as TurnRow[];
        rows.push(...turnMessages(runs, page.afterSeq));
      }
      return toPage(
        rows.slice(0, wanted).map(({ position: _, ...message }) => message),
        page.limit,
      );
    },
  };
}
