-- Footnote PostgreSQL store, migration 16: a statement on ``sources`` sends the notification of migration 13 with the
-- payload "<schema>:sources", so that every process's generation of the sources (footnote/store/pg_changes.py) moves
-- when another process adds, replaces or removes a source — the titles and books a turn reads are of the
-- generation it opened at — while a backlog's vector writes (statements on ``fragments`` alone) move only the
-- generation of the vectors.
CREATE OR REPLACE FUNCTION footnote_sources_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('footnote_fragments', TG_TABLE_SCHEMA || ':sources');
    RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS sources_changed ON sources;
CREATE TRIGGER sources_changed AFTER INSERT OR UPDATE OR DELETE ON sources
    FOR EACH STATEMENT EXECUTE FUNCTION footnote_sources_changed();
DROP TRIGGER IF EXISTS sources_truncated ON sources;
CREATE TRIGGER sources_truncated AFTER TRUNCATE ON sources
    FOR EACH STATEMENT EXECUTE FUNCTION footnote_sources_changed();
