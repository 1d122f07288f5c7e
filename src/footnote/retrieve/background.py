"""The gate's background: a fixed, evenly strided sample of the corpus vectors against which a question's
best cosine is read (the mean and the spread of its cosines to the sample)."""

from __future__ import annotations

import threading
import time
from typing import Protocol

import numpy as np

from footnote.settings import GateSettings
from footnote.store.protocol import SourceStore, VectorStore


class SampledStore(SourceStore, VectorStore, Protocol):
    """What the sample reads: the store's counts and its vectors."""


class BackgroundSample:
    """``gate.background_sample`` corpus vectors, kept for one generation of the vectors (``VectorStore.vectors_generation``),
    and — a statistical sample, whose every rebuild reads all the vectors — a moved generation is looked at no
    more often than every ``gate.background_refresh_s``. An empty sample (a store with no vectors yet: searched
    lexically only) is read again as soon as the generation moved, so the first vectors are searched at the next
    turn. Shared by concurrent searches."""

    def __init__(self, store: SampledStore, gate: GateSettings) -> None:
        self.store = store
        self.gate = gate
        self._lock = threading.Lock()
        self._sample: np.ndarray | None = None
        self._centroid: np.ndarray | None = None
        self._at = 0.0
        self._gen: int | None = None
        self.embedded = 0  # the store's embedded fragments, as of the sample's last refresh

    def mean(self, qvec: np.ndarray) -> float:
        """Mean cosine of the question to the background sample = its dot product with the sample's
        mean vector (one 384-wide dot product instead of a 2048-row matrix product per search)."""
        bg = self.vectors()
        if bg is None or len(bg) == 0:
            return 0.0
        centroid = self._centroid
        if centroid is None or centroid.shape[0] != bg.shape[1]:
            centroid = self._centroid = bg.mean(axis=0, dtype=np.float64).astype(np.float32)
        return float(np.dot(centroid, qvec.astype(np.float32)))

    def spread(self, qvec: np.ndarray) -> float:
        """The standard deviation of the question's cosines to the background sample (one matrix-vector
        product; computed only for spread-normalised thresholds and while calibrating)."""
        bg = self.vectors()
        if bg is None or len(bg) < 2 or bg.shape[1] != qvec.shape[0]:
            return 1.0
        return float(np.std(bg @ qvec.astype(np.float32)))

    def vectors(self) -> np.ndarray | None:
        """A fixed, evenly strided sample of the corpus vectors (``gate.background_sample``), of the corpus
        generation it was read at (see the class)."""
        g = self.gate
        now = time.monotonic()

        def fresh() -> bool:
            # an empty sample is never fresh by time: the generation below decides (one indexed read)
            return self._sample is not None and len(self._sample) > 0 and now - self._at < g.background_refresh_s

        if fresh():
            return self._sample
        with self._lock:
            if fresh():
                return self._sample
            gen = self.store.vectors_generation()
            if self._sample is not None and gen == self._gen:  # nothing was written since: the sample stands
                self._at = now
                return self._sample
            self._gen = gen
            total = self.embedded = self.store.stats().embedded
            if total == 0:
                self._sample, self._at = np.zeros((0, 1), dtype=np.float32), now
                return self._sample
            stride = max(1, total // max(1, g.background_sample))
            rows: list[np.ndarray] = []
            seen = 0
            for _, vecs in self.store.iter_embeddings(1000):
                idx = [j for j in range(len(vecs)) if (seen + j) % stride == 0]
                seen += len(vecs)
                if idx:
                    rows.append(np.asarray(vecs, dtype=np.float32)[idx])
            sample = np.vstack(rows)[: g.background_sample] if rows else np.zeros((0, 1), dtype=np.float32)
            norms = np.linalg.norm(sample, axis=1) if sample.size else np.zeros(0)
            sample = sample[norms > 0] if sample.size else sample
            self._sample, self._at = sample, now
            self._centroid = None
            return sample
