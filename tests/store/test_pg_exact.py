"""The PostgreSQL store's in-process copies of small kind groups (store/pg_exact.py): the same hits as
the server's exact scan, rows mode, and freshness — this process's writes at once, another process's
through NOTIFY — on a real embedded PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg

from footnote.settings import StoreSettings
from footnote.store import open_store
from footnote.store.batch import DenseCall
from footnote.store.pg_exact import Group
from footnote.testing.store_conformance import distinct_texts, embed_query, make_fragments, make_source, put


def _open(url: str, **kw: Any) -> Any:
    return open_store(url, StoreSettings(**kw))


def _server(url: str, **kw: Any) -> Any:
    """The same store searching its small groups on the server (no in-process copy)."""
    from footnote.store.postgres import PostgresStore

    return PostgresStore(url, StoreSettings(url=url, **kw), exact_copy=False)


def _filled(url: str, **kw: Any) -> tuple[Any, list[str]]:
    s = _open(url, **kw)
    s.bind_embedder("hash", 64)
    texts = distinct_texts(120, seed=11)
    for kind, lo, hi in (("letter", 0, 90), ("verse", 90, 120)):
        src, data = make_source(f"ex-{kind}", kind=kind)
        put(s, src, data, make_fragments(src, texts[lo:hi]))
    return s, texts


def _wait(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return False


def _same_up_to_ties(got: list[Any], want: list[Any]) -> None:
    """The same scores rank by rank, and the same fragments above the last rank's score. The hash
    vectors tie often (cosines like 3/7), and the server's float rounding orders ties its own way; the
    copy orders them by id, as the statement's ``ORDER BY d, id`` means."""
    assert len(got) == len(want)
    np.testing.assert_allclose([h.score for h in got], [h.score for h in want], atol=1e-6)
    last = want[-1].score + 1e-6
    assert {h.fragment_id for h in got if h.score > last} == {h.fragment_id for h in want if h.score > last}


def _loaded(s: Any, call: DenseCall) -> bool:
    s.search_many([call])  # a lookup starts the load in the background
    return bool(s._exact._groups)


def test_the_copy_finds_what_the_server_finds(pg_url: str) -> None:
    s, texts = _filled(pg_url, pg_exact_search_max=40)
    server = _server(pg_url, pg_exact_search_max=40)
    try:
        for qi in (95, 100, 3, 60):
            call = DenseCall(embed_query(texts[qi]), 7, ("verse",))
            want = server.search_many([call])[0]
            assert _wait(lambda c=call: _loaded(s, c))
            loads = s._exact.loads
            got = s.search_many([call])[0]
            assert s._exact.loads == loads  # served by the copy, not reloaded
            _same_up_to_ties(got, want)
    finally:
        s.close()
        server.close()
    # a store small enough as a whole: every kind is one copy (kinds None)
    small = _open(pg_url, pg_exact_search_max=200)
    server = _server(pg_url, pg_exact_search_max=200)
    try:
        call = DenseCall(embed_query(texts[10]), 5)
        assert _wait(lambda: _loaded(small, call) and None in small._exact._groups)
        _same_up_to_ties(small.search_many([call])[0], server.search_many([call])[0])
    finally:
        small.close()
        server.close()


def test_rows_mode_returns_the_copys_rows_and_vectors(pg_url: str) -> None:
    s, texts = _filled(pg_url, pg_exact_search_max=40)
    try:
        call = DenseCall(embed_query(texts[101]), 6, ("verse",))
        assert _wait(lambda: _loaded(s, call))
        rows: dict[str, tuple[Any, np.ndarray]] = {}
        hits = s.search_many_rows([call], rows)[0]
        ids = [h.fragment_id for h in hits]
        assert ids and sorted(rows) == sorted(ids)
        assert [rows[i][0] for i in ids] == s.get_fragments(ids)
        np.testing.assert_array_equal(np.vstack([rows[i][1] for i in ids]), s.get_embeddings(ids))
    finally:
        s.close()


def test_own_writes_are_seen_at_once(pg_url: str) -> None:
    s, _texts = _filled(pg_url, pg_exact_search_max=40)
    try:
        call = DenseCall(embed_query("lantern keeper unique phrase zz9"), 3, ("verse",))
        assert _wait(lambda: _loaded(s, call))
        src, data = make_source("ex-new", kind="verse")
        put(s, src, data, make_fragments(src, ["lantern keeper unique phrase zz9"]))
        assert s.search_many([call])[0][0].fragment_id == "ex-new#0"  # no wait: the write dropped the copy
        s.delete_sources(["ex-new"])
        assert all(h.fragment_id != "ex-new#0" for h in s.search_many([call])[0])
    finally:
        s.close()


def test_another_processs_writes_arrive_by_notify(pg_url: str) -> None:
    s, _texts = _filled(pg_url, pg_exact_search_max=40)
    other = _open(pg_url, pg_exact_search_max=40)  # its own connections: to s, another process
    try:
        call = DenseCall(embed_query("harbour bell rings at dawn qq7"), 3, ("verse",))
        assert _wait(lambda: _loaded(s, call))
        src, data = make_source("ex-other", kind="verse")
        put(other, src, data, make_fragments(src, ["harbour bell rings at dawn qq7"]))
        assert _wait(lambda: s.search_many([call])[0][0].fragment_id == "ex-other#0", 5.0)
        # a rebind by the other process (every vector dropped) empties the group here too
        other.rebind_embedder("hash2", 64)
        assert _wait(lambda: s.search_many([call])[0] == [], 5.0)
    finally:
        s.close()
        other.close()


def test_a_lost_listener_sends_searches_back_to_the_server(pg_url: str) -> None:
    s, texts = _filled(pg_url, pg_exact_search_max=40)
    try:
        call = DenseCall(embed_query(texts[99]), 4, ("verse",))
        assert _wait(lambda: _loaded(s, call))
        want = [h.fragment_id for h in s.search_many([call])[0]]
        pid = s._changes._listener.info.backend_pid
        with psycopg.connect(pg_url.split("?")[0], autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        time.sleep(0.2)
        got = s.search_many([call])[0]  # the broken listener is noticed: copies dropped, the server answers
        assert [h.fragment_id for h in got] == want
        assert not s._exact._groups or s._changes._listener is not None  # reloaded only under a new LISTEN
        assert _wait(lambda: _loaded(s, call))  # and it comes back
    finally:
        s.close()


def test_nearest_breaks_ties_by_id_and_skips_zero_queries() -> None:
    vecs = np.array([[1, 0], [0, 1], [2, 0], [0.6, 0.8]], dtype=np.float32)
    g = Group(("a", "b", "c", "d"), vecs, np.linalg.norm(vecs, axis=1), ())
    assert [i for i, _ in g.nearest(np.array([2.0, 0.0]), 2)] == [0, 2]  # a and c tie: a first
    assert [i for i, _ in g.nearest(np.array([2.0, 0.0]), 10)] == [0, 2, 3, 1]
    assert g.nearest(np.zeros(2), 3) == []


def test_notifications_are_taken_per_schema(pg_url: str) -> None:
    import uuid

    s, texts = _filled(pg_url, pg_exact_search_max=40)
    mine = pg_url.split("search_path%3D")[1].split(",")[0]
    theirs = f"t_{uuid.uuid4().hex[:12]}"
    other = _open(pg_url.replace(mine, theirs), pg_exact_search_max=40)  # another store, same database
    base = pg_url.split("?")[0]
    try:
        call = DenseCall(embed_query(texts[100]), 3, ("verse",))
        assert _wait(lambda: _loaded(s, call))
        other.bind_embedder("hash", 64)
        src, data = make_source("elsewhere", kind="verse")
        put(other, src, data, make_fragments(src, ["a verse of another store"]))
        time.sleep(0.3)
        s.search_many([call])
        assert s._exact._groups  # another schema's write is not ours: the copy stays
        # a statement on this store's table from a session whose search_path is elsewhere is ours
        with psycopg.connect(base, autocommit=True) as raw:
            raw.execute(f"UPDATE {mine}.fragments SET embedding = embedding WHERE false")
        assert _wait(lambda: (s.search_many([call]), not s._exact._groups or s._exact.loads > 1)[1], 5.0)
    finally:
        s.close()
        other.close()
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {theirs} CASCADE")
