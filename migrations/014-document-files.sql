-- Files uploaded as documents (POST /documents with multipart/form-data): the file's name and
-- media type, and its bytes in parts written as they arrive (see src/documents/file-store.ts).
CREATE TABLE document_files (
  document_id  TEXT    PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
  filename     TEXT    NOT NULL,
  content_type TEXT    NOT NULL,
  size         INTEGER NOT NULL
);
CREATE TABLE document_file_parts (
  seq         INTEGER PRIMARY KEY,
  document_id TEXT    NOT NULL,
  part        INTEGER NOT NULL,
  bytes       BLOB    NOT NULL
);
CREATE UNIQUE INDEX document_file_parts_by_document ON document_file_parts (document_id, part);
CREATE TRIGGER document_files_deleted AFTER DELETE ON document_files BEGIN
  DELETE FROM document_file_parts WHERE document_id = old.document_id;
END;
