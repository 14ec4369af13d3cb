-- Placeholder on the runs branch only: version 5 belongs to another branch. Drop this file when merging.
SELECT 1;
