"""``/mcp`` in ``footnote serve``: the MCP server over streamable HTTP, behind the server's keys (a named key's
tools read only its collections).

:func:`mount_mcp` adds one route to the FastAPI app and returns the async context that runs the SDK's
session manager; the app's lifespan enters it. The key is checked before the SDK sees the request
(``Authorization: Bearer KEY`` or ``X-API-Key: KEY``, as on every other route); a miss is a 401 with the
same JSON error body as the rest of the API.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import FastAPI, Request
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from footnote.engine import Engine
from footnote.errors import AuthError
from footnote.server.access import Access, Engines, Keyring
from footnote.server.guard import request_access
from footnote.server.state import JSON, ServerState, error_body

MCP_PATH = "/mcp"


ACCESS = "footnote.access"  # where KeyGuard leaves the request's Access in the ASGI scope


class KeyGuard:
    """ASGI wrapper: a request whose key may not come in gets 401 and never reaches ``app``; one that may has its
    :class:`~footnote.server.access.Access` in ``scope[ACCESS]``, which the tools read (through the SDK's request
    context) to pick the engine of the collections it reads."""

    def __init__(self, app: ASGIApp, keyring: Keyring, cookie_name: str) -> None:
        self.app = app
        self.keyring = keyring
        self.cookie_name = cookie_name

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                scope[ACCESS] = await request_access(self.keyring, Request(scope), self.cookie_name)
            except AuthError as e:
                resp = JSON(error_body(e.message, "AuthError"), status_code=401, headers={"WWW-Authenticate": "Bearer"})
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


def engine_for(engines: Engines) -> Callable[[Any], Engine]:
    """The engine an MCP message's HTTP request reads through (its key's collections)."""

    def pick(request: Any) -> Engine:
        access = getattr(request, "scope", {}).get(ACCESS)
        if not isinstance(access, Access):
            raise AuthError("this MCP message came without the access its key gives")
        return engines.for_access(access)

    return pick


@contextlib.asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield


def mount_mcp(app: FastAPI, state: ServerState) -> Callable[[], AbstractAsyncContextManager[None]]:
    """Add ``/mcp`` to ``app`` (unless ``mcp.enabled`` is off); return what the lifespan must enter."""
    settings = state.settings
    if not settings.mcp.enabled:
        return _nothing
    from footnote.mcp.server import build_server

    server = build_server(state.engine, engine_for(state.engines))
    endpoint = KeyGuard(_not_started, state.keyring, settings.server.cookie_name)
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
