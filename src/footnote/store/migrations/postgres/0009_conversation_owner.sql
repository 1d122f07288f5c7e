-- Footnote PostgreSQL store, migration 9: each conversation belongs to one reader (the SHA-256 of the
-- reader's token, never the token itself); '' for conversations made before this (or by the CLI),
-- which only the CLI reaches.
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS owner text NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS conversations_owner ON conversations (owner, updated_at DESC, id);
