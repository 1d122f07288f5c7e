-- Footnote SQLite store, migration 1: the initial schema.
-- Applied inside one BEGIN IMMEDIATE transaction; PRAGMA user_version is set to 1 in the same one.

-- Key/value facts about the store: embedder name and dim, a write generation counter.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('generation', '0');

-- Original files, content-addressed and shared between sources with the same bytes.
CREATE TABLE originals (
    sha256 TEXT PRIMARY KEY,
    size   INTEGER NOT NULL,
    data   BLOB NOT NULL
);

CREATE TABLE sources (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    title         TEXT NOT NULL,
    lang          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    blob_sha256   TEXT NOT NULL REFERENCES originals (sha256),
    original_name TEXT NOT NULL,
    media_type    TEXT NOT NULL,
    origin        TEXT NOT NULL DEFAULT '',
    meta          TEXT NOT NULL DEFAULT '{}',   -- JSON object of strings
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX sources_blob ON sources (blob_sha256);

-- One searchable unit. rowid (``rid``) is the join key of embeddings and both FTS tables.
-- loc_type: 't' transcript (track_id, start_ms, end_ms), 'a' address (book, loc, addr_label),
--           'f' file (file, page, section).
CREATE TABLE fragments (
    rid          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    source_id    TEXT NOT NULL REFERENCES sources (id),
    ordinal      INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    lang         TEXT NOT NULL,
    text         TEXT NOT NULL,
    loc_type     TEXT NOT NULL CHECK (loc_type IN ('t', 'a', 'f')),
    track_id     TEXT,
    start_ms     INTEGER,
    end_ms       INTEGER,
    book         TEXT,
    book_key     TEXT,            -- casefolded book, for the exact address lookup
    loc          TEXT,
    addr_label   TEXT,
    file         TEXT,
    page         INTEGER,
    section      TEXT,
    content_hash TEXT NOT NULL
);
CREATE INDEX fragments_source ON fragments (source_id, ordinal);
CREATE INDEX fragments_address ON fragments (book_key, loc) WHERE book_key IS NOT NULL;

-- L2-normalised float32 vectors (little-endian), one per embedded fragment.
CREATE TABLE embeddings (
    rid INTEGER PRIMARY KEY REFERENCES fragments (rid),
    vec BLOB NOT NULL
);

-- Lexical lanes: ``stemmed`` holds Snowball stems by the fragment's language, ``plain`` the folded
-- tokens (footnote.store.text); unicode61 with remove_diacritics 2 folds once more at query time;
-- combining marks (category M) are token characters, as in footnote.store.text (Devanagari words whole).
CREATE VIRTUAL TABLE fts USING fts5 (
    stemmed,
    plain,
    tokenize = 'unicode61 remove_diacritics 2 categories ''L* N* Co M*'''
);

-- Document frequency per (term, column): very common query terms are left out of a lexical query.
CREATE VIRTUAL TABLE fts_vocab USING fts5vocab (fts, 'col');

-- Fuzzy address / id lane: addr_label || ' ' || source_id || ' ' || plain tokens, folded.
-- Queries are single trigrams OR-ed, so no positions are needed (detail=none: half the work).
CREATE VIRTUAL TABLE trigram USING fts5 (
    body,
    tokenize = 'trigram',
    detail = none,
    columnsize = 0
);
-- Document frequency per trigram, to query with a question's rarest trigrams only.
CREATE VIRTUAL TABLE trigram_vocab USING fts5vocab (trigram, 'row');
