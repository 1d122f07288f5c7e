"""Metrics on hand-made inputs with known answers."""

from __future__ import annotations

import math

import pytest

from footnote.eval.metrics import (
    abstention_pr,
    auroc,
    crag_points,
    first_hit_rank,
    mrr,
    percentile,
    recall_at_k,
    roc_curve,
)


def test_first_hit_rank() -> None:
    assert first_hit_rank(["a", "b", "g", "g"], {"g"}) == 3
    assert first_hit_rank(["g"], ["g", "h"]) == 1
    assert first_hit_rank(["a", "b"], {"g"}) is None
    assert first_hit_rank(["a"], set()) is None


def test_recall_and_mrr() -> None:
    ranks = [1, 2, None, 16, 17]
    assert recall_at_k(ranks, 1) == pytest.approx(0.2)
    assert recall_at_k(ranks, 5) == pytest.approx(0.4)
    assert recall_at_k(ranks, 16) == pytest.approx(0.6)
    assert mrr(ranks) == pytest.approx((1 + 0.5 + 1 / 16 + 1 / 17) / 5)
    assert recall_at_k([], 1) is None and mrr([]) is None


def test_abstention_precision_recall() -> None:
    abstained = [True, True, False, False, True]
    answerable = [False, True, False, True, False]
    # TP = idx 0, 4; FP = idx 1; FN = idx 2
    p, r = abstention_pr(abstained, answerable)
    assert p == pytest.approx(2 / 3)
    assert r == pytest.approx(2 / 3)
    assert abstention_pr([False], [True]) == (None, None)
    with pytest.raises(ValueError):
        abstention_pr([True], [True, False])


def test_auroc_known_values() -> None:
    assert auroc([0.9, 0.8, 0.3, 0.1], [True, True, False, False]) == 1.0
    assert auroc([0.1, 0.2, 0.8, 0.9], [True, True, False, False]) == 0.0
    # one inversion out of 4 pairs
    assert auroc([0.9, 0.4, 0.5, 0.1], [True, True, False, False]) == pytest.approx(0.75)
    # ties count half
    assert auroc([0.5, 0.5], [True, False]) == pytest.approx(0.5)
    assert auroc([0.7, 0.5, 0.5, 0.1], [True, True, False, False]) == pytest.approx((1 + 1 + 0.5 + 1) / 4)
    assert auroc([0.1, 0.2], [True, True]) is None


def test_roc_curve_matches_auroc() -> None:
    scores = [0.9, 0.4, 0.5, 0.1, 0.5, 0.7]
    labels = [True, True, False, False, True, False]
    fpr, tpr, thr = roc_curve(scores, labels)
    assert (fpr[0], tpr[0]) == (0.0, 0.0) and (fpr[-1], tpr[-1]) == (1.0, 1.0)
    assert thr[0] == math.inf and thr[1:] == sorted(thr[1:], reverse=True)
    area = sum((fpr[i] - fpr[i - 1]) * (tpr[i] + tpr[i - 1]) / 2 for i in range(1, len(fpr)))
    assert area == pytest.approx(auroc(scores, labels))


def test_crag_points() -> None:
    assert crag_points(answerable=True, abstained=False, supported=True) == 1
    assert crag_points(answerable=True, abstained=False, supported=False) == -1
    assert crag_points(answerable=True, abstained=True, supported=True) == 0
    assert crag_points(answerable=False, abstained=True, supported=False) == 0
    assert crag_points(answerable=False, abstained=False, supported=False) == -1


def test_percentile() -> None:
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([10.0, 20.0], 95) == pytest.approx(19.5)
    assert percentile([], 50) is None
