"""``footnote migrate --from sqlite:///… --to postgresql://…``: a real SQLite store copied into a real
PostgreSQL database (sources, fragments, embeddings, originals), without re-embedding, resumable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.engine import Engine
from footnote.models.embedders import HashEmbedder
from footnote.settings import StoreSettings, load_settings
from footnote.store import open_store
from footnote.store.copy import copy_store
from footnote.store.protocol import Store
from footnote.testing.store_conformance import make_fragments, make_source

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def _sqlite_store(tmp_path: Path, shared_dir: Path, rows: int = 24) -> tuple[str, Path]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    lines = (shared_dir / "eval/xquad/corpus.en.jsonl").read_text(encoding="utf-8").splitlines()[:rows]
    (corpus / "xquad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (corpus / "note.md").write_text("# A note\n\nKarmaṇy evādhikāras te: a line kept verbatim.\n", encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'src.db'}"
    with Engine.from_settings(load_settings(None, **{"store.url": url, "embedder.name": "hash"})) as eng:
        report = eng.ingest([corpus])
        assert report.ok
    return url, corpus


def _migrate(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(main, ["migrate", *args, "--json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def _same(a: Store, b: Store) -> None:
    assert a.list_sources() == b.list_sources()
    for s in a.list_sources():
        fa, fb = a.fragments_of(s.id), b.fragments_of(s.id)
        assert fa == fb
        ids = [f.id for f in fa]
        np.testing.assert_allclose(a.get_embeddings(ids), b.get_embeddings(ids), atol=1e-6)
        oa, ob = a.get_original(s.id), b.get_original(s.id)
        assert oa == ob and oa is not None
    sa, sb = a.stats(), b.stats()
    assert (sa.sources, sa.fragments, sa.embedded, sa.by_kind, sa.by_lang, sa.embedder, sa.dim) == (
        sb.sources, sb.fragments, sb.embedded, sb.by_kind, sb.by_lang, sb.embedder, sb.dim)


def test_migrate_sqlite_to_postgres_then_resume(tmp_path: Path, shared_dir: Path, pg_url: str) -> None:
    src_url, corpus = _sqlite_store(tmp_path, shared_dir)
    code, out = _migrate("--from", src_url, "--to", pg_url)
    assert code == 0, out
    assert out["copied"] == out["sources"] == 25 and out["skipped"] == 0 and out["failed"] == 0
    assert out["embedder"] == "hash" and out["dim"] == 384 and out["embedded"] == out["fragments"] > 25
    assert "***" in out["target_url"] and psycopg.conninfo.conninfo_to_dict(pg_url)["password"] not in json.dumps(out)
    src, dst = open_store(src_url), open_store(pg_url, StoreSettings(url=pg_url))
    try:
        _same(src, dst)
        # the copied store answers like the original (vectors were copied, not recomputed)
        q = src.get_embeddings([src.fragments_of(src.list_sources()[3].id)[0].id])[0]
        assert [h.fragment_id for h in src.search_dense(q, 5)] == [h.fragment_id for h in dst.search_dense(q, 5)]
        with psycopg.connect(pg_url) as conn:  # the HNSW index was rebuilt after the bulk copy
            assert conn.execute("SELECT to_regclass('fragments_embedding_hnsw') IS NOT NULL").fetchone() == (True,)
    finally:
        src.close()
        dst.close()

    # a second run writes nothing
    code, out = _migrate("--from", src_url, "--to", pg_url)
    assert code == 0 and out["copied"] == 0 and out["skipped"] == 25

    # change one source, lose one in the target: only those two are copied
    (corpus / "note.md").write_text("# A note\n\nRewritten: the line changed.\n", encoding="utf-8")
    with Engine.from_settings(load_settings(None, **{"store.url": src_url, "embedder.name": "hash"})) as eng:
        assert eng.ingest([corpus]).ok
    dst = open_store(pg_url, StoreSettings(url=pg_url))
    victim = dst.list_sources()[0].id
    dst.delete_source(victim)
    dst.close()
    code, out = _migrate("--from", src_url, "--to", pg_url)
    assert code == 0 and out["copied"] == 2 and out["skipped"] == 23, out
    src, dst = open_store(src_url), open_store(pg_url, StoreSettings(url=pg_url))
    try:
        _same(src, dst)
    finally:
        src.close()
        dst.close()


def test_migrate_interrupted_midway_resumes(tmp_path: Path, shared_dir: Path, pg_url: str) -> None:
    src_url, _ = _sqlite_store(tmp_path, shared_dir, rows=12)
    src, dst = open_store(src_url), open_store(pg_url, StoreSettings(url=pg_url))

    def boom(done: int, total: int, label: str) -> None:
        if done == 5:
            raise KeyboardInterrupt

    try:
        with pytest.raises(KeyboardInterrupt):
            copy_store(src, dst, progress=boom)
        st = dst.stats()
        assert st.sources == 5 and st.embedded == st.fragments  # whole sources only
        report = copy_store(src, dst)
        assert (report.skipped, report.copied, report.failed) == (5, 8, 0)
        _same(src, dst)
    finally:
        src.close()
        dst.close()
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('fragments_embedding_hnsw') IS NOT NULL").fetchone() == (True,)


def test_migrate_dimension_mismatch_writes_nothing(tmp_path: Path, shared_dir: Path, pg_url: str) -> None:
    src_url, _ = _sqlite_store(tmp_path, shared_dir, rows=3)
    dst = open_store(pg_url, StoreSettings(url=pg_url))
    dst.bind_embedder("hash", 128)
    other, data = make_source("already-there")
    frags = make_fragments(other, ["a fragment embedded at dim 128"])
    dst.put_source(other, frags, HashEmbedder(128).embed_passages([frags[0].text]), data)
    dst.close()
    code, out = _migrate("--from", src_url, "--to", pg_url)
    assert code != 0 and "128" in out["error"] and "384" in out["error"]
    dst = open_store(pg_url, StoreSettings(url=pg_url))
    try:
        assert [s.id for s in dst.list_sources()] == ["already-there"]
    finally:
        dst.close()


def test_migrate_bad_target_url(tmp_path: Path, shared_dir: Path) -> None:
    src_url, _ = _sqlite_store(tmp_path, shared_dir, rows=2)
    code, out = _migrate("--from", src_url, "--to", "postgresql://u:secret@127.0.0.1:notaport/x")
    assert code != 0 and "malformed" in out["error"] and "secret" not in out["error"]
