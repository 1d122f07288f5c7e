"""A question that names a source by its title ("according to the Keeper's Handbook, …") is answered from that
source's own sentences first (``answer.extractive.named_source_weight``), even when another source says the same in
words closer to the question. Real SQLite store, hash embedder."""

from __future__ import annotations

from pathlib import Path

from footnote.answer.types import AnswerMode
from footnote.engine import Engine

from .conftest import make_settings

HANDBOOK = """# The Keeper's Handbook — Station Rules

When the beacon cannot be seen, the fog signal shall be sounded at once by the keeper on watch.
"""
HARBOUR = """# The Harbour Book

The keeper must start the fog horn when the keeper on watch can no longer see the beacon.
"""
QUESTION = "According to the Keeper's Handbook, when must the keeper start the fog horn?"


def _engine(tmp_path: Path, weight: float | None = None) -> Engine:
    d = tmp_path / "corpus"
    d.mkdir(exist_ok=True)
    (d / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    (d / "harbour.md").write_text(HARBOUR, encoding="utf-8")
    s = make_settings(tmp_path)
    if weight is not None:
        s = s.with_overrides(**{"answer.extractive.named_source_weight": weight})
    eng = Engine.from_settings(s)
    eng.ingest([d])
    return eng


def test_the_named_sources_own_sentence_comes_first(tmp_path: Path) -> None:
    # the hash embedder's near-copy sentence scores far above a paraphrase, so the weight is raised to show the
    # mechanism on its scale; the shipped 0.6 is checked over the real demo (test_demo_gemma.py)
    eng = _engine(tmp_path, weight=3.0)
    try:
        a = eng.ask(QUESTION)
        assert a.mode is AnswerMode.CORPUS, a.answer
        assert a.citations[0].fragment.source_id.endswith("handbook.md"), a.answer
        assert a.answer.startswith("When the beacon cannot be seen, the fog signal shall be sounded")
        assert a.trace is not None
        outline = next(s for s in a.trace.stages if s.name == "outline")
        assert outline.info["named_sources"] == ["corpus/handbook.md"]
        # a question that names no source: the closer wording wins, as before
        plain = eng.ask("When must the keeper start the fog horn?")
        assert plain.citations[0].fragment.source_id.endswith("harbour.md"), plain.answer
    finally:
        eng.close()


def test_without_the_weight_the_closer_wording_wins(tmp_path: Path) -> None:
    eng = _engine(tmp_path, weight=0.0)
    try:
        a = eng.ask(QUESTION)
        assert a.citations[0].fragment.source_id.endswith("harbour.md"), a.answer
    finally:
        eng.close()
