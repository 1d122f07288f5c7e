-- Footnote PostgreSQL store, migration 12: the lexical lanes' tsvectors move to a narrow table of their
-- own, kept inside its rows. In ``fragments`` each tsvector (≈ 900 bytes) was stored out of line in
-- TOAST, beside a row already holding the text and the vector: ranking a lexical lane read every
-- matching row's tsvector through the TOAST index — 4 buffers a row, two thirds of the lane's CPU
-- (a common word matches thousands of rows). ``fragment_terms`` holds (id, kind, the two tsvectors
-- STORAGE MAIN: inline) and the GIN indexes; ``fragments`` keeps what the dense scans read, narrower.
-- Triggers keep the two tables in step (one statement per write, as before), the lexeme statistics
-- now follow ``fragment_terms`` (the same functions: the column names are the same), and an
-- UPDATE of a fragment's vector no longer touches the GIN indexes.
CREATE TABLE fragment_terms (
    id        text PRIMARY KEY,
    kind      text NOT NULL,
    tsv_stem  tsvector NOT NULL,
    tsv_plain tsvector NOT NULL
);
ALTER TABLE fragment_terms ALTER COLUMN tsv_stem SET STORAGE MAIN, ALTER COLUMN tsv_plain SET STORAGE MAIN;
INSERT INTO fragment_terms (id, kind, tsv_stem, tsv_plain) SELECT id, kind, tsv_stem, tsv_plain FROM fragments;
CREATE INDEX fragment_terms_tsv_stem ON fragment_terms USING gin (tsv_stem);
CREATE INDEX fragment_terms_tsv_plain ON fragment_terms USING gin (tsv_plain);

DROP TRIGGER fragments_lexeme_stats_ins ON fragments;
DROP TRIGGER fragments_lexeme_stats_del ON fragments;
CREATE TRIGGER fragment_terms_lexeme_stats_ins AFTER INSERT ON fragment_terms
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION footnote_lexeme_stats_add();
CREATE TRIGGER fragment_terms_lexeme_stats_del AFTER DELETE ON fragment_terms
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION footnote_lexeme_stats_remove();

CREATE FUNCTION footnote_terms_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fragment_terms (id, kind, tsv_stem, tsv_plain)
    SELECT id, kind, to_tsvector(footnote_ts_config(lang), tokens), to_tsvector('simple'::regconfig, tokens)
    FROM new_rows;
    RETURN NULL;
END $$;

CREATE FUNCTION footnote_terms_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fragment_terms t USING old_rows o WHERE t.id = o.id;
    RETURN NULL;
END $$;

-- a change of what the terms are made of (the store never does this; a hand-made UPDATE might)
CREATE FUNCTION footnote_terms_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fragment_terms WHERE id = OLD.id;
    INSERT INTO fragment_terms (id, kind, tsv_stem, tsv_plain)
    VALUES (NEW.id, NEW.kind, to_tsvector(footnote_ts_config(NEW.lang), NEW.tokens),
            to_tsvector('simple'::regconfig, NEW.tokens));
    RETURN NULL;
END $$;

CREATE TRIGGER fragments_terms_ins AFTER INSERT ON fragments
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION footnote_terms_add();
CREATE TRIGGER fragments_terms_del AFTER DELETE ON fragments
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION footnote_terms_remove();
CREATE TRIGGER fragments_terms_upd AFTER UPDATE OF id, kind, lang, tokens ON fragments
    FOR EACH ROW EXECUTE FUNCTION footnote_terms_update();

DROP INDEX IF EXISTS fragments_tsv_stem;
DROP INDEX IF EXISTS fragments_tsv_plain;
ALTER TABLE fragments DROP COLUMN tsv_stem, DROP COLUMN tsv_plain;
