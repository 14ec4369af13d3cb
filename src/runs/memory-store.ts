// SQL for the memory of agents: sessions and their messages (each turn a user's input and the
// answer), replayed to the model by the runs of an agent with memory. A run's turn is written by
// the run store, in the same transaction as the run's end (see finishRun in store.ts).
import type { Db } from '../db.js';
import { newId } from '../lib/ids.js';
import { toPage, type Page, type PageRequest } from '../lib/paging.js';
import { SESSION_TITLE_CHARS } from './schema.js';

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

const SESSION_COLUMNS = `s.id, s.agent_id AS agentId,
  (SELECT substr(m.content, 1, ${SESSION_TITLE_CHARS}) FROM agent_messages m
    WHERE m.session_seq = s.seq AND m.role = 'user' ORDER BY m.seq LIMIT 1) AS title,
  (SELECT count(*) FROM agent_messages m WHERE m.session_seq = s.seq) AS messages,
  s.created_at AS createdAt, s.updated_at AS updatedAt`;

export type MemoryStore = ReturnType<typeof createMemoryStore>;

export function createMemoryStore(db: Db) {
  const selectSessionSeq = db.prepare(`SELECT seq FROM agent_sessions WHERE agent_id = ? AND id = ?`).pluck();
  // A turn's session: created, or (already there) its updated_at moved on; one statement either way.
  const upsertSession = db
    .prepare(
      `INSERT INTO agent_sessions (id, agent_id, created_at, updated_at) VALUES (@sessionId, @agentId, @now, @now)
       ON CONFLICT (agent_id, id) DO UPDATE SET updated_at = excluded.updated_at RETURNING seq`,
    )
    .pluck();
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
  const selectMessageSeq = db
    .prepare(
      `SELECT m.seq FROM agent_messages m JOIN agent_sessions s ON s.seq = m.session_seq WHERE s.agent_id = ? AND s.id = ? AND m.id = ?`,
    )
    .pluck();
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
  const insertTurn = db.prepare(
    `INSERT INTO agent_messages (id, session_seq, role, content, run_id, created_at)
     VALUES (@questionId, @sessionSeq, 'user', @input, @runId, @now), (@answerId, @sessionSeq, 'assistant', @output, @runId, @now)`,
  );
  // A run's turn is in the run's session (its agent's, named by its session_id): messages are found
  // by their run within their session (see agent_messages in schema.sql).
  const deleteRunMessages = db.prepare(
    `DELETE FROM agent_messages
      WHERE session_seq = (SELECT s.seq FROM agent_runs r JOIN agent_sessions s ON s.agent_id = r.agent_id AND s.id = r.session_id
                            WHERE r.id = @runId)
        AND run_id = @runId`,
  );

  return {
    /** Adds a run's turn (its input and answer) to its session, creating the session; call inside the transaction that records the run's end. */
    rememberTurn(turn: RunMemory, output: string, runId: string, now: string): void {
      const sessionSeq = upsertSession.get({ sessionId: turn.sessionId, agentId: turn.agentId, now }) as number;
      insertTurn.run({ questionId: newId(), answerId: newId(), sessionSeq, input: turn.input, output, runId, now });
    },

    /** Deletes the turn a run added to its session; call inside the transaction that deletes the run, before the run's row goes. */
    forgetRun(runId: string): void {
      deleteRunMessages.run({ runId });
    },

    /**
     * The last `limit` messages of a session, oldest first (empty for a new session): the newest
     * whole turns that fit in `maxBytes` of UTF-8 together.
     */
    recentMessages(
      agentId: string,
      sessionId: string,
      limit: number,
      maxBytes = Number.MAX_SAFE_INTEGER,
    ): { role: 'user' | 'assistant'; content: string }[] {
      const messages = selectRecentMessages.all({ agentId, sessionId, limit, maxBytes }) as {
        role: 'user' | 'assistant';
        content: string;
      }[];
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
