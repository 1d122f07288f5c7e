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


@pytest.mark.integration
@pytest.mark.postgres
def test_postgres_reembed_rebuilds_column_and_hnsw_index(pg_url: str, tmp_path: Path) -> None:
    import json

    import psycopg
    from click.testing import CliRunner

    from footnote.cli import main

    corpus = tmp_path / "c"
    corpus.mkdir()
    for i in range(6):
        (corpus / f"n{i}.txt").write_text(f"Harbour note {i} about nets and tide{i}.\n", encoding="utf-8")
    wide = tmp_path / "wide.toml"
    wide.write_text("[embedder]\nhash_dim = 96\n", encoding="utf-8")

    def run(*args: str) -> dict[str, object]:
        r = CliRunner().invoke(main, [*args, "--store", pg_url, "--embedder", "hash", "--json"])
        assert r.exit_code == 0, r.output
        return dict(json.loads(r.stdout))

    run("ingest", str(corpus))
    out = run("reembed", "--config", str(wide))
    assert (out["dim"], out["dropped"], out["pending"]) == (96, 6, 0)
    with psycopg.connect(pg_url) as conn:
        coltype = conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = 'fragments'::regclass AND attname = 'embedding'").fetchone()
        idx = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'fragments_embedding_hnsw'").fetchone()
    assert coltype == ("vector(96)",) and idx is not None and "hnsw" in idx[0]
    res = run("search", "tide3 nets", "--config", str(wide))
    assert res["notes"][0]["source_id"] == "c/n3.txt" and res["notes"][0]["embedded"] is True  # type: ignore[index]
