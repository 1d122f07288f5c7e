-- Footnote PostgreSQL store, migration 16: the store's one freshness mechanism covers its sources too. A
-- statement on ``sources`` sends the same notification as one on ``fragments`` (migration 13), so that every
-- process's corpus generation (footnote/store/pg_changes.py) moves when another process adds, replaces or
-- removes a source: the titles and books a turn reads are of the generation it opened at.
DROP TRIGGER IF EXISTS sources_changed ON sources;
CREATE TRIGGER sources_changed AFTER INSERT OR UPDATE OR DELETE ON sources
    FOR EACH STATEMENT EXECUTE FUNCTION footnote_fragments_changed();
DROP TRIGGER IF EXISTS sources_truncated ON sources;
CREATE TRIGGER sources_truncated AFTER TRUNCATE ON sources
    FOR EACH STATEMENT EXECUTE FUNCTION footnote_fragments_changed();
