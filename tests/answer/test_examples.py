"""Example questions made from the corpus's passages (footnote.answer.examples), over the demo corpus."""

from __future__ import annotations

from pathlib import Path

from footnote.answer.examples import example_questions
from footnote.engine import Engine
from footnote.settings import load_settings

REPO = Path(__file__).resolve().parents[2]


def test_examples_are_drawn_from_passages_and_answerable(hash_demo: Engine) -> None:
    got = hash_demo.example_questions()
    assert 2 <= len(got) <= hash_demo.settings.server.examples
    assert len({e.source_id for e in got}) == len(got)  # one per source
    titles = {s.title for s in hash_demo.store.list_sources()}
    for e in got:
        assert not any(t in e.question for t in titles)
        frag = hash_demo.store.get_fragments([e.fragment_id])[0]
        assert frag.source_id == e.source_id
        if e.how == "address":
            assert frag.locator.label in e.question  # type: ignore[union-attr]
        a = hash_demo.ask(e.question)
        assert a.mode.value == "corpus" and a.citations, e.question
    assert [e.question for e in hash_demo.example_questions()] == [e.question for e in got]  # cached, same


def test_examples_are_deterministic_and_checked(hash_demo: Engine) -> None:
    calls: list[str] = []

    def search(q: str):  # type: ignore[no-untyped-def]
        calls.append(q)
        return hash_demo.search(q)

    a = example_questions(hash_demo.retriever.corpus(), search, None, n=3, scan_sources=40, max_searches=12)
    b = example_questions(hash_demo.retriever.corpus(), hash_demo.search, None, n=3, scan_sources=40, max_searches=12)
    assert [e.question for e in a] == [e.question for e in b]
    assert len(calls) <= 12 and [e.question for e in a] == [q for q in calls if q in {e.question for e in a}]
    # with a model configured only the gate judges (no model call): sufficient or good enough searches
    assert all(hash_demo.search(e.question).verdict.value in ("sufficient", "good_enough") for e in a)
    # nothing may be searched: nothing is offered
    assert example_questions(hash_demo.retriever.corpus(), hash_demo.search, None, n=3, scan_sources=40, max_searches=0) == []


def test_an_empty_store_offers_nothing(tmp_path: Path) -> None:
    eng = Engine.from_settings(load_settings(None, **{"store.url": str(tmp_path / "e.db"), "embedder.name": "hash"}))
    try:
        assert eng.example_questions() == []
    finally:
        eng.close()
