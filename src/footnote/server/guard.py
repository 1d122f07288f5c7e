"""Edge guards: the optional API key and the request-size bound.

- The key (``settings.server.api_key``, env ``FOOTNOTE_API_KEY``) is accepted as ``Authorization:
  Bearer KEY``, ``X-API-Key: KEY``, or the HttpOnly cookie that ``POST /api/session`` sets for the web
  chat (an ``<audio>`` or ``<img>`` element cannot send a header). A miss raises ``AuthError``, which
  the one exception handler turns into 401.
- :class:`BodyLimit` is pure ASGI middleware: it wraps ``receive`` so that a body declared or found to
  be larger than ``max_request_bytes`` raises 413 when the endpoint reads it — inside the app, so the
  same handler formats the error. Responses (streams included) pass through untouched.
"""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import Request
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from footnote.errors import AuthError
from footnote.settings import ServerSettings


def presented_key(request: Request, cookie_name: str) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    key = request.headers.get("x-api-key")
    if key:
        return key.strip()
    return request.cookies.get(cookie_name)


def key_matches(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


def make_key_dependency(settings: ServerSettings) -> Any:
    """A FastAPI dependency enforcing the key when one is configured."""

    async def require_key(request: Request) -> None:
        if not settings.api_key:
            return
        if not key_matches(settings.api_key, presented_key(request, settings.cookie_name)):
            raise AuthError("this server needs an API key: send 'Authorization: Bearer KEY' or 'X-API-Key: KEY'")

    return require_key


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413 (see module doc)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = None
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = None
        limit = self.limit
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            if declared is not None and declared > limit:
                raise HTTPException(413, f"request body of {declared} bytes is over the limit of {limit} bytes")
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise HTTPException(413, f"request body is over the limit of {limit} bytes")
            return message

        await self.app(scope, limited, send)
