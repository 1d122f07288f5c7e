"""Exact dense search over an in-memory float32 matrix, shared by backends that keep vectors as blobs.

A :class:`DenseSnapshot` is immutable (row keys, ids, one n×d float32 matrix, a kind code per row); the
:class:`DenseCache` holds the current snapshot keyed by the store's write generation and replaces it
(once, under a lock) when the generation moved — either by a full load or, when most rows are still
there, by :meth:`DenseSnapshot.refreshed`: drop the rows whose keys are gone, append the new ones. A
query costs one matrix–vector product and an ``argpartition``; nothing is copied per query.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from footnote.store.protocol import Hit

#: (row key, fragment id, kind, float32 blob)
Row = tuple[int, str, str, bytes]


@dataclass(frozen=True)
class DenseSnapshot:
    generation: int
    keys: np.ndarray  # (n,) int64 row keys (the backend's stable row id)
    ids: list[str]
    matrix: np.ndarray  # (n, d) float32, rows L2-normalised (or zero)
    kind_codes: np.ndarray  # (n,) int32 index into kind_names
    kind_names: dict[str, int]

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    @classmethod
    def empty(cls, generation: int, dim: int = 0) -> DenseSnapshot:
        return cls.build(generation, dim, 0, [])

    @classmethod
    def build(cls, generation: int, dim: int, count: int, batches: Iterable[Sequence[Row]]) -> DenseSnapshot:
        """From batches of rows, ``count`` rows in all."""
        keys = np.empty(count, dtype=np.int64)
        matrix = np.empty((count, dim), dtype=np.float32)
        codes = np.empty(count, dtype=np.int32)
        ids: list[str] = []
        kinds: dict[str, int] = {}
        n = _fill(keys, matrix, codes, ids, kinds, 0, batches)
        return cls._frozen(generation, keys[:n], ids, matrix[:n], codes[:n], kinds)

    @classmethod
    def _frozen(
        cls, generation: int, keys: np.ndarray, ids: list[str], matrix: np.ndarray, codes: np.ndarray,
        kinds: dict[str, int],
    ) -> DenseSnapshot:  # fmt: skip
        matrix.setflags(write=False)
        return cls(generation, keys, ids, matrix, codes, kinds)

    def missing_keys(self, current: np.ndarray) -> np.ndarray:
        """Keys in ``current`` (the store's row keys now) that this snapshot lacks."""
        return np.setdiff1d(current, self.keys, assume_unique=True)

    def refreshed(self, generation: int, current: np.ndarray, new_rows: Sequence[Sequence[Row]]) -> DenseSnapshot:
        """A new snapshot: the rows whose keys are still in ``current`` (copied once), then ``new_rows``."""
        keep = np.isin(self.keys, current, assume_unique=True)
        n_keep = int(keep.sum())
        count = n_keep + sum(len(b) for b in new_rows)
        keys = np.empty(count, dtype=np.int64)
        matrix = np.empty((count, self.dim), dtype=np.float32)
        codes = np.empty(count, dtype=np.int32)
        keys[:n_keep] = self.keys[keep]
        codes[:n_keep] = self.kind_codes[keep]
        # copy the kept rows as contiguous runs (memcpy speed; deletions are usually few and clustered)
        edges = np.flatnonzero(np.diff(keep.astype(np.int8))) + 1
        bounds = [0, *edges.tolist(), len(keep)]
        n = 0
        for a, b in pairwise(bounds):
            if keep[a]:
                matrix[n : n + b - a] = self.matrix[a:b]
                n += b - a
        ids = [i for i, k in zip(self.ids, keep.tolist(), strict=True) if k]
        kinds = dict(self.kind_names)
        n = _fill(keys, matrix, codes, ids, kinds, n_keep, new_rows)
        return self._frozen(generation, keys[:n], ids, matrix[:n], codes[:n], kinds)

    def search(self, query: np.ndarray, k: int, kinds: Sequence[str] | None = None) -> list[Hit]:
        """Top-k rows by cosine with ``query`` (already L2-normalised), optionally only ``kinds``."""
        n = len(self.ids)
        if n == 0 or k <= 0:
            return []
        scores = self.matrix @ query
        if kinds is not None:
            wanted = [self.kind_names[kd] for kd in kinds if kd in self.kind_names]
            if not wanted:
                return []
            mask = np.isin(self.kind_codes, np.asarray(wanted, dtype=np.int32))
            available = int(mask.sum())
            if available == 0:
                return []
            scores[~mask] = -np.inf
            k = min(k, available)
        k = min(k, n)
        if k < n:
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
        else:
            top = np.argsort(-scores, kind="stable")
        return [Hit(self.ids[i], float(scores[i])) for i in top]


def _fill(
    keys: np.ndarray, matrix: np.ndarray, codes: np.ndarray, ids: list[str], kinds: dict[str, int], start: int,
    batches: Iterable[Sequence[Row]],
) -> int:  # fmt: skip
    """Write rows into the preallocated arrays from ``start``; returns the row count reached."""
    n, count, dim = start, len(keys), matrix.shape[1]
    for batch in batches:
        m = min(len(batch), count - n)
        if m <= 0:  # more rows than counted cannot happen inside one snapshot; be safe
            break
        rows = batch[:m]
        keys[n : n + m] = [r[0] for r in rows]
        matrix[n : n + m] = np.frombuffer(b"".join(r[3] for r in rows), dtype="<f4").reshape(m, dim)
        codes[n : n + m] = [kinds.setdefault(r[2], len(kinds)) for r in rows]
        ids.extend(r[1] for r in rows)
        n += m
    return n


class DenseCache:
    """The current :class:`DenseSnapshot`, replaced when the store's generation changes. ``load`` gets
    the previous snapshot (or None) so it can refresh it instead of reading everything again."""

    def __init__(self) -> None:
        self._snap: DenseSnapshot | None = None
        self._lock = threading.Lock()

    def get(self, generation: int, load: Callable[[DenseSnapshot | None], DenseSnapshot]) -> DenseSnapshot:
        snap = self._snap
        if snap is not None and snap.generation == generation:
            return snap
        with self._lock:
            snap = self._snap
            if snap is None or snap.generation != generation:
                snap = load(snap)
                self._snap = snap
            return snap

    def clear(self) -> None:
        with self._lock:
            self._snap = None


def normalise_rows(m: np.ndarray) -> np.ndarray:
    """Float32, C-contiguous, rows L2-normalised (zero rows stay zero)."""
    m = np.ascontiguousarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(m / norms, dtype="<f4")
