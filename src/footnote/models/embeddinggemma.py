"""``embeddinggemma``: EmbeddingGemma-300M as an ONNX graph run by onnxruntime, tokenised by ``tokenizers``.

Installed by ``footnote models install embeddinggemma`` (``footnote.models.installer``); loaded on first
use. Queries and passages get the model's own prompts (``embedder.gemma.query_prompt`` /
``gemma_passage_prompt``); passages are embedded in batches of similar length (sorted by token count,
so little padding is computed); queries go through an LRU cache.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from footnote.errors import ModelError
from footnote.models.embedders import _normalise, _QueryCache
from footnote.models.installer import MANIFEST, MODEL_FILES
from footnote.settings import EmbedderSettings

log = logging.getLogger(__name__)

NAME = "embeddinggemma"
#: A derived precision that an older install may lack → what runs instead (with a warning) until it is built.
FALLBACK = {"int8tok": "int8"}


class EmbeddingGemmaEmbedder:
    """768-d multilingual embeddings from the installed graph in ``model_dir``."""

    name = NAME
    dim = 768

    def __init__(self, model_dir: Path, settings: EmbedderSettings, *, mem_arena: bool = False) -> None:
        """``mem_arena``: keep onnxruntime's CPU memory arena — on in an embedding worker process, which only
        embeds passage batches bounded by ``embedder.gemma.batch_tokens``: a batch reuses the memory of the ones
        before (no page faults per batch) and the process keeps the largest one's (docs/embedders.md); off for
        queries, where it changes little and the memory is returned after each call."""
        self.mem_arena = mem_arena
        self.model_dir = model_dir
        self.settings = settings
        self.precision: str = settings.gemma.precision
        if self.precision in FALLBACK and not (model_dir / MODEL_FILES[self.precision]).is_file() \
                and (model_dir / MODEL_FILES[FALLBACK[self.precision]]).is_file():
            self.precision = FALLBACK[self.precision]  # an install from before int8tok existed (said at load)
        self.model_path = model_dir / MODEL_FILES[self.precision]
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._cache = _QueryCache(settings.query_cache_size)

    def _load(self) -> tuple[Any, Any]:
        if self._session is None:
            with self._lock:
                if self._session is None:
                    self._session, self._tokenizer = self._open()
        return self._session, self._tokenizer

    def _open(self) -> tuple[Any, Any]:
        if not (self.model_dir / MANIFEST).is_file() or not self.model_path.is_file():
            flag = " --fp32" if self.precision == "fp32" else ""
            raise ModelError(f"the embeddinggemma model ({self.precision}) is not installed in "
                             f"{self.model_dir}: run `footnote models install embeddinggemma{flag}` "
                             "(or set models.dir / FOOTNOTE_MODELS_DIR to where it is)")
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as e:  # pragma: no cover - both are dependencies
            raise ModelError(f"embeddinggemma needs onnxruntime and tokenizers: {e}") from e
        if self.precision != self.settings.gemma.precision:
            log.warning("embeddinggemma: the %s graph is not built in %s; running %s (about twice the CPU per text). "
                        "`footnote models install embeddinggemma` builds it from the installed model, no download",
                        self.settings.gemma.precision, self.model_dir, self.precision)
        log.info("loading embeddinggemma from %s", self.model_path)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(0, self.settings.threads)
        opts.inter_op_num_threads = 1
        # shapes vary per batch: an arena keeps the largest ever seen (worth it in a worker that only embeds)
        opts.enable_cpu_mem_arena = self.mem_arena
        opts.log_severity_level = 3
        try:
            session = ort.InferenceSession(str(self.model_path), opts, providers=["CPUExecutionProvider"])
            tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        except Exception as e:  # onnxruntime raises its own untyped errors
            raise ModelError(f"{self.model_path}: cannot load the embeddinggemma model: {e}") from e
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.settings.gemma.max_tokens)
        return session, tokenizer

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        session, tokenizer = self._load()
        ids = [e.ids for e in tokenizer.encode_batch(list(texts))]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch in self._batches(ids):
            width = max(len(ids[i]) for i in batch)
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            try:
                vecs = session.run(["embeddings"], {"input_ids": input_ids, "attention_mask": mask})[0]
            except Exception as e:
                raise ModelError(f"embeddinggemma failed on a batch of {len(batch)} texts: {e}") from e
            out[batch] = vecs
        return _normalise(out)

    def _batches(self, ids: list[list[int]]) -> list[list[int]]:
        """Indices of ``ids`` sorted by length, cut into batches of at most ``batch_size`` texts and
        ``gemma_batch_tokens`` padded tokens (a text longer than that budget goes alone)."""
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        most = max(1, self.settings.batch_size)
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:
            width = len(ids[i])  # the longest so far: sorted ascending
            if current and (len(current) >= most or width * (len(current) + 1) > self.settings.gemma.batch_tokens):
                batches.append(current)
                current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._cache.embed(texts, self._query)

    def _query(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._embed([self.settings.gemma.query_prompt + t for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._embed([self.settings.gemma.passage_prompt + t for t in texts])
