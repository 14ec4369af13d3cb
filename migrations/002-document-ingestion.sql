-- Version 2: document ingestion (status lifecycle) and the chunks with their FTS5 index.
-- Documents that existed before get status 'pending', so the next start ingests them.
ALTER TABLE documents ADD COLUMN status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'ready', 'failed'));
ALTER TABLE documents ADD COLUMN error TEXT;
ALTER TABLE documents ADD COLUMN index_summary TEXT;
ALTER TABLE documents ADD COLUMN ingest_generation INTEGER NOT NULL DEFAULT 0;
CREATE INDEX documents_to_ingest ON documents (seq) WHERE status IN ('pending', 'processing');

CREATE TABLE document_chunks (
  seq         INTEGER PRIMARY KEY,
  id          TEXT    NOT NULL UNIQUE,
  user_id     TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  document_id TEXT    NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  position    INTEGER NOT NULL,
  content     TEXT    NOT NULL,
  created_at  TEXT    NOT NULL
);
CREATE INDEX document_chunks_by_document ON document_chunks (document_id, seq);
CREATE INDEX document_chunks_by_user ON document_chunks (user_id);

CREATE VIRTUAL TABLE document_chunks_fts USING fts5(
  content, content = 'document_chunks', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER document_chunks_fts_insert AFTER INSERT ON document_chunks BEGIN
  INSERT INTO document_chunks_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER document_chunks_fts_delete AFTER DELETE ON document_chunks BEGIN
  INSERT INTO document_chunks_fts (document_chunks_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
