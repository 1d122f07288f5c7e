"""Lanes (DESIGN.md "The flow: Ask", step 2): run every lane for every sub-question and paraphrase
and pool the hits with their provenance.

- dense, one lane per kind group (lectures, verses, library; kinds from ``settings.corpus.kind_groups``);
- lexical stemmed and lexical unstemmed (the store's FTS, any term may match);
- address: exact ``(book, loc)`` lookups for every detected address (never a neighbour);
- trigram: fuzzy match over ``addr_label || source_id || tokens``, only for queries that look like a
  transliterated phrase (IAST diacritics) — where it helps and costs little.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from footnote.corpus.records import AddressLocator, KindGroup
from footnote.retrieve.types import Lane, LaneHit, QueryPlan, StageTrace
from footnote.settings import Settings
from footnote.store.protocol import Hit, Store

DENSE_LANE: dict[KindGroup, Lane] = {
    KindGroup.LECTURES: Lane.DENSE_LECTURES,
    KindGroup.VERSES: Lane.DENSE_VERSES,
    KindGroup.LIBRARY: Lane.DENSE_LIBRARY,
}
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

    def add(self, lane: Lane, query: str, found: Sequence[Hit]) -> int:
        for rank, h in enumerate(found):
            self.hits.setdefault(h.fragment_id, []).append(LaneHit(lane, query, rank, float(h.score)))
        self.queries_run.add((lane.value, query))
        return len(found)

    def ran(self, lane: Lane, query: str) -> bool:
        return (lane.value, query) in self.queries_run


class _LaneTimer:
    def __init__(self) -> None:
        self.ms: dict[Lane, float] = {}
        self.hits: dict[Lane, int] = {}
        self.queries: dict[Lane, int] = {}

    def run(self, lane: Lane, fn: Callable[..., list[Hit]], *args: Any, **kwargs: Any) -> list[Hit]:
        t = time.perf_counter()
        found = fn(*args, **kwargs)
        self.ms[lane] = self.ms.get(lane, 0.0) + (time.perf_counter() - t) * 1000
        self.hits[lane] = self.hits.get(lane, 0) + len(found)
        self.queries[lane] = self.queries.get(lane, 0) + 1
        return found

    def traces(self, round_no: int) -> list[StageTrace]:
        suffix = "" if round_no == 1 else f"@round{round_no}"
        return [
            StageTrace(f"lane:{lane.value}{suffix}", round(self.ms[lane], 3),
                       {"queries": self.queries[lane], "hits": self.hits[lane]})
            for lane in self.ms
        ]


def run_lanes(
    store: Store,
    settings: Settings,
    queries: Sequence[LaneQuery],
    vectors: np.ndarray | None,
    pool: LanePool,
    *,
    lang: str | None,
    round_no: int = 1,
) -> list[StageTrace]:
    """Run every lane for every query into ``pool`` (skipping lane/query pairs already run).
    ``vectors`` holds the query embeddings (rows aligned with ``queries``), None for lexical only."""
    rs = settings.retrieve
    timer = _LaneTimer()
    groups = kinds_by_group(settings) if vectors is not None else {}
    for i, q in enumerate(queries):
        if vectors is not None:
            vec = vectors[i]
            for group, kinds in groups.items():
                lane = DENSE_LANE[group]
                if pool.ran(lane, q.text):
                    continue
                found = timer.run(lane, store.search_dense, vec, rs.dense_k, kinds=kinds)
                pool.add(lane, q.text, found)
        for lane, stemmed in ((Lane.LEXICAL_STEMMED, True), (Lane.LEXICAL_UNSTEMMED, False)):
            if pool.ran(lane, q.text):
                continue
            found = timer.run(lane, store.search_lexical, q.text, rs.lexical_k, stemmed=stemmed, lang=lang)
            pool.add(lane, q.text, found)
        for addr in q.addresses:
            if pool.ran(Lane.ADDRESS, addr.label):
                continue
            found = timer.run(Lane.ADDRESS, store.search_address, addr.book, addr.loc, rs.address_k)
            pool.add(Lane.ADDRESS, addr.label, found)
        if wants_trigram(q) and not pool.ran(Lane.TRIGRAM, q.text):
            found = timer.run(Lane.TRIGRAM, store.search_trigram, q.text, rs.trigram_k)
            pool.add(Lane.TRIGRAM, q.text, found)
    return timer.traces(round_no)
