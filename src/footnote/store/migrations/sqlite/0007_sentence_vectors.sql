-- Footnote SQLite store, migration 7: vectors of note sentences (the extractive answer's candidates),
-- embedded once on first use and kept, so a warm store embeds no passage sentence at question time.
-- Keyed by the embedder's name and the SHA-1 of the sentence text; vec is float32, little-endian,
-- L2-normalised like the fragments' own vectors. Rows of another embedder are dropped on a rebind.
CREATE TABLE IF NOT EXISTS sentence_vectors (
    embedder TEXT NOT NULL,
    key      TEXT NOT NULL,
    vec      BLOB NOT NULL,
    PRIMARY KEY (embedder, key)
) WITHOUT ROWID;
