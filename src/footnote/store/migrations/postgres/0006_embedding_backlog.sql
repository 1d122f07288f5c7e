-- Footnote PostgreSQL store, migration 6: the embedding backlog. Fragments are written (and searchable on
-- the lexical lanes) before they have a vector; a backlog worker lists the ones without one, by id, and
-- fills them in. This partial index keeps that listing cheap however large the embedded part grows.
CREATE INDEX IF NOT EXISTS fragments_unembedded ON fragments (id) WHERE embedding IS NULL;
