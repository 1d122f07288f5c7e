"""Who is asking: each reader's conversations are theirs alone.

A reader is known by a random token: the HttpOnly cookie ``server.reader_cookie_name`` that the server
sets on the first page or ask (the web chat), or the ``X-Footnote-Reader`` header (API clients; the
server returns a new reader's token in that header too). The store keeps only the token's SHA-256 as
the conversation's owner; every conversation route asks for the reader's own, so another reader's id
is a 404, exactly like an id that never existed. This is separate from the API key: the key says who
may use the server at all, the reader token whose conversation this is.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from fastapi import Request, Response

from footnote.errors import UsageError
from footnote.settings import ServerSettings
from footnote.store.conversations import owner_of

READER_HEADER = "X-Footnote-Reader"
#: What a reader token looks like (``secrets.token_urlsafe`` makes them): long enough not to be guessed.
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{22,128}$")


@dataclass(frozen=True)
class Reader:
    token: str
    new: bool  # minted for this request: the response hands it to the reader

    @property
    def owner(self) -> str:
        return owner_of(self.token)


def presented_token(request: Request, settings: ServerSettings) -> str | None:
    """The reader token of the request (header first, then cookie), checked; None when it has none."""
    token = request.headers.get(READER_HEADER) or request.cookies.get(settings.reader_cookie_name)
    if not token:
        return None
    if not TOKEN_RE.match(token):
        raise UsageError(f"the reader token ({READER_HEADER} header or {settings.reader_cookie_name} cookie) must be "
                         "22 to 128 characters of A-Z, a-z, 0-9, '-' and '_'")
    return token


def new_reader_token() -> str:
    return secrets.token_urlsafe(24)  # 192 random bits, 32 characters


def reader_of(request: Request, settings: ServerSettings) -> Reader:
    """The request's reader; a new one (fresh token) when it presents none."""
    token = presented_token(request, settings)
    if token is None:
        return Reader(new_reader_token(), new=True)
    return Reader(token, new=False)


def hand_out(response: Response, reader: Reader, request: Request, settings: ServerSettings) -> None:
    """A new reader's token goes back as the cookie (the browser keeps it) and in the header (API clients)."""
    if not reader.new:
        return
    response.headers[READER_HEADER] = reader.token
    # Lax, not Strict: a permalink followed from another site is a top-level navigation, and a Strict
    # cookie would stay behind — the page would mint a new reader and the conversations would be lost.
    # Lax still keeps the cookie off cross-site POSTs (no asking in a reader's name from another page).
    response.set_cookie(
        settings.reader_cookie_name, reader.token, max_age=int(settings.reader_cookie_days * 86400), httponly=True,
        samesite="lax", path="/", secure=request.url.scheme == "https",
    )
