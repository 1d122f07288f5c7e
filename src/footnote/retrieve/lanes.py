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
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, wait
from dataclasses import dataclass, field

import numpy as np

from footnote.records.fragments import AddressLocator, Fragment, KindGroup
from footnote.retrieve.types import Lane, LaneHit, QueryPlan, StageTrace
from footnote.settings import Settings
from footnote.store.batch import (
    AddressCall,
    DenseCall,
    LaneCall,
    LexicalCall,
    TrigramCall,
    capabilities,
    run_calls,
)
from footnote.store.protocol import Hit, Store

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


_Batch = tuple[list[list[Hit]], list[float] | None, float]  # hits per call, ms per call (None: batched), wall ms


def _run_batch(
    store: Store, calls: Sequence[PlannedCall], pool: LanePool, rows: bool
) -> _Batch:
    """The calls as one batch; with ``rows``, a store that can returns the hits' rows into ``pool.rows``
    from the same statements."""
    t0 = time.perf_counter()
    hits, per_call = run_calls(store, [c.call for c in calls], pool.rows if rows else None)
    return hits, per_call, (time.perf_counter() - t0) * 1000


def _run_merged(
    store: Store, texts: Sequence[PlannedCall], dense: Sequence[PlannedCall], pool: LanePool, rows: bool
) -> tuple[_Batch, _Batch]:
    """Text and dense lanes as ONE batch (a batching store deals it over concurrent connections); the
    results split back into the two batches' shape, the wall time on the text side."""
    hits, per_call, wall = _run_batch(store, [*texts, *dense], pool, rows)
    n = len(texts)
    return ((hits[:n], per_call[:n] if per_call is not None else None, wall),
            (hits[n:], per_call[n:] if per_call is not None else None, 0.0))


def _prefetch(store: Store, pool: LanePool, ids: Sequence[str]) -> int:
    """Read the fragments + vectors of ``ids`` not read yet into ``pool.rows`` (while the query embeds);
    returns how many were read."""
    both = capabilities(store).with_vectors
    want = [i for i in dict.fromkeys(ids) if i not in pool.rows]
    if both is None or not want:
        return 0
    frags, mat = both.get_fragments_with_embeddings(want)
    row = {fid: j for j, fid in enumerate(want)}
    for f in frags:
        pool.rows[f.id] = (f, mat[row[f.id]])
    return len(frags)


def run_lanes(
    store: Store,
    settings: Settings,
    queries: Sequence[LaneQuery],
    embed: Callable[[], np.ndarray | None],
    pool: LanePool,
    *,
    lang: str | None,
    round_no: int = 1,
    executor: Executor | None = None,
    embed_first: bool = False,
    parallel_text: bool = False,
    rows_min: float | None = None,
) -> tuple[list[StageTrace], np.ndarray | None]:
    """Run every lane for every query into ``pool`` (skipping lane/query pairs already run) and return
    the traces and the query vectors.

    The text lanes (lexical, address, trigram) need no query vector: with an ``executor``, ``embed()``
    (the query vectors, rows aligned with ``queries``; None for lexical only) runs on a worker thread
    *while* the text lanes run as one batch on the calling thread; the dense lanes then run as a second
    batch. The embedder spends that time in native code without the GIL, so the two really overlap
    (the other way round — lanes on the worker — the lanes' Python fought the caller for the GIL).
    A store with ``search_many`` (PostgreSQL) runs each batch in one pipelined round trip per
    connection. Without an executor: text lanes, embedding, dense lanes, one after the other.

    ``embed_first``: the query vectors first (on the calling thread), then every lane as one batch —
    for a query embedding that uses every core while the store computes on the same machine, where
    the text lanes would only slow it down (``retrieve.embed_first``). A store without ``search_many``
    (SQLite) then runs the text lanes on the ``executor`` while the dense lanes run here, if
    ``parallel_text`` (a store large enough for that to pay). ``rows_min``: the dense calls' rows floor
    (``DenseCall.rows_min``; the pool drops a hit below it, see ``Retriever.rows_floor``)."""
    suffix = "" if round_no == 1 else f"@round{round_no}"
    texts = text_calls(settings, queries, pool, lang=lang)
    rs = settings.retrieve
    rows = rs.lane_rows
    merged = False
    prefetched = 0
    beside = False  # the text lanes ran beside the dense lanes (embed_first, parallel_text)
    if embed_first:
        vectors = embed()
        dense = dense_calls(settings, queries, vectors, pool, rows_min) if vectors is not None else []
        merged = capabilities(store).batch is not None
        if merged:
            text_res, dense_res = _run_merged(store, texts, dense, pool, rows)
        elif parallel_text and executor is not None and texts and dense:
            # the cores are free again: the text lanes (and the read of their hits' rows) on the worker,
            # the dense lanes here, at once — SQLite's FTS and numpy's products both release the GIL
            def text_side() -> tuple[_Batch, int]:
                res = _run_batch(store, texts, pool, rows)
                n = _prefetch(store, pool, [h.fragment_id for found in res[0] for h in found]) \
                    if rs.prefetch_text_hits else 0
                return res, n

            side = executor.submit(text_side)
            beside = True
            try:
                dense_res = _run_batch(store, dense, pool, rows)
            finally:
                text_res, prefetched = side.result()
        else:
            text_res = _run_batch(store, texts, pool, rows)
            dense_res = _run_batch(store, dense, pool, rows)
    elif executor is not None:
        future = executor.submit(embed)
        if capabilities(store).batch is not None and rs.ready_vector_wait_ms > 0:
            # a vector the query cache had is ready at once: text and dense lanes as one batch
            merged = not wait([future], timeout=rs.ready_vector_wait_ms / 1000).not_done
        if merged:
            vectors = future.result()
            dense = dense_calls(settings, queries, vectors, pool, rows_min) if vectors is not None else []
            text_res, dense_res = _run_merged(store, texts, dense, pool, rows)
        else:
            try:
                text_res = _run_batch(store, texts, pool, rows)
                if rs.prefetch_text_hits and not future.done():
                    prefetched = _prefetch(store, pool, [h.fragment_id for found in text_res[0] for h in found])
            finally:
                vectors = future.result()  # re-raises the embedder's error here
    else:
        text_res = _run_batch(store, texts, pool, rows)
        vectors = embed()
    if not merged and not embed_first:
        dense = dense_calls(settings, queries, vectors, pool, rows_min) if vectors is not None else []
        dense_res = _run_batch(store, dense, pool, rows)
    traces: list[StageTrace] = []
    lane_ms: dict[Lane, float] = {}
    lane_hits: dict[Lane, int] = {}
    lane_queries: dict[Lane, int] = {}
    for name, calls, (hits, per_call, wall) in (("text", texts, text_res), ("dense", dense, dense_res)):
        if not calls:
            continue
        for j, (pc, found) in enumerate(zip(calls, hits, strict=True)):
            pool.add(pc.lane, pc.key, found)
            lane_ms[pc.lane] = lane_ms.get(pc.lane, 0.0) + (per_call[j] if per_call is not None else 0.0)
            lane_hits[pc.lane] = lane_hits.get(pc.lane, 0) + len(found)
            lane_queries[pc.lane] = lane_queries.get(pc.lane, 0) + 1
        traces.append(StageTrace(f"lanes:{name}{suffix}", round(wall, 3), {"calls": len(calls)},
                                 {"batched": per_call is None, "merged": merged, "embed_first": embed_first,
                                  "prefetched": prefetched if name == "text" else 0,
                                  "overlapped_embedding": name == "text" and executor is not None and not merged
                                  and not embed_first, "beside_dense": beside}))
    for lane in lane_ms:
        traces.append(StageTrace(f"lane:{lane.value}{suffix}", round(lane_ms[lane], 3),
                                 {"queries": lane_queries[lane], "hits": lane_hits[lane]}))
    return traces, vectors
