"""Conformance mixin for curated memory (``MemoryStore``): both backends pass it unchanged.

Use it beside the store suite::

    class TestMyBackend(StoreConformance, MemoryConformance):
        @pytest.fixture
        def store(self, tmp_path): ...
"""

from __future__ import annotations

import numpy as np
import pytest

from footnote.corpus.memory import make_note, note_texts
from footnote.errors import StoreError
from footnote.records.memory import MemoryNote, NoteKind
from footnote.store.protocol import Store
from footnote.testing.store_fixtures import DIM, EMBEDDER, _embedder


def note(note_id: str = "fog-horn", kind: str = "pinned", body: str = "The horn sounds twice a minute. «Ё» 🌊",
         **kw: object) -> MemoryNote:
    args: dict[str, object] = {"triggers": ["When does the fog horn sound?", "fog horn rule"],
                               "sources": ["demo/lectures/02.vtt", "HB 2.1"], "author": "Editorial board"}
    args.update(kw)
    return make_note(f"{note_id}.md", note_id=note_id, kind=kind, body=body, **args)  # type: ignore[arg-type]


def embedded(store: Store, n: MemoryNote) -> MemoryNote:
    texts = note_texts(n, 200)
    store.bind_embedder(EMBEDDER, DIM)
    return store.put_memory_note(n, texts, _embedder.embed_passages(texts), EMBEDDER)


class MemoryConformance:
    """Curated-memory semantics every backend keeps (needs the suite's ``store`` fixture)."""

    def test_put_get_list_delete(self, store: Store) -> None:
        assert store.list_memory_notes() == []
        a = embedded(store, note("a-pinned"))
        b = embedded(store, note("b-memory", kind="memory", sources=[], body="Background only."))
        assert a.updated > 0
        got = store.get_memory_note("a-pinned")
        assert got == a  # every field round-trips, Unicode included
        assert got is not None and got.body.endswith("«Ё» 🌊") and got.sources == ("demo/lectures/02.vtt", "HB 2.1")
        assert [n.id for n in store.list_memory_notes()] == ["a-pinned", "b-memory"]
        assert [n.id for n in store.list_memory_notes(NoteKind.MEMORY)] == ["b-memory"]
        assert store.memory_embedders() == {"a-pinned": EMBEDDER, "b-memory": EMBEDDER}
        assert store.delete_memory_note("a-pinned") is True
        assert store.delete_memory_note("a-pinned") is False
        assert store.get_memory_note("a-pinned") is None
        assert set(store.memory_vectors(EMBEDDER).note_ids) == {b.id}

    def test_vectors_are_the_triggers_and_body_chunks_by_embedder(self, store: Store) -> None:
        n = embedded(store, note())
        got = store.memory_vectors(EMBEDDER)
        assert got.texts == tuple(note_texts(n, 200))
        assert got.texts[:2] == ("When does the fog horn sound?", "fog horn rule")
        assert got.vectors.shape == (len(got.texts), DIM) and got.vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(got.vectors, axis=1), 1.0, atol=1e-5)
        q = _embedder.embed_queries(["fog horn rule"])[0]
        assert got.note_ids[int(np.argmax(got.vectors @ q))] == n.id
        assert store.memory_vectors("another-embedder").note_ids == ()

    def test_replace_is_atomic_and_drops_old_vectors(self, store: Store) -> None:
        embedded(store, note())
        new = note(triggers=["only this"], body="A new body.")
        store.put_memory_note(new, ["only this"], None, None)  # stored unembedded
        got = store.get_memory_note(new.id)
        assert got is not None and got.triggers == ("only this",) and got.body == "A new body."
        assert store.memory_vectors(EMBEDDER).note_ids == ()
        assert store.memory_embedders() == {new.id: None}

    def test_vectors_that_do_not_fit_write_nothing(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        n = note()
        texts = note_texts(n, 200)
        vecs = _embedder.embed_passages(texts)
        for bad_vecs, emb in ((vecs[:1], EMBEDDER), (np.zeros((len(texts), DIM + 1), np.float32), EMBEDDER),
                              (vecs, "other"), (np.full_like(vecs, np.nan), EMBEDDER)):
            with pytest.raises(StoreError):
                store.put_memory_note(n, texts, bad_vecs, emb)
        assert store.get_memory_note(n.id) is None

    def test_notes_never_reach_the_corpus_lanes(self, store: Store) -> None:
        embedded(store, note())
        st = store.stats()
        assert st.sources == 0 and st.fragments == 0
        assert store.search_lexical("horn", 10, stemmed=True) == []

    def test_rebinding_the_embedder_drops_note_vectors_not_notes(self, store: Store) -> None:
        n = embedded(store, note())
        store.rebind_embedder(EMBEDDER, DIM + 8)
        assert store.memory_embedders() == {n.id: None}
        assert store.memory_vectors(EMBEDDER).note_ids == ()
        assert store.get_memory_note(n.id) == n
