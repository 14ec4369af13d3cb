-- The whole schema of the service, applied by src/db.ts to a new database file.
--
-- Conventions:
--   * `seq` is the internal row order (creation order, used for keyset pagination);
--     `id` is the opaque public identifier (UUID v4) and never leaves the database as a number.
--   * Every record carries the owning `user_id`; deleting a user deletes everything it owns.
--   * Timestamps are TEXT in ISO 8601 with six fractional digits and +00:00.
--   * JSON columns hold objects written by the service (never concatenated SQL).

CREATE TABLE IF NOT EXISTS users (
  seq           INTEGER PRIMARY KEY,
  id            TEXT    NOT NULL UNIQUE,
  email         TEXT    NOT NULL UNIQUE COLLATE NOCASE,  -- stored trimmed and lower-cased
  name          TEXT    NOT NULL,
  password_hash TEXT    NOT NULL,                        -- $scrypt$ln=..,r=..,p=..$salt$hash
  created_at    TEXT    NOT NULL,
  updated_at    TEXT    NOT NULL,
  disabled_at   TEXT                                     -- set by user:disable: no sign-in, tokens refused
);

CREATE TABLE IF NOT EXISTS api_tokens (
  seq          INTEGER PRIMARY KEY,
  id           TEXT    NOT NULL UNIQUE,
  user_id      TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  description  TEXT    NOT NULL,
  token        TEXT    NOT NULL,         -- kept because the interface returns it in full
  token_digest BLOB    NOT NULL UNIQUE,  -- SHA-256 of token: the only column requests look up by
  created_at   TEXT    NOT NULL,
  updated_at   TEXT    NOT NULL,
  expires_at   TEXT,                     -- NULL: never expires
  last_used_at TEXT                      -- refreshed at most once a minute, so reads stay reads
);
CREATE INDEX IF NOT EXISTS api_tokens_by_user ON api_tokens (user_id, seq);

CREATE TABLE IF NOT EXISTS prompts (
  seq             INTEGER PRIMARY KEY,
  id              TEXT    NOT NULL UNIQUE,
  user_id         TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name            TEXT    NOT NULL,
  template        TEXT    NOT NULL,
  input_variables TEXT    NOT NULL,      -- JSON array of strings
  created_at      TEXT    NOT NULL,
  updated_at      TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS prompts_by_user ON prompts (user_id, seq);

CREATE TABLE IF NOT EXISTS tags (
  seq        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL UNIQUE,
  user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name       TEXT    NOT NULL,
  color      TEXT    NOT NULL,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS tags_by_user ON tags (user_id, seq);
-- Tag names are unique per user, whatever their case.
CREATE UNIQUE INDEX IF NOT EXISTS tags_unique_name ON tags (user_id, name COLLATE NOCASE);

CREATE TABLE IF NOT EXISTS tools (
  seq        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL UNIQUE,
  user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name       TEXT    NOT NULL,
  type       TEXT    NOT NULL,           -- one of the tool kinds (src/tools/kinds/), checked by the service
  metadata   TEXT    NOT NULL,           -- JSON object of settings, sealed (AES-256-GCM): may hold secrets
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL,
  description TEXT,                      -- what the model is told the tool does (NULL: a default per type)
  has_headers INTEGER NOT NULL DEFAULT 0  -- 1 when the sealed metadata holds headers (shown as hasHeaders, never the headers)
);
CREATE INDEX IF NOT EXISTS tools_by_user ON tools (user_id, seq);

CREATE TABLE IF NOT EXISTS documents (
  seq           INTEGER PRIMARY KEY,
  id            TEXT    NOT NULL UNIQUE,
  user_id       TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name          TEXT    NOT NULL,
  type          TEXT    NOT NULL CHECK (type IN ('TXT', 'PDF', 'VIDEO', 'CSV', 'URL')),
  url           TEXT    NOT NULL,
  from_page     INTEGER NOT NULL,
  to_page       INTEGER,                 -- NULL: to the last page
  authorization TEXT,                    -- JSON object or NULL, sealed (AES-256-GCM): access credentials
  splitter      TEXT,                    -- JSON object or NULL (the default splitter)
  metadata      TEXT    NOT NULL,        -- JSON object
  created_at    TEXT    NOT NULL,
  updated_at    TEXT    NOT NULL,
  -- Ingestion (src/documents/ingestion.ts): pending → processing → ready | failed.
  status            TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'ready', 'failed')),
  error             TEXT,              -- why ingestion failed, for people
  index_summary     TEXT,              -- JSON summary of the last successful ingestion
  ingest_generation INTEGER NOT NULL DEFAULT 0, -- bumped by each request, so a superseded run is discarded
  chunks_generation INTEGER,                    -- the run whose chunks are shown (NULL: none yet)
  -- Starts that found this request's ingestion left under way by a process that ended without
  -- stopping it (killed, crashed); at the second it fails instead of running again.
  ingest_interruptions INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS documents_by_user ON documents (user_id, seq);
CREATE INDEX IF NOT EXISTS documents_to_ingest ON documents (seq) WHERE status IN ('pending', 'processing');

-- The text of ingested documents, in order, and a BM25 full-text index over it (FTS5).
-- No foreign keys: deleting a document (or its user) must not delete thousands of chunks in the
-- same statement. Chunks of a deleted document are invisible (readers join to documents) and are
-- deleted in the background, a batch at a time, from the list in chunk_sweeps.
CREATE TABLE IF NOT EXISTS document_chunks (
  seq         INTEGER PRIMARY KEY,
  id          TEXT    NOT NULL UNIQUE,
  user_id     TEXT    NOT NULL,         -- the owner when it was written
  document_id TEXT    NOT NULL,         -- documents.id; the document may be gone (see above)
  position    INTEGER NOT NULL,
  content     TEXT    NOT NULL,
  created_at  TEXT    NOT NULL,
  generation  INTEGER NOT NULL DEFAULT -1, -- the ingestion run that wrote it: shown only once that run completed
  owner       TEXT GENERATED ALWAYS AS (replace(user_id, '-', '')) VIRTUAL -- user_id as one full-text token
);
CREATE INDEX IF NOT EXISTS document_chunks_by_document ON document_chunks (document_id, seq);

-- External-content FTS5 table: the text lives once, in document_chunks; triggers keep the index
-- in step. The owner is indexed too (one token), so a search intersects "this user's chunks" with
-- the words' matches inside FTS5 instead of reading every user's matches. Words are indexed and
-- searched by their Porter stem (case and accents folded first), so "otter" finds "Otters".
CREATE VIRTUAL TABLE IF NOT EXISTS document_chunks_fts USING fts5(
  content, owner, content = 'document_chunks', content_rowid = 'seq', tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS document_chunks_fts_insert AFTER INSERT ON document_chunks BEGIN
  INSERT INTO document_chunks_fts (rowid, content, owner) VALUES (new.seq, new.content, new.owner);
END;
CREATE TRIGGER IF NOT EXISTS document_chunks_fts_delete AFTER DELETE ON document_chunks BEGIN
  INSERT INTO document_chunks_fts (document_chunks_fts, rowid, content, owner) VALUES ('delete', old.seq, old.content, old.owner);
END;

-- Documents that may have chunks nobody sees: deleted ones (directly or with their user), and ones
-- whose ingestion run completed, failed or was superseded (the other runs' chunks).
CREATE TABLE IF NOT EXISTS chunk_sweeps (
  document_id TEXT PRIMARY KEY
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS documents_deleted AFTER DELETE ON documents BEGIN
  INSERT OR IGNORE INTO chunk_sweeps (document_id) VALUES (old.id);
END;

-- Files uploaded as documents (POST /documents with multipart/form-data): the file's name and
-- media type, and its bytes in parts written as they arrive. The parts are keyed by the id the
-- document will have: it is created only once the whole file has arrived and been checked, so the
-- parts have no foreign key; those of an upload that ended without a document are deleted by the
-- upload itself, or at the next start (see src/documents/file-store.ts).
CREATE TABLE IF NOT EXISTS document_files (
  document_id  TEXT    PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
  filename     TEXT    NOT NULL,
  content_type TEXT    NOT NULL,       -- what GET /documents/{id}/file answers it as
  size         INTEGER NOT NULL        -- bytes
);
CREATE TABLE IF NOT EXISTS document_file_parts (
  seq         INTEGER PRIMARY KEY,
  document_id TEXT    NOT NULL,
  part        INTEGER NOT NULL,         -- 0, 1, 2 … in file order
  bytes       BLOB    NOT NULL          -- at most 256 KiB
);
CREATE UNIQUE INDEX IF NOT EXISTS document_file_parts_by_document ON document_file_parts (document_id, part);
CREATE TRIGGER IF NOT EXISTS document_files_deleted AFTER DELETE ON document_files BEGIN
  DELETE FROM document_file_parts WHERE document_id = old.document_id;
END;

-- Connections (src/connections/): a user's model server (an OpenAI-compatible API) and its key
-- (sealed, src/lib/secrets.ts), set up once and named by agents' llm.connectionId.
CREATE TABLE IF NOT EXISTS connections (
  seq        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL UNIQUE,
  user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name       TEXT    NOT NULL,
  provider   TEXT    NOT NULL,
  base_url   TEXT    NOT NULL,
  api_key    TEXT,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS connections_by_user ON connections (user_id, seq);

CREATE TABLE IF NOT EXISTS agents (
  seq          INTEGER PRIMARY KEY,
  id           TEXT    NOT NULL UNIQUE,
  user_id      TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name         TEXT    NOT NULL,
  type         TEXT    NOT NULL CHECK (type IN ('VENDOR_A', 'REACT')),
  llm_model    TEXT    NOT NULL,
  llm_provider TEXT    NOT NULL,
  llm_extra    TEXT    NOT NULL,         -- unused: '{}' (older versions kept other llm keys here, sealed; never read)
  llm_base_url TEXT,                     -- the model server (OpenAI-compatible); null: the operator's default
  llm_api_key  TEXT,                     -- the key for it, sealed; never returned
  has_memory   INTEGER NOT NULL CHECK (has_memory IN (0, 1)),
  prompt_id    TEXT    REFERENCES prompts (id) ON DELETE SET NULL,
  document_id  TEXT    REFERENCES documents (id) ON DELETE SET NULL,
  created_at   TEXT    NOT NULL,
  updated_at   TEXT    NOT NULL,
  description  TEXT,
  avatar_url   TEXT,
  is_listed    INTEGER NOT NULL DEFAULT 0 CHECK (is_listed IN (0, 1)), -- shown to every user in the library
  -- A connection (src/connections/) that supplies the server and key: one of the user's or a built-in
  -- id (`builtin-openai`, `builtin-ollama`, not rows), so no foreign key; null: llm_base_url/llm_api_key.
  llm_connection_id TEXT,
  -- The document of its oldest agent-document link, or null: kept by the triggers on agent_documents
  -- (below), so that reading agents shows it without searching the links. No foreign key: deleting a
  -- document deletes its links, whose trigger sets the next one.
  linked_document_id TEXT
);
CREATE INDEX IF NOT EXISTS agents_by_user ON agents (user_id, seq);
CREATE INDEX IF NOT EXISTS agents_listed ON agents (seq) WHERE is_listed = 1;
-- Serve ON DELETE SET NULL without a table scan.
CREATE INDEX IF NOT EXISTS agents_by_prompt ON agents (prompt_id) WHERE prompt_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS agents_by_document ON agents (document_id) WHERE document_id IS NOT NULL;
-- Which agents use a connection (its delete is refused while any does; a provider change reaches them).
CREATE INDEX IF NOT EXISTS agents_by_connection ON agents (llm_connection_id) WHERE llm_connection_id IS NOT NULL;

-- An agent's tags, in the order the client gave them.
CREATE TABLE IF NOT EXISTS agent_tags (
  agent_id TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  tag_id   TEXT    NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  PRIMARY KEY (agent_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS agent_tags_by_tag ON agent_tags (tag_id);

CREATE TABLE IF NOT EXISTS agent_documents (
  seq         INTEGER PRIMARY KEY,
  id          TEXT    NOT NULL UNIQUE,
  user_id     TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  agent_id    TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  document_id TEXT    NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  created_at  TEXT    NOT NULL,
  updated_at  TEXT    NOT NULL,
  UNIQUE (agent_id, document_id)
);
CREATE INDEX IF NOT EXISTS agent_documents_by_user ON agent_documents (user_id, seq);
CREATE INDEX IF NOT EXISTS agent_documents_by_document ON agent_documents (document_id);
-- Keep agents.linked_document_id the document of the agent's oldest link, whichever way a link is
-- made or goes (unlinked, or deleted with its document, agent or user); links are never changed in place.
CREATE TRIGGER IF NOT EXISTS agent_documents_linked AFTER INSERT ON agent_documents BEGIN
  UPDATE agents SET linked_document_id = (SELECT l.document_id FROM agent_documents l WHERE l.agent_id = new.agent_id ORDER BY l.seq LIMIT 1)
   WHERE id = new.agent_id;
END;
CREATE TRIGGER IF NOT EXISTS agent_documents_unlinked AFTER DELETE ON agent_documents BEGIN
  UPDATE agents SET linked_document_id = (SELECT l.document_id FROM agent_documents l WHERE l.agent_id = old.agent_id ORDER BY l.seq LIMIT 1)
   WHERE id = old.agent_id;
END;

CREATE TABLE IF NOT EXISTS agent_tools (
  seq        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL UNIQUE,
  user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  agent_id   TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  tool_id    TEXT    NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL,
  -- The model's calls of this tool by this agent wait for a person's approval.
  requires_approval INTEGER NOT NULL DEFAULT 0,
  UNIQUE (agent_id, tool_id)
);
CREATE INDEX IF NOT EXISTS agent_tools_by_user ON agent_tools (user_id, seq);
CREATE INDEX IF NOT EXISTS agent_tools_by_tool ON agent_tools (tool_id);

-- Runs (src/runs/): every invocation of an agent, nested ones with their parent. A run is
-- queued → running ⇄ requires_action → succeeded | failed | cancelled; one left queued or running
-- by a stopped process is failed at start, one waiting for approval keeps waiting (`state` holds
-- its conversation so far, `actions` the calls that wait). `background`: it goes on without its client.
-- Memory: an agent's sessions and their messages (inputs and final answers), oldest first.
CREATE TABLE IF NOT EXISTS agent_runs (
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
  error_code    TEXT,
  session_seq   INTEGER, -- the agent_sessions row its turn (input and output) belongs to; null: no turn remembered
  turn_seq      INTEGER  -- the turn's number in that session (1, 2, 3 … in the order the turns ended)
);
CREATE INDEX IF NOT EXISTS agent_runs_by_user ON agent_runs (user_id, seq);
CREATE INDEX IF NOT EXISTS agent_runs_by_agent ON agent_runs (agent_id, seq);
CREATE INDEX IF NOT EXISTS agent_runs_by_parent ON agent_runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS agent_runs_under_way ON agent_runs (seq) WHERE status IN ('queued', 'running', 'requires_action');
-- A session's turns, in the order they ended (src/runs/memory-store.ts).
CREATE INDEX IF NOT EXISTS agent_runs_by_session ON agent_runs (session_seq, turn_seq) WHERE session_seq IS NOT NULL;

-- A run's events, numbered 1, 2, 3 … within the run (tokens merged into fewer events). The event
-- that ends a log (done or error) is not stored: it is the run record's end, read from agent_runs.
CREATE TABLE IF NOT EXISTS run_events (
  run_seq INTEGER NOT NULL REFERENCES agent_runs (seq) ON DELETE CASCADE,
  seq     INTEGER NOT NULL,
  name    TEXT    NOT NULL,
  data    TEXT    NOT NULL,
  PRIMARY KEY (run_seq, seq)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS agent_sessions (
  seq        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL,
  agent_id   TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL,
  last_turn  INTEGER NOT NULL DEFAULT 0,  -- the number of its latest turn kept on a run (agent_runs.turn_seq)
  UNIQUE (agent_id, id)
);

-- A session's messages that are not a run's turn kept on its record (agent_runs.session_seq): the
-- turns older versions wrote here, and the sessions an import brings in; they come before the
-- session's run turns. Their agent is the session's, and a message is found by its id or its run
-- within its session. run_id has no foreign key: a run's turn is deleted with the run (deleteRun in
-- src/runs/store.ts), and a run deleted with its agent goes with its sessions.
CREATE TABLE IF NOT EXISTS agent_messages (
  seq         INTEGER PRIMARY KEY,
  id          TEXT    NOT NULL,
  session_seq INTEGER NOT NULL REFERENCES agent_sessions (seq) ON DELETE CASCADE,
  role        TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
  content     TEXT    NOT NULL,
  run_id      TEXT,
  created_at  TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS agent_messages_by_session ON agent_messages (session_seq, seq);
CREATE INDEX IF NOT EXISTS agent_messages_by_id ON agent_messages (session_seq, id);
CREATE INDEX IF NOT EXISTS agent_messages_by_run ON agent_messages (session_seq, run_id) WHERE run_id IS NOT NULL;

-- Webhooks (src/webhooks/): a user's receivers and the outbox of their deliveries. `events` is a JSON
-- array of event names ("*": all). The secrets are sealed (src/lib/secrets.ts); after a rotation the
-- previous one still signs until `previous_secret_until` (ms since the epoch). `failing_since`: when
-- the first failed attempt since the last delivered one was made (5 days of that disables it).
CREATE TABLE IF NOT EXISTS webhooks (
  seq                   INTEGER PRIMARY KEY,
  id                    TEXT    NOT NULL UNIQUE,
  user_id               TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  url                   TEXT    NOT NULL,
  events                TEXT    NOT NULL,
  description           TEXT    NOT NULL DEFAULT '',
  enabled               INTEGER NOT NULL DEFAULT 1,
  disabled_reason       TEXT,
  secret                TEXT    NOT NULL,
  previous_secret       TEXT,
  previous_secret_until INTEGER,
  failing_since         INTEGER,
  created_at            TEXT    NOT NULL,
  updated_at            TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_by_user ON webhooks (user_id, seq);

-- One delivery of one event to one webhook: its id is the `webhook-id` header, the same on every
-- attempt; `payload` the body as sent. A pending delivery is due at `next_attempt_ms`.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  seq              INTEGER PRIMARY KEY,
  id               TEXT    NOT NULL UNIQUE,
  webhook_id       TEXT    NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  user_id          TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  event            TEXT    NOT NULL,
  payload          TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  last_status_code INTEGER,
  last_error       TEXT,
  next_attempt_ms  INTEGER,
  created_at       TEXT    NOT NULL,
  delivered_at     TEXT
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, seq);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (user_id, next_attempt_ms) WHERE status = 'pending';
