"""Exact dense search over an in-memory float32 matrix, shared by backends that keep vectors as blobs.

A :class:`DenseSnapshot` is immutable (ids, one n×d float32 matrix, a kind code per row); the
:class:`DenseCache` holds the current snapshot keyed by the store's write generation and rebuilds it
(once, under a lock) when the generation moved. A query costs one matrix–vector product and an
``argpartition``; nothing is copied per query.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from footnote.store.protocol import Hit


@dataclass(frozen=True)
class DenseSnapshot:
    generation: int
    ids: list[str]
    matrix: np.ndarray  # (n, d) float32, rows L2-normalised (or zero)
    kind_codes: np.ndarray  # (n,) int32 index into kind_names
    kind_names: dict[str, int]

    @classmethod
    def build(
        cls, generation: int, dim: int, count: int, batches: Iterable[Sequence[tuple[str, str, bytes]]]
    ) -> DenseSnapshot:
        """From batches of (fragment id, kind, float32 blob of ``dim`` values), ``count`` rows in all."""
        matrix = np.empty((count, dim), dtype=np.float32)
        codes = np.empty(count, dtype=np.int32)
        ids: list[str] = []
        kinds: dict[str, int] = {}
        n = 0
        for batch in batches:
            m = min(len(batch), count - n)
            if m <= 0:  # more rows than counted cannot happen inside one snapshot; be safe
                break
            rows = batch[:m]
            matrix[n : n + m] = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(m, dim)
            codes[n : n + m] = [kinds.setdefault(r[1], len(kinds)) for r in rows]
            ids.extend(r[0] for r in rows)
            n += m
        if n < count:
            matrix = matrix[:n]
            codes = codes[:n]
        matrix.setflags(write=False)
        return cls(generation, ids, matrix, codes, kinds)

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


class DenseCache:
    """The current :class:`DenseSnapshot`, rebuilt when the store's generation changes."""

    def __init__(self) -> None:
        self._snap: DenseSnapshot | None = None
        self._lock = threading.Lock()

    def get(self, generation: int, load: Callable[[], DenseSnapshot]) -> DenseSnapshot:
        snap = self._snap
        if snap is not None and snap.generation == generation:
            return snap
        with self._lock:
            snap = self._snap
            if snap is None or snap.generation != generation:
                self._snap = None  # drop the old matrix before building the new one
                snap = load()
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
