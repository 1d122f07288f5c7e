"""Conformance for the embedding backlog: the ``BacklogTests`` capability mixin of the store suite.

Mix into a backend's test class beside :class:`footnote.testing.store_conformance.StoreConformance`; it
needs the same ``store`` fixture (a fresh, empty Store). Only the ``Store`` protocol is used.
"""

from __future__ import annotations

import numpy as np
import pytest

from footnote.errors import StoreError
from footnote.models.embedders import HashEmbedder
from footnote.store.protocol import PendingFragment, Store
from footnote.testing.store_fixtures import (
    DIM,
    EMBEDDER,
    distinct_texts,
    embed,
    embed_query,
    ids,
    make_fragments,
    make_source,
)


def _all_pending(store: Store, batch: int = 3) -> list[PendingFragment]:
    out: list[PendingFragment] = []
    after: str | None = None
    while True:
        got = store.pending_fragments(batch, after)
        if not got:
            return out
        out.extend(got)
        after = got[-1].id


class BacklogTests:
    """Fragments stored without vectors are a backlog: listed, filled in, resumable, rebindable."""

    def test_backlog_lists_unembedded_fragments_in_id_order(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        a, da = make_source("a")
        b, db = make_source("b")
        fa = make_fragments(a, distinct_texts(4, seed=1))
        fb = make_fragments(b, distinct_texts(3, seed=2))
        store.put_source(a, fa, embed(fa), da)
        store.put_source(b, fb, None, db)
        pending = _all_pending(store, batch=2)
        assert [p.id for p in pending] == sorted(f.id for f in fb)
        assert {p.id: (p.text, p.content_hash) for p in pending} == {f.id: (f.text, f.content_hash) for f in fb}
        assert store.pending_fragments(0) == []
        assert store.pending_fragments(10, after=pending[-1].id) == []
        bl = store.backlog()
        assert (bl.fragments, bl.embedded, bl.pending) == (7, 4, 3)
        assert store.missing_embeddings([fa[0].id, fb[1].id, "nope#0"]) == {fb[1].id}
        assert store.missing_embeddings([]) == set()

    def test_put_embeddings_fills_backlog_and_dense_sees_it(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        src, data = make_source("lex")
        frags = make_fragments(src, distinct_texts(5, seed=3))
        store.put_source(src, frags, None, data)
        assert store.search_dense(embed_query(frags[2].text), 3) == []  # dense sees nothing yet
        pending = store.pending_fragments(2)
        assert store.put_embeddings(pending, embed([f for f in frags if f.id in {p.id for p in pending}])) == 2
        assert store.backlog().embedded == 2
        rest = _all_pending(store)
        assert len(rest) == 3 and not ({p.id for p in rest} & {p.id for p in pending})
        by_id = {f.id: f for f in frags}
        assert store.put_embeddings(rest, embed([by_id[p.id] for p in rest])) == 3
        assert _all_pending(store) == [] and store.backlog().pending == 0
        assert ids(store.search_dense(embed_query(frags[2].text), 1)) == [frags[2].id]
        got = store.get_embeddings([frags[4].id])[0]
        assert np.allclose(got, embed([frags[4]])[0], atol=1e-6)

    def test_put_embeddings_skips_replaced_and_deleted_fragments(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        src, data = make_source("moving", version="1")
        frags = make_fragments(src, ["first text", "second text"])
        store.put_source(src, frags, None, data)
        pending = store.pending_fragments(10)
        # the source is replaced with other texts (same fragment ids) before the vectors arrive
        src2, data2 = make_source("moving", version="2")
        frags2 = make_fragments(src2, ["changed text", "second text"])
        store.put_source(src2, frags2, None, data2)
        assert store.put_embeddings(pending, embed(frags)) == 1  # only the unchanged "second text"
        assert store.missing_embeddings([f.id for f in frags2]) == {frags2[0].id}
        store.delete_source("moving")
        assert store.put_embeddings(store.pending_fragments(10) or pending, embed(frags)) == 0
        assert store.backlog().fragments == 0

    def test_put_embeddings_refuses_bad_vectors_writing_nothing(self, store: Store) -> None:
        src, data = make_source("bad")
        frags = make_fragments(src, ["alpha", "beta"])
        store.put_source(src, frags, None, data)
        pending = store.pending_fragments(10)
        with pytest.raises(StoreError):  # nothing bound yet
            store.put_embeddings(pending, embed(frags))
        store.bind_embedder(EMBEDDER, DIM)
        with pytest.raises(StoreError):
            store.put_embeddings(pending, np.ones((2, DIM + 1), dtype=np.float32))
        with pytest.raises(StoreError):
            store.put_embeddings(pending, np.ones((1, DIM), dtype=np.float32))
        nan = embed(frags)
        nan[1, 0] = np.nan
        with pytest.raises(StoreError):
            store.put_embeddings(pending, nan)
        assert store.backlog().embedded == 0
        assert store.put_embeddings([], np.zeros((0, DIM), dtype=np.float32)) == 0

    def test_rebind_clears_vectors_and_keeps_lexical_search(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        src, data = make_source("re")
        frags = make_fragments(src, distinct_texts(4, seed=5))
        store.put_source(src, frags, embed(frags), data)
        assert store.rebind_embedder(EMBEDDER, DIM) == 0  # same embedder: nothing happens
        assert store.backlog().embedded == 4
        store.note_embedding_rate(12.5)
        assert store.backlog().rate == pytest.approx(12.5) and store.backlog().rate_at > 0
        store.note_embedding_rate(0.0, running=False)  # a worker that stopped: no run shown as going on
        assert (store.backlog().rate, store.backlog().rate_at) == (0.0, 0.0)
        store.note_embedding_rate(12.5)
        new_dim = DIM * 2
        assert store.rebind_embedder("hash-wide", new_dim) == 4
        assert store.embedder_info() == ("hash-wide", new_dim)
        bl = store.backlog()
        assert (bl.fragments, bl.embedded, bl.rate) == (4, 0, 0.0)
        assert ids(store.search_lexical(frags[1].text, 1, stemmed=True)) == [frags[1].id]
        wide = HashEmbedder(new_dim)
        assert store.search_dense(wide.embed_queries([frags[1].text])[0], 2) == []
        with pytest.raises(StoreError):  # old-dimension vectors no longer fit
            store.put_embeddings(store.pending_fragments(10), embed(frags))
        pending = _all_pending(store)
        by_id = {f.id: f for f in frags}
        assert store.put_embeddings(pending, wide.embed_passages([by_id[p.id].text for p in pending])) == 4
        assert ids(store.search_dense(wide.embed_queries([frags[1].text])[0], 1)) == [frags[1].id]
        # the plain bind now sees the new binding as the store's
        with pytest.raises(StoreError):
            store.bind_embedder(EMBEDDER, DIM)
        store.bind_embedder("hash-wide", new_dim)

    def test_rebind_rejects_bad_dimension(self, store: Store) -> None:
        with pytest.raises(StoreError):
            store.rebind_embedder("x", 0)
        assert store.embedder_info() is None

    def test_claims_split_the_backlog_between_holders(self, store: Store) -> None:
        """Two workers claiming at once get disjoint fragments; written, released or expired claims let
        the fragments be claimed again (a killed worker's share comes back)."""
        import time

        store.bind_embedder(EMBEDDER, DIM)
        src, data = make_source("cl")
        frags = make_fragments(src, distinct_texts(7, seed=9))
        store.put_source(src, frags, None, data)
        a = store.claim_pending(3, "worker-a", 60)
        b = store.claim_pending(3, "worker-b", 60)
        assert len(a) == 3 and len(b) == 3 and not {p.id for p in a} & {p.id for p in b}
        assert [p.id for p in a] == sorted(p.id for p in a)
        assert {p.id: p.text for p in a + b} == {f.id: f.text for f in frags if f.id in {p.id for p in a + b}}
        a2 = store.claim_pending(3, "worker-a", 60)  # a holder's own claims are not handed out twice either
        assert len(a2) == 1 and a2[0].id not in {p.id for p in a + b}
        assert store.claim_pending(3, "worker-c", 60) == [] and store.claim_pending(0, "worker-c", 60) == []
        by_id = {f.id: f for f in frags}
        assert store.put_embeddings(a, embed([by_id[p.id] for p in a])) == 3  # writing drops the claims
        store.release_claims("worker-b")  # b stops: its share is backlog again, a's last claim stays
        again = store.claim_pending(10, "worker-c", 0.2)
        assert sorted(p.id for p in again) == sorted(p.id for p in b)
        store.renew_claims("worker-c", 0.2)
        time.sleep(0.4)  # c is killed: its claims expire
        assert sorted(p.id for p in store.claim_pending(10, "worker-d", 60)) == sorted(p.id for p in b)
        assert store.backlog().pending == 4
