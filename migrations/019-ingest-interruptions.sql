-- Starts that found a document's ingestion left under way by a process that ended without stopping
-- it (killed, crashed): at the second such start the document fails instead of running again, so a
-- document that crashes the service cannot do it at every start.
ALTER TABLE documents ADD COLUMN ingest_interruptions INTEGER NOT NULL DEFAULT 0;
