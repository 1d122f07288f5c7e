"""The turn is one-way: the search opens the turn's reader of the corpus and hands it on in the
``SearchResult``; the answer stage reads sources, cues and a pinned note's fragments through it, never
the store, and each source once per turn. Over the demo in a real SQLite store (hash embedder); the
store is wrapped to count the calls that reach it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from footnote.answer.followup import PriorTurn
from footnote.answer.turn import final_answer
from footnote.engine import Engine
from footnote.records.fragments import TranscriptLocator
from footnote.retrieve.pipeline import Retriever
from footnote.retrieve.sentence_vectors import SentenceVectorCache

REPO = Path(__file__).resolve().parents[2]
FOG = "When must the keeper start the fog horn, and how does it sound?"


class Counting:
    """A real store whose every method call is counted by name (``get_source`` also by id)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.calls: Counter[str] = Counter()
        self.sources: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            if name == "get_source":
                self.sources[args[0]] += 1
            return attr(*args, **kwargs)

        return call


def test_the_search_hands_its_reader_on(hash_demo: Engine) -> None:
    r = hash_demo.retriever.search(FOG)
    assert r.corpus is not None and r.corpus.books is hash_demo.retriever.books.get()
    assert r.corpus.embedder is hash_demo.retriever.embedder
    view = hash_demo.retriever.corpus()
    assert hash_demo.retriever.search(FOG, corpus=view).corpus is view  # a follow-up's rewrite opened it first


def test_every_read_of_a_turn_goes_through_its_reader_and_each_source_once(hash_demo: Engine) -> None:
    """The answerer holds no store and no retriever; the engine composes the turn over a counting store. A
    transcript answer (its cues), a follow-up (its rewrite asks how common a term is, before the search) and a
    not-found turn (a near miss's titles) read through the reader the turn opened, which reads a source once
    however many stages ask for it (the prose check, the citations, the near-miss titles)."""
    store = Counting(hash_demo.store)
    eng = Engine(hash_demo.settings, store, hash_demo.embedder)  # type: ignore[arg-type]
    assert not any(isinstance(v, (Counting, Retriever)) for v in vars(eng.answerer).values())
    # nor a cache of vectors: the ranker and the support check take the turn reader's
    assert not any(isinstance(v, SentenceVectorCache) for a in (eng.answerer, eng.answerer.ranker, eng.answerer.support)
                   for v in vars(a).values())
    a = eng.ask(FOG)
    assert a.citations and any(isinstance(c.fragment.locator, TranscriptLocator) for c in a.citations), a.answer
    cited = {c.fragment.source_id for c in a.citations}
    assert cited and cited <= set(store.sources), (cited, store.sources)
    assert max(store.sources.values()) == 1, store.sources
    assert store.calls["get_cues"] >= 1
    # a second turn opens a reader of its own: a source changed in between is read again
    prior = PriorTurn(FOG, FOG, a.answer, tuple(c.title for c in a.citations))
    b = final_answer(eng._turn(eng.question("What about at night?"), None, None, [prior]))
    assert b.trace.rewritten_question is not None
    assert max(store.sources.values()) == 2, store.sources
    off = eng.ask("Which football club won the league in 2018?")
    assert not off.citations and max(store.sources.values()) <= 3


def test_cues_come_through_the_reader(hash_demo: Engine) -> None:
    r = hash_demo.retriever.search(FOG)
    assert r.corpus is not None
    track = next(c.fragment for c in r.candidates if isinstance(c.fragment.locator, TranscriptLocator))
    loc = track.locator
    assert isinstance(loc, TranscriptLocator)
    cues: Callable[..., Any] = r.corpus.cues
    got = cues(track.source_id, loc.start_ms, loc.end_ms)
    assert got and all(loc.start_ms <= c.start_ms < loc.end_ms for c in got)


def test_the_term_share_counts_the_corpus_lexically(hash_demo: Engine) -> None:
    """The follow-up rule's "does this term retrieve on its own": the share of fragments matching it."""
    reads = hash_demo.retriever.corpus()
    n = hash_demo.store.stats().fragments
    cap = int(n * hash_demo.settings.conversation.new_subject_max_share) + 1
    fog = reads.term_share("fog", "en")
    assert fog == len(hash_demo.store.search_lexical("fog", cap, stemmed=True, lang="en")) / n
    assert 0 < fog <= cap / n
    assert reads.term_share("zanzibarquokka", "en") == 0.0
