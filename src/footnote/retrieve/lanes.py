"""Lanes (docs/architecture.md "The flow", step 2): run every lane for every sub-question and paraphrase
and pool the hits with their provenance.

- dense, one lane per kind group (lectures, verses, library; kinds from ``settings.corpus.kind_groups``);
- lexical stemmed and lexical unstemmed (the store's FTS, any term may match);
- address: exact ``(book, loc)`` lookups for every detected address (never a neighbour);
- trigram: fuzzy match over ``addr_label || source_id || tokens``, only for queries that look like a
  transliterated phrase (IAST diacritics) — where it helps and costs little.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from footnote.records.fragments import AddressLocator, Fragment, KindGroup
from footnote.retrieve.types import Lane, LaneHit, QueryPlan
from footnote.settings import Settings
from footnote.store.batch import (
    AddressCall,
    DenseCall,
    LaneCall,
    LexicalCall,
    TrigramCall,
)
from footnote.store.protocol import Hit

DENSE_LANE: dict[KindGroup, Lane] = {
    KindGroup.LECTURES: Lane.DENSE_LECTURES,
    KindGroup.VERSES: Lane.DENSE_VERSES,
    KindGroup.LIBRARY: Lane.DENSE_LIBRARY,
}
DENSE_LANES: frozenset[Lane] = frozenset(DENSE_LANE.values())
LEXICAL_LANES: frozenset[Lane] = frozenset({Lane.LEXICAL_STEMMED, Lane.LEXICAL_UNSTEMMED})
FORCING_LANES: frozenset[Lane] = frozenset({Lane.LEXICAL_STEMMED, Lane.LEXICAL_UNSTEMMED, Lane.ADDRESS, Lane.TRIGRAM})

_IAST = re.compile(r"[āīūṛṝḷḹṃṁḥṅñṭḍṇśṣĀĪŪṚṜḶṂḤṄÑṬḌṆŚṢ]")


def kinds_by_group(settings: Settings) -> dict[KindGroup, list[str]]:
    """Kinds per dense group; a configured kind missing from the map falls in LIBRARY."""
    out: dict[KindGroup, list[str]] = {g: [] for g in KindGroup}
    kinds = list(dict.fromkeys([*settings.corpus.kinds, *settings.corpus.kind_groups]))
    for kind in kinds:
        out[settings.corpus.group_of(kind)].append(kind)
    return {g: ks for g, ks in out.items() if ks}


@dataclass(frozen=True)
class LaneQuery:
    """One query string of a plan, with the addresses of its sub-question."""

    text: str
    addresses: tuple[AddressLocator, ...] = ()
    primary: bool = False  # the sub-question's own text (not a paraphrase)


def plan_queries(plan: QueryPlan) -> list[LaneQuery]:
    """Every distinct query string in the plan (sub-questions first, then their paraphrases)."""
    out: list[LaneQuery] = []
    seen: set[str] = set()
    for sub in plan.subquestions:
        for i, text in enumerate((sub.text, *sub.paraphrases)):
            t = " ".join(text.split())
            if not t or t in seen:
                continue
            seen.add(t)
            out.append(LaneQuery(t, sub.addresses if i == 0 else (), primary=i == 0))
    return out


def wants_trigram(q: LaneQuery) -> bool:
    """Trigram only for a transliterated phrase (IAST diacritics). Never for an address: "BG 19.5"
    must not fuzzily match "BG 1.9" — addresses go through the exact lane only."""
    return not q.addresses and bool(_IAST.search(q.text))


@dataclass
class LanePool:
    """Fragment id → every lane hit that found it (provenance), across queries and rounds."""

    hits: dict[str, list[LaneHit]] = field(default_factory=dict)
    queries_run: set[tuple[str, str]] = field(default_factory=set)  # (lane, query)
    # fragments and vectors already read (prefetched while the query was embedded): id → (fragment, vector)
    rows: dict[str, tuple[Fragment, np.ndarray]] = field(default_factory=dict)
    # the language of dense hits whose rows a lane left out (below its rows floor: the pool drops them)
    langs: dict[str, str] = field(default_factory=dict)

    def add(self, lane: Lane, query: str, found: Sequence[Hit]) -> int:
        for rank, h in enumerate(found):
            self.hits.setdefault(h.fragment_id, []).append(LaneHit(lane, query, rank, float(h.score)))
            if h.lang is not None:
                self.langs[h.fragment_id] = h.lang
        self.queries_run.add((lane.value, query))
        return len(found)

    def ran(self, lane: Lane, query: str) -> bool:
        return (lane.value, query) in self.queries_run


@dataclass(frozen=True)
class PlannedCall:
    """One lane call of a round, with the lane and the pool key (query text or address label) it feeds."""

    lane: Lane
    key: str
    call: LaneCall


def text_calls(settings: Settings, queries: Sequence[LaneQuery], pool: LanePool, *, lang: str | None) -> list[PlannedCall]:
    """The lexical (stemmed, unstemmed), address and trigram calls of ``queries`` not yet run — the
    lanes that need no query vector."""
    rs = settings.retrieve
    out: list[PlannedCall] = []
    planned: set[tuple[Lane, str]] = set()

    def add(lane: Lane, key: str, call: LaneCall) -> None:
        if not pool.ran(lane, key) and (lane, key) not in planned:
            planned.add((lane, key))
            out.append(PlannedCall(lane, key, call))

    for q in queries:
        for lane, stemmed in ((Lane.LEXICAL_STEMMED, True), (Lane.LEXICAL_UNSTEMMED, False)):
            add(lane, q.text, LexicalCall(q.text, rs.lexical_k, stemmed, lang))
        for addr in q.addresses:
            add(Lane.ADDRESS, addr.label, AddressCall(addr.book, addr.loc, rs.address_k))
        if wants_trigram(q):
            add(Lane.TRIGRAM, q.text, TrigramCall(q.text, rs.trigram_k))
    return out


def dense_calls(
    settings: Settings, queries: Sequence[LaneQuery], vectors: np.ndarray, pool: LanePool, rows_min: float | None = None
) -> list[PlannedCall]:
    """One dense call per query and kind group not yet run (``vectors`` rows aligned with ``queries``;
    ``rows_min``: the cosine below which a hit's row may be left out, see ``DenseCall``)."""
    rs = settings.retrieve
    groups = kinds_by_group(settings)
    out: list[PlannedCall] = []
    for i, q in enumerate(queries):
        for group, kinds in groups.items():
            lane = DENSE_LANE[group]
            if not pool.ran(lane, q.text):
                out.append(PlannedCall(lane, q.text, DenseCall(vectors[i], rs.dense_k, tuple(kinds), rows_min)))
    return out
