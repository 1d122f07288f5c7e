-- Footnote PostgreSQL store, migration 7: conversations and their turns (the web chat's memory,
-- `footnote ask --conversation`). A turn keeps the answer contract as jsonb (citations included).
CREATE TABLE IF NOT EXISTS conversations (
    id text PRIMARY KEY,
    title text NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_updated ON conversations (updated_at DESC, id);
CREATE TABLE IF NOT EXISTS conversation_turns (
    conversation_id text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    n integer NOT NULL,
    question text NOT NULL,
    rewritten_question text,
    answer jsonb NOT NULL,
    created_at double precision NOT NULL,
    PRIMARY KEY (conversation_id, n)
);
