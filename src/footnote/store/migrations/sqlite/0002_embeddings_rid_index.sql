-- Footnote SQLite store, migration 2: a covering index of the embedded row ids. The dense cache lists
-- them to refresh incrementally after a write (drop rows gone, read rows new) instead of reading every
-- vector page again; COUNT(*) on embeddings uses it too.
CREATE INDEX IF NOT EXISTS embeddings_rid ON embeddings (rid);
