-- Footnote SQLite store, migration 5: curated memory (pinned / boost / memory notes) and the vectors
-- of each note's triggers and body chunks, tagged with the embedder that made them (docs/memory.md).
CREATE TABLE IF NOT EXISTS memory_notes (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    triggers TEXT NOT NULL,
    sources TEXT NOT NULL,
    author TEXT NOT NULL,
    lang TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    origin TEXT NOT NULL,
    updated REAL NOT NULL,
    embedder TEXT
);
CREATE TABLE IF NOT EXISTS memory_vectors (
    note_id TEXT NOT NULL REFERENCES memory_notes (id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (note_id, ordinal)
);
