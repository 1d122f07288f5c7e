-- Footnote SQLite store, migration 4: conversations and their turns (the web chat's memory,
-- `footnote ask --conversation`). A turn keeps the answer contract as JSON (citations included).
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_updated ON conversations (updated_at DESC, id);
CREATE TABLE IF NOT EXISTS conversation_turns (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    n INTEGER NOT NULL,
    question TEXT NOT NULL,
    rewritten_question TEXT,
    answer TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (conversation_id, n)
);
