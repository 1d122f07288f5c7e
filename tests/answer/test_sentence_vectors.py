"""The extractive stage's sentence-vector cache under concurrent turns: a sentence is embedded once even
when several turns need it at the same moment, and a turn whose embedding fails does not strand the
others."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from footnote.answer.types import Done, Error
from footnote.errors import Cancelled
from footnote.models.embedders import HashEmbedder
from footnote.retrieve.sentence_vectors import SentenceVectorCache

from .conftest import FOG_Q

TEXTS = ["The fog lasted thirty-one hours.", "The horn sounds twice a minute.", "The lamp is red."]


class SlowCountingEmbedder(HashEmbedder):
    """The hash embedder, but each passage call waits for ``go`` and records what it embedded."""

    def __init__(self, fail_first: bool = False) -> None:
        super().__init__(32)
        self.calls: list[list[str]] = []
        self.started = threading.Event()
        self.go = threading.Event()
        self.fail_first = fail_first
        self._lock = threading.Lock()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.calls.append(list(texts))
            first = len(self.calls) == 1
        self.started.set()
        self.go.wait(5)
        if first and self.fail_first:
            raise RuntimeError("the model went away")
        return super().embed_passages(texts)


def _run(cache: SentenceVectorCache, emb: SlowCountingEmbedder, n: int) -> tuple[list[np.ndarray], list[BaseException]]:
    out: list[np.ndarray] = []
    errors: list[BaseException] = []

    def turn() -> None:
        try:
            out.append(cache.vectors(emb, TEXTS))
        except BaseException as e:
            errors.append(e)

    first = threading.Thread(target=turn)
    first.start()
    assert emb.started.wait(5)  # the first turn is inside the embedder, holding the texts
    others = [threading.Thread(target=turn) for _ in range(n - 1)]
    for t in others:
        t.start()
    deadline = threading.Event()
    deadline.wait(0.1)  # the others reach their wait
    emb.go.set()
    for t in [first, *others]:
        t.join(5)
    return out, errors


def test_concurrent_turns_embed_a_sentence_once() -> None:
    emb = SlowCountingEmbedder()
    cache = SentenceVectorCache(100)
    out, errors = _run(cache, emb, 6)
    assert not errors
    assert emb.calls == [TEXTS]  # one call, by the first turn; five waited for it
    assert cache.embedded == 3
    expect = HashEmbedder(32).embed_passages(TEXTS)
    assert len(out) == 6 and all(np.allclose(v, expect) for v in out)


def test_a_failed_turn_leaves_the_others_to_embed() -> None:
    emb = SlowCountingEmbedder(fail_first=True)
    cache = SentenceVectorCache(100)
    out, errors = _run(cache, emb, 3)
    assert len(errors) == 1 and "went away" in str(errors[0])
    assert len(out) == 2  # the waiting turns embedded the texts themselves
    assert all(np.allclose(v, HashEmbedder(32).embed_passages(TEXTS)) for v in out)
    assert not cache._inflight  # nothing left claimed
    # afterwards the vectors come from memory
    calls = len(emb.calls)
    cache.vectors(emb, TEXTS[:1])
    assert len(emb.calls) == calls


@pytest.mark.parametrize("texts", [[], ["The lamp is red.", "The lamp is red."]])
def test_empty_and_repeated_texts(texts: list[str]) -> None:
    cache = SentenceVectorCache(10)
    got = cache.vectors(HashEmbedder(32), texts)
    assert got.shape == (len(texts), 32)


class StopAfterFirstPiece(HashEmbedder):
    """The hash embedder; its first passage call sets ``stop``, as a client hanging up meanwhile would."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__(32)
        self.stop = stop
        self.pieces: list[int] = []

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.pieces.append(len(texts))
        self.stop.set()
        return super().embed_passages(texts)


def test_a_stopped_turn_stops_embedding_and_keeps_what_it_made() -> None:
    stop = threading.Event()
    emb = StopAfterFirstPiece(stop)
    cache = SentenceVectorCache(100, stop_every=2)
    texts = [f"Sentence number {i} of a long note." for i in range(7)]
    with pytest.raises(Cancelled, match="client went away"):
        cache.vectors(emb, texts, stopped=stop.is_set)
    assert emb.pieces == [2]  # one piece of 2, then the flag was seen
    assert not cache._inflight
    # the piece made is remembered; another turn embeds only the rest, in one batch (no stop flag)
    cache.vectors(emb, texts)
    assert emb.pieces == [2, 5]


def test_an_abandoned_turn_stops_while_embedding_its_sentences(build_engine: Any) -> None:
    # a store whose sentence vectors ingest did not make (backlog.warm_sentences_max_fragments = 0)
    eng = build_engine(**{"answer.extractive.cache.stop_check_sentences": 1, "backlog.warm_sentences_max_fragments": 0})
    stop = threading.Event()
    ranker = eng.answerer.ranker
    emb = StopAfterFirstPiece(stop)
    emb.dim = ranker.embedder.dim
    ranker.embedder = emb  # the same hash vectors, plus the client hanging up during the first piece
    events = list(eng.ask_stream(FOG_Q, stop=stop))
    assert isinstance(events[-1], Error) and isinstance(events[-1].exc, Cancelled)
    assert "embedding its sentences" in events[-1].exc.message
    assert emb.pieces == [1]
    assert not any(isinstance(e, Done) for e in events)


def test_warming_makes_the_first_ask_embed_nothing(build_engine: Any) -> None:
    eng = build_engine(**{"backlog.warm_sentences_max_fragments": 0})  # the server's warm-up, not ingest's
    ans = eng.answerer
    made = ans.warm_sentences(eng.retriever.corpus(), 10_000)
    assert made > 0
    assert ans.warm_sentences(eng.retriever.corpus(), 10_000) == 0  # kept: nothing left to make
    fresh = build_engine()  # another process over the same store: the vectors come from the store
    cache = fresh.retriever.vectors
    a = fresh.ask(FOG_Q)
    assert a.mode.value == "corpus"
    assert cache.embedded == 0  # every sentence the ranker scored was warmed


def test_warming_skips_a_large_store_and_stops_when_told(build_engine: Any) -> None:
    eng = build_engine()
    n = eng.store.stats().fragments
    assert eng.answerer.warm_sentences(eng.retriever.corpus(), n - 1) == 0  # larger than the bound: made on first use instead
    stop = threading.Event()
    stop.set()
    assert eng.answerer.warm_sentences(eng.retriever.corpus(), n, stop) == 0
    assert eng.answerer.warm_sentences(eng.retriever.corpus(), 0) == 0


class SlowPassages(HashEmbedder):
    """The hash embedder, taking ``per_text`` seconds a passage text (EmbeddingGemma on a busy 2-core machine:
    0.35 s a sentence; a cold turn's 16 notes hold ~128)."""

    def __init__(self, dim: int, per_text: float) -> None:
        super().__init__(dim)
        self.per_text = per_text
        self.texts = 0

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.per_text * len(texts))
        self.texts += len(texts)
        return super().embed_passages(texts)


def test_the_deadline_cuts_a_cold_turns_sentence_embedding_and_it_still_answers(build_engine: Any) -> None:
    """Issue 44 §7: the first ask to a store whose sentence vectors were not made yet got no answer in 150 s (the
    deadline is 90 s): the turn's deadline was not checked while it embedded its notes' sentences. Now the
    sentences left when it passes are scored by their words, and the turn ends in time with an answer."""
    eng = build_engine(**{"backlog.warm_sentences_max_fragments": 0, "answer.turn_timeout_s": 1.5,
                          "answer.extractive.cache.stop_check_sentences": 1})
    ranker = eng.answerer.ranker
    slow = SlowPassages(ranker.embedder.dim, 0.8)
    ranker.embedder = slow
    t0 = time.monotonic()
    events = list(eng.ask_stream(FOG_Q))
    took = time.monotonic() - t0
    done = events[-1]
    assert isinstance(done, Done), events[-1]
    a = done.answer
    assert took < 4.5, f"the turn took {took:.1f} s with a 1.5 s deadline"
    assert a.mode.value == "corpus" and a.citations  # answered from the words of its sentences
    assert a.trace is not None and any("deadline came with" in d for d in a.trace.degraded), a.trace.degraded
    outline = next(st for st in a.trace.stages if st.name == "outline")
    assert outline.info.get("unembedded", 0) > 0


def test_a_waiter_gets_a_text_when_its_piece_is_made_not_when_the_whole_warm_up_ends() -> None:
    """A stranger's server on a 117-page PDF answered nothing for 3 minutes: the warm-up was embedding the whole PDF's
    sentences in one call, and a search that needed one of them (the gate shares the cache) waited for all of them.
    Now each piece is published as it is made, and a waiter with a deadline gives up at the deadline."""
    cache = SentenceVectorCache(1000, stop_every=2)
    emb = SlowPassages(32, 0.05)
    texts = [f"Sentence number {i} of a long book." for i in range(40)]  # 20 pieces of 2, ~0.1 s each
    warm = threading.Thread(target=lambda: cache.vectors(emb, texts, stopped=lambda: False))
    warm.start()
    time.sleep(0.02)
    t0 = time.monotonic()
    got = cache.vectors(emb, texts[:2])  # in the first piece the warm-up makes
    waited = time.monotonic() - t0
    assert waited < 1.0, f"waited {waited:.2f} s for the whole warm-up"  # the whole call takes ~2 s
    assert np.allclose(got, HashEmbedder(32).embed_passages(texts[:2]))
    deadline = time.monotonic() + 0.2
    t0 = time.monotonic()
    late = cache.vectors(emb, texts[-2:], expired=lambda: time.monotonic() > deadline)
    assert time.monotonic() - t0 < 1.0 and not late.any()  # scored by its words: zero vectors
    warm.join()


def test_a_warm_up_claims_nothing_so_a_search_never_queues_behind_it() -> None:
    """The warm-up goes through the whole corpus (``claim=False``): a caller needing one of its texts embeds it at once
    instead of waiting until the warm-up reaches it."""
    cache = SentenceVectorCache(1000, stop_every=2)
    emb = SlowPassages(32, 0.05)
    texts = [f"Sentence number {i} of a long book." for i in range(40)]
    warm = threading.Thread(target=lambda: cache.vectors(emb, texts, stopped=lambda: False, claim=False))
    warm.start()
    time.sleep(0.02)
    t0 = time.monotonic()
    got = cache.vectors(emb, texts[-2:])  # the warm-up reaches these last (~2 s)
    assert time.monotonic() - t0 < 1.0
    assert np.allclose(got, HashEmbedder(32).embed_passages(texts[-2:]))
    warm.join()
