-- Footnote SQLite store, migration 9: a file locator's paragraph number (DOCX, EPUB chapters, HTML pages:
-- documents without pages are cited by heading path and paragraph). NULL for every fragment before it.
ALTER TABLE fragments ADD COLUMN para INTEGER;
