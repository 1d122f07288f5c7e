"""Who may read and write what: the request's :class:`Access`, from the key it presents.

- The admin key (``server.api_key``, env ``FOOTNOTE_API_KEY``) reads and writes every collection, as the
  single key always did.
- A named key (``footnote keys create NAME --collection C…``; the store keeps its SHA-256) reads those
  collections, and with ``--write`` changes their curated notes and removes their sources.
- With no key: a server without any key is open (every collection, no writes over HTTP, as before); a server
  with keys lets a keyless request read ``server.public_collections`` and nothing else (none: 401).

Every route reaches the corpus through :meth:`Engines.for_access`: the server's engine for an access to
every collection, else the engine of a view that reads only the access's collections
(``footnote.scoping``). A conversation's owner is the reader's token joined with the key (its random id), so a
reader's conversations under one key are not reachable with another (``Access.owner``).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from fastapi import Request

from footnote.engine import Engine
from footnote.errors import AuthError, Forbidden
from footnote.scoping import NoteCollections, scoped_engine
from footnote.settings import ServerSettings
from footnote.store.conversations import owner_of
from footnote.store.keys import ALL_COLLECTIONS, ApiKey, key_hash

NO_KEY = "this server needs an API key: send 'Authorization: Bearer KEY' or 'X-API-Key: KEY'"


@dataclass(frozen=True)
class Access:
    """What one request may do: read ``collections`` (None: every one), write or not, under which name."""

    name: str  # "admin", "open" (a server with no key), "public" (no key, public collections), or the key's name
    collections: frozenset[str] | None
    write: bool
    salt: str = ""  # joined with the reader token into a conversation's owner ("": the token alone, as before)

    def owner(self, token: str) -> str:
        return owner_of(token if not self.salt else f"{self.salt}:{token}")

    def reads(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    def to_dict(self) -> dict[str, object]:
        return {"key": self.name, "collections": None if self.collections is None else sorted(self.collections),
                "write": self.write}


ADMIN = Access("admin", None, True)
OPEN = Access("open", None, False)


def _collections(names: tuple[str, ...]) -> frozenset[str] | None:
    return None if ALL_COLLECTIONS in names else frozenset(names)


class Keyring:
    """The named keys, read from the store and trusted for ``server.keys_refresh_s`` (several servers on one
    store see a new or revoked key within that time)."""

    def __init__(self, engine: Engine, settings: ServerSettings) -> None:
        self.engine = engine
        self.settings = settings
        self._lock = threading.Lock()
        self._by_hash: dict[str, tuple[ApiKey | None, float]] = {}
        self._any: tuple[bool, float] | None = None

    def _fresh(self, at: float) -> bool:
        return time.monotonic() - at <= self.settings.keys_refresh_s

    def known_has_keys(self) -> bool | None:
        """:meth:`has_keys` when it needs no read of the store, else None."""
        if self.settings.api_key or self.settings.public_collections:
            return True
        got = self._any
        return got[0] if got is not None and self._fresh(got[1]) else None

    def has_keys(self) -> bool:
        """Whether the server is closed: an admin key or public collections are set, or a named key was ever made
        (a revoked one counts: revoking the last key never opens the store to everyone)."""
        if self.settings.api_key or self.settings.public_collections:
            return True
        got = self._any
        if got is None or not self._fresh(got[1]):
            got = (self.engine.store.any_api_key(), time.monotonic())
            self._any = got
        return got[0]

    def find(self, presented: str) -> ApiKey | None:
        hashed = key_hash(presented)
        with self._lock:
            got = self._by_hash.get(hashed)
        if got is None or not self._fresh(got[1]):
            got = (self.engine.store.api_key_by_hash(hashed), time.monotonic())
            with self._lock:
                if len(self._by_hash) > 4096:  # keys tried and not found are kept too: bounded
                    self._by_hash.clear()
                self._by_hash[hashed] = got
        return got[0]

    def access(self, presented: str | None) -> Access:
        """The access of a request presenting ``presented`` (None: no key); AuthError when it may not come in."""
        from footnote.server.guard import key_matches

        s = self.settings
        if presented:
            if s.api_key and key_matches(s.api_key, presented):
                return ADMIN
            named = self.find(presented)
            if named is not None and named.revoked:
                raise AuthError(f"the key {named.label!r} was revoked")
            if named is not None:
                return Access(named.name, _collections(named.collections), named.write, salt=named.key_id)
            if self.has_keys():
                raise AuthError("this API key is not known to this server (mistyped, or revoked)")
            return OPEN  # a key sent to a server that has none: ignored, as before
        if not self.has_keys():
            return OPEN
        if s.public_collections:
            return Access("public", _collections(s.public_collections), False, salt="public")
        raise AuthError(NO_KEY)


class Engines:
    """The engine each access reads through: the server's own for every collection, else a view's, built once
    per set of collections and kept (``server.scoped_engines`` of them, least recently used dropped)."""

    def __init__(self, engine: Engine, settings: ServerSettings) -> None:
        self.engine = engine
        self.size = settings.scoped_engines
        self.notes = NoteCollections(engine, settings.keys_refresh_s)
        self._lock = threading.Lock()
        self._views: OrderedDict[frozenset[str], Engine] = OrderedDict()

    def for_access(self, access: Access) -> Engine:
        if access.collections is None:
            return self.engine
        with self._lock:
            got = self._views.get(access.collections)
            if got is not None:
                self._views.move_to_end(access.collections)
                return got
            view = scoped_engine(self.engine, access.collections, self.notes)
            self._views[access.collections] = view
            while len(self._views) > self.size:  # not closed: a turn may still be running on it (its threads
                self._views.popitem(last=False)  # end when it is collected)
            return view


def access_of(request: Request) -> Access:
    """The access the router's dependency found for this request (every guarded route has one)."""
    found = getattr(request.state, "access", None)
    if not isinstance(found, Access):
        raise AuthError(NO_KEY)
    return found


def require_writer(access: Access, request: Request, *, needs: str, refused: str, collection: str | None = None) -> None:
    """A destructive request: the access must write (the admin key, or a named key with ``--write`` on
    ``collection`` when one is named), presented in a header — not only the cookie the browser sends on its own."""
    if access.name == "open":
        raise Forbidden(f"this server has no API key (server.api_key / FOOTNOTE_API_KEY), so it {refused}")
    if access.name == "public":
        raise AuthError(f"no key was sent: {needs} needs a key made with --write (or the admin key), in a header: "
                        "'Authorization: Bearer KEY' or 'X-API-Key: KEY'")
    if not access.write:
        raise Forbidden(f"the key {access.name!r} may only read; {needs} needs a key made with --write")
    if collection is not None and not access.reads(collection):
        raise Forbidden(f"the key {access.name!r} may not change the collection {collection!r}")
    from footnote.server.guard import header_key

    if header_key(request) is None:
        raise AuthError(f"{needs} needs the API key in a header: 'Authorization: Bearer KEY' or 'X-API-Key: KEY'")
