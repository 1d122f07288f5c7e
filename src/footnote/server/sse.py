"""Server-Sent Events from a blocking event iterator, run off the event loop.

``engine.ask_stream`` is a plain (blocking) generator. :class:`EventPump` runs it in a worker thread of
a bounded pool and hands each event to the event loop through an asyncio queue. When the client goes
away, the async side stops reading and sets a stop flag. The flag is handed to the turn itself
(``engine.ask_stream(..., stop=flag)``): the model clients check it at every delta and a watchdog shuts a
stalled model connection, so the worker stops within one model read — not only at its next event, or
while waiting for room in the queue — closes the generator and returns its thread to the pool.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from footnote.answer.types import (
    CitationEvent,
    Done,
    Error,
    Event,
    Stage,
    Token,
    Understood,
    VerdictEvent,
    Writing,
    abstention_dict,
)
from footnote.errors import FootnoteError
from footnote.redact import redact

log = logging.getLogger(__name__)


def sse_frame(event: str, data: Any) -> bytes:
    """One SSE frame: ``event: NAME`` and a single-line JSON ``data:`` field."""
    payload = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))
    return f"event: {event}\ndata: {payload}\n\n".encode()


@dataclass(frozen=True)
class _Failure:
    error: BaseException


class _End:
    pass


_END = _End()


class EventPump:
    """Bounded thread pool that drives blocking event iterators for async consumers."""

    def __init__(self, workers: int, queue_events: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="footnote-stream")
        self._queue_events = queue_events
        self._active = 0
        self._lock = threading.Lock()

    @property
    def active(self) -> int:
        """Worker threads currently inside an iterator (tests use it to prove nothing leaks)."""
        with self._lock:
            return self._active

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def events(self, make_iter: Callable[[threading.Event], Iterator[Event]]) -> AsyncGenerator[Event, None]:
        """Yield the iterator's events; raise what it raised. ``make_iter`` gets the stop flag: closing
        this async generator early (client disconnect) sets it, and the turn checks it inside its
        model-stream loop, so the worker stops within one model read, not at its next event."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Event | _Failure | _End] = asyncio.Queue()
        room = threading.Semaphore(self._queue_events)
        stop = threading.Event()

        def put(item: Event | _Failure | _End) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is gone (server shutting down)
                stop.set()

        def work() -> None:
            with self._lock:
                self._active += 1
            it: Iterator[Event] | None = None
            try:
                it = make_iter(stop)
                for ev in it:
                    while not room.acquire(timeout=0.2):
                        if stop.is_set():
                            return
                    if stop.is_set():
                        return
                    put(ev)
            except BaseException as e:
                if not stop.is_set():
                    put(_Failure(e))
            finally:
                close = getattr(it, "close", None)
                if close is not None:
                    try:
                        close()
                    except Exception:  # pragma: no cover - a generator's cleanup failing
                        log.exception("closing an ask stream failed")
                put(_END)
                with self._lock:
                    self._active -= 1

        loop.run_in_executor(self._pool, work)
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _End):
                    return
                if isinstance(item, _Failure):
                    raise item.error
                room.release()
                yield item
        finally:
            stop.set()


def event_frame(ev: Event, secrets: Sequence[str] = ()) -> bytes:
    """The SSE frame of one typed event: the one place the answer stream becomes text."""
    if isinstance(ev, Token):
        return sse_frame("token", {"text": ev.text})
    if isinstance(ev, Understood):
        return sse_frame("understood", {"question": ev.question, "original": ev.original, "how": ev.how})
    if isinstance(ev, Stage):
        return sse_frame("stage", {"name": ev.name, "ms": ev.ms, "counts": dict(ev.counts)})
    if isinstance(ev, Writing):
        return sse_frame("writing", {"model": ev.model})
    if isinstance(ev, CitationEvent):
        return sse_frame("citation", ev.citation.to_dict())
    if isinstance(ev, VerdictEvent):
        return sse_frame("verdict", {
            "verdict": ev.verdict.value, "mode": ev.mode.value, "corpus_insufficient": ev.corpus_insufficient,
            "disclaimer": ev.disclaimer, "abstention": abstention_dict(ev.abstention),
        })
    if isinstance(ev, Done):
        return sse_frame("done", ev.answer.to_dict())
    if isinstance(ev, Error):
        return sse_frame("error", error_payload(ev.exc, secrets))
    raise TypeError(f"not an answer event: {ev!r}")  # pragma: no cover


def error_payload(e: BaseException, secrets: Sequence[str] = ()) -> dict[str, Any]:
    """The ``error`` event's data: the JSON error body (``{"error", "type"}``) and the status the request would have
    had, secrets masked."""
    if isinstance(e, FootnoteError):
        return {"error": redact(e.message, secrets), "type": type(e).__name__, "status": e.http_status}
    return {"error": "internal error", "type": "InternalError", "status": 500}


async def sse_body(
    first: Event | None, rest: AsyncIterator[Event], secrets: Sequence[str] = ()
) -> AsyncIterator[bytes]:
    """Frames for a stream whose first event was already pulled (so early errors get a real status)."""
    try:
        if first is not None:
            yield event_frame(first, secrets)
        async for ev in rest:
            yield event_frame(ev, secrets)
    except Exception as e:  # after the headers went out, an error can only be an event
        if not isinstance(e, FootnoteError):
            log.exception("ask stream failed")
        yield sse_frame("error", error_payload(e, secrets))
    finally:
        aclose = getattr(rest, "aclose", None)
        if aclose is not None:
            await aclose()
