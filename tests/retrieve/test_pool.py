"""The pool stage's read (footnote.retrieve.pool) on a real SQLite store: dense hits whose rows a lane left
out are dropped unread when the pre-floor that applies is above them, read when it is not, and the
cosines are a full read's either way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from footnote.retrieve.lanes import LanePool
from footnote.retrieve.pool import cosines, left_out, majority_lang, read_pool
from footnote.retrieve.types import Lane
from footnote.store import open_store
from footnote.store.protocol import Hit, Store
from footnote.testing.store_conformance import distinct_texts, embed_query, make_fragments, make_source, put


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Store, list[str]]:
    s = open_store(str(tmp_path / "pool.db"))
    s.bind_embedder("hash", 64)
    src, data = make_source("pool")
    frags = make_fragments(src, distinct_texts(6, seed=3))
    put(s, src, data, frags)
    return s, [f.id for f in frags]


def _pool(ids: list[str]) -> LanePool:
    """ids[0]: a lexical hit; ids[1]: a dense hit sent with its language, no row (cosine 0.05); ids[2]: a dense
    hit above the floor (no row yet either: a lane that sent none); ids[3]: read while the query embedded."""
    pool = LanePool()
    pool.add(Lane.LEXICAL_STEMMED, "q", [Hit(ids[0], 3.0)])
    pool.add(Lane.DENSE_LIBRARY, "q", [Hit(ids[2], 0.4), Hit(ids[1], 0.05, "de"), Hit(ids[3], 0.3)])
    return pool


def test_left_out_hits_are_dropped_unread_or_read_back(stored: tuple[Store, list[str]]) -> None:
    store, ids = stored
    q = embed_query("anything at all")
    full = read_pool(store, _pool(ids), q, embedder=True, rows_min=None, margin=0.01, prefloor_of=lambda _: 1.0)
    assert full.read == 4 and full.left_out == 0

    def pooled(prefloor: float) -> tuple[LanePool, list[list[str]]]:
        pool = _pool(ids)
        frags, mat = store.get_fragments_with_embeddings([ids[3]])  # type: ignore[attr-defined]
        pool.rows[ids[3]] = (frags[0], mat[0])
        seen: list[list[str]] = []
        pr = read_pool(store, pool, q, embedder=True, rows_min=0.1, margin=0.01,
                       prefloor_of=lambda langs: seen.append(langs) or prefloor)  # type: ignore[func-returns-value]
        return pr, seen

    # the pre-floor that applies (0.3) is above the left-out hit: dropped without a read
    pr, seen = pooled(0.3)
    assert (pr.read, pr.left_out) == (2, 1)
    assert pr.ids == [ids[0], ids[2], ids[3]]
    assert seen == [["en", "en", "de", "en"]] and pr.langs == seen[0]  # its language still counts, in pool order
    want = dict(zip(full.ids, full.cos.tolist(), strict=True))
    assert pr.cos.tolist() == [want[i] for i in pr.ids]  # to the last bit
    # a lower pre-floor than the lanes expected (0.0): the left-out hit is read back
    pr, _ = pooled(0.0)
    assert (pr.read, pr.left_out) == (3, 0)
    assert pr.ids == [ids[0], ids[2], ids[1], ids[3]]
    assert pr.cos.tolist() == [want[i] for i in pr.ids]


def test_only_dense_hits_below_the_floor_are_left_out() -> None:
    pool = LanePool()
    pool.add(Lane.DENSE_LIBRARY, "q", [Hit("a", 0.05, "en"), Hit("b", 0.2, "en"), Hit("c", 0.01, "en")])
    pool.add(Lane.LEXICAL_UNSTEMMED, "q", [Hit("c", 1.0)])  # forced: its row is read
    pool.add(Lane.DENSE_VERSES, "q2", [Hit("d", 0.02)])  # no language: no row left out for it
    assert left_out(pool, 0.1) == ["a"]


def test_cosines_do_not_depend_on_the_other_rows() -> None:
    rng = np.random.default_rng(0)
    m = rng.standard_normal((37, 64)).astype(np.float32)
    q = rng.standard_normal(64).astype(np.float32)
    all_rows = cosines(m, q)
    assert all(cosines(m[i : i + 1], q)[0] == all_rows[i] for i in range(len(m)))
    assert majority_lang(["ru", "en", "ru"], "en") == "ru" and majority_lang([], "en") == "en"
