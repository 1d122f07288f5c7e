"""This repository's own test infrastructure, not a public API: the embedded PostgreSQL manager
(``pgserver``: ``make test`` and ``scripts/pg.py`` start a throwaway server with it) and a process-wide
capture of psycopg statements (``pgcapture``) that the PostgreSQL tests count round trips with. The
public suites — store, memory and conversation conformance, the scripted OpenAI-compatible server,
loopback helpers — are the modules of ``footnote.testing`` itself."""
