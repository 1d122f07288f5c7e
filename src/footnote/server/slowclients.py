"""A header-read timeout for uvicorn's HTTP/1.1 protocol (h11): a client that opens a connection and
sends its request headers slowly (or never finishes them: "slowloris") is disconnected after
``server.header_timeout_s`` seconds, instead of holding a connection open for as long as it likes.

uvicorn arms its keep-alive timer only *after* a response; before the first request's headers are
complete nothing bounds the wait. :func:`protocol_class` returns an ``H11Protocol`` subclass that arms a
timer when the connection is made (and again when a kept-alive connection starts a new request) and
cancels it once the request's headers have been parsed. Pass it as ``uvicorn.Config(http=...)``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)


class HeaderTimeoutH11(H11Protocol):
    """``H11Protocol`` with a header-read timeout (``header_timeout_s``, set by :func:`protocol_class`)."""

    header_timeout_s: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self.conn.their_state is h11.IDLE:
            self._arm()  # a kept-alive connection began a new request: its headers are on the clock too
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._timed_out)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _timed_out(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            log.info("closing a connection whose request headers did not arrive within %.0f s", self.header_timeout_s)
            self.transport.close()


def protocol_class(header_timeout_s: float) -> type[HeaderTimeoutH11]:
    """The protocol class for ``uvicorn.Config(http=...)`` with this header-read timeout."""
    return type("FootnoteH11", (HeaderTimeoutH11,), {"header_timeout_s": float(header_timeout_s)})
