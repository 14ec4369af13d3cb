-- Version 3: chunks are stored in batches between other requests, so each chunk records which
-- ingestion run wrote it, and a document records which run's chunks it shows (NULL: none yet).
-- Chunks stored before this version belong to the last completed run: they get -1 and stay shown.
ALTER TABLE document_chunks ADD COLUMN generation INTEGER NOT NULL DEFAULT -1;
ALTER TABLE documents ADD COLUMN chunks_generation INTEGER;
UPDATE documents SET chunks_generation = -1 WHERE id IN (SELECT document_id FROM document_chunks);
