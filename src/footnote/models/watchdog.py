"""The model watchdog: one daemon thread that shuts a model call's socket down as soon as its turn's
budget runs out, so a blocked read or a completion that sends nothing until it is done returns at once."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

import httpx

from footnote.models.protocols import Budget


class Watchdog:
    """One daemon thread that shuts the socket of a model stream down as soon as its turn's budget
    runs out (deadline passed, or the client went away), so a blocked read returns at once instead of
    waiting out the per-read timeout. It runs only while something is watched."""

    def __init__(self, tick_s: float = 0.05) -> None:
        self.tick_s = tick_s
        self._lock = threading.Lock()
        self._watched: dict[int, tuple[Budget, Any]] = {}
        self._next = 0
        self._thread: threading.Thread | None = None

    def watch(self, budget: Budget, sock: Any) -> int:
        with self._lock:
            self._next += 1
            key = self._next
            self._watched[key] = (budget, sock)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="footnote-model-watchdog", daemon=True)
                self._thread.start()
            return key

    def unwatch(self, key: int) -> None:
        with self._lock:
            self._watched.pop(key, None)

    def _run(self) -> None:
        while True:
            time.sleep(self.tick_s)
            with self._lock:
                if not self._watched:
                    self._thread = None
                    return
                due = [(k, sock) for k, (b, sock) in self._watched.items() if b.stopped() or b.expired()]
                for k, _ in due:
                    self._watched.pop(k, None)
            for _, sock in due:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


#: the process's one watchdog (its thread runs only while a call is watched)
WATCHDOG = Watchdog()


def watchable(budget: Budget | None) -> bool:
    return budget is not None and (budget.deadline is not None or budget.stop is not None)


def watch_on_connect(budget: Budget | None, keys: list[int]) -> dict[str, Any] | None:
    """Request extensions that hand the socket of the connection a blocking request opens to the
    watchdog as soon as it is connected, so a stop flag or the deadline shuts it down while the request
    waits for the reply's headers (a completion sends nothing until it is done). The keys to unwatch
    are appended to ``keys``. None without a budget to watch."""
    if budget is None or not watchable(budget):
        return None

    def trace(name: str, info: dict[str, Any]) -> None:
        if name == "connection.connect_tcp.complete" and info.get("return_value") is not None:
            sock = info["return_value"].get_extra_info("socket")
            if sock is not None:
                keys.append(WATCHDOG.watch(budget, sock))

    return {"trace": trace}


def watch_response(resp: httpx.Response, budget: Budget | None) -> int | None:
    """Hand the response's socket to the watchdog (when there is a budget to watch and a socket)."""
    if budget is None or not watchable(budget):
        return None
    stream = resp.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    return WATCHDOG.watch(budget, sock) if sock is not None else None
