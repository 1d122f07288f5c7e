"""The conformance suite's source capability (``SourceStore``): writes, deletes, curation, cues, the generation."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest

from footnote.errors import StoreError
from footnote.records.fragments import (
    AddressLocator,
    Cue,
    FileLocator,
    TranscriptLocator,
    sha256_bytes,
)
from footnote.store.protocol import SourceWrite, Store
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


class WriteTests:
    """Put, get and replace: round trips of every locator type, atomic replace, shared originals."""

    def test_empty_store(self, store: Store) -> None:
        st = store.stats()
        assert (st.sources, st.fragments, st.embedded) == (0, 0, 0)
        assert st.by_kind == {} and st.by_lang == {}
        assert st.url == store.url
        assert store.list_sources() == []
        assert store.get_source("nope") is None
        assert store.source_hash("nope") is None
        assert store.get_original("nope") is None
        assert store.fragments_of("nope") == []
        assert store.get_fragments(["nope#0"]) == []
        assert store.embedder_info() is None
        assert store.search_lexical("anything", 5, stemmed=True) == []
        assert store.search_address("BG", "1.1", 5) == []
        assert store.search_trigram("anything", 5) == []
        assert store.search_dense(embed_query("anything"), 5) == []

    def test_put_and_get_roundtrip(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        track, track_data = make_source(
            "lecture-1", kind="track_transcript", original=b"ID3\x00fake-mp3-bytes"
        )
        track = replace(track, original_name="lecture-1.mp3", media_type="audio/mpeg")
        t_frags = make_fragments(
            track,
            ["First minute of the talk.", "Second window, overlapping a little."],
            locators=[
                TranscriptLocator("lecture-1", 0, 45_000),
                TranscriptLocator("lecture-1", 43_000, 91_250),
            ],
        )
        book, book_data = make_source("hb", kind="verse", lang="ru", meta={"author": "Автор", "year": "2024"})
        b_frags = make_fragments(
            book,
            ["Стих первый о свете.", "Комментарий к стиху."],
            locators=[AddressLocator("HB", "1.1", "HB 1.1"), AddressLocator("HB", "1.1", "HB 1.1")],
        )
        b_frags[1] = replace(b_frags[1], kind="commentary")
        pdf, pdf_data = make_source("paper", kind="prose_chapter", original=b"%PDF-1.4 fake")
        p_frags = make_fragments(
            pdf,
            ["Page one text.", "Page two text.", "No page, no section.", "A Word paragraph under a heading path."],
            locators=[
                FileLocator("paper.pdf", 1, "Intro"),
                FileLocator("paper.pdf", 2, None),
                FileLocator("paper.pdf"),
                FileLocator("paper.pdf", None, "Stores › Repairs", 11),  # a paragraph number (DOCX, EPUB, HTML)
            ],
        )
        put(store, track, track_data, t_frags)
        put(store, book, book_data, b_frags)
        put(store, pdf, pdf_data, p_frags, embedded=False)

        assert {s.id: s for s in store.list_sources()} == {s.id: s for s in (track, book, pdf)}
        for src, frags in ((track, t_frags), (book, b_frags), (pdf, p_frags)):
            assert store.get_source(src.id) == src
            assert store.source_hash(src.id) == src.content_hash
            assert store.fragments_of(src.id) == frags
        got = store.get_original(track.id)
        assert got is not None
        assert (got.sha256, got.name, got.media_type, got.data) == (
            sha256_bytes(track_data),
            "lecture-1.mp3",
            "audio/mpeg",
            track_data,
        )
        # get_fragments keeps the asked order and skips unknown ids
        asked = [p_frags[2].id, "missing#9", t_frags[0].id, b_frags[1].id]
        assert store.get_fragments(asked) == [p_frags[2], t_frags[0], b_frags[1]]
        assert store.get_fragments([]) == []

    def test_embeddings_roundtrip(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        src, data = make_source("s1")
        frags = make_fragments(src, distinct_texts(25))
        vecs = embed(frags)
        store.put_source(src, frags, vecs, data)
        lex, ldata = make_source("s2")
        lfrags = make_fragments(lex, ["lexical only fragment"])
        store.put_source(lex, lfrags, None, ldata)

        got = store.get_embeddings([frags[3].id, lfrags[0].id, "missing#1", frags[0].id])
        assert got.shape == (4, DIM) and got.dtype == np.float32
        np.testing.assert_allclose(got[0], vecs[3], atol=1e-6)
        np.testing.assert_allclose(got[3], vecs[0], atol=1e-6)
        assert not got[1].any() and not got[2].any()

        seen: dict[str, np.ndarray] = {}
        for batch_ids, batch in store.iter_embeddings(batch=10):
            assert len(batch_ids) == batch.shape[0] <= 10
            assert batch.shape[1] == DIM
            seen.update(zip(batch_ids, batch, strict=True))
        assert set(seen) == {f.id for f in frags}
        for f, v in zip(frags, vecs, strict=True):
            np.testing.assert_allclose(seen[f.id], v, atol=1e-6)

    # -- replace, delete, originals --------------------------------------------------------------

    def test_replace_source(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        v1, d1 = make_source("doc", version="1")
        f1 = make_fragments(v1, ["old walrus text one", "old walrus text two", "old walrus text three"])
        put(store, v1, d1, f1)
        v2, d2 = make_source("doc", version="2", title="New title")
        f2 = make_fragments(v2, ["new pelican text"])
        put(store, v2, d2, f2)

        assert store.get_source("doc") == v2
        assert store.source_hash("doc") == v2.content_hash
        assert store.fragments_of("doc") == f2
        assert store.get_fragments([f1[1].id, f1[2].id]) == []
        assert store.search_lexical("walrus", 10, stemmed=False) == []
        assert ids(store.search_lexical("pelican", 10, stemmed=False)) == [f2[0].id]
        got = store.get_original("doc")
        assert got is not None and got.data == d2
        st = store.stats()
        assert (st.sources, st.fragments, st.embedded) == (1, 1, 1)
        assert ids(store.search_dense(embed_query("old walrus text two"), 10)) == [f2[0].id]

    @pytest.mark.parametrize(
        "problem", ["rows", "dim", "foreign_fragment", "duplicate_ids", "nan", "unbound_dim", "blob_sha"]
    )
    def test_failed_replace_leaves_old_version(self, store: Store, problem: str) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        v1, d1 = make_source("doc", version="1")
        f1 = make_fragments(v1, ["stable zebra one", "stable zebra two"])
        e1 = embed(f1)
        store.put_source(v1, f1, e1, d1)

        v2, d2 = make_source("doc", version="2")
        f2 = make_fragments(v2, ["broken giraffe one", "broken giraffe two", "broken giraffe three"])
        e2: np.ndarray | None = embed(f2)
        if problem == "rows":
            e2 = embed(f2[:2])
        elif problem == "dim":
            e2 = np.ones((3, DIM + 3), dtype=np.float32)
        elif problem == "foreign_fragment":
            other, _ = make_source("other")
            f2[2] = make_fragments(other, ["broken giraffe alien"])[0]
        elif problem == "duplicate_ids":
            f2[2] = replace(f2[2], id=f2[0].id)
        elif problem == "nan":
            assert e2 is not None
            e2 = e2.copy()
            e2[1, 0] = np.nan
        elif problem == "unbound_dim":
            e2 = np.ones((3,), dtype=np.float32)
        elif problem == "blob_sha":
            v2 = replace(v2, blob_sha256=sha256_bytes(b"something else"))
        with pytest.raises(StoreError):
            store.put_source(v2, f2, e2, d2)

        assert store.get_source("doc") == v1
        assert store.source_hash("doc") == v1.content_hash
        assert store.fragments_of("doc") == f1
        np.testing.assert_allclose(store.get_embeddings([f.id for f in f1]), e1, atol=1e-6)
        got = store.get_original("doc")
        assert got is not None and got.data == d1
        assert store.search_lexical("giraffe", 10, stemmed=False) == []
        assert len(store.search_lexical("zebra", 10, stemmed=False)) == 2
        st = store.stats()
        assert (st.sources, st.fragments, st.embedded) == (1, 2, 2)

    def test_put_sources_batch_is_one_transaction(self, store: Store) -> None:
        """A batch writes every source (replacing, sharing originals, with cues) and the document
        frequencies count each fragment once; a bad write anywhere in it writes none of them."""
        store.bind_embedder(EMBEDDER, DIM)
        old, dold = make_source("b", version="1")
        put(store, old, dold, make_fragments(old, ["stale heron text"]))
        writes = []
        for sid, texts in (("a", ["alpha kestrel one", "alpha kestrel two"]), ("b", ["beta kestrel"]),
                           ("c", ["gamma osprey"])):
            src, data = make_source(sid, version="2", original=b"shared bytes" if sid != "c" else None)
            frags = make_fragments(src, texts)
            writes.append(SourceWrite(src, frags, embed(frags) if sid == "a" else None, data,
                                      (Cue(0, 5, "one"), Cue(5, 9, "two")) if sid == "c" else ()))
        store.put_sources(writes)
        st = store.stats()
        assert (st.sources, st.fragments, st.embedded) == (3, 4, 2)
        assert store.search_lexical("heron", 10, stemmed=False) == []
        assert sorted(ids(store.search_lexical("kestrel", 10, stemmed=False))) == ["a#0", "a#1", "b#0"]
        assert [c.text for c in store.get_cues("c")] == ["one", "two"]
        got = store.get_original("b")
        assert got is not None and got.data == b"shared bytes"
        assert store.missing_embeddings(["a#0", "b#0", "c#0"]) == {"b#0", "c#0"}

        d, dd = make_source("d", version="1")
        e, de = make_source("e", version="1")
        bad = replace(e, blob_sha256=sha256_bytes(b"not these bytes"))
        for batch in ([SourceWrite(d, make_fragments(d, ["delta wren"]), None, dd),
                       SourceWrite(bad, make_fragments(bad, ["epsilon wren"]), None, de)],
                      [SourceWrite(d, make_fragments(d, ["delta wren"]), None, dd),
                       SourceWrite(d, make_fragments(d, ["delta wren again"]), None, dd)]):
            with pytest.raises(StoreError):
                store.put_sources(batch)
            assert store.get_source("d") is None
            assert store.search_lexical("wren", 10, stemmed=False) == []
        assert store.stats().fragments == 4
        store.put_sources([])

    def test_originals_content_addressed_and_shared(self, store: Store) -> None:
        same = b"the very same bytes \x00\x01\x02" * 100
        a, _ = make_source("a", original=same)
        b, _ = make_source("b", original=same)
        put(store, a, same, make_fragments(a, ["alpha"]), embedded=False)
        put(store, b, same, make_fragments(b, ["beta"]), embedded=False)
        oa, ob = store.get_original("a"), store.get_original("b")
        assert oa is not None and ob is not None
        assert oa.sha256 == ob.sha256 == sha256_bytes(same)
        assert oa.data == ob.data == same

        # replacing a's original does not disturb b's (shared) one
        a2, d2 = make_source("a", version="2", original=b"new bytes for a")
        put(store, a2, d2, make_fragments(a2, ["alpha two"]), embedded=False)
        ob = store.get_original("b")
        assert ob is not None and ob.data == same
        oa = store.get_original("a")
        assert oa is not None and oa.data == b"new bytes for a"

        # a third sharer, then delete two of them: the last one still serves the bytes
        c, _ = make_source("c", original=same)
        put(store, c, same, make_fragments(c, ["gamma"]), embedded=False)
        store.delete_source("b")
        oc = store.get_original("c")
        assert oc is not None and oc.data == same
        store.delete_source("c")
        assert store.get_original("c") is None
        # re-adding the bytes after the last sharer went works (no stale state)
        d, _ = make_source("d", original=same)
        put(store, d, same, make_fragments(d, ["delta"]), embedded=False)
        od = store.get_original("d")
        assert od is not None and od.data == same

    # -- curation: collections, listing, deleting ---------------------------------------------------


class DeleteTests:
    """Deleting one source or several in one transaction."""

    def test_delete_source(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        a, da = make_source("a")
        b, db = make_source("b")
        fa = make_fragments(a, ["apple orchard in spring", "apple harvest"])
        fb = make_fragments(b, ["banana plantation"])
        put(store, a, da, fa)
        put(store, b, db, fb)
        store.delete_source("a")
        store.delete_source("never-existed")  # a no-op, not an error

        assert store.get_source("a") is None and store.source_hash("a") is None
        assert store.get_original("a") is None
        assert store.fragments_of("a") == []
        assert store.get_fragments([fa[0].id, fb[0].id]) == [fb[0]]
        assert store.search_lexical("apple", 10, stemmed=True) == []
        assert ids(store.search_dense(embed_query("apple orchard in spring"), 10)) == [fb[0].id]
        assert [s.id for s in store.list_sources()] == ["b"]
        st = store.stats()
        assert (st.sources, st.fragments, st.embedded) == (1, 1, 1)
        assert not store.get_embeddings([fa[0].id]).any()

    def test_delete_sources_in_one_go(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        shared = b"bytes two sources share"
        a, _ = make_source("a", original=shared)
        b, _ = make_source("b", original=shared)
        c, dc = make_source("c")
        fa, fb, fc = (make_fragments(x, [f"{x.id} apple text"]) for x in (a, b, c))
        put(store, a, shared, fa)
        put(store, b, shared, fb)
        cues = [Cue(0, 1000, "first"), Cue(1000, 2500, "second")]
        store.put_source(c, fc, embed(fc), dc, cues=cues)
        assert store.delete_sources(["a", "c", "missing", "a"]) == ["a", "c"]
        assert [s.id for s in store.list_sources()] == ["b"]
        assert store.get_cues("c") == [] and store.fragments_of("c") == []
        assert not store.get_embeddings([fa[0].id, fc[0].id]).any()
        ob = store.get_original("b")
        assert ob is not None and ob.data == shared  # still shared by b
        st = store.stats()
        assert (st.sources, st.fragments, st.embedded) == (1, 1, 1)
        assert store.delete_sources([]) == []

    # -- cues ----------------------------------------------------------------------------------------


class CurationTests:
    """Collections, filtered and paged listing, counts."""

    def _curated(self, store: Store) -> None:
        for sid, kind, lang, coll in [("a/1", "letter", "en", "a"), ("a/2", "verse", "ru", "a"),
                                      ("b/1", "letter", "de", "b"), ("b/2", "letter", "en", "b"),
                                      ("c", "commentary", "en", "")]:
            src, data = make_source(sid, kind=kind, lang=lang)
            put(store, replace(src, collection=coll), data, make_fragments(src, [f"text of {sid}"]), embedded=False)

    def test_collection_roundtrip_and_filters(self, store: Store) -> None:
        self._curated(store)
        got = store.get_source("b/1")
        assert got is not None and got.collection == "b"
        assert [s.id for s in store.list_sources()] == ["a/1", "a/2", "b/1", "b/2", "c"]
        assert [s.id for s in store.list_sources(collection="a")] == ["a/1", "a/2"]
        assert [s.id for s in store.list_sources(kind="letter")] == ["a/1", "b/1", "b/2"]
        assert [s.id for s in store.list_sources(kind="letter", lang="en")] == ["a/1", "b/2"]
        assert [s.id for s in store.list_sources(lang="xx")] == []
        assert [s.id for s in store.list_sources(limit=2)] == ["a/1", "a/2"]
        assert [s.id for s in store.list_sources(limit=2, offset=2)] == ["b/1", "b/2"]
        assert [s.id for s in store.list_sources(offset=4)] == ["c"]
        assert [s.id for s in store.list_sources(kind="letter", limit=1, offset=1)] == ["b/1"]
        assert store.count_sources() == 5 and store.count_sources(kind="letter", collection="b") == 2
        assert store.count_sources(collection="zzz") == 0
        assert store.collections() == {"": 1, "a": 2, "b": 2}


class CueTests:
    """A track's cues: windows, replace, bad cues, a long track."""

    def test_cues_roundtrip_and_windows(self, store: Store) -> None:
        src, data = make_source("track", kind="track_transcript")
        cues = [Cue(0, 1000, "one"), Cue(1000, 2000, "two"), Cue(2500, 4000, "three"), Cue(4000, 4000, "blip"),
                Cue(4000, 6000, "four")]
        loc = [TranscriptLocator("track", 0, 6000)]
        store.put_source(src, make_fragments(src, ["one two three four"], locators=loc), None, data, cues=cues)
        assert store.get_cues("track") == cues
        assert "cues" not in (store.get_source("track") or src).meta
        assert [c.text for c in store.get_cues("track", 1500, 2600)] == ["two", "three"]
        assert [c.text for c in store.get_cues("track", 1000, 1001)] == ["two"]  # [start, end) overlap
        assert [c.text for c in store.get_cues("track", 2000, 2500)] == []  # the gap between cues
        assert [c.text for c in store.get_cues("track", 3000)] == ["three", "blip", "four"]
        assert [c.text for c in store.get_cues("track", 0, 1)] == ["one"]
        assert store.get_cues("track", 7000) == [] and store.get_cues("nope") == []
        # replacing the track replaces its cues; other sources have none
        src2, data2 = make_source("track", kind="track_transcript", version="2")
        store.put_source(src2, make_fragments(src2, ["new"], locators=loc), None, data2, cues=[Cue(5, 9, "new")])
        assert store.get_cues("track") == [Cue(5, 9, "new")]
        other, od = make_source("doc")
        put(store, other, od, make_fragments(other, ["plain"]), embedded=False)
        assert store.get_cues("doc") == []

    @pytest.mark.parametrize("bad", [
        [Cue(0, 1000, "a"), Cue(500, 1500, "overlaps")],
        [Cue(1000, 2000, "a"), Cue(0, 500, "earlier")],
        [Cue(2000, 1000, "reversed")],
        [Cue(-5, 10, "negative")],
    ])
    def test_bad_cues_write_nothing(self, store: Store, bad: list[Cue]) -> None:
        src, data = make_source("track", kind="track_transcript")
        with pytest.raises(StoreError):
            store.put_source(src, make_fragments(src, ["t"]), None, data, cues=bad)
        assert store.get_source("track") is None and store.get_cues("track") == []

    def test_cues_of_a_long_track(self, store: Store) -> None:
        src, data = make_source("long", kind="track_transcript")
        cues = [Cue(i * 1000, i * 1000 + 900, f"cue {i}") for i in range(20_000)]
        store.put_source(src, make_fragments(src, ["long track"]), None, data, cues=cues)
        assert [c.text for c in store.get_cues("long", 19_000_950, 19_002_000)] == ["cue 19001"]
        assert len(store.get_cues("long")) == 20_000

    # -- lexical -----------------------------------------------------------------------------------


class GenerationTests:
    """The generations (``SourceStore.generation``, ``VectorStore.vectors_generation``): the sources' moves when a
    source is added, replaced or removed, and not when vectors are written (a backlog's batches do not make every
    turn rebuild the books and names); the vectors' moves with both; reads and searches move neither. What a turn
    derives from the corpus is kept for one generation. (On PostgreSQL a write may move one twice: at once in the
    writing process, and when its own notification comes back; each is read once that has settled.)"""

    def test_the_generations_move_with_writes_and_only_then(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        g0, v0 = _settled(store)
        assert (store.generation(), store.vectors_generation()) == (g0, v0)  # reading moves nothing
        src, data = make_source("gen")
        frags = make_fragments(src, ["The quarry bell rings three times before noon."])
        store.put_source(src, frags, None, data)
        g1, v1 = _settled(store)
        assert g1 != g0 and v1 != v0
        store.list_sources()
        store.search_lexical("quarry", 3, stemmed=True)
        assert (store.generation(), store.vectors_generation()) == (g1, v1)
        store.put_embeddings(store.pending_fragments(10), embed(frags))
        g2, v2 = _settled(store)
        assert g2 == g1 and v2 != v1  # vectors alone: the sources' generation stays
        store.delete_source(src.id)
        g3, v3 = _settled(store)
        assert g3 != g2 and v3 != v2


def _settled(store: Store, quiet_s: float = 0.1, limit_s: float = 3.0) -> tuple[int, int]:
    """Both generations once they have stayed the same for ``quiet_s``."""
    deadline = time.monotonic() + limit_s

    def read() -> tuple[int, int]:
        return store.generation(), store.vectors_generation()

    last, since = read(), time.monotonic()
    while time.monotonic() - since < quiet_s and time.monotonic() < deadline:
        time.sleep(0.02)
        now = read()
        if now != last:
            last, since = now, time.monotonic()
    return last
