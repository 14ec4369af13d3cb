-- Version 9: search finds word forms. The full-text index is rebuilt with the Porter stemmer in
-- front of the same unicode61 tokenizer, so "otter" finds "otters" and "heron" finds "Herons"
-- (both the indexed text and the query words are reduced to their stems).
DROP TRIGGER document_chunks_fts_insert;
DROP TRIGGER document_chunks_fts_delete;
DROP TABLE document_chunks_fts;
CREATE VIRTUAL TABLE document_chunks_fts USING fts5(
  content, owner, content = 'document_chunks', content_rowid = 'seq', tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO document_chunks_fts (document_chunks_fts) VALUES ('rebuild');
CREATE TRIGGER document_chunks_fts_insert AFTER INSERT ON document_chunks BEGIN
  INSERT INTO document_chunks_fts (rowid, content, owner) VALUES (new.seq, new.content, new.owner);
END;
CREATE TRIGGER document_chunks_fts_delete AFTER DELETE ON document_chunks BEGIN
  INSERT INTO document_chunks_fts (document_chunks_fts, rowid, content, owner) VALUES ('delete', old.seq, old.content, old.owner);
END;
