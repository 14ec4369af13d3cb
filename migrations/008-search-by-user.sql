-- Version 7: a search reads only the searching user's chunks. The full-text index gets the owner as
-- a second indexed column (`owner`: the user's id without dashes, one token); a search matches the
-- user's token in it AND the words in the content column, so FTS5 intersects the two lists instead
-- of reading every user's matches of a word and dropping the others' afterwards.
ALTER TABLE document_chunks ADD COLUMN owner TEXT GENERATED ALWAYS AS (replace(user_id, '-', '')) VIRTUAL;
DROP TRIGGER document_chunks_fts_insert;
DROP TRIGGER document_chunks_fts_delete;
DROP TABLE document_chunks_fts;
CREATE VIRTUAL TABLE document_chunks_fts USING fts5(
  content, owner, content = 'document_chunks', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO document_chunks_fts (document_chunks_fts) VALUES ('rebuild');
CREATE TRIGGER document_chunks_fts_insert AFTER INSERT ON document_chunks BEGIN
  INSERT INTO document_chunks_fts (rowid, content, owner) VALUES (new.seq, new.content, new.owner);
END;
CREATE TRIGGER document_chunks_fts_delete AFTER DELETE ON document_chunks BEGIN
  INSERT INTO document_chunks_fts (document_chunks_fts, rowid, content, owner) VALUES ('delete', old.seq, old.content, old.owner);
END;
