-- Footnote PostgreSQL store, migration 4: the stemmed lane stems every language both backends know.
-- Until now only 'ru' and 'en' were stemmed (everything else 'simple'); footnote.store.text.SNOWBALL
-- now maps 28 languages to Snowball algorithms whose names are PostgreSQL's own configurations.
-- ``footnote_ts_config(lang)`` is that same map (keep the VALUES below equal to SNOWBALL), built from
-- the configurations this server actually has (PostgreSQL 15 lacks armenian, basque, catalan, hindi,
-- serbian and yiddish: those stay 'simple' there). The generated column is rebuilt with it and the
-- stemmed lexeme statistics recounted.
DO $mig$
DECLARE
    cases text;
BEGIN
    SELECT string_agg(format('WHEN %L THEN %L::regconfig', m.lang, m.cfg), ' ' ORDER BY m.lang) INTO cases
    FROM (VALUES
        ('ar', 'arabic'), ('ca', 'catalan'), ('da', 'danish'), ('de', 'german'), ('el', 'greek'),
        ('en', 'english'), ('es', 'spanish'), ('eu', 'basque'), ('fi', 'finnish'), ('fr', 'french'),
        ('ga', 'irish'), ('hi', 'hindi'), ('hu', 'hungarian'), ('hy', 'armenian'), ('id', 'indonesian'),
        ('it', 'italian'), ('lt', 'lithuanian'), ('ne', 'nepali'), ('nl', 'dutch'), ('no', 'norwegian'),
        ('pt', 'portuguese'), ('ro', 'romanian'), ('ru', 'russian'), ('sr', 'serbian'), ('sv', 'swedish'),
        ('ta', 'tamil'), ('tr', 'turkish'), ('yi', 'yiddish')
    ) AS m(lang, cfg)
    JOIN pg_ts_config c ON c.cfgname = m.cfg AND c.cfgnamespace = 'pg_catalog'::regnamespace;
    EXECUTE format(
        'CREATE FUNCTION footnote_ts_config(lang text) RETURNS regconfig LANGUAGE sql IMMUTABLE PARALLEL SAFE '
        'AS %L',
        'SELECT CASE lang ' || coalesce(cases, '') || ' ELSE ''simple''::regconfig END');
END
$mig$;

DROP INDEX IF EXISTS fragments_tsv_stem;
ALTER TABLE fragments DROP COLUMN tsv_stem;
ALTER TABLE fragments ADD COLUMN tsv_stem tsvector
    GENERATED ALWAYS AS (to_tsvector(footnote_ts_config(lang), tokens)) STORED;
CREATE INDEX fragments_tsv_stem ON fragments USING gin (tsv_stem);

DELETE FROM lexeme_stats WHERE col = 's';
INSERT INTO lexeme_stats (col, lexeme, df)
SELECT 's', lx, count(*) FROM (SELECT unnest(tsvector_to_array(tsv_stem)) AS lx FROM fragments) t GROUP BY lx;
