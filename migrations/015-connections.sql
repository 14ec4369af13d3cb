-- Connections: a model server (OpenAI-compatible API) and its key, set up once by a user and named by
-- agents (`llm.connectionId`), so that rotating the key or moving the server is one change.
CREATE TABLE connections (
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
CREATE INDEX connections_by_user ON connections (user_id, seq);

-- An agent's connection: one of the user's connections or a built-in one (`builtin-openai`,
-- `builtin-ollama`, which are not rows), so no foreign key; deleting a connection is refused while
-- an agent names it (src/connections/store.ts).
ALTER TABLE agents ADD COLUMN llm_connection_id TEXT;
CREATE INDEX agents_by_connection ON agents (llm_connection_id) WHERE llm_connection_id IS NOT NULL;
