-- Footnote PostgreSQL store, migration 8: curated memory (pinned / boost / memory notes) and the
-- vectors of each note's triggers and body chunks (float32 bytes: notes are few and matched with
-- numpy), tagged with the embedder that made them (docs/memory.md).
CREATE TABLE IF NOT EXISTS memory_notes (
    id text PRIMARY KEY,
    kind text NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    triggers jsonb NOT NULL,
    sources jsonb NOT NULL,
    author text NOT NULL,
    lang text NOT NULL,
    content_hash text NOT NULL,
    origin text NOT NULL,
    updated double precision NOT NULL,
    embedder text
);
CREATE TABLE IF NOT EXISTS memory_vectors (
    note_id text NOT NULL REFERENCES memory_notes (id) ON DELETE CASCADE,
    ordinal integer NOT NULL,
    text text NOT NULL,
    vector bytea NOT NULL,
    PRIMARY KEY (note_id, ordinal)
);
