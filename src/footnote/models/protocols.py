"""The model seams: ``Embedder``, ``Reranker``, ``ChatModel``. Implementations load lazily."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Dense embeddings with E5-style roles. Vectors are L2-normalised float32."""

    name: str
    dim: int

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class Reranker(Protocol):
    """Scores (question, passage) pairs. Higher is better; scores compare only within one call."""

    name: str

    def rerank(self, question: str, passages: Sequence[str]) -> list[float]: ...


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@runtime_checkable
class ChatModel(Protocol):
    """An LLM for one role (router, planner, synthesizer, fallback)."""

    name: str

    def complete(self, messages: Sequence[ChatMessage], *, json_schema: dict[str, Any] | None = None) -> str:
        """One completion. With ``json_schema`` the model is asked for JSON matching it."""
        ...

    def stream(self, messages: Sequence[ChatMessage]) -> Iterator[str]:
        """Stream the completion as text deltas."""
        ...
