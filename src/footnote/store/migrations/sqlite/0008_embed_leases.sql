-- Footnote SQLite store, migration 8: leases on backlog fragments, so that two embedding workers on one
-- store (a server's background worker and `footnote reembed`, say) split the backlog instead of both
-- embedding the same fragments. A worker claims a batch (claim_pending), renews its claims while it
-- works and drops them when the vectors are written or it stops; a killed worker's claims expire.
CREATE TABLE IF NOT EXISTS embed_leases (
    fragment_id TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    until       REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS embed_leases_holder ON embed_leases (holder);
