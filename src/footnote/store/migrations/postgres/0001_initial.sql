-- Footnote PostgreSQL store, migration 1: the initial schema (the seed's own layout).
-- Applied by footnote.store.postgres inside one transaction holding an advisory lock, after it has
-- checked that the extensions ``vector`` (pgvector) and ``pg_trgm`` are installed in this database.
-- Tables are created in the first schema of the connection's search_path.

-- Key/value facts about the store: embedder name and dim, HNSW parameters.
CREATE TABLE footnote_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- Original files as uploaded, content-addressed (sha256) and shared between sources with the same
-- bytes. A bytea table, not large objects: it is written in the same transaction as the source,
-- replicated and dumped like any row, deleted by an ordinary DELETE (no lo_unlink/vacuumlo), TOAST
-- compresses and slices it (substring() serves HTTP Range); the 1 GB bytea limit is far above a
-- lecture's audio.
CREATE TABLE originals (
    sha256 text PRIMARY KEY,
    size   bigint NOT NULL,
    data   bytea NOT NULL
);

CREATE TABLE sources (
    id            text PRIMARY KEY,
    kind          text NOT NULL,
    title         text NOT NULL,
    lang          text NOT NULL,
    content_hash  text NOT NULL,
    blob_sha256   text NOT NULL REFERENCES originals (sha256),
    original_name text NOT NULL,
    media_type    text NOT NULL,
    origin        text NOT NULL DEFAULT '',
    meta          jsonb NOT NULL DEFAULT '{}',
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sources_blob ON sources (blob_sha256);

-- One searchable unit. ``locator`` is the JSON of footnote.corpus.records.locator_to_dict;
-- book/book_key/loc/addr_label are copied out of address locators for the address lanes.
-- ``tokens`` holds the folded tokens of the text (footnote.store.text.plain_text: lower-case,
-- diacritics folded, ё→е), the input of both tsvectors and the trigram string.
-- ``embedding`` gets its dimension (vector(dim)) and its HNSW index when an embedder is bound.
CREATE TABLE fragments (
    id           text PRIMARY KEY,
    source_id    text NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    ordinal      integer NOT NULL,
    kind         text NOT NULL,
    lang         text NOT NULL,
    text         text NOT NULL,
    locator      jsonb NOT NULL,
    content_hash text NOT NULL,
    book         text,
    book_key     text,
    loc          text,
    addr_label   text NOT NULL DEFAULT '',
    addr_key     text NOT NULL DEFAULT '',
    tokens       text NOT NULL,
    -- stemmed lane: Snowball by the fragment's language (PostgreSQL's own russian/english configs;
    -- the russian config stems Latin-script words with english_stem); other languages unstemmed.
    tsv_stem     tsvector GENERATED ALWAYS AS (
        to_tsvector(
            CASE lang WHEN 'ru' THEN 'russian'::regconfig WHEN 'en' THEN 'english'::regconfig
                      ELSE 'simple'::regconfig END,
            tokens)
    ) STORED,
    -- unstemmed lane: verbatim folded tokens (Sanskrit transliteration survives).
    tsv_plain    tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, tokens)) STORED,
    embedding    vector
);
CREATE INDEX fragments_source ON fragments (source_id, ordinal);
CREATE INDEX fragments_kind ON fragments (kind);
CREATE INDEX fragments_address ON fragments (book_key, loc) WHERE book_key IS NOT NULL;
CREATE INDEX fragments_tsv_stem ON fragments USING gin (tsv_stem);
CREATE INDEX fragments_tsv_plain ON fragments USING gin (tsv_plain);
CREATE INDEX fragments_trgm ON fragments USING gin ((addr_key || ' ' || source_id || ' ' || tokens) gin_trgm_ops);
