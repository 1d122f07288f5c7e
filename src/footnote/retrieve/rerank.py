"""Rerank the capped pool: a configured :class:`Reranker` (cross-encoder over HTTP or local), or the
offline ranking by fused lane evidence (:mod:`footnote.retrieve.fusion`). The result goes into
``Candidate.rerank``; ``Candidate.score`` keeps the true cosine. If a configured reranker fails, the
turn falls back to the fused ranking (logged, and said in the trace)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from footnote.errors import ModelError
from footnote.models.protocols import Reranker
from footnote.records.fragments import KindGroup
from footnote.retrieve.fusion import Fusable, evidence_of, fuse, lane_tops
from footnote.retrieve.names import name_evidence, passage_skeletons, question_names
from footnote.retrieve.types import Candidate, with_rerank
from footnote.settings import Settings

log = logging.getLogger(__name__)


def fused_order(question: str, cands: Sequence[Candidate], query_lang: str, settings: Settings,
                embedder: str = "none") -> list[Candidate]:
    """Candidates with ``rerank`` = fused evidence score, best first (ties: cosine, then id); ``embedder``
    names the weights (``retrieve.fusion.by_embedder``)."""
    rs = settings.retrieve
    tops = lane_tops(c.lanes for c in cands)
    w = rs.fusion_weights(embedder)
    names = question_names(question) if w.names else []
    verse_kind: dict[str, bool] = {}
    items: list[Fusable] = []
    for c in cands:
        same = c.fragment.lang == query_lang
        named = name_evidence(names, passage_skeletons(c.fragment.text)) if names and not same else 0.0
        kind = c.fragment.kind
        if kind not in verse_kind:
            verse_kind[kind] = settings.corpus.group_of(kind) is KindGroup.VERSES
        items.append(Fusable(c.score, c.embedded, evidence_of(c.lanes, tops, named), same, verse_kind[kind]))
    scored = [with_rerank(c, v) for c, v in zip(cands, fuse(items, rs, embedder), strict=True)]
    scored.sort(key=lambda c: (-(c.rerank or 0.0), -c.score, c.fragment.id))
    return scored


def rerank(
    question: str,
    cands: Sequence[Candidate],
    *,
    reranker: Reranker | None,
    query_lang: str,
    settings: Settings,
    embedder: str = "none",
) -> tuple[list[Candidate], str]:
    """Ranked candidates and the method used (``fusion``, the reranker's name, or ``fusion (X failed)``);
    ``embedder``: whose fusion weights apply."""
    if reranker is None or not cands:
        return fused_order(question, cands, query_lang, settings, embedder), "fusion"
    try:
        scores = reranker.rerank(question, [c.fragment.text for c in cands])
    except ModelError as e:
        log.warning("reranker %s failed (%s); ranking by fused lane evidence", reranker.name, e.message)
        return fused_order(question, cands, query_lang, settings, embedder), f"fusion ({reranker.name} failed)"
    if len(scores) != len(cands):
        log.warning("reranker %s returned %d scores for %d passages; ranking by fused lane evidence",
                    reranker.name, len(scores), len(cands))
        return fused_order(question, cands, query_lang, settings, embedder), f"fusion ({reranker.name} failed)"
    ranked = [replace(c, rerank=float(s)) for c, s in zip(cands, scores, strict=True)]
    ranked.sort(key=lambda c: (-(c.rerank or 0.0), -c.score, c.fragment.id))
    return ranked, reranker.name
