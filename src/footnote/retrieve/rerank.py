"""Rerank the capped pool: a configured :class:`Reranker` (cross-encoder over HTTP or local), or the
offline ranking by fused lane evidence (:mod:`footnote.retrieve.fusion`). The result goes into
``Candidate.rerank``; ``Candidate.score`` keeps the true cosine. If a configured reranker fails, the
turn falls back to the fused ranking (logged, and said in the trace)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from footnote.corpus.records import KindGroup
from footnote.errors import ModelError
from footnote.models.protocols import Reranker
from footnote.retrieve.fusion import evidence_of, fused_score, lane_tops
from footnote.retrieve.names import name_evidence, passage_skeletons, question_names
from footnote.retrieve.types import Candidate, with_rerank
from footnote.settings import Settings

log = logging.getLogger(__name__)


def fused_order(question: str, cands: Sequence[Candidate], query_lang: str, settings: Settings) -> list[Candidate]:
    """Candidates with ``rerank`` = fused evidence score, best first (ties: cosine, then id)."""
    rs = settings.retrieve
    tops = lane_tops(c.lanes for c in cands)
    names = question_names(question) if rs.fusion_name_weight else []
    scored = []
    # a fragment without a vector yet (embedding backlog) has no cosine: it is ranked as if it had the
    # median cosine of the embedded candidates, so its lexical evidence decides, neither help nor harm
    known = sorted(c.score for c in cands if c.embedded)
    neutral = known[len(known) // 2] if known else 0.0
    verse_kind: dict[str, bool] = {}
    for c in cands:
        same = c.fragment.lang == query_lang
        named = name_evidence(names, passage_skeletons(c.fragment.text)) if names and not same else 0.0
        ev = evidence_of(c.lanes, tops, named)
        kind = c.fragment.kind
        if kind not in verse_kind:
            verse_kind[kind] = settings.corpus.group_of(kind) is KindGroup.VERSES
        scored.append(with_rerank(c, fused_score(
            c.score if c.embedded else neutral, ev, same_lang=same, is_verse=verse_kind[kind], rs=rs,
        )))
    scored.sort(key=lambda c: (-(c.rerank or 0.0), -c.score, c.fragment.id))
    return scored


def rerank(
    question: str,
    cands: Sequence[Candidate],
    *,
    reranker: Reranker | None,
    query_lang: str,
    settings: Settings,
) -> tuple[list[Candidate], str]:
    """Ranked candidates and the method used (``fusion``, the reranker's name, or ``fusion (X failed)``)."""
    if reranker is None or not cands:
        return fused_order(question, cands, query_lang, settings), "fusion"
    try:
        scores = reranker.rerank(question, [c.fragment.text for c in cands])
    except ModelError as e:
        log.warning("reranker %s failed (%s); ranking by fused lane evidence", reranker.name, e.message)
        return fused_order(question, cands, query_lang, settings), f"fusion ({reranker.name} failed)"
    if len(scores) != len(cands):
        log.warning("reranker %s returned %d scores for %d passages; ranking by fused lane evidence",
                    reranker.name, len(scores), len(cands))
        return fused_order(question, cands, query_lang, settings), f"fusion ({reranker.name} failed)"
    ranked = [replace(c, rerank=float(s)) for c, s in zip(cands, scores, strict=True)]
    ranked.sort(key=lambda c: (-(c.rerank or 0.0), -c.score, c.fragment.id))
    return ranked, reranker.name
