"""Thresholds for a language pair nobody calibrated: fitted on the calibrated pairs pooled, on a signal that
cancels a pair's cross-lingual offset and scale, and checked on a pair left out of the fit."""

from __future__ import annotations

import random

from footnote.eval.calibration import FitTargets, LabelledSignal, derived_check, fit_derived, fit_gate
from footnote.retrieve.gate import signal_value
from footnote.settings import EmbedderGate, GateSettings, GateThresholds, ThresholdSource

# (pair, offset of every cosine, scale of the spread): a fresh language's cosines to the corpus sit lower and
# narrower than a calibrated pair's, the question's relevance is the same
PAIRS = (("en-en", 0.0, 1.0), ("ru-en", -0.10, 0.8), ("ar-en", -0.22, 0.55))


def _rows(pairs: tuple[tuple[str, float, float], ...] = PAIRS, n: int = 600, seed: int = 3) -> list[LabelledSignal]:
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        for pair, offset, scale in pairs:
            cat = ("in_corpus", "in_corpus", "near_miss", "off_topic")[i % 4]
            bg = 0.30 + offset + rnd.gauss(0, 0.01)
            spread = 0.05 * scale
            z = rnd.gauss(5.0, 0.8) if cat == "in_corpus" else rnd.gauss(2.5, 0.8)
            mx = bg + z * spread
            sent = bg + (z + rnd.gauss(0, 0.5)) * spread * 0.9
            rows.append(LabelledSignal(
                id=f"q{i}:{pair}", lang=pair[:2], pair=pair, category=cat, answerable=cat == "in_corpus", half=i % 2,
                max_score=mx, background=bg, lexical_overlap=0.0, gold_cosine=mx if cat == "in_corpus" else None,
                sentence=sent, spread=spread,
            ))
    return rows


def _answered(rows: list[LabelledSignal], t: GateThresholds) -> float:
    pos = [r for r in rows if r.answerable]
    return sum(r.value_at(t) >= t.bail_out for r in pos) / len(pos)


def test_derived_thresholds_answer_a_left_out_pair_like_a_calibrated_one() -> None:
    rows = _rows()
    seen = [r for r in rows if r.pair != "ar-en"]
    fresh = [r for r in rows if r.pair == "ar-en"]
    derived = fit_derived(seen, FitTargets(answer_target=0.96), background=True)
    assert derived is not None and derived.lexical_weight == 0.0
    assert derived.background_weight == 1.0 + derived.sentence_weight  # the offset is in the background here
    assert _answered(fresh, derived) >= 0.93
    neg = [r for r in fresh if not r.answerable]
    assert sum(r.value_at(derived) < derived.bail_out for r in neg) / len(neg) >= 0.85
    # the strictest calibrated pair's raw-cosine thresholds answer almost nothing of the fresh pair
    en = fit_gate(seen).by_pair["en-en"].thresholds
    assert _answered(fresh, en) < 0.2


def test_the_background_term_is_weighed_only_where_the_background_is_high() -> None:
    low = fit_derived(_rows())  # backgrounds ≈ 0.08–0.30 here
    assert low is not None and low.background_weight == 0.0 and not low.spread_normalised
    assert fit_derived(_rows(), FitTargets(derived_background_min=0.05)) == fit_derived(_rows(), background=True)


def test_derived_check_leaves_each_pair_out_in_turn() -> None:
    table = derived_check(_rows(), background=True)
    assert {r["pair"] for r in table} == {"en-en", "ru-en", "ar-en"}
    for row in table:
        assert row["half"] == "left out" and row["answer:in_corpus"] >= 0.9, row


def test_calibrate_writes_derived_thresholds_that_the_gate_uses_for_other_pairs() -> None:
    fit = fit_gate(_rows(PAIRS[:2]))
    eg = fit.to_embedder_gate("synthetic")
    assert eg.derived is not None
    gate = GateSettings().model_copy(update={"by_embedder": {"x": eg}})
    for q, c, source in (("en", "en", ThresholdSource.CALIBRATED), ("ru", "en", ThresholdSource.CALIBRATED),
                         ("ar", "en", ThresholdSource.DERIVED), ("de", "de", ThresholdSource.DERIVED)):
        choice = gate.choose("x", q, c)
        assert choice.source is source and choice.pair == f"{q}-{c}"
    assert gate.choose("x", "th", "en").thresholds == eg.derived
    # an embedder with no section of its own borrows another's, and says so
    assert gate.choose("unknown", "ar", "en").source is ThresholdSource.BORROWED


def test_without_derived_thresholds_an_unlisted_pair_borrows_the_cross_lingual_one() -> None:
    fit = fit_gate(_rows(PAIRS[:2]))
    eg = EmbedderGate(**{**fit.to_embedder_gate("synthetic").model_dump(), "derived": None})
    gate = GateSettings().model_copy(update={"by_embedder": {"x": eg}})
    choice = gate.choose("x", "ar", "en")
    assert choice.source is ThresholdSource.BORROWED and choice.via == "ru-en"


def test_spread_normalised_signal_divides_the_dense_part_only() -> None:
    t = GateThresholds(bail_out=0, sufficient=0, good_enough=0, fallback_min_score=0, reserve_floor=0, prefloor=0,
                       background_weight=2.0, sentence_weight=1.0, lexical_weight=0.5, spread_normalised=True)
    assert signal_value(0.6, 0.2, 1.0, t, sentence=0.5, spread=0.05) == (0.6 - 0.4 + 0.5) / 0.05 + 0.5
    plain = t.model_copy(update={"spread_normalised": False})
    assert signal_value(0.6, 0.2, 1.0, plain, sentence=0.5, spread=0.05) == 0.6 - 0.4 + 0.5 + 0.5
