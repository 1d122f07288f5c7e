-- Footnote PostgreSQL store, migration 2: document frequencies for the lexical lanes.
-- ts_rank has no inverse document frequency, so a query's common words would outweigh its rare
-- ones. ``lexeme_stats`` keeps, per tsvector column ('s' stemmed, 'p' plain), how many fragments hold
-- each lexeme, plus the fragment count (col 'n', lexeme ''). Statement-level triggers with transition
-- tables keep it exact inside the writing transaction; the store weights each query lexeme's
-- ts_rank by its BM25 idf.
CREATE TABLE lexeme_stats (
    col    "char" NOT NULL,
    lexeme text NOT NULL,
    df     integer NOT NULL,
    PRIMARY KEY (col, lexeme)
);

CREATE FUNCTION footnote_lexeme_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lexeme_stats (col, lexeme, df)
    SELECT c, lx, count(*) FROM (
        SELECT 's'::"char" AS c, unnest(tsvector_to_array(tsv_stem)) AS lx FROM new_rows
        UNION ALL SELECT 'p'::"char", unnest(tsvector_to_array(tsv_plain)) FROM new_rows
        UNION ALL SELECT 'n'::"char", '' FROM new_rows
    ) t GROUP BY c, lx ORDER BY c, lx
    ON CONFLICT (col, lexeme) DO UPDATE SET df = lexeme_stats.df + EXCLUDED.df;
    RETURN NULL;
END $$;

CREATE FUNCTION footnote_lexeme_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE lexeme_stats s SET df = s.df - t.n FROM (
        SELECT c, lx, count(*) AS n FROM (
            SELECT 's'::"char" AS c, unnest(tsvector_to_array(tsv_stem)) AS lx FROM old_rows
            UNION ALL SELECT 'p'::"char", unnest(tsvector_to_array(tsv_plain)) FROM old_rows
            UNION ALL SELECT 'n'::"char", '' FROM old_rows
        ) u GROUP BY c, lx
    ) t WHERE s.col = t.c AND s.lexeme = t.lx;
    DELETE FROM lexeme_stats WHERE df <= 0 AND col <> 'n';
    RETURN NULL;
END $$;

CREATE TRIGGER fragments_lexeme_stats_ins AFTER INSERT ON fragments
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION footnote_lexeme_stats_add();
CREATE TRIGGER fragments_lexeme_stats_del AFTER DELETE ON fragments
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION footnote_lexeme_stats_remove();

-- Backfill from fragments already stored.
INSERT INTO lexeme_stats (col, lexeme, df)
SELECT c, lx, count(*) FROM (
    SELECT 's'::"char" AS c, unnest(tsvector_to_array(tsv_stem)) AS lx FROM fragments
    UNION ALL SELECT 'p'::"char", unnest(tsvector_to_array(tsv_plain)) FROM fragments
) t GROUP BY c, lx;
INSERT INTO lexeme_stats (col, lexeme, df) SELECT 'n', '', count(*) FROM fragments;
