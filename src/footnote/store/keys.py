"""Named API keys (``footnote keys``): each grants read, or read and write, on a set of collections.

The store keeps the key's SHA-256, never the key: ``footnote keys create`` prints the key once. A key is
looked up by that hash (the key is 32 random bytes, so a plain hash is enough: nothing to guess from it).
A revoked key is kept, marked, so that it is refused as revoked and a store that ever had keys never falls
open. Every server on one store (PostgreSQL) sees the same keys; a server re-reads them within
``server.keys_refresh_s`` (docs/server.md, "Keys and collections"). Written once for both backends over
their statement runners (``?`` placeholders): ``_select`` and ``_change``.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from footnote.errors import UsageError

#: Every collection (a key or a public setting that names it reads all of them).
ALL_COLLECTIONS = "*"
#: A key's name: what `footnote keys list` shows and `revoke` takes.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: What a revoked key's name gets when its name is used again (the tombstone stays, refused).
REVOKED_MARK = "~revoked-"
#: Keys that `keys create` prints start with this, so that a leaked one is recognisable.
KEY_PREFIX = "fn_"


@dataclass(frozen=True)
class ApiKey:
    """A named key as the store keeps it (without the key itself)."""

    name: str
    key_id: str  # random, made at creation: a re-created key of the same name is another key
    collections: tuple[str, ...]  # ("*",): every collection
    write: bool
    created: float
    revoked: bool = False  # a revoked key is kept, marked: refused by name, and the store never falls open

    @property
    def label(self) -> str:
        """The name it was made with (a revoked key whose name was used again is kept as ``NAME~revoked-ID``)."""
        return self.name.split(REVOKED_MARK, 1)[0]

    @property
    def every_collection(self) -> bool:
        return ALL_COLLECTIONS in self.collections

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "collections": list(self.collections), "write": self.write, "created": self.created}


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def check_key_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise UsageError(f"key name {name!r}: 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', starting "
                         "with a letter or digit")
    return name


def check_collections(names: Sequence[str]) -> tuple[str, ...]:
    """The collections a key grants, checked: at least one; ``*`` alone means all."""
    from footnote.corpus.collections import check_collection

    if not names:
        raise UsageError("a key needs at least one --collection (or --collection '*' for every collection)")
    if ALL_COLLECTIONS in names:
        return (ALL_COLLECTIONS,)
    return tuple(sorted({check_collection(n) for n in names}))


@runtime_checkable
class KeyStore(Protocol):
    """Named API keys, kept hashed beside the corpus (``tests/store/test_scoped.py`` runs them on both backends).
    A revoked key is kept, marked, so that it is refused as revoked and a store that ever had keys stays closed."""

    def put_api_key(self, key: ApiKey, hashed: str) -> None:
        """Store a new key; UsageError when a live key of that name exists (revoke it first)."""
        ...

    def api_keys(self) -> list[ApiKey]:
        """Every live key, by name."""
        ...

    def api_key_by_hash(self, hashed: str) -> ApiKey | None:
        """The key whose SHA-256 is ``hashed`` (revoked ones too: ``ApiKey.revoked``), or None."""
        ...

    def revoke_api_key(self, name: str) -> bool:
        """Revoke the live key ``name``; False when there is none."""
        ...

    def any_api_key(self) -> bool:
        """Whether a named key was ever made here (revoked ones count: a server never falls open)."""
        ...


_COLS = "name, key_id, collections, can_write, created, revoked"


def _row(r: Sequence[Any]) -> ApiKey:
    cols = r[2] if isinstance(r[2], list) else json.loads(r[2])
    return ApiKey(name=str(r[0]), key_id=str(r[1]), collections=tuple(cols), write=bool(r[3]), created=float(r[4]),
                  revoked=bool(r[5]))


class KeyListing:
    """:class:`KeyStore` written once; a backend gives ``_select`` and ``_change`` (``?`` placeholders)."""

    def _select(self, statement: str, args: Sequence[Any]) -> list[Sequence[Any]]:
        raise NotImplementedError

    def _change(self, statement: str, args: Sequence[Any]) -> int:
        """Run one writing statement in its own transaction; the rows it changed."""
        raise NotImplementedError

    def put_api_key(self, key: ApiKey, hashed: str) -> None:
        # a revoked key of this name steps aside (still kept, still refused) so that the name can be used again
        self._change("UPDATE api_keys SET name = name || ? || key_id WHERE name = ? AND revoked = ?",
                     [REVOKED_MARK, key.name, True])
        changed = self._change(
            f"INSERT INTO api_keys ({_COLS}, key_hash) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
            [key.name, key.key_id, json.dumps(list(key.collections), ensure_ascii=False), bool(key.write),
             key.created or time.time(), False, hashed],
        )
        if not changed:
            raise UsageError(f"a key named {key.name!r} exists; revoke it first (footnote keys revoke {key.name})")

    def api_keys(self) -> list[ApiKey]:
        return [_row(r) for r in self._select(f"SELECT {_COLS} FROM api_keys WHERE revoked = ? ORDER BY name", [False])]

    def api_key_by_hash(self, hashed: str) -> ApiKey | None:
        rows = self._select(f"SELECT {_COLS} FROM api_keys WHERE key_hash = ?", [hashed])
        return _row(rows[0]) if rows else None

    def revoke_api_key(self, name: str) -> bool:
        return self._change("UPDATE api_keys SET revoked = ? WHERE name = ? AND revoked = ?", [True, name, False]) > 0

    def any_api_key(self) -> bool:
        return bool(self._select("SELECT 1 FROM api_keys LIMIT 1", []))
