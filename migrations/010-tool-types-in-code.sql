-- A tool's type is checked by the service against its tool kinds (src/tools/kinds/), no longer by a
-- CHECK listing them: a new kind then needs no table rebuild. SQLite cannot drop a CHECK, so the
-- table is rebuilt this once; seq is kept (lists of tools page by it), and agent_tools keep
-- pointing at the same ids.
CREATE TABLE new_tools (
  seq         INTEGER PRIMARY KEY,
  id          TEXT    NOT NULL UNIQUE,
  user_id     TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name        TEXT    NOT NULL,
  type        TEXT    NOT NULL,
  metadata    TEXT    NOT NULL,
  created_at  TEXT    NOT NULL,
  updated_at  TEXT    NOT NULL,
  description TEXT
);
INSERT INTO new_tools (seq, id, user_id, name, type, metadata, created_at, updated_at, description)
  SELECT seq, id, user_id, name, type, metadata, created_at, updated_at, description FROM tools;
DROP TABLE tools;
ALTER TABLE new_tools RENAME TO tools;
CREATE INDEX tools_by_user ON tools (user_id, seq);
