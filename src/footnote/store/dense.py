"""Exact dense search over an in-memory float32 matrix, shared by backends that keep vectors as blobs.

A :class:`DenseSnapshot` is an immutable view: row keys, fragment ids, an n×d float32 matrix, a kind
code per row and (after deletions) an ``alive`` mask. Its arrays are the first n rows of a
:class:`_Buffers` with spare capacity, so a refresh after a write appends the new rows in place and
masks the deleted ones — readers of the previous snapshot never see the change (they only look at
their first n rows), and nothing of size n is copied. When the buffers are full or a quarter of the
rows are dead, a refresh compacts into new buffers (one copy, as contiguous runs).

The :class:`DenseCache` holds the current snapshot keyed by the store's write generation and replaces
it once, under a lock, when the generation moved. A query costs one matrix–vector product and an
``argpartition``; nothing is copied per query.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from footnote.store.protocol import Hit

#: (row key, fragment id, kind, float32 blob)
Row = tuple[int, str, str, bytes]

_SPARE = 0.2  # extra capacity allocated on a (re)build, as a share of the rows
_MIN_SPARE = 1024
_MAX_DEAD = 0.25  # compact when this share of rows is dead
_SCORE_MEMO = 8  # query products remembered per snapshot (a turn's lanes share one query vector)
_MASK_MEMO = 32  # row masks remembered per snapshot, one per kinds filter (the lanes ask for the same few)


class _Buffers:
    """Preallocated arrays; ``used`` rows are filled. Only the newest snapshot may append."""

    def __init__(self, capacity: int, dim: int) -> None:
        self.keys = np.empty(capacity, dtype=np.int64)
        self.matrix = np.empty((capacity, dim), dtype=np.float32)
        self.codes = np.empty(capacity, dtype=np.int32)
        self.used = 0

    @classmethod
    def for_rows(cls, rows: int, dim: int) -> _Buffers:
        return cls(rows + max(_MIN_SPARE, int(rows * _SPARE)), dim)

    @property
    def capacity(self) -> int:
        return len(self.keys)

    def append(self, batches: Iterable[Sequence[Row]], ids: list[str], kinds: dict[str, int]) -> None:
        dim = self.matrix.shape[1]
        for batch in batches:
            m = min(len(batch), self.capacity - self.used)
            if m <= 0:
                break
            rows, n = batch[:m], self.used
            self.keys[n : n + m] = [r[0] for r in rows]
            self.matrix[n : n + m] = np.frombuffer(b"".join(r[3] for r in rows), dtype="<f4").reshape(m, dim)
            self.codes[n : n + m] = [kinds.setdefault(r[2], len(kinds)) for r in rows]
            ids.extend(r[1] for r in rows)
            self.used += m


@dataclass(frozen=True)
class DenseSnapshot:
    generation: int
    keys: np.ndarray  # (n,) int64 row keys (the backend's row id; never reused)
    ids: list[str]
    matrix: np.ndarray  # (n, d) float32 view, rows L2-normalised (or zero)
    kind_codes: np.ndarray  # (n,) int32 index into kind_names
    kind_names: dict[str, int]
    alive: np.ndarray | None  # (n,) bool, None when every row is alive
    buffers: _Buffers
    # The lanes search one query vector once per kind group: the matrix–vector product is shared.
    _scores: dict[bytes, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    # kinds filter → (rows it leaves, None when that is every row; how many): np.isin over the kind codes
    # on every call was a third of a small store's dense lane
    _masks: dict[tuple[str, ...] | None, tuple[np.ndarray | None, int]] = field(
        default_factory=dict, compare=False, repr=False)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def size(self) -> int:
        """Rows searchable (alive)."""
        return len(self.ids) if self.alive is None else int(self.alive.sum())

    @classmethod
    def empty(cls, generation: int, dim: int = 0) -> DenseSnapshot:
        return cls.build(generation, dim, 0, [])

    @classmethod
    def build(cls, generation: int, dim: int, count: int, batches: Iterable[Sequence[Row]]) -> DenseSnapshot:
        """From batches of rows, ``count`` rows in all (spare capacity added for later refreshes)."""
        buf = _Buffers.for_rows(count, dim)
        ids: list[str] = []
        kinds: dict[str, int] = {}
        buf.append(batches, ids, kinds)
        return cls._view(generation, buf, ids, kinds, None)

    @classmethod
    def _view(
        cls, generation: int, buf: _Buffers, ids: list[str], kinds: dict[str, int], alive: np.ndarray | None
    ) -> DenseSnapshot:
        n = buf.used
        matrix = buf.matrix[:n]
        matrix.flags.writeable = False  # the view only; the buffers stay appendable
        return cls(generation, buf.keys[:n], ids, matrix, buf.codes[:n], kinds, alive, buf)

    def missing_keys(self, current: np.ndarray) -> np.ndarray:
        """Keys in ``current`` (the store's row keys now, sorted) that this snapshot lacks."""
        return np.setdiff1d(current, self.keys, assume_unique=True)

    def refreshed(self, generation: int, current: np.ndarray, new_rows: Sequence[Sequence[Row]]) -> DenseSnapshot:
        """A new snapshot: rows whose keys are not in ``current`` masked out, ``new_rows`` appended."""
        keep = np.isin(self.keys, current, assume_unique=True)
        if self.alive is not None:
            keep &= self.alive
        n, n_new = len(self.ids), sum(len(b) for b in new_rows)
        dead = n - int(keep.sum())
        buf = self.buffers
        if buf.used == n and n + n_new <= buf.capacity and dead <= _MAX_DEAD * (n + n_new):
            ids, kinds = list(self.ids), dict(self.kind_names)
            buf.append(new_rows, ids, kinds)
            alive = None if dead == 0 else np.concatenate([keep, np.ones(buf.used - n, dtype=bool)])
            return self._view(generation, buf, ids, kinds, alive)
        # compact: alive rows copied as contiguous runs, then the new rows
        new = _Buffers.for_rows(n - dead + n_new, self.dim)
        edges = np.flatnonzero(np.diff(keep.astype(np.int8))) + 1
        m = 0
        for a, b in pairwise([0, *edges.tolist(), n]):
            if b > a and keep[a]:
                new.matrix[m : m + b - a] = self.matrix[a:b]
                new.keys[m : m + b - a] = self.keys[a:b]
                new.codes[m : m + b - a] = self.kind_codes[a:b]
                m += b - a
        new.used = m
        ids = [i for i, k in zip(self.ids, keep.tolist(), strict=True) if k]
        kinds = dict(self.kind_names)
        new.append(new_rows, ids, kinds)
        return self._view(generation, new, ids, kinds, None)

    def _product(self, query: np.ndarray) -> np.ndarray:
        """``matrix @ query``, memoised for the last few queries (read-only: shared by the lanes)."""
        key = np.ascontiguousarray(query, dtype=np.float32).tobytes()
        cached = self._scores.get(key)
        if cached is None:
            cached = self.matrix @ query
            cached.flags.writeable = False
            if len(self._scores) >= _SCORE_MEMO:
                self._scores.clear()
            self._scores[key] = cached
        return cached

    def _mask(self, kinds: Sequence[str] | None) -> tuple[np.ndarray | None, int]:
        """The rows a search over ``kinds`` (None: all) may return — None when that is every row — and
        how many; memoised per snapshot, which never changes."""
        key = tuple(kinds) if kinds is not None else None
        if key in self._masks:
            return self._masks[key]
        mask = self.alive
        if key is not None:
            wanted = [self.kind_names[kd] for kd in key if kd in self.kind_names]
            kind_mask = np.isin(self.kind_codes, np.asarray(wanted, dtype=np.int32)) if wanted \
                else np.zeros(len(self.ids), dtype=bool)
            mask = kind_mask if mask is None else (mask & kind_mask)
        got = (None, len(self.ids)) if mask is None else (None if bool(mask.all()) else mask, int(mask.sum()))
        if len(self._masks) >= _MASK_MEMO:
            self._masks.clear()
        self._masks[key] = got
        return got

    def search(self, query: np.ndarray, k: int, kinds: Sequence[str] | None = None) -> list[Hit]:
        """Top-k rows by cosine with ``query`` (already L2-normalised), optionally only ``kinds``."""
        n = len(self.ids)
        if n == 0 or k <= 0:
            return []
        mask, available = self._mask(kinds)
        if available == 0:
            return []
        scores = self._product(query)
        if mask is not None:
            scores = np.where(mask, scores, np.float32(-np.inf))
        k = min(k, available)
        if k < n:
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
        else:
            top = np.argsort(-scores, kind="stable")
        ids = self.ids
        return [Hit(ids[i], s) for i, s in zip(top.tolist(), scores[top].tolist(), strict=True)]


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
