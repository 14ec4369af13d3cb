-- Durable runs: a run may wait `queued` for a slot or `requires_action` for a person's yes to a tool
-- call, and keeps its events. SQLite cannot change a CHECK, so agent_runs is rebuilt this once
-- (foreign keys are off while migrations run, so nothing pointing at a run is touched); seq and ids
-- are kept. New: `background` (the run goes on without its client), `actions` (the calls waiting for
-- approval), `state` (what a waiting run resumes from: its conversation so far), `error_code` (the
-- code of a failure, for the `error` event that ends its event log).
CREATE TABLE new_agent_runs (
  seq           INTEGER PRIMARY KEY,
  id            TEXT    NOT NULL UNIQUE,
  user_id       TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  agent_id      TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  parent_run_id TEXT    REFERENCES agent_runs (id) ON DELETE CASCADE,
  session_id    TEXT,
  status        TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'requires_action', 'succeeded', 'failed', 'cancelled')),
  input         TEXT    NOT NULL,
  output        TEXT,
  error         TEXT,
  model         TEXT    NOT NULL,
  steps         TEXT    NOT NULL DEFAULT '[]',
  sources       TEXT    NOT NULL DEFAULT '[]',
  warnings      TEXT    NOT NULL DEFAULT '[]',
  usage         TEXT,
  started_at    TEXT    NOT NULL,
  finished_at   TEXT,
  ms            INTEGER,
  background    INTEGER NOT NULL DEFAULT 0,
  actions       TEXT    NOT NULL DEFAULT '[]',
  state         TEXT,
  error_code    TEXT
);
INSERT INTO new_agent_runs (seq, id, user_id, agent_id, parent_run_id, session_id, status, input, output, error, model,
                            steps, sources, warnings, usage, started_at, finished_at, ms)
  SELECT seq, id, user_id, agent_id, parent_run_id, session_id, status, input, output, error, model,
         steps, sources, warnings, usage, started_at, finished_at, ms FROM agent_runs;
DROP TABLE agent_runs;
ALTER TABLE new_agent_runs RENAME TO agent_runs;
CREATE INDEX agent_runs_by_user ON agent_runs (user_id, seq);
CREATE INDEX agent_runs_by_agent ON agent_runs (agent_id, seq);
CREATE INDEX agent_runs_by_parent ON agent_runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX agent_runs_under_way ON agent_runs (seq) WHERE status IN ('queued', 'running', 'requires_action');

-- A run's events, numbered 1, 2, 3 … within the run (tokens merged into fewer events). The event
-- that ends a log (done or error) is not stored: it is the run record's end, read from agent_runs.
CREATE TABLE run_events (
  run_seq INTEGER NOT NULL REFERENCES agent_runs (seq) ON DELETE CASCADE,
  seq     INTEGER NOT NULL,
  name    TEXT    NOT NULL,
  data    TEXT    NOT NULL,
  PRIMARY KEY (run_seq, seq)
) WITHOUT ROWID;

ALTER TABLE agent_tools ADD COLUMN requires_approval INTEGER NOT NULL DEFAULT 0;
