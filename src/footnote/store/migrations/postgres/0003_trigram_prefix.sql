-- Footnote PostgreSQL store, migration 3: the trigram (address) lane indexes the first 256 characters
-- of the folded tokens, not all of them. word_similarity() re-checks every candidate against the
-- whole indexed string; over ~1 kB transcript windows that cost seconds per query at 10k fragments,
-- while the lane exists for canonical addresses, ids and the opening words of verses (the lexical
-- lanes match the full text, IAST included).
DROP INDEX IF EXISTS fragments_trgm;
CREATE INDEX fragments_trgm ON fragments
    USING gin ((addr_key || ' ' || source_id || ' ' || left(tokens, 256)) gin_trgm_ops);
