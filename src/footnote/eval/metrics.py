"""Pure metric functions of the evaluation (no I/O, no engine): unit-tested on hand-made inputs.

Conventions:
- a *rank* is the 1-based position of the first note from a gold source, or None when none is found;
- *abstention* is the positive class of the abstention metrics (the question is not answerable);
- the gate *signal* is "higher = more confident the corpus knows", so AUROC measures how well it
  ranks answerable questions above unanswerable ones (0.5 = chance, 1.0 = perfect).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import numpy as np


def first_hit_rank(source_ids: Sequence[str], gold: Collection[str]) -> int | None:
    """1-based rank of the first ranked source id that is gold; None when there is none."""
    if not gold:
        return None
    gold_set = set(gold)
    for i, sid in enumerate(source_ids, 1):
        if sid in gold_set:
            return i
    return None


def recall_at_k(ranks: Sequence[int | None], k: int) -> float | None:
    """Share of questions whose first gold hit is within the top ``k``; None for no questions."""
    if not ranks:
        return None
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def mrr(ranks: Sequence[int | None]) -> float | None:
    """Mean reciprocal rank (a miss counts 0); None for no questions."""
    if not ranks:
        return None
    return sum(1.0 / r for r in ranks if r is not None) / len(ranks)


def abstention_pr(abstained: Sequence[bool], answerable: Sequence[bool]) -> tuple[float | None, float | None]:
    """(precision, recall) of abstention, positive = not answerable. None where the denominator is 0."""
    if len(abstained) != len(answerable):
        raise ValueError("abstained and answerable differ in length")
    tp = sum(1 for a, ok in zip(abstained, answerable, strict=True) if a and not ok)
    fp = sum(1 for a, ok in zip(abstained, answerable, strict=True) if a and ok)
    fn = sum(1 for a, ok in zip(abstained, answerable, strict=True) if not a and not ok)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    return precision, recall


def auroc(scores: Sequence[float], positive: Sequence[bool]) -> float | None:
    """Area under the ROC curve of ``scores`` for ``positive`` labels (Mann–Whitney U, ties count
    half). None when either class is empty."""
    if len(scores) != len(positive):
        raise ValueError("scores and labels differ in length")
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s), dtype=np.float64)
    sorted_s = s[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    u = ranks[y].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def roc_curve(scores: Sequence[float], positive: Sequence[bool]) -> tuple[list[float], list[float], list[float]]:
    """(false-positive rates, true-positive rates, thresholds), from (0, 0) to (1, 1); a point per
    distinct score, predicting positive for ``score >= threshold``."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    fpr, tpr, thr = [0.0], [0.0], [math.inf]
    if n_pos == 0 or n_neg == 0:
        return [0.0, 1.0], [0.0, 1.0], [math.inf, -math.inf]
    order = np.argsort(-s, kind="mergesort")
    tp = fp = 0
    k = 0
    while k < len(order):
        t = s[order[k]]
        while k < len(order) and s[order[k]] == t:
            if y[order[k]]:
                tp += 1
            else:
                fp += 1
            k += 1
        fpr.append(fp / n_neg)
        tpr.append(tp / n_pos)
        thr.append(float(t))
    return fpr, tpr, thr


def crag_points(answerable: bool, abstained: bool, supported: bool) -> int:
    """CRAG-style truthfulness of one question: abstained 0; answered with a gold source among the
    notes +1; answered otherwise −1 (an unanswerable question has no gold, so answering it is −1)."""
    if abstained:
        return 0
    return 1 if (answerable and supported) else -1


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0–100, linear interpolation); None for no values."""
    if not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def rounded(x: float | None, nd: int = 4) -> float | None:
    """``x`` rounded to ``nd`` places for a report; None (and NaN) stay None."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return round(float(x), nd)
