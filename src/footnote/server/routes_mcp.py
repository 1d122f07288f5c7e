"""``/mcp`` in ``footnote serve``: the MCP server over streamable HTTP, behind the server's API key.

:func:`mount_mcp` adds one route to the FastAPI app and returns the async context that runs the SDK's
session manager; the app's lifespan enters it. The key is checked before the SDK sees the request
(``Authorization: Bearer KEY`` or ``X-API-Key: KEY``, as on every other route); a miss is a 401 with the
same JSON error body as the rest of the API.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

from fastapi import FastAPI, Request
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from footnote.engine import Engine
from footnote.server.guard import key_matches, presented_key
from footnote.server.state import JSON, error_body
from footnote.settings import ServerSettings, Settings

MCP_PATH = "/mcp"


class KeyGuard:
    """ASGI wrapper: requests without the configured key get 401 and never reach ``app``."""

    def __init__(self, app: ASGIApp, server: ServerSettings) -> None:
        self.app = app
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = self.server.api_key
        if key and scope["type"] == "http":
            given = presented_key(Request(scope), self.server.cookie_name)
            if not key_matches(key, given):
                resp = JSON(error_body("this server needs an API key: send 'Authorization: Bearer KEY' or "
                                       "'X-API-Key: KEY'", "AuthError"),
                            status_code=401, headers={"WWW-Authenticate": "Bearer"})
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


@contextlib.asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield


def mount_mcp(app: FastAPI, engine: Engine, settings: Settings) -> Callable[[], AbstractAsyncContextManager[None]]:
    """Add ``/mcp`` to ``app`` (unless ``mcp.enabled`` is off); return what the lifespan must enter."""
    if not settings.mcp.enabled:
        return _nothing
    from footnote.mcp.server import build_server

    server = build_server(engine)
    endpoint = KeyGuard(_not_started, settings.server)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"]))

    @contextlib.asynccontextmanager
    async def running() -> AsyncIterator[None]:
        # A session manager runs once: each lifespan (a test client may start the app twice) gets its own.
        # DNS-rebinding protection is on when the server is bound to a loopback address.
        server.streamable_http_app(streamable_http_path=MCP_PATH, host=settings.server.host, json_response=True,
                                   max_request_body_size=settings.server.max_request_bytes)
        manager = server.session_manager
        async with manager.run():
            endpoint.app = StreamableHTTPASGIApp(manager)
            try:
                yield
            finally:
                endpoint.app = _not_started

    return running


async def _not_started(scope: Scope, receive: Receive, send: Send) -> None:
    resp = JSON(error_body("the MCP endpoint is not running (the server is starting or stopping)", "Unavailable"),
                status_code=503)
    await resp(scope, receive, send)
