"""How a round's lanes run, one runner per kind of store (chosen once, by :func:`lane_runner`, when the
retriever is built): which lanes go together, what overlaps the query embedding, and how the hits' rows
reach the pool.

- :class:`BatchedLanes` — a store that runs a batch of lane calls in one round trip per connection and joins
  the hits' rows to them (PostgreSQL: ``search_many_rows``). With the query embedded first
  (``Retriever.embed_first``, a search that runs alone where the embedding fills the cores) every lane of the round is one batch; otherwise the text lanes (lexical, address,
  trigram) run as one batch while the query is embedded on a worker, then the dense lanes — or, when the
  vector is ready within ``retrieve.ready_vector_wait_ms`` (the query cache had it), all of them as one batch.
- :class:`SerialLanes` — a store that runs each call on its own (SQLite). With the query embedded first, the
  text lanes run on a worker beside the dense lanes when the store is large enough
  (``retrieve.parallel_text_lanes_min_fragments``), else one after the other; otherwise the text lanes run
  while the query is embedded on a worker, and their hits' rows are read meanwhile, then the dense lanes.

Without a worker (lexical only) both run the text lanes alone. The trace says which schedule ran
(``lanes:text``: ``merged``, ``embed_first``, ``prefetched``, ``overlapped_embedding``, ``beside_dense``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, wait
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from footnote.retrieve.lanes import LanePool, LaneQuery, PlannedCall, dense_calls, text_calls
from footnote.retrieve.types import Lane, StageTrace
from footnote.settings import Settings
from footnote.store.batch import capabilities, run_calls
from footnote.store.protocol import Hit, LaneStore

_Batch = tuple[list[list[Hit]], list[float] | None, float]  # hits per call, ms per call (None: batched), wall ms


@dataclass(frozen=True)
class Round:
    """What a round's lanes need: its queries, how to embed them, and the pool they feed."""

    queries: Sequence[LaneQuery]
    embed: Callable[[], np.ndarray | None]  # the query vectors, rows aligned with ``queries``; None: lexical only
    pool: LanePool
    lang: str | None
    round_no: int = 1
    rows_min: float | None = None  # the dense calls' rows floor (``DenseCall.rows_min``)
    executor: Executor | None = None  # the worker the query embeds on (None: lexical only)
    embed_first: bool = False
    parallel_text: bool = False


@dataclass
class _Ran:
    texts: list[PlannedCall]
    dense: list[PlannedCall]
    text_res: _Batch
    dense_res: _Batch
    vectors: np.ndarray | None
    merged: bool = False
    prefetched: int = 0
    beside: bool = False  # the text lanes ran beside the dense lanes


class LaneRunner(Protocol):
    def run(self, r: Round) -> tuple[list[StageTrace], np.ndarray | None]:
        """Run every lane for every query of the round into its pool (lane/query pairs already run are
        skipped); the traces and the query vectors."""
        ...


def lane_runner(store: LaneStore, settings: Settings) -> LaneRunner:
    """The runner for this store: batched where it batches lane calls, else serial."""
    return BatchedLanes(store, settings) if capabilities(store).batch is not None else SerialLanes(store, settings)


class _Runner:
    def __init__(self, store: LaneStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings

    def run(self, r: Round) -> tuple[list[StageTrace], np.ndarray | None]:
        texts = text_calls(self.settings, r.queries, r.pool, lang=r.lang)
        if r.executor is None and not r.embed_first:  # no worker (lexical only): nothing to overlap
            ran = self._then_dense(r, texts, self._batch(texts, r.pool), r.embed())
        else:
            ran = self._schedule(r, texts)
        return _traces(r, ran), ran.vectors

    def _schedule(self, r: Round, texts: list[PlannedCall]) -> _Ran:
        """The round with a worker to embed on, or with the query embedded first."""
        raise NotImplementedError

    def _then_dense(self, r: Round, texts: list[PlannedCall], text_res: _Batch, vectors: np.ndarray | None,
                    prefetched: int = 0) -> _Ran:
        """The text lanes ran (``text_res``): now the dense lanes of ``vectors``, as one batch."""
        dense = self._dense(r, vectors)
        return _Ran(texts, dense, text_res, self._batch(dense, r.pool), vectors, prefetched=prefetched)

    def _dense(self, r: Round, vectors: np.ndarray | None) -> list[PlannedCall]:
        return dense_calls(self.settings, r.queries, vectors, r.pool, r.rows_min) if vectors is not None else []

    def _batch(self, calls: Sequence[PlannedCall], pool: LanePool) -> _Batch:
        """The calls as one batch; a store that can returns the hits' rows into ``pool.rows`` from the same
        statements."""
        t0 = time.perf_counter()
        hits, per_call = run_calls(self.store, [c.call for c in calls], pool.rows)
        return hits, per_call, (time.perf_counter() - t0) * 1000


class BatchedLanes(_Runner):
    """Lane calls in batches, one round trip per connection, the hits' rows joined (see the module docstring)."""

    def _schedule(self, r: Round, texts: list[PlannedCall]) -> _Ran:
        if r.embed_first:
            vectors = r.embed()
            return self._merged(r, texts, vectors)
        assert r.executor is not None
        future = r.executor.submit(r.embed)
        wait_ms = self.settings.retrieve.ready_vector_wait_ms
        if wait_ms > 0 and not wait([future], timeout=wait_ms / 1000).not_done:
            return self._merged(r, texts, future.result())  # the query cache had it: one batch
        try:
            text_res = self._batch(texts, r.pool)
        finally:
            vectors = future.result()  # re-raises the embedder's error here
        return self._then_dense(r, texts, text_res, vectors)

    def _merged(self, r: Round, texts: list[PlannedCall], vectors: np.ndarray | None) -> _Ran:
        """Text and dense lanes as ONE batch; the results split back into the two batches' shape, the wall
        time on the text side."""
        dense = self._dense(r, vectors)
        hits, per_call, wall = self._batch([*texts, *dense], r.pool)
        n = len(texts)
        return _Ran(texts, dense, (hits[:n], per_call[:n] if per_call is not None else None, wall),
                    (hits[n:], per_call[n:] if per_call is not None else None, 0.0), vectors, merged=True)


class SerialLanes(_Runner):
    """Lane calls one by one; the text lanes' rows read while the query embeds (see the module docstring)."""

    def _schedule(self, r: Round, texts: list[PlannedCall]) -> _Ran:
        if r.embed_first:
            vectors = r.embed()
            dense = self._dense(r, vectors)
            if r.parallel_text and r.executor is not None and texts and dense:
                # the cores are free again: the text lanes (and the read of their hits' rows) on the worker,
                # the dense lanes here, at once — SQLite's FTS and numpy's products both release the GIL
                side = r.executor.submit(self._text_side, texts, r.pool)
                try:
                    dense_res = self._batch(dense, r.pool)
                finally:
                    text_res, prefetched = side.result()
                return _Ran(texts, dense, text_res, dense_res, vectors, prefetched=prefetched, beside=True)
            text_res = self._batch(texts, r.pool)
            return _Ran(texts, dense, text_res, self._batch(dense, r.pool), vectors)
        assert r.executor is not None
        prefetched = 0
        future = r.executor.submit(r.embed)
        try:
            text_res = self._batch(texts, r.pool)
            if not future.done():
                prefetched = self._prefetch(r.pool, [h.fragment_id for found in text_res[0] for h in found])
        finally:
            vectors = future.result()  # re-raises the embedder's error here
        return self._then_dense(r, texts, text_res, vectors, prefetched)

    def _text_side(self, texts: list[PlannedCall], pool: LanePool) -> tuple[_Batch, int]:
        res = self._batch(texts, pool)
        return res, self._prefetch(pool, [h.fragment_id for found in res[0] for h in found])

    def _prefetch(self, pool: LanePool, ids: Sequence[str]) -> int:
        """Read the fragments + vectors of ``ids`` not read yet into ``pool.rows``; how many were read."""
        both = capabilities(self.store).with_vectors
        want = [i for i in dict.fromkeys(ids) if i not in pool.rows]
        if both is None or not want:
            return 0
        frags, mat = both.get_fragments_with_embeddings(want)
        row = {fid: j for j, fid in enumerate(want)}
        for f in frags:
            pool.rows[f.id] = (f, mat[row[f.id]])
        return len(frags)


def _traces(r: Round, ran: _Ran) -> list[StageTrace]:
    """Each batch's wall time and schedule, then each lane's time, queries and hits; the hits go into the pool."""
    suffix = "" if r.round_no == 1 else f"@round{r.round_no}"
    traces: list[StageTrace] = []
    lane_ms: dict[Lane, float] = {}
    lane_hits: dict[Lane, int] = {}
    lane_queries: dict[Lane, int] = {}
    for name, calls, (hits, per_call, wall) in (("text", ran.texts, ran.text_res), ("dense", ran.dense, ran.dense_res)):
        if not calls:
            continue
        for j, (pc, found) in enumerate(zip(calls, hits, strict=True)):
            r.pool.add(pc.lane, pc.key, found)
            lane_ms[pc.lane] = lane_ms.get(pc.lane, 0.0) + (per_call[j] if per_call is not None else 0.0)
            lane_hits[pc.lane] = lane_hits.get(pc.lane, 0) + len(found)
            lane_queries[pc.lane] = lane_queries.get(pc.lane, 0) + 1
        traces.append(StageTrace(f"lanes:{name}{suffix}", round(wall, 3), {"calls": len(calls)},
                                 {"batched": per_call is None, "merged": ran.merged, "embed_first": r.embed_first,
                                  "prefetched": ran.prefetched if name == "text" else 0,
                                  "overlapped_embedding": name == "text" and r.executor is not None
                                  and not ran.merged and not r.embed_first, "beside_dense": ran.beside}))
    for lane in lane_ms:
        traces.append(StageTrace(f"lane:{lane.value}{suffix}", round(lane_ms[lane], 3),
                                 {"queries": lane_queries[lane], "hits": lane_hits[lane]}))
    return traces
