"""The store tests' PostgreSQL fixtures (``pg_server``, ``pg_database``, ``pg_url``) live in tests/conftest.py,
shared with the server tests that run several servers over one database."""
