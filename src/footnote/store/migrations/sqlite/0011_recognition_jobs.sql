-- Footnote SQLite store, migration 11: speech-recognition and OCR jobs that `footnote ingest --recognise-later`
-- leaves for `footnote worker` (a placeholder source holds the original; the worker writes its passages).
CREATE TABLE IF NOT EXISTS recognition_jobs (
    source_id TEXT PRIMARY KEY,
    task      TEXT NOT NULL,
    options   TEXT NOT NULL,
    holder    TEXT NOT NULL DEFAULT '',
    until     REAL NOT NULL DEFAULT 0,
    tries     INTEGER NOT NULL DEFAULT 0,
    error     TEXT NOT NULL DEFAULT ''
);
