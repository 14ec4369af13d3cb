-- Whether a tool's sealed metadata holds `headers`, kept beside it so that answers can say so
-- (`hasHeaders`) without opening the sealed metadata. Tools stored before this step have none:
-- the only kind that shows the flag (MCP) arrived in the same release.
ALTER TABLE tools ADD COLUMN has_headers INTEGER NOT NULL DEFAULT 0;
