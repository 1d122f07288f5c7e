"""The pool stage's read (docs/architecture.md "The flow", step 3): every pooled fragment, its vector and its
true cosine to the question, and the languages the gate's thresholds are chosen by.

Most rows are already in ``LanePool.rows`` (the lane statements returned them, or they were read while
the query was embedded); the rest are read here in one call. A dense lane may also have left rows out
(``retrieve.dense_rows_floor_margin``): hits whose cosine is below the pre-floor the search expected, sent as
id, cosine and language. The pool drops those without reading them — unless the pre-floor that actually
applies (it depends on the pooled fragments' majority language) is lower than expected, in which case
the ones it may keep are read after all. Either way the candidates are those of a full read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from footnote.errors import FootnoteError
from footnote.models.protocols import Embedder
from footnote.records.fragments import Fragment
from footnote.retrieve.fusion import evidence_of, lane_tops
from footnote.retrieve.lanes import DENSE_LANES, LanePool
from footnote.store.batch import capabilities
from footnote.store.protocol import SourceStore, VectorStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PoolRead:
    ids: list[str]  # the pooled ids read (pool order); an id the store no longer has is left out
    frags: dict[str, Fragment]
    mat: np.ndarray | None  # their vectors, one row per id (None: lexical only)
    cos: np.ndarray  # their cosine to the question (zeros without a query vector)
    has_vec: np.ndarray  # whether each has a vector yet
    read: int  # fragments read here (the lanes did not bring their rows)
    left_out: int  # dense hits dropped without their rows (below the pre-floor)
    langs: list[str]  # the language of every pooled fragment, left-out ones included (pool order)


def cosines(mat: np.ndarray, qvec: np.ndarray) -> np.ndarray:
    """Each row's dot product with the query, computed row by row (einsum), so a fragment's cosine does not
    depend on which other rows the pool holds or where it sits among them (BLAS's matrix-vector kernels
    round a row's sum differently by its position in their blocks: last-bit differences)."""
    return np.einsum("ij,j->i", mat, qvec.astype(np.float32))


def majority_lang(langs: Sequence[str], default: str) -> str:
    if not langs:
        return default
    counts: dict[str, int] = {}
    for lg in langs:
        counts[lg] = counts.get(lg, 0) + 1
    return max(counts, key=lambda k: (counts[k], k == default))


def left_out(pool: LanePool, rows_min: float) -> list[str]:
    """Pooled ids without a row whose language a dense lane sent instead, found by dense lanes only and
    each time with a cosine below ``rows_min`` (pool order). Anything else without a row is read."""
    out = []
    for i, hits in pool.hits.items():
        if i in pool.langs and i not in pool.rows and all(h.lane in DENSE_LANES and h.score < rows_min for h in hits):
            out.append(i)
    return out


class PoolStore(SourceStore, VectorStore, Protocol):
    """What reading a pool takes: fragments and their vectors (one call where the store offers both at once)."""


def read_pool(
    store: PoolStore, pool: LanePool, qvec: np.ndarray | None, *, embedder: bool, rows_min: float | None, margin: float,
    prefloor_of: Callable[[list[str]], float],
) -> PoolRead:
    """The pool's fragments and cosines. ``embedder``: whether the search has one (without a query vector
    and with one, no vector yet means the store's backlog); ``rows_min``: the floor the dense lanes left
    rows out below (None: they sent every row); ``prefloor_of``: the pre-floor that the pooled languages
    select; a left-out hit within ``margin`` of it, or above, is read."""
    ids = list(pool.hits)
    both = capabilities(store).with_vectors
    if qvec is None or not ids or both is None:
        frags = {f.id: f for f in store.get_fragments(ids)}
        read = len(ids)
        ids = [i for i in ids if i in frags]
        langs = [frags[i].lang for i in ids]
        if qvec is not None and ids:
            return _scored(ids, frags, store.get_embeddings(ids), qvec, read, 0, langs)
        # lexical only: with an embedder the store has no vector yet (all backlog); without one, n/a
        return PoolRead(ids, frags, None, np.zeros(len(ids), dtype=np.float32),
                        np.full(len(ids), not embedder, dtype=bool), read, 0, langs)
    light = left_out(pool, rows_min) if rows_min is not None and pool.langs else []
    skip = set(light)
    unread = [i for i in ids if i not in pool.rows and i not in skip]  # some were read while the query was embedded
    dim = qvec.shape[0]
    got, unread_mat = both.get_fragments_with_embeddings(unread) if unread else ([], np.zeros((0, dim), dtype=np.float32))
    frags = {f.id: f for f in got}
    read = len(unread)
    if not pool.rows and not light and len(frags) == len(ids):  # nothing read before, nothing missing: as read
        mat = unread_mat
        langs = [frags[i].lang for i in ids]
    else:
        vec_of = {i: unread_mat[j] for j, i in enumerate(unread)}
        for i, (f, v) in pool.rows.items():
            frags[i], vec_of[i] = f, v
        langs = [frags[i].lang if i in frags else pool.langs[i] for i in ids if i in frags or i in skip]
        if light:
            # the pre-floor the pooled languages select may be lower than the lanes expected: read the
            # left-out hits it could keep (the lanes' cosine and the one computed here differ in the last digits)
            floor = prefloor_of(langs) - margin
            lift = [i for i in light if max(h.score for h in pool.hits[i]) >= floor]
            if lift:
                more, more_mat = both.get_fragments_with_embeddings(lift)
                read += len(lift)
                row = {fid: j for j, fid in enumerate(lift)}
                for f in more:
                    frags[f.id], vec_of[f.id] = f, more_mat[row[f.id]]
                skip -= set(lift)
        ids = [i for i in ids if i in frags]
        mat = np.vstack([vec_of[i] for i in ids]) if ids else np.zeros((0, dim), dtype=np.float32)
    return _scored(ids, frags, mat, qvec, read, len(skip), langs)


def _scored(
    ids: list[str], frags: dict[str, Fragment], mat: np.ndarray, qvec: np.ndarray, read: int, left: int,
    langs: list[str],
) -> PoolRead:
    """The read with each row's cosine, and whether it has a vector yet (stored vectors are unit length:
    a zero row means none yet)."""
    return PoolRead(ids, frags, mat, cosines(mat, qvec), np.abs(mat).sum(axis=1) > 0, read, left, langs)


def embed_pending(pr: PoolRead, pool: LanePool, qvec: np.ndarray, embedder: Embedder, limit: int) -> tuple[PoolRead, int]:
    """``pr`` with its best lexical hits that have no vector yet (the store's embedding backlog) embedded for this
    ranking: at most ``limit``, by the sum of their lane evidence (an exact address, lexical, trigram). Nothing is
    written: the backlog embeds them for good. Without this a passage ingested a minute ago sits at the pool's
    median cosine, below the embedded passages that merely share its subject, and its own question is answered
    from those or declined. An embedder that fails here leaves them at the median, as before (logged): the search
    goes on. Returns the read and how many were embedded."""
    if limit <= 0 or pr.mat is None or bool(pr.has_vec.all()):
        return pr, 0
    tops = lane_tops(pool.hits.values())

    def strength(i: str) -> float:
        ev = evidence_of(pool.hits.get(i, ()), tops)
        return ev.address + ev.lexical + ev.trigram

    pending = [(strength(i), j) for j, i in enumerate(pr.ids) if not pr.has_vec[j]]
    chosen = [j for st, j in sorted(pending, key=lambda x: -x[0]) if st > 0][:limit]
    if not chosen:
        return pr, 0
    try:
        vecs = np.asarray(embedder.embed_passages([pr.frags[pr.ids[j]].text for j in chosen]), dtype=np.float32)
    except FootnoteError as e:  # the backlog may be stuck on just such a passage: never fail the turn for it
        log.warning("could not embed %d pending passages for this search (they rank by their words): %s",
                    len(chosen), e)
        return pr, 0
    mat, has_vec = pr.mat.copy(), pr.has_vec.copy()
    for j, v in zip(chosen, vecs, strict=True):
        mat[j], has_vec[j] = v, True
    return replace(pr, mat=mat, cos=cosines(mat, qvec), has_vec=has_vec), len(chosen)
