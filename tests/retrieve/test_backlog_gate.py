"""A partly embedded store (embedding backlog). A lexical hit on a fragment without a vector is embedded for the
turn (``retrieve.pending_embed_max``), so it ranks and is judged as if indexed; beyond that cap it is judged by the
lexical-only gate, not bailed out as a dense miss; off-topic questions still bail out."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from footnote.errors import ModelError
from footnote.models.embedders import HashEmbedder
from footnote.records.fragments import FileLocator, Fragment, Source, sha256_text
from footnote.retrieve.pipeline import Retriever
from footnote.retrieve.types import Verdict
from footnote.settings import Settings
from footnote.store import open_store
from footnote.store.protocol import Store

EMBEDDED = [
    ("ocean", "The tides of the ocean rise and fall twice a day because of the gravity of the moon."),
    ("forest", "Old forests store carbon in their wood and soil for centuries."),
    ("volcano", "A volcano erupts when molten rock rises through cracks in the crust."),
    ("bread", "Bread dough rises because yeast ferments sugar into carbon dioxide."),
]
PENDING = ("kingfisher", "The kingfisher digs its nest as a tunnel in steep river banks of sand.")


def _put(store: Store, sid: str, text: str, emb: HashEmbedder | None) -> None:
    src = Source(sid, "prose_chapter", sid, "en", sha256_text(sid), sha256_text(sid), f"{sid}.txt", "text/plain")
    frag = Fragment(f"{sid}#0", sid, 0, "prose_chapter", "en", text, FileLocator(f"{sid}.txt"), sha256_text(text))
    store.put_source(src, [frag], emb.embed_passages([text]) if emb else None, sid.encode())


def _strict(hash_settings: Settings) -> Settings:
    # a dense gate that only a near-copy passes: whatever passes here passes by the lexical-only gate
    t = {"bail_out": 0.9, "sufficient": 0.97, "good_enough": 0.97, "min_lectures": 2, "fallback_min_score": 0.5,
         "reserve_floor": -1.0, "prefloor": -1.0}
    return hash_settings.with_overrides(**{"gate.by_embedder": {"hash": {"default": t, "by_lang_pair": {},
                                                                          "fitted_on": "test"}},
                                           "retrieve.pending_embed_max": 0})  # the fallback past the per-turn cap


def test_unembedded_lexical_hit_is_not_a_dense_miss(hash_settings: Settings, tmp_path: Path) -> None:
    emb = HashEmbedder()
    store = open_store(str(tmp_path / "b.db"))
    store.bind_embedder(emb.name, emb.dim)
    for sid, text in EMBEDDED:
        _put(store, sid, text, emb)
    _put(store, *PENDING, None)  # written, searchable lexically, no vector yet
    assert store.backlog().pending == 1
    settings = _strict(hash_settings)
    r = Retriever(settings, store, emb, None, None).search("Where does the kingfisher dig its nest in river banks?")
    assert not r.lexical_only
    by_id = {c.fragment.id: c for c in r.candidates[:3]}
    # ranked on its lexical evidence with a neutral cosine (the median of the embedded candidates)
    assert "kingfisher#0" in by_id and by_id["kingfisher#0"].embedded is False
    assert by_id["kingfisher#0"].score == 0.0 and (by_id["kingfisher#0"].rerank or 0) > 0.1
    assert r.verdict in (Verdict.GOOD_ENOUGH, Verdict.SUFFICIENT)
    assert r.signal.extra["unembedded_top"] >= 1
    # off-topic: no lexical evidence anywhere, the gate still bails out
    off = Retriever(settings, store, emb, None, None).search("quantum chromodynamics on a lattice")
    assert off.verdict is Verdict.BAIL_OUT
    # once embedded, the fragment is judged by the dense gate alone (a strict one: it does not pass)
    pend = store.pending_fragments(10)
    store.put_embeddings(pend, emb.embed_passages([p.text for p in pend]))
    r2 = Retriever(settings, store, emb, None, None).search("Where does the kingfisher dig its nest in river banks?")
    assert all(c.embedded for c in r2.candidates) and "unembedded_top" not in r2.signal.extra
    assert r2.verdict is Verdict.BAIL_OUT
    store.close()


NEAR = [  # embedded near-misses that share the question's words and outrank a neutral cosine
    ("otter", "Where does the otter dig its den? In the river banks, under the roots of alder trees."),
    ("sandmartin", "Sand martins dig their nest tunnels in river banks where the sand is steep."),
    ("badger", "Where does the badger dig its sett? In dry banks at the edge of woods."),
    ("vole", "The water vole digs burrows in the banks of slow rivers and ditches."),
    ("beaver", "Beavers build lodges in rivers and dig canals; where does the beaver nest? In the lodge."),
    ("dipper", "Where does the dipper build its nest? In river banks, behind waterfalls, in the stone."),
    ("heron", "Where does the heron nest? Herons nest high in trees near the river banks."),
    ("mole", "The mole digs tunnels in the soil of fields and river meadows."),
]


def _near_store(tmp_path: Path, emb: HashEmbedder) -> Store:
    """The near-misses embedded, the kingfisher written with no vector yet."""
    store = open_store(str(tmp_path / "near.db"))
    store.bind_embedder(emb.name, emb.dim)
    for sid, text in NEAR:
        _put(store, sid, text, emb)
    _put(store, *PENDING, None)
    return store


def test_a_verbatim_hit_below_the_top_three_still_answers_and_leads(hash_settings: Settings, tmp_path: Path) -> None:
    """The unembedded fragment ranks 4th behind embedded near-misses (its cosine is only the neutral
    median): its lexical evidence still carries the verdict, and it leads the slate it carried."""
    emb = HashEmbedder()
    store = _near_store(tmp_path, emb)
    q = "Where does the kingfisher dig its nest in river banks?"
    r = Retriever(_strict(hash_settings), store, emb, None, None).search(q)
    assert r.verdict in (Verdict.GOOD_ENOUGH, Verdict.SUFFICIENT)
    assert r.candidates[0].fragment.id == "kingfisher#0" and r.candidates[0].embedded is False
    assert r.signal.extra["unembedded_slate"] >= 1 and r.signal.extra["unembedded_overlap"] == 1.0
    # the near-misses' rank order is kept behind it
    rest = [c.fragment.id for c in r.candidates[1:]]
    assert rest == sorted(rest, key=lambda i: -next(c.rerank or 0 for c in r.candidates if c.fragment.id == i))
    # a question none of them carries still bails out
    assert Retriever(_strict(hash_settings), store, emb, None, None).search(
        "quantum chromodynamics on a lattice").verdict is Verdict.BAIL_OUT
    store.close()


def test_a_pending_lexical_hit_is_embedded_for_the_turn_and_ranks_as_if_indexed(
    hash_settings: Settings, tmp_path: Path
) -> None:
    """The default: the pending fragment's true cosine is computed for the turn, so the slate is the one a fully
    embedded store gives — and nothing is written (the backlog still holds it)."""
    emb = HashEmbedder()
    store = _near_store(tmp_path, emb)
    q = "Where does the kingfisher dig its nest in river banks?"
    r = Retriever(hash_settings, store, emb, None, None).search(q)
    assert store.backlog().pending == 1  # embedded for the turn only
    pool = next(t for t in r.trace if t.name == "pool")
    assert pool.counts["embedded_for_turn"] == 1
    king = next(c for c in r.candidates if c.fragment.id == "kingfisher#0")
    assert king.embedded is True and king.score > 0.0 and "unembedded_top" not in r.signal.extra
    # the same slate, scores and verdict as once the backlog has embedded it
    pend = store.pending_fragments(10)
    store.put_embeddings(pend, emb.embed_passages([p.text for p in pend]))
    full = Retriever(hash_settings, store, emb, None, None).search(q)
    assert [c.fragment.id for c in full.candidates] == [c.fragment.id for c in r.candidates]
    assert [round(c.score, 5) for c in full.candidates] == [round(c.score, 5) for c in r.candidates]
    assert full.verdict is r.verdict
    # past the cap, the strongest lexical hits are embedded first
    _put(store, "owl", "The barn owl hunts voles over meadows at dusk.", None)
    _put(store, "wren", "The wren nests in river banks too, where does the kingfisher not?", None)
    one = hash_settings.with_overrides(**{"retrieve.pending_embed_max": 1})
    r3 = Retriever(one, store, emb, None, None).search(q)
    assert next(t for t in r3.trace if t.name == "pool").counts["embedded_for_turn"] == 1
    assert {c.fragment.id for c in r3.candidates if c.embedded} >= {"kingfisher#0", "wren#0"}
    assert all(not c.embedded for c in r3.candidates if c.fragment.id == "owl#0")
    store.close()


class _PassagesFail(HashEmbedder):
    """A hash embedder whose passage embedding fails (an endpoint refusing one input), its query embedding not."""

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return HashEmbedder().embed_passages(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        raise ModelError("the embedding endpoint answered 413 for one passage")


def test_an_embedder_failing_on_a_pending_passage_does_not_fail_the_search(
    hash_settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The backlog may be stuck on just the passage the endpoint refuses: the search ranks it by its words, as
    before the per-turn embedding, and says so in the log — it does not fail."""
    emb = HashEmbedder()
    store = _near_store(tmp_path, emb)
    with caplog.at_level(logging.WARNING, logger="footnote.retrieve.pool"):
        r = Retriever(_strict(hash_settings).with_overrides(**{"retrieve.pending_embed_max": 4}), store,
                      _PassagesFail(), None, None).search("Where does the kingfisher dig its nest in river banks?")
    assert next(t for t in r.trace if t.name == "pool").counts["embedded_for_turn"] == 0
    assert r.candidates[0].fragment.id == "kingfisher#0" and r.candidates[0].embedded is False
    assert r.verdict in (Verdict.GOOD_ENOUGH, Verdict.SUFFICIENT)
    assert "could not embed 1 pending passages" in caplog.text
    store.close()
