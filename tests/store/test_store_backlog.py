"""The embedding backlog on both backends: the ``BacklogTests`` conformance mixin, unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.settings import StoreSettings
from footnote.store import open_store
from footnote.store.protocol import Store
from footnote.testing.store_conformance_backlog import BacklogTests


class TestSqliteBacklog(BacklogTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        s = open_store(str(tmp_path / "store.db"), StoreSettings.model_validate({"url": str(tmp_path / "store.db")}))
        yield s
        s.close()


@pytest.mark.integration
@pytest.mark.postgres
class TestPostgresBacklog(BacklogTests):
    @pytest.fixture
    def store(self, pg_url: str) -> Iterator[Store]:
        s = open_store(pg_url, StoreSettings(url=pg_url))
        yield s
        s.close()
