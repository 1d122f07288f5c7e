"""The local llama.cpp model (``llama-cpp://``): a blocking ``complete`` stops within a token once the
turn's budget runs out (hang-up or deadline), not after ``max_tokens`` tokens.

The mechanism is tested against a stand-in for ``llama_cpp.Llama`` (the same ``create_chat_completion``
interface, one token every 10 ms) so it runs everywhere; the same cut is tested against the real model
when ``make llm-local`` installed it (slow, skipped otherwise)."""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from footnote.errors import Cancelled, TurnDeadline
from footnote.models.llama_local import LlamaCppChatModel
from footnote.models.protocols import Budget, ChatMessage
from footnote.settings import ChatModelSettings

MSGS = [ChatMessage("user", "Count to a thousand.")]
TOKENS = 600
TOKEN_S = 0.01  # 600 tokens = 6 s of generation


class _SteadyEngine:
    """``llama_cpp.Llama``'s chat-completion interface generating ``TOKENS`` tokens, one per ``TOKEN_S``:
    blocking without ``stream`` (as llama.cpp is), a generator with it."""

    def __init__(self) -> None:
        self.generated = 0
        self.closed = False
        self.calls: list[dict[str, Any]] = []

    def create_chat_completion(self, *, messages: Any, temperature: float, max_tokens: int, stream: bool = False,
                               **kw: Any) -> Any:
        self.calls.append({"stream": stream, **kw})
        if not stream:
            for _ in range(TOKENS):
                time.sleep(TOKEN_S)
                self.generated += 1
            return {"choices": [{"message": {"content": "x" * TOKENS}}]}
        return self._tokens()

    def _tokens(self) -> Iterator[dict[str, Any]]:
        try:
            for _ in range(TOKENS):
                time.sleep(TOKEN_S)
                self.generated += 1
                yield {"choices": [{"delta": {"content": "x"}}]}
        finally:
            self.closed = True


def _model(engine: Any = None, path: str = "/nonexistent/model.gguf", **kw: Any) -> LlamaCppChatModel:
    m = LlamaCppChatModel("planner", ChatModelSettings(base_url=f"llama-cpp://{path}", model="qwen", **kw))
    if engine is not None:
        m.engine_holder._llm = engine  # the loaded engine (what _EngineHolder.get() would return)
    return m


def _stop_after(seconds: float) -> threading.Event:
    stop = threading.Event()
    threading.Timer(seconds, stop.set).start()
    return stop


def test_a_blocking_local_completion_stops_on_hang_up_within_a_token() -> None:
    engine = _SteadyEngine()
    m = _model(engine)
    t0 = time.monotonic()
    with pytest.raises(Cancelled):
        m.complete(MSGS, budget=Budget(stop=_stop_after(0.3)))
    took = time.monotonic() - t0
    assert took < 2.0, f"the completion ran {took:.1f} s after a hang-up at 0.3 s (a full one takes {TOKENS * TOKEN_S:g} s)"
    assert engine.generated < TOKENS / 2 and engine.closed  # llama.cpp's generator was ended, not left running
    assert m.engine_holder.lock.acquire(blocking=False)  # the engine is free for the next turn
    m.engine_holder.lock.release()


def test_a_blocking_local_completion_stops_at_the_turn_deadline() -> None:
    engine = _SteadyEngine()
    m = _model(engine)
    t0 = time.monotonic()
    with pytest.raises(TurnDeadline):
        m.complete(MSGS, budget=Budget(deadline=time.monotonic() + 0.3, turn_timeout_s=0.3))
    assert time.monotonic() - t0 < 2.0 and engine.closed


def test_an_unbudgeted_local_completion_returns_the_whole_text_and_keeps_the_json_format() -> None:
    engine = _SteadyEngine()
    m = _model(engine)
    assert m.complete(MSGS) == "x" * TOKENS
    m.complete(MSGS, json_schema={"type": "object"})
    assert engine.calls[-1]["response_format"] == {"type": "json_object", "schema": {"type": "object"}}


LOCAL_GGUF = os.environ.get("FOOTNOTE_LOCAL_GGUF", str(Path.home() / ".cache/footnote/qwen2.5-coder-1.5b-instruct.gguf"))


def test_the_engine_hook_sees_the_running_calls_budget_only() -> None:
    """llama.cpp's abort hook (asked between graph nodes, so the prompt's evaluation is cut too) reads the
    budget of the call that holds the engine: set while it runs, gone after."""
    m = _model(_SteadyEngine())
    holder = m.engine_holder
    stop = threading.Event()
    assert not holder.aborted()
    with holder.run(Budget(stop=stop)):
        assert not holder.aborted()
        stop.set()
        assert holder.aborted()
    assert not holder.aborted()  # the next call is not stopped by an old turn's hang-up
    with holder.run(Budget(deadline=time.monotonic() - 1)):
        assert holder.aborted()


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed (make llm-local)")
@pytest.mark.skipif(not Path(LOCAL_GGUF).is_file(), reason="local GGUF missing (make llm-local)")
def test_the_real_local_model_stops_a_long_completion_on_hang_up() -> None:
    m = _model(path=LOCAL_GGUF, max_tokens=2048, local_n_ctx=4096)
    m.engine_holder.get()  # load it first: loading is not what is timed
    long_prompt = "Summarise, then count to 2000 in words: " + "The keeper winds the clock every two hours. " * 150
    for prompt in (long_prompt, "Write the numbers from 1 to 2000 in words, one per line."):
        stop = _stop_after(3.0)  # the long prompt is still being evaluated then (no token yet); the short one may generate
        t0 = time.monotonic()
        with pytest.raises(Cancelled):
            m.complete([ChatMessage("user", prompt)], budget=Budget(stop=stop))
        after = time.monotonic() - t0 - 3.0
        assert after < 3.0, f"the local model went on {after:.1f} s after the hang-up"
    assert m.complete([ChatMessage("user", "Say OK.")])  # the engine serves the next call
