-- Agents run: what an agent shows in the library, tools' descriptions, run records and memory.
ALTER TABLE agents ADD COLUMN description TEXT;
ALTER TABLE agents ADD COLUMN avatar_url TEXT;
ALTER TABLE agents ADD COLUMN is_listed INTEGER NOT NULL DEFAULT 0 CHECK (is_listed IN (0, 1));
CREATE INDEX IF NOT EXISTS agents_listed ON agents (seq) WHERE is_listed = 1;

ALTER TABLE tools ADD COLUMN description TEXT;

CREATE TABLE IF NOT EXISTS agent_runs (
  seq           INTEGER PRIMARY KEY,
  id            TEXT    NOT NULL UNIQUE,
  user_id       TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  agent_id      TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  parent_run_id TEXT    REFERENCES agent_runs (id) ON DELETE CASCADE,
  session_id    TEXT,
  status        TEXT    NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled')),
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
  ms            INTEGER
);
CREATE INDEX IF NOT EXISTS agent_runs_by_user ON agent_runs (user_id, seq);
CREATE INDEX IF NOT EXISTS agent_runs_by_agent ON agent_runs (agent_id, seq);
CREATE INDEX IF NOT EXISTS agent_runs_by_parent ON agent_runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS agent_runs_running ON agent_runs (seq) WHERE status = 'running';

CREATE TABLE IF NOT EXISTS agent_sessions (
  seq        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL,
  agent_id   TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL,
  UNIQUE (agent_id, id)
);

CREATE TABLE IF NOT EXISTS agent_messages (
  seq         INTEGER PRIMARY KEY,
  id          TEXT    NOT NULL UNIQUE,
  session_seq INTEGER NOT NULL REFERENCES agent_sessions (seq) ON DELETE CASCADE,
  agent_id    TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  role        TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
  content     TEXT    NOT NULL,
  run_id      TEXT    REFERENCES agent_runs (id) ON DELETE SET NULL,
  created_at  TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS agent_messages_by_session ON agent_messages (session_seq, seq);
CREATE INDEX IF NOT EXISTS agent_messages_by_agent ON agent_messages (agent_id);
CREATE INDEX IF NOT EXISTS agent_messages_by_run ON agent_messages (run_id) WHERE run_id IS NOT NULL;
