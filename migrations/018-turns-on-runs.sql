-- A run's turn of its session's memory is kept on the run's record: the run's input and output are
-- the turn's two messages, and session_seq puts them in their session (agent_runs_by_session). A
-- turn then costs a session upsert and one index entry, where its two agent_messages rows cost four
-- b-trees. The messages already stored stay in agent_messages, read before the session's run turns.
-- No foreign key: deleting a session clears its runs' session_seq (src/runs/memory-store.ts), and
-- deleting an agent deletes its runs and sessions alike.
ALTER TABLE agent_runs ADD COLUMN session_seq INTEGER;
CREATE INDEX agent_runs_by_session ON agent_runs (session_seq, seq) WHERE session_seq IS NOT NULL;
