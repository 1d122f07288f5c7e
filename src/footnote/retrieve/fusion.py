"""Fused lane evidence: the offline ranking when no cross-encoder is configured.

Not equal-weight reciprocal-rank fusion: RRF trusts a lexical ranking of a Russian question over
English text as much as the dense one and wrecks cross-lingual recall (DESIGN.md: 0.338). Here the
true cosine to the question is the base, and each lane adds evidence weighed by what it can know:

    fused = cosine
          + lexical_weight × (best normalised lexical score)     if query and fragment share a language
          + cross_lexical_weight × (same)                        otherwise (default 0: noise)
          + trigram_weight × (normalised trigram similarity)
          + address_bonus (+ address_verse_bonus in the verses group) for an exact address hit

A lexical lane's score is normalised by the top score that lane gave for the same query (so 1.0 is
"the best lexical match for this query"); the best over queries and over both lexical lanes counts.
With no embedder the cosine is 0 and the lexical/address evidence alone ranks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from footnote.retrieve.lanes import LEXICAL_LANES
from footnote.retrieve.types import Lane, LaneHit
from footnote.settings import RetrieveSettings


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


def fused_score(cosine: float, ev: Evidence, *, same_lang: bool, is_verse: bool, rs: RetrieveSettings) -> float:
    lex_w = rs.fusion_lexical_weight if same_lang else rs.fusion_cross_lexical_weight
    addr = rs.fusion_address_bonus + (rs.fusion_address_verse_bonus if is_verse else 0.0)
    return (cosine + lex_w * ev.lexical + rs.fusion_trigram_weight * ev.trigram + addr * ev.address
            + rs.fusion_name_weight * ev.names)
