"""Edge guards: the optional API key, the Host check, and the request-size bound.

- :class:`HostGuard` (DNS rebinding): with no key (admin or named), a page on another site whose name resolves to
  this machine could otherwise drive the API from the victim's browser. The ``Host`` header must then
  name this server: an IP literal, ``localhost``, the bind address, or one of ``server.allowed_hosts``;
  any other name gets 400. With an API key set the key is the guard and any Host is accepted.

- A key (the admin ``settings.server.api_key``, env ``FOOTNOTE_API_KEY``, or a named one: ``footnote.server.access``)
  is accepted as ``Authorization: Bearer KEY``, ``X-API-Key: KEY``, or the HttpOnly cookie that ``POST /api/session``
  sets for the web chat (an ``<audio>`` or ``<img>`` element cannot send a header). The router's dependency turns it
  into the request's ``Access``; a miss raises ``AuthError``, which the one exception handler turns into 401.
- :class:`CrashGuard` (innermost): an exception no handler took is logged once, with its traceback, and
  answered 500 with the API's JSON error body — and not raised on to the server, which would then close
  the connection under the client (a reset, a ``ReadError``, where a 500 was due).
- :class:`BodyLimit` is pure ASGI middleware: it wraps ``receive`` so that a body declared or found to
  be larger than ``max_request_bytes`` raises 413 when the endpoint reads it — inside the app, so the
  same handler formats the error. Responses (streams included) pass through untouched.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from footnote.errors import AuthError, FootnoteError
from footnote.server.access import Access, Keyring
from footnote.settings import ServerSettings

log = logging.getLogger(__name__)


def header_key(request: Request) -> str | None:
    """The key sent in a header (``Authorization: Bearer KEY`` or ``X-API-Key: KEY``), or None."""
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer " and auth[7:].strip():
        return auth[7:].strip()
    return request.headers.get("x-api-key", "").strip() or None


def presented_key(request: Request, cookie_name: str) -> str | None:
    """The key in a header, else the session cookie ``cookie_name``."""
    return header_key(request) or request.cookies.get(cookie_name)


def key_matches(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


async def request_access(keyring: Keyring, request: Request, cookie_name: str) -> Access:
    """The :class:`~footnote.server.access.Access` of a request (the API routes and ``/mcp`` alike); AuthError when it
    may not come in, or — on a server with keys — sends an ``Authorization`` header that is not ``Bearer KEY``."""
    auth = request.headers.get("authorization")
    # another scheme (a proxy's Basic auth) is not this server's business while it has no key
    if auth is not None and auth[:7].lower() != "bearer " and await run_in_threadpool(keyring.has_keys):
        raise AuthError("the Authorization header must be 'Bearer KEY' (or send 'X-API-Key: KEY')")
    return await run_in_threadpool(keyring.access, presented_key(request, cookie_name))


def make_access_dependency(keyring: Keyring, cookie_name: str) -> Any:
    """A FastAPI dependency: the request's access (``request.state.access``), or 401 when it may not come in."""

    async def require_access(request: Request) -> None:
        request.state.access = await request_access(keyring, request, cookie_name)

    return require_access


class CrashGuard:
    """A 500 with the JSON error body for an exception no handler took, the connection left as it was (see
    module doc). An exception after the response started can only end the connection: it is raised on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:
            if started:
                raise
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            body = json.dumps({"error": "internal error", "type": "InternalError"}).encode()
            await send({"type": "http.response.start", "status": 500,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})


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


def host_allowed(host_header: str, bind_host: str, extra: tuple[str, ...]) -> bool:
    """Whether a ``Host`` header names this server (see :class:`HostGuard`)."""
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:8000
        host = host[1 : host.find("]")] if "]" in host else host
    elif host.count(":") == 1:
        host = host.rsplit(":", 1)[0]
    host = host.rstrip(".")
    if not host:
        return False
    try:
        ipaddress.ip_address(host)
        return True  # an address, not a name: a rebinding attack needs a name it controls
    except ValueError:
        pass
    names = {"localhost", bind_host.strip("[]").lower(), *(h.lower() for h in extra)}
    return host in names or host.endswith(".localhost")


class HostGuard:
    """Refuse a request whose ``Host`` is not this server when no API key is set (DNS rebinding)."""

    def __init__(self, app: ASGIApp, settings: ServerSettings, keyring: Keyring) -> None:
        self.app = app
        self.settings = settings
        self.keyring = keyring

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        closed = self.keyring.known_has_keys() if scope["type"] == "http" else True
        if closed is None:
            try:
                closed = await run_in_threadpool(self.keyring.has_keys)
            except FootnoteError:  # the store is down: check the Host (the stricter way); the route says 503
                closed = False
        if closed:
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"host"), "")
        if host_allowed(host, self.settings.host, self.settings.allowed_hosts):
            await self.app(scope, receive, send)
            return
        body = json.dumps({
            "error": f"Host {host[:100]!r} is not this server's address; with no API key set only the bind address, "
            "localhost, IP addresses and server.allowed_hosts are accepted (DNS-rebinding guard)",
            "type": "BadHost",
        }).encode()
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
