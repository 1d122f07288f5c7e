"""Fixtures for the corpus tests: an engine on a fresh SQLite store that counts writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from corpus_support import CountingStore

from footnote.engine import Engine
from footnote.models.embedders import make_embedder
from footnote.settings import Settings
from footnote.store import open_store


@pytest.fixture
def engine(hash_settings: Settings) -> Iterator[Engine]:
    store = CountingStore(open_store(hash_settings.store.url, hash_settings.store))
    eng = Engine(hash_settings, store, make_embedder(hash_settings.embedder))  # type: ignore[arg-type]
    yield eng
    eng.close()


@pytest.fixture
def db_path(hash_settings: Settings) -> Path:
    return Path(hash_settings.store.url)
