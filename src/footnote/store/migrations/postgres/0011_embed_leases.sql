-- Footnote PostgreSQL store, migration 11: leases on backlog fragments, so that two embedding workers on
-- one store split the backlog instead of both embedding the same fragments. A worker claims a batch
-- (claim_pending, serialised by an advisory lock), renews its claims while it works and drops them when
-- the vectors are written or it stops; a killed worker's claims expire (until).
CREATE TABLE IF NOT EXISTS embed_leases (
    fragment_id text PRIMARY KEY,
    holder      text NOT NULL,
    until       timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS embed_leases_holder ON embed_leases (holder);
