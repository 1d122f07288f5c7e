"""Conformance for the optional batch capabilities: the ``BatchTests`` mixin of the store suite.

A store may run many lane calls at once (:class:`~footnote.store.batch.BatchSearch`), return its hits' rows with
them (:class:`~footnote.store.batch.BatchSearchRows`) and read fragments with their vectors in one call
(:class:`~footnote.store.batch.FragmentsWithEmbeddings`). Whatever a store implements must answer exactly as the
plain ``Store`` protocol does; a capability a store lacks is skipped with a reason. Mix it into a backend's test
class beside :class:`footnote.testing.store_conformance.StoreConformance`.
"""

from __future__ import annotations

import numpy as np
import pytest

from footnote.records.fragments import AddressLocator, Fragment
from footnote.store.batch import (
    AddressCall,
    BatchSearch,
    BatchSearchRows,
    DenseCall,
    FragmentsWithEmbeddings,
    LaneCall,
    LexicalCall,
    TrigramCall,
    call_one,
)
from footnote.store.protocol import Hit, Store
from footnote.testing.store_fixtures import (
    DIM,
    EMBEDDER,
    distinct_texts,
    embed_query,
    make_fragments,
    make_source,
    put,
)

_WORDS = ["the keeper was running past the lanterns", "a lantern for every runner", "lanterns lit the harbour",
          "the harbour keeper runs the light", "running water under the harbour bridge"]


def _corpus(store: Store) -> list[Fragment]:
    store.bind_embedder(EMBEDDER, DIM)
    letters, d1 = make_source("batch-letters")
    frags = make_fragments(letters, _WORDS + distinct_texts(20, seed=5))
    put(store, letters, d1, frags)
    verses, d2 = make_source("batch-verses", kind="verse")
    locs = [("HB", "1.1"), ("HB", "1.2"), ("HB", "2.1")]
    vfr = make_fragments(verses, [f"Harbour verse {b} {loc}: the lanterns at the quay." for b, loc in locs],
                         locators=[AddressLocator(b, loc, f"{b} {loc}") for b, loc in locs])
    put(store, verses, d2, vfr)
    return frags + vfr


def _calls() -> list[LaneCall]:
    q = embed_query("running lanterns by the harbour")
    return [LexicalCall("running lanterns", 6, True, "en"), LexicalCall("running lanterns", 6, False, "en"),
            DenseCall(q, 8), DenseCall(q, 3, kinds=("verse",)), AddressCall("HB", "1.2", 5),
            TrigramCall("lantern", 4), LexicalCall("zzzz qqqq", 5, True)]


def _same(got: list[list[Hit]], want: list[list[Hit]]) -> None:
    assert [[h.fragment_id for h in hs] for hs in got] == [[h.fragment_id for h in hs] for hs in want]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose([h.score for h in g], [h.score for h in w], rtol=0, atol=1e-4)


class BatchTests:
    """Each batch capability answers as the plain protocol's calls, one by one, do."""

    def test_search_many_answers_as_each_call_alone(self, store: Store) -> None:
        if not isinstance(store, BatchSearch):
            pytest.skip("this store runs lane calls one by one (no search_many)")
        _corpus(store)
        calls = _calls()
        _same(store.search_many(calls), [call_one(store, c) for c in calls])
        assert store.search_many([]) == []

    def test_search_many_rows_adds_each_hit_row_once(self, store: Store) -> None:
        if not isinstance(store, BatchSearchRows):
            pytest.skip("this store's lane calls return no rows (no search_many_rows)")
        _corpus(store)
        calls = _calls()
        rows: dict[str, tuple[Fragment, np.ndarray]] = {}
        got = store.search_many_rows(calls, rows)
        _same(got, [call_one(store, c) for c in calls])
        hit_ids = sorted({h.fragment_id for hs in got for h in hs})
        assert sorted(rows) == hit_ids
        frags = {f.id: f for f in store.get_fragments(hit_ids)}
        for fid, vec in zip(hit_ids, store.get_embeddings(hit_ids), strict=True):
            assert rows[fid][0] == frags[fid]
            np.testing.assert_allclose(rows[fid][1], vec, rtol=0, atol=1e-6)
        held = dict(rows)
        store.search_many_rows(calls, rows)  # rows already held are kept as they are
        assert rows.keys() == held.keys() and all(rows[k][0] == held[k][0] for k in held)

    def test_fragments_with_embeddings_answer_as_the_two_plain_reads(self, store: Store) -> None:
        if not isinstance(store, FragmentsWithEmbeddings):
            pytest.skip("this store reads fragments and vectors apart (no get_fragments_with_embeddings)")
        frags = _corpus(store)
        asked = [frags[3].id, "no-such#0", frags[0].id, frags[-1].id]
        got, mat = store.get_fragments_with_embeddings(asked)
        assert [f.id for f in got] == [frags[3].id, frags[0].id, frags[-1].id]
        assert got == store.get_fragments([frags[3].id, frags[0].id, frags[-1].id])
        assert mat.shape == (4, DIM)
        np.testing.assert_allclose(mat[[0, 2, 3]], store.get_embeddings([frags[3].id, frags[0].id, frags[-1].id]),
                                   rtol=0, atol=1e-6)
        assert not mat[1].any()  # an unknown id: a zero row
