"""PostgreSQL: the stemmed and unstemmed lexical lanes of one query as one statement (store/pg_lexical.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
import pytest

from footnote.settings import StoreSettings
from footnote.store import open_store
from footnote.store.batch import DenseCall, LaneCall, LexicalCall, call_one
from footnote.store.pg_lexical import pair_sql
from footnote.store.pg_support import register_vector
from footnote.store.protocol import Store
from footnote.testing.internal.pgcapture import captured
from footnote.testing.store_conformance import distinct_texts, embed_query, make_fragments, make_source, put

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

#: Words whose stems match where the words do not: the two lanes find different fragments.
_STEMMY = [
    "the runner was running past the lanterns", "a lantern for every runner", "runs and runners at night",
    "lanterns lit the harbour", "the harbour keeper runs the light", "keepers keep the lanterns running",
    "running water under the harbour bridge", "a bridge of lanterns", "light runs along the water",
]


def _open(url: str, **kw: object) -> Store:
    return open_store(url, StoreSettings(url=url, **kw))  # type: ignore[arg-type]


def _lexical(statements: list[tuple[int, str, Any]]) -> int:
    """How many of the captured statements are lexical ones (they read ``fragment_terms``)."""
    return sum("fragment_terms" in sql for _, sql, _ in statements)


def _fill(s: Store) -> None:
    s.bind_embedder("hash", 64)
    src, data = make_source("stemmy")
    put(s, src, data, make_fragments(src, _STEMMY + distinct_texts(60, seed=3)))


def _calls() -> list[LaneCall]:
    q = embed_query("running lanterns")
    return [LexicalCall("running lanterns", 6, True, "en"), DenseCall(q, 5), LexicalCall("running lanterns", 6, False, "en"),
            LexicalCall("keeper harbour", 4, True), LexicalCall("keeper harbour", 4, False),
            LexicalCall("runner", 3, True, "en"),  # a lane alone: its own statement
            LexicalCall("zzzz qqqq", 5, True), LexicalCall("zzzz qqqq", 5, False)]  # matching nothing


@pytest.mark.parametrize("connections", [1, 3])
def test_paired_lanes_give_each_lane_its_own_hits_in_fewer_statements(pg_url: str, connections: int) -> None:
    """The stemmed and unstemmed lanes of a query run as one statement (the two-statement switch was retired
    after the A/B in docs/postgres.md): each lane's hits are those it finds on its own, in fewer statements."""
    # the server's exact scan for the dense call (the in-process copy's float32 scores differ in the last bits)
    from footnote.store.postgres import PostgresStore

    s = PostgresStore(pg_url, StoreSettings(url=pg_url, postgres={"batch_connections": connections}), exact_copy=False)
    try:
        _fill(s)
        calls = _calls()
        want = [call_one(s, c) for c in calls]
        with captured() as seen:
            got = s.search_many(calls)  # type: ignore[attr-defined]
        assert _lexical(seen) == 4  # three pairs (one matching nothing) and the lone lane, not 7 statements
        assert [[h.fragment_id for h in hs] for hs in got] == [[h.fragment_id for h in hs] for hs in want]
        for g, w in zip(got, want, strict=True):
            assert [h.score for h in g] == pytest.approx([h.score for h in w], abs=1e-6)
        # the stems find what the words do not: the two lanes of one statement are told apart
        assert got[0] and got[2] and [h.fragment_id for h in got[0]] != [h.fragment_id for h in got[2]]
        assert got[3] and got[4] and got[5] and not got[6] and not got[7]
        # rows mode: the same hits, and every hit's fragment and vector as the store holds them
        rows: dict[str, tuple[Any, np.ndarray]] = {}
        got_rows = s.search_many_rows(calls, rows)  # type: ignore[attr-defined]
        assert [[(h.fragment_id, h.score) for h in hs] for hs in got_rows] == [
            [(h.fragment_id, h.score) for h in hs] for hs in got]
        ids = sorted({h.fragment_id for hs in got for h in hs})
        assert sorted(rows) == ids
        frags = {f.id: f for f in s.get_fragments(ids)}
        vecs = s.get_embeddings(ids)
        for fid, vec in zip(ids, vecs, strict=True):
            assert rows[fid][0] == frags[fid]
            np.testing.assert_allclose(rows[fid][1], vec, rtol=0, atol=1e-6)
    finally:
        s.close()


def test_pair_statement_sends_each_row_once_and_none_the_caller_holds(pg_url: str) -> None:
    s = _open(pg_url)
    try:
        _fill(s)
        stem = s._lexical_sql(LexicalCall("running lanterns", 8, True, "en"))  # type: ignore[attr-defined]
        plain = s._lexical_sql(LexicalCall("running lanterns", 8, False, "en"))  # type: ignore[attr-defined]
        from footnote.store.pg_rows import ROW_COLS as _ROW_COLS

        with psycopg.connect(pg_url) as conn:
            register_vector(conn)
            a = conn.execute(*stem).fetchall()
            b = conn.execute(*plain).fetchall()
            assert set(r[0] for r in a) & set(r[0] for r in b)  # shared hits: the case the pair is for
            sql, params = pair_sql(stem, plain, None, _ROW_COLS)
            ids_only = conn.execute(sql, params).fetchall()
            assert [(r[1], r[2]) for r in ids_only if r[0] == 0] == [tuple(r) for r in a]
            assert [(r[1], r[2]) for r in ids_only if r[0] == 1] == [tuple(r) for r in b]
            distinct = list(dict.fromkeys(r[0] for r in a + b))
            held = distinct[::3]
            sql, params = pair_sql(stem, plain, held, _ROW_COLS)
            rows = conn.execute(sql, params).fetchall()
            assert [(r[0], r[1], r[2]) for r in rows] == [tuple(r) for r in ids_only]
            sent = [r[3] for r in rows if r[3] is not None]
            assert sorted(sent) == sorted(set(distinct) - set(held))  # each once, none of the held
            for r in rows:
                if r[3] is not None:
                    assert r[3] == r[1]  # the row beside its own hit
    finally:
        s.close()
