"""``retrieve.rerank``: a reranker endpoint or model (``retrieve.reranker`` = http or local)."""


from __future__ import annotations

from pydantic import Field

from footnote.settings.base import _Frozen


class RerankSettings(_Frozen):
    section = "retrieve.rerank"
    url: str = Field("", description="Cohere-style /rerank endpoint for reranker='http'.")
    model: str = Field("", description="Model name sent to the /rerank endpoint, or the local model directory.")
    api_key: str = Field("", description="API key for the /rerank endpoint.")
    timeout_s: float = Field(20.0, description="Timeout of one rerank call.")
    retries: int = Field(2, description="Retries of a rerank call after a timeout, connection error, 429 or 5xx (bounded).")
    retry_backoff_s: float = Field(0.25, description="First pause between rerank retries (doubles each retry).")
