-- Footnote PostgreSQL store, migration 14: named API keys (`footnote keys`), each granting read, or read
-- and write, on a set of collections (a JSON list; ["*"]: every one). Only the key's SHA-256 is kept (a revoked key stays, marked,
-- so that it is refused and a store that ever had keys never falls open);
-- every server on this database reads the same keys.
CREATE TABLE IF NOT EXISTS api_keys (
    name        text PRIMARY KEY,
    key_id      text NOT NULL,
    key_hash    text NOT NULL UNIQUE,
    collections text NOT NULL,
    can_write   boolean NOT NULL,
    created     double precision NOT NULL,
    revoked     boolean NOT NULL DEFAULT false
);
