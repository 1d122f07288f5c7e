-- Footnote PostgreSQL store, migration 5: collections, and cues in their own table.
--
-- Collections: every source records the collection (named folder) it was ingested under. Sources
-- stored before get one from their origin: the folder the id is relative to when the origin ends in
-- '/<id>' (a file source), else the folder of the origin file (JSONL rows, explicit ids); ids stay
-- as they are (the same rule as footnote.corpus.collections.legacy_collection).
ALTER TABLE sources ADD COLUMN collection text NOT NULL DEFAULT '';
UPDATE sources SET collection = coalesce(nullif(ltrim(regexp_replace(
        CASE WHEN right(origin, length(id) + 1) = '/' || id THEN left(origin, length(origin) - length(id) - 1)
             ELSE regexp_replace(origin, '/[^/]*$', '') END,
        '^.*/', ''), '.'), ''), 'root')
    WHERE origin <> '';
CREATE INDEX sources_collection ON sources (collection, id);
CREATE INDEX sources_origin ON sources (origin);

-- Cues: the timed lines of a track's transcript (until now a JSON string in sources.meta, parsed
-- whole on every request). Cues of one track are ordered and never overlap, so the cues meeting a
-- window are found from the last cue starting at or before the window's start.
CREATE TABLE cues (
    source_id text NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    ordinal   integer NOT NULL,
    start_ms  bigint NOT NULL,
    end_ms    bigint NOT NULL,
    text      text NOT NULL,
    PRIMARY KEY (source_id, ordinal)
);
CREATE INDEX cues_start ON cues (source_id, start_ms);
INSERT INTO cues (source_id, ordinal, start_ms, end_ms, text)
SELECT s.id, (c.n - 1)::integer, (c.v ->> 0)::bigint, (c.v ->> 1)::bigint, c.v ->> 2
FROM sources s, jsonb_array_elements((s.meta ->> 'cues')::jsonb) WITH ORDINALITY AS c(v, n)
WHERE s.meta ? 'cues';
UPDATE sources SET meta = meta - 'cues' WHERE meta ? 'cues';
