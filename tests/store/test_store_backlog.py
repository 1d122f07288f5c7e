"""The embedding backlog on both backends: the ``BacklogTests`` conformance mixin, unchanged."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from footnote.corpus.embedding import BacklogEmbedder
from footnote.corpus.ingest import Ingestor
from footnote.models.embedders import HashEmbedder
from footnote.settings import Settings, StoreSettings
from footnote.store import open_store
from footnote.store.protocol import Store
from footnote.testing.internal.pgserver import wait_session_gone
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


def _corpus(d: Path, n: int = 60) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (d / f"note{i:03d}.txt").write_text(f"Note {i} about the river number{i} and its boats.\n", encoding="utf-8")
    return d


def _two_workers(settings: Settings, url: str, d: Path) -> None:
    """Two backlog runs at once on one store (two store handles, as two processes would hold): each
    fragment is embedded once, and both do part of the work."""
    settings = settings.with_overrides(**{"backlog.batch_fragments": 4, "backlog.mode": "thread"})
    texts: list[list[str]] = [[], []]

    class Slow(HashEmbedder):
        def __init__(self, dim: int, sink: list[str]) -> None:
            super().__init__(dim)
            self.sink = sink

        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            time.sleep(0.05)
            self.sink.extend(texts)
            return super().embed_passages(texts)

    first = open_store(url, settings.store)
    Ingestor(settings, first, HashEmbedder(settings.embedder.hash_dim)).run([d], wait=False)
    total = first.backlog().pending
    second = open_store(url, settings.store)
    reports = [None, None]

    def work(i: int, store: object) -> None:
        reports[i] = BacklogEmbedder(settings, store, Slow(settings.embedder.hash_dim, texts[i])).run(workers=1)  # type: ignore[arg-type]

    threads = [threading.Thread(target=work, args=(i, s)) for i, s in enumerate((first, second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert all(r is not None and r.error is None for r in reports)
        assert len(texts[0]) + len(texts[1]) == total  # nothing embedded twice
        assert len(set(texts[0]) & set(texts[1])) == 0 and texts[0] and texts[1]
        assert first.backlog().pending == 0
        assert sum(r.embedded for r in reports) == total  # type: ignore[union-attr]
    finally:
        first.close()
        second.close()


def test_two_workers_on_one_store_split_the_backlog(hash_settings: Settings, tmp_path: Path) -> None:
    _two_workers(hash_settings, hash_settings.store.url, _corpus(tmp_path / "c"))


@pytest.mark.integration
@pytest.mark.postgres
def test_two_workers_on_one_postgres_store_split_the_backlog(hash_settings: Settings, pg_url: str,
                                                             tmp_path: Path) -> None:
    _two_workers(hash_settings.with_overrides(**{"store.url": pg_url}), pg_url, _corpus(tmp_path / "c"))


@pytest.mark.integration
@pytest.mark.postgres
def test_large_postgres_backlog_defers_the_hnsw_index_and_survives_stops_and_kills(
    hash_settings: Settings, pg_url: str, tmp_path: Path
) -> None:
    """A large backlog is embedded without the HNSW index (dense search exact meanwhile), built once at
    the end; a run stopped early, or killed, leaves it for the next run, and search works throughout."""
    import psycopg

    from footnote.store.pg_support import BULK_LOCK

    settings = hash_settings.with_overrides(**{
        "store.url": pg_url, "store.postgres.bulk_min_fragments": 20, "store.postgres.exact_search_max": 0,
        "backlog.batch_fragments": 5, "backlog.mode": "thread",
    })
    dim = settings.embedder.hash_dim
    plain = HashEmbedder(dim)

    def has_index() -> bool:
        with psycopg.connect(pg_url) as conn:
            return bool(conn.execute("SELECT to_regclass('fragments_embedding_hnsw') IS NOT NULL").fetchone()[0])

    store = open_store(pg_url, settings.store)
    seen: list[tuple[bool, list[str]]] = []
    stop = threading.Event()

    class Watching(HashEmbedder):
        """Looks at the store from outside between batches (as a concurrent searcher would)."""

        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            done = store.backlog().embedded
            if done:
                frag = store.get_fragments([f.id for s in store.list_sources() for f in store.fragments_of(s.id)])
                target = next(f for f in frag if not store.missing_embeddings([f.id]))
                hits = store.search_dense(plain.embed_queries([target.text])[0], 1)
                seen.append((has_index(), [h.fragment_id for h in hits] + [target.id]))
            if done >= 15:
                stop.set()
            return super().embed_passages(texts)

    try:
        Ingestor(settings, store, plain).run([_corpus(tmp_path / "c", 60)], wait=False)
        assert has_index()  # bound: the (empty) index exists
        # a run stopped early (server shutdown / Ctrl-C): the backlog is still large, the index stays off
        rep = BacklogEmbedder(settings, store, Watching(dim)).run(workers=1, stop=stop)
        assert rep.interrupted and 15 <= rep.embedded < 60
        assert seen and all(not idx for idx, _ in seen)
        assert all(h[0] == h[-1] for _, h in seen)  # exact dense search found the embedded fragment
        assert not has_index()
        store.bind_embedder("hash", dim)  # opening the store again does not build it for a large backlog
        assert not has_index()
        assert store.search_lexical("number7", 3, stemmed=False)
        # a killed loader (its lock gone with its session) is no obstacle; the next run finishes and builds
        dead = psycopg.connect(pg_url, autocommit=True)
        dead.execute("SELECT pg_advisory_lock(%s, hashtext(current_schema()))", [BULK_LOCK])
        dead_pid = dead.info.backend_pid
        dead.close()
        wait_session_gone(pg_url, dead_pid)
        rep = BacklogEmbedder(settings, store, plain).run(workers=1)
        assert rep.error is None and rep.remaining == 0
        assert has_index()
        q = store.fragments_of(store.list_sources()[3].id)[0]
        assert store.search_dense(plain.embed_queries([q.text])[0], 1)[0].fragment_id == q.id
        # a small backlog keeps the index in place (inserts into it)
        store.rebind_embedder("hash", dim)  # no-op: same embedder
        small = settings.with_overrides(**{"store.postgres.bulk_min_fragments": 1000})
        s2 = open_store(pg_url, small.store)
        try:
            extra = tmp_path / "d"
            Ingestor(small, s2, plain).run([_corpus(extra, 5)], wait=False)
            assert BacklogEmbedder(small, s2, plain).run(workers=1).remaining == 0 and has_index()
        finally:
            s2.close()
    finally:
        store.close()


@pytest.mark.integration
@pytest.mark.postgres
def test_reembed_and_ingest_hints_never_print_the_password(pg_url: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`reembed --no-wait` printed its resume hint and `store` with the PostgreSQL password in clear."""
    import json
    import shlex
    from urllib.parse import urlsplit

    from click.testing import CliRunner

    from footnote.cli import main

    password = urlsplit(pg_url).password
    assert password
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "n.txt").write_text("Harbour note about nets.\n", encoding="utf-8")
    wide = tmp_path / "wide.toml"
    wide.write_text("[embedder]\nhash_dim = 48\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["ingest", str(corpus), "--store", pg_url, "--embedder", "hash", "--no-wait"])
    assert r.exit_code == 0 and password not in r.output
    r = CliRunner().invoke(main, ["reembed", "--store", pg_url, "--embedder", "hash", "--config", str(wide),
                                  "--no-wait", "--json"])
    assert r.exit_code == 0, r.output
    assert password not in r.output
    doc = json.loads(r.stdout)
    assert doc["resume"].endswith(" --store " + shlex.quote(pg_url.replace(password, "***")))
    assert doc["store"] == pg_url.replace(password, "***")
    monkeypatch.setenv("FOOTNOTE_STORE", pg_url)  # from the environment: the hint leaves --store out
    r = CliRunner().invoke(main, ["reembed", "--embedder", "hash", "--config", str(wide), "--no-wait"])
    assert r.exit_code == 0 and password not in r.output
    assert "resume with: footnote reembed --embedder hash  (" in r.stderr
