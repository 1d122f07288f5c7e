"""``embedder.gemma``: EmbeddingGemma's graph, precision, batches and prompts (docs/embedders.md)."""


from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import Field, field_validator

from footnote.settings.base import _Frozen

log = logging.getLogger(__name__)

#: Graph precisions retired with the comparison that kept them, and what a file naming one gets instead.
RETIRED_PRECISIONS: dict[str, str] = {"int8dq": "int8tok"}


class GemmaSettings(_Frozen):
    section = "embedder.gemma"
    precision: Literal["int8tok", "int8", "fp32"] = Field(
        "int8tok",
        description="embeddinggemma: which built graph to run — int8tok (8-bit weights per output channel times activations "
        "quantised to int8 per token, on onnxruntime's integer GEMM: the least CPU; derived from int8 by "
        "`footnote models install embeddinggemma`, no download; an install without it runs int8 and says so); "
        "int8 (8-bit weights in blocks of 32, the graph the others are derived from); or fp32 (built only by "
        "`footnote models install embeddinggemma --fp32`). Sizes, CPU and cosine to fp32: docs/embedders.md; "
        "int8dq is retired (a file naming it runs int8tok, with a warning).",
    )
    @field_validator("precision", mode="before")
    @classmethod
    def _retired_precision(cls, v: Any) -> Any:
        if isinstance(v, str) and v in RETIRED_PRECISIONS:
            now = RETIRED_PRECISIONS[v]
            log.warning("embedder.gemma.precision = %r is retired (%s does the same work with less CPU); using %r",
                        v, now, now)
            return now
        return v

    max_tokens: int = Field(
        1024, description="embeddinggemma: tokens of a text embedded, at most (the model takes 2048; longer is cut)."
    )
    batch_tokens: int = Field(
        8192,
        description="embeddinggemma: padded tokens per batch, at most (texts are sorted by length, so long passages "
        "go in small batches): bounds the memory one batch needs. batch_size still caps texts per batch.",
    )
    query_prompt: str = Field(
        "task: search result | query: ", description="embeddinggemma: prefix of a query (the model's 'query' prompt)."
    )
    passage_prompt: str = Field(
        "title: none | text: ", description="embeddinggemma: prefix of a passage (the model's 'document' prompt)."
    )
