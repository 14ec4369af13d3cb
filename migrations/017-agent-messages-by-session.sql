-- A session's messages are kept by their session alone: every run of an agent with memory (and every
-- stored /v1 response) writes two of them, and each index on a random key (the message's id, its
-- agent's, its run's) cost that write a b-tree page of its own. Now:
-- - no agent_id: a message's agent is its session's (an agent's count goes through its sessions, and
--   deleting an agent deletes its sessions, which delete their messages);
-- - run_id has no foreign key: a run's turn is deleted with the run (deleteRun in src/runs/store.ts),
--   and a run deleted with its agent takes its sessions with it, so the key needed no index of its own;
-- - a message is found by its id, or by its run, within its session (indexes led by session_seq, so a
--   new turn's entries land next to its session's others).
-- The table is rebuilt (foreign keys are off while migrations run); seq and ids are kept.
CREATE TABLE new_agent_messages (
  seq         INTEGER PRIMARY KEY,
  id          TEXT    NOT NULL,
  session_seq INTEGER NOT NULL REFERENCES agent_sessions (seq) ON DELETE CASCADE,
  role        TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
  content     TEXT    NOT NULL,
  run_id      TEXT,
  created_at  TEXT    NOT NULL
);
INSERT INTO new_agent_messages (seq, id, session_seq, role, content, run_id, created_at)
  SELECT seq, id, session_seq, role, content, run_id, created_at FROM agent_messages;
DROP TABLE agent_messages;
ALTER TABLE new_agent_messages RENAME TO agent_messages;
CREATE INDEX agent_messages_by_session ON agent_messages (session_seq, seq);
CREATE INDEX agent_messages_by_id ON agent_messages (session_seq, id);
CREATE INDEX agent_messages_by_run ON agent_messages (session_seq, run_id) WHERE run_id IS NOT NULL;
