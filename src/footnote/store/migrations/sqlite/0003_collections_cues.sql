-- Footnote SQLite store, migration 3: collections, and cues in their own table.
--
-- Collections: every source records the collection (named folder) it was ingested under. Sources
-- stored before get one from their origin: the folder the id is relative to when the origin ends in
-- '/<id>' (a file source), else the folder of the origin file (JSONL rows, explicit ids); ids stay
-- as they are (footnote_collection_of is registered by the store while it migrates).
ALTER TABLE sources ADD COLUMN collection TEXT NOT NULL DEFAULT '';
UPDATE sources SET collection = footnote_collection_of(origin, id) WHERE origin <> '';
CREATE INDEX sources_collection ON sources (collection, id);
CREATE INDEX sources_origin ON sources (origin);

-- Cues: the timed lines of a track's transcript (until now a JSON string in sources.meta, parsed
-- whole on every request). Cues of one track are ordered and never overlap, so the cues meeting a
-- window are found from the last cue starting at or before the window's start.
CREATE TABLE cues (
    source_id TEXT NOT NULL REFERENCES sources (id),
    ordinal   INTEGER NOT NULL,
    start_ms  INTEGER NOT NULL,
    end_ms    INTEGER NOT NULL,
    text      TEXT NOT NULL,
    PRIMARY KEY (source_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX cues_start ON cues (source_id, start_ms);
INSERT INTO cues (source_id, ordinal, start_ms, end_ms, text)
SELECT s.id, CAST(j.key AS INTEGER), json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
       json_extract(j.value, '$[2]')
FROM sources s, json_each(json_extract(s.meta, '$.cues')) j
WHERE json_valid(json_extract(s.meta, '$.cues'));
UPDATE sources SET meta = json_remove(meta, '$.cues') WHERE json_extract(meta, '$.cues') IS NOT NULL;
