"""Rerankers behind the ``Reranker`` protocol (docs/architecture.md; docs/retrieval.md).

- ``fusion`` (default): no reranker object — the retrieval pipeline ranks by fused lane evidence.
- ``http``: :class:`HttpReranker`, a Cohere-style ``/rerank`` endpoint (Cohere, Jina, Voyage, TEI,
  Infinity, vLLM): ``POST {"model", "query", "documents", "top_n"}`` →
  ``{"results": [{"index", "relevance_score"}]}``; bounded retries on timeouts, connection errors
  and 5xx; clear :class:`ModelError` / :class:`ModelTimeout` otherwise.
- ``local``: :class:`LocalCrossEncoderReranker`, a sentence-transformers ``CrossEncoder`` loaded
  lazily from a local model directory (optional extra ``rerank-local``; nothing is downloaded).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from footnote.errors import ConfigError, ModelError, ModelTimeout
from footnote.models.protocols import Reranker
from footnote.redact import mask_url, redact
from footnote.settings import RetrieveSettings

log = logging.getLogger(__name__)


class HttpReranker:
    """A Cohere-style ``/rerank`` endpoint. Scores compare only within one call (as the protocol says)."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str = "",
        timeout_s: float = 20.0,
        retries: int = 2,
        backoff_s: float = 0.25,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not url:
            raise ConfigError("reranker 'http' needs retrieve.rerank.url (a Cohere-style /rerank endpoint)")
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"retrieve.rerank.url {url!r}: expected an http:// or https:// URL")
        self.url = url
        self.shown_url = mask_url(url)  # a user:password in the URL never reaches a log line or an error
        self._secrets = (api_key, url)
        self.model = model
        self.name = f"http:{model or self.shown_url}"
        self.timeout_s = timeout_s
        self.retries = max(0, retries)
        self.backoff_s = backoff_s
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(timeout=timeout_s, headers=headers, transport=transport)

    def close(self) -> None:
        self._client.close()

    def _post(self, payload: dict[str, Any]) -> Any:
        last: str = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * (2 ** (attempt - 1)))
            try:
                resp = self._client.post(self.url, json=payload)
            except httpx.TimeoutException:
                last = f"timed out after {self.timeout_s:g} s"
                log.warning("rerank %s: %s (attempt %d/%d)", self.shown_url, last, attempt + 1, self.retries + 1)
                if attempt == self.retries:
                    raise ModelTimeout(f"reranker {self.shown_url}: {last} ({self.retries + 1} attempts)") from None
                continue
            except httpx.HTTPError as e:
                last = f"cannot reach it: {redact(str(e), self._secrets)}"
                log.warning("rerank %s: %s (attempt %d/%d)", self.shown_url, last, attempt + 1, self.retries + 1)
                if attempt == self.retries:
                    raise ModelError(f"reranker {self.shown_url}: {last} ({self.retries + 1} attempts)") from None
                continue
            if resp.status_code >= 500 or resp.status_code == 429:
                last = f"HTTP {resp.status_code}: {redact(resp.text[:200], self._secrets)}"
                log.warning("rerank %s: %s (attempt %d/%d)", self.shown_url, last, attempt + 1, self.retries + 1)
                if attempt == self.retries:
                    raise ModelError(f"reranker {self.shown_url}: {last} ({self.retries + 1} attempts)")
                continue
            if resp.status_code >= 400:
                raise ModelError(f"reranker {self.shown_url}: HTTP {resp.status_code}: "
                             f"{redact(resp.text[:200], self._secrets)}")
            try:
                return resp.json()
            except ValueError:
                raise ModelError(f"reranker {self.shown_url}: reply is not JSON: "
                             f"{redact(resp.text[:200], self._secrets)!r}") from None
        raise ModelError(f"reranker {self.shown_url}: {last}")  # pragma: no cover - loop always returns or raises

    def rerank(self, question: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, in the passages' order (higher is better)."""
        if not passages:
            return []
        payload = {"model": self.model, "query": question, "documents": list(passages), "top_n": len(passages)}
        data = self._post(payload)
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise ModelError(f"reranker {self.shown_url}: reply has no 'results' list: "
                             f"{redact(str(data)[:200], self._secrets)!r}")
        scores: list[float | None] = [None] * len(passages)
        for r in results:
            try:
                i = int(r["index"])
                s = float(r.get("relevance_score", r.get("score")))
            except (KeyError, TypeError, ValueError):
                raise ModelError(f"reranker {self.shown_url}: malformed result "
                                 f"{redact(str(r)[:200], self._secrets)!r}") from None
            if not 0 <= i < len(passages):
                raise ModelError(f"reranker {self.shown_url}: result index {i} out of range (0..{len(passages) - 1})")
            scores[i] = s
        floor = min((s for s in scores if s is not None), default=0.0)
        # A server honouring top_n < n leaves some passages unscored: they rank below every scored one.
        return [s if s is not None else floor - 1.0 for s in scores]


class LocalCrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` from a local directory; loaded on first use."""

    def __init__(self, model_dir: str, *, batch_size: int = 32) -> None:
        if not model_dir:
            raise ConfigError("reranker 'local' needs retrieve.rerank.model (a local sentence-transformers model directory)")
        path = Path(model_dir).expanduser()
        if not path.is_dir():
            raise ConfigError(f"retrieve.rerank.model {model_dir!r}: no such model directory")
        self.path = path
        self.name = f"local:{path.name}"
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        from sentence_transformers import CrossEncoder
                    except ImportError as e:
                        raise ConfigError(
                            "reranker 'local' needs the optional extra: pip install 'footnote[rerank-local]'"
                        ) from e
                    log.info("loading cross-encoder from %s", self.path)
                    try:
                        self._model = CrossEncoder(str(self.path), local_files_only=True)
                    except TypeError:  # older sentence-transformers without local_files_only
                        self._model = CrossEncoder(str(self.path))
                    except Exception as e:
                        raise ModelError(f"cannot load cross-encoder from {self.path}: {e}") from e
        return self._model

    def rerank(self, question: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        model = self._get()
        try:
            scores = model.predict([(question, p) for p in passages], batch_size=self.batch_size)
        except Exception as e:
            raise ModelError(f"cross-encoder {self.path} failed: {e}") from e
        return [float(s) for s in scores]


def make_reranker(settings: RetrieveSettings) -> Reranker | None:
    """The configured reranker, or None for ``fusion`` (ranking by fused lane evidence)."""
    if settings.reranker == "fusion":
        return None
    if settings.reranker == "http":
        return HttpReranker(
            settings.rerank.url,
            settings.rerank.model,
            api_key=settings.rerank.api_key,
            timeout_s=settings.rerank.timeout_s,
            retries=settings.rerank.retries,
            backoff_s=settings.rerank.retry_backoff_s,
        )
    if settings.reranker == "local":
        return LocalCrossEncoderReranker(settings.rerank.model)
    raise ConfigError(f"unknown reranker {settings.reranker!r}")  # pragma: no cover - Literal guards it
