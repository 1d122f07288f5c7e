-- Footnote PostgreSQL store, migration 15: speech-recognition and OCR jobs that `footnote ingest
-- --recognise-later` leaves for `footnote worker` on any machine (a placeholder source holds the original; the
-- worker writes its passages). A claim is one UPDATE … RETURNING: two workers never hold one job.
CREATE TABLE IF NOT EXISTS recognition_jobs (
    source_id text PRIMARY KEY,
    task      text NOT NULL,
    options   text NOT NULL,
    holder    text NOT NULL DEFAULT '',
    until     double precision NOT NULL DEFAULT 0,
    tries     integer NOT NULL DEFAULT 0,
    error     text NOT NULL DEFAULT ''
);
