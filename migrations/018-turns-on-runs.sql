-- A run's turn of its session's memory is kept on the run's record: the run's input and output are
-- the turn's two messages, session_seq puts them in their session and turn_seq numbers them there in
-- the order the turns ended (counted by the session's last_turn); agent_runs_by_session orders them.
-- A turn then costs a session upsert and one index entry, where its two agent_messages rows cost
-- four b-trees. The messages already stored stay in agent_messages, read before the session's run
-- turns. No foreign key: deleting a session clears its runs' session_seq (src/runs/memory-store.ts),
-- and deleting an agent deletes its runs and sessions alike.
ALTER TABLE agent_sessions ADD COLUMN last_turn INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agent_runs ADD COLUMN session_seq INTEGER;
ALTER TABLE agent_runs ADD COLUMN turn_seq INTEGER;
CREATE INDEX agent_runs_by_session ON agent_runs (session_seq, turn_seq) WHERE session_seq IS NOT NULL;
