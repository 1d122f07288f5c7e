"""Citation support in ``footnote eval --answers``: per question and per cell (the scorer itself is
:mod:`footnote.answer.support`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from footnote.answer.support import (
    AnswerSupport,
    CitationSupport,
    CitedSentence,
    SentenceSupport,
    SupportScorer,
    cited_sentences,
)
from footnote.answer.types import Answer

__all__ = ["AnswerSupport", "CitationSupport", "CitedSentence", "SentenceSupport", "SupportScorer",
           "cited_sentences", "support_cell", "support_fields"]


def support_fields(scorer: SupportScorer, answer: Answer) -> dict[str, Any]:
    """What ``eval --answers`` keeps per question: the answer's support, with per-sentence detail (the
    trace's when the answerer put it there, so it is computed once)."""
    traced = answer.trace.support if answer.trace is not None else None
    if traced is not None and "error" not in traced:
        return {"support": {k: v for k, v in traced.items() if k != "ms"}}
    sup = scorer.score_answer(answer)
    return {} if sup is None else {"support": sup.to_dict(detail=True)}


def support_cell(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Figures over answers (rows of ``extra["answer"]``): mean share of supported sentences (= ALCE
    citation recall), mean citation precision, and how many corpus answers had an unsupported sentence."""
    sups = [r["support"] for r in rows if r.get("support") and r["support"]["n_sentences"]]

    def m(key: str) -> float | None:
        xs = [s[key] for s in sups if s[key] is not None]
        return round(sum(xs) / len(xs), 4) if xs else None

    return {"cite_recall": m("citation_recall"), "cite_precision": m("citation_precision"),
            "n_unsupported": sum(1 for s in sups if s["unsupported"])}
