"""What the second fan-out round costs and buys, per category and language (``report.json`` "rounds").

Read from each search's ``round2`` trace stage (``retrieve.pipeline``): when the round ran, whether
the ranked slate, its top note or the verdict changed, the earlier verdict's signal and sources;
when the gate skipped it (no router configured), a ``skipped`` mark.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from footnote.eval.metrics import auroc, first_hit_rank, percentile, recall_at_k
from footnote.eval.metrics import rounded as _r
from footnote.retrieve.types import SearchResult

ROUND_STAGE = "round2"


def round_effect(result: SearchResult, gold: Sequence[str]) -> dict[str, Any]:
    """The second round's trace stage reduced for one question ({} when the gate never got there)."""
    for t in result.trace:
        if t.name != ROUND_STAGE:
            continue
        if t.counts.get("skipped"):
            return {"skipped": True}
        before = [str(s) for s in t.info.get("sources_before", [])]
        return {
            "ran": True, "ms": float(t.ms),
            "ranks_changed": bool(t.counts.get("ranks_changed")),
            "top_changed": bool(t.counts.get("top_changed")),
            "verdict_changed": bool(t.counts.get("verdict_changed")),
            "verdict_before": str(t.info.get("verdict_before", "")),
            "signal_before": float(t.info.get("signal_before", math.nan)),
            "rank_before": first_hit_rank(before, gold),
        }
    return {}


def rounds_cell(effects: Sequence[Mapping[str, Any]], ranks: Sequence[int | None], has_gold: Sequence[bool],
                total_ms: Sequence[float]) -> dict[str, Any]:
    """Counts for one cell: questions, second rounds run / skipped, their cost (ms of the round; the
    search time of questions with and without one), what they changed, and recall@1 without them."""
    ran = [e for e in effects if e.get("ran")]
    with_round = [ms for e, ms in zip(effects, total_ms, strict=True) if e.get("ran")]
    without = [ms for e, ms in zip(effects, total_ms, strict=True) if not e.get("ran")]
    before = [e.get("rank_before") if e.get("ran") else r for e, r in zip(effects, ranks, strict=True)]
    gold_ranks = [r for r, g in zip(ranks, has_gold, strict=True) if g]
    gold_before = [r for r, g in zip(before, has_gold, strict=True) if g]
    return {
        "n": len(effects),
        "second_round": len(ran),
        "skipped": sum(1 for e in effects if e.get("skipped")),
        "round_ms_p50": _r(percentile([e["ms"] for e in ran], 50), 2),
        "search_ms_p50_with_round": _r(percentile(with_round, 50), 2),
        "search_ms_p50_without": _r(percentile(without, 50), 2),
        "ranks_changed": sum(1 for e in ran if e.get("ranks_changed")),
        "top_changed": sum(1 for e in ran if e.get("top_changed")),
        "verdicts_changed": sum(1 for e in ran if e.get("verdict_changed")),
        "recall@1": _r(recall_at_k(gold_ranks, 1)),
        "recall@1_round1": _r(recall_at_k(gold_before, 1)),
    }


def auroc_round1(signals: Sequence[float], effects: Sequence[Mapping[str, Any]], answerable: Sequence[bool]) -> float | None:
    """AUROC of the gate signal as round one left it (the final one where no round followed)."""
    vals = [float(e["signal_before"]) if e.get("ran") else s for s, e in zip(signals, effects, strict=True)]
    pairs = [(v, a) for v, a in zip(vals, answerable, strict=True) if not math.isnan(v)]
    return _r(auroc([p[0] for p in pairs], [p[1] for p in pairs]))
