-- Placeholder on the bench branch only: version 6 belongs to another branch. Drop this file when merging.
SELECT 1;
