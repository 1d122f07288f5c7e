-- Footnote PostgreSQL store, migration 13: a notification on every change to fragments, so that a
-- process keeping its own copy of a small kind group's vectors for exact dense search
-- (store.pg_exact_cache, footnote/store/pg_exact.py) drops that copy when another process writes.
-- NOTIFY is transactional (delivered at commit; identical ones collapse within a transaction) and takes
-- no row lock, so concurrent writers (ingestion, embedding workers) do not wait on each other for it.
CREATE OR REPLACE FUNCTION footnote_fragments_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('footnote_fragments', TG_TABLE_SCHEMA);  -- the schema of the table written
    RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS fragments_changed ON fragments;
CREATE TRIGGER fragments_changed AFTER INSERT OR UPDATE OR DELETE ON fragments
    FOR EACH STATEMENT EXECUTE FUNCTION footnote_fragments_changed();
DROP TRIGGER IF EXISTS fragments_truncated ON fragments;
CREATE TRIGGER fragments_truncated AFTER TRUNCATE ON fragments
    FOR EACH STATEMENT EXECUTE FUNCTION footnote_fragments_changed();
