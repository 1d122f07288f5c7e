-- Footnote SQLite store, migration 10: named API keys (`footnote keys`), each granting read, or read and
-- write, on a set of collections (a JSON list; ["*"]: every one). Only the key's SHA-256 is kept. A revoked key stays as a
-- tombstone: it is refused by name, and a store that ever had keys never falls open.
CREATE TABLE IF NOT EXISTS api_keys (
    name        TEXT PRIMARY KEY,
    key_id      TEXT NOT NULL,
    key_hash    TEXT NOT NULL UNIQUE,
    collections TEXT NOT NULL,
    can_write   INTEGER NOT NULL,
    created     REAL NOT NULL,
    revoked     INTEGER NOT NULL DEFAULT 0
);
