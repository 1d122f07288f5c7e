-- Footnote SQLite store, migration 12: a second counter beside `generation`. `generation` moves with every write of
-- the corpus, vectors included (the dense snapshot, the gate's background sample); `sources_generation` only when a
-- source is added, replaced or removed — what the books, the prose check's names and the example questions are
-- derived from, so a backlog's vector writes do not make every turn rebuild them.
INSERT OR IGNORE INTO meta (key, value) VALUES ('sources_generation', '0');
