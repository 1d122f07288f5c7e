"""SQLite store helpers: numbered migrations, SQL splitting, row ↔ record mapping.

Kept apart from ``sqlite.py`` so the store class stays readable; nothing here holds state.
"""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from pathlib import Path
from typing import Any

from footnote.errors import StoreError
from footnote.records.fragments import (
    AddressLocator,
    FileLocator,
    Fragment,
    Locator,
    Source,
    TranscriptLocator,
)
from footnote.store.text import fold

MIGRATIONS_DIR = Path(__file__).parent / "migrations" / "sqlite"
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
MIN_SQLITE = (3, 34, 0)  # FTS5 trigram tokenizer

FRAGMENT_COLS = (
    "id, source_id, ordinal, kind, lang, text, loc_type, track_id, start_ms, end_ms, "
    "book, loc, addr_label, file, page, section, content_hash, para"
)
IN_CHUNK = 500


def load_migrations(directory: Path | None = None) -> list[tuple[int, str, str]]:
    """(number, file name, sql) of every migration, checked to be numbered 1, 2, 3… without gaps."""
    directory = directory or MIGRATIONS_DIR
    found = []
    for p in sorted(directory.glob("*.sql")):
        m = _MIGRATION_NAME.match(p.name)
        if not m:
            raise StoreError(f"{p}: migration files are named NNNN_description.sql")
        found.append((int(m.group(1)), p.name, p.read_text(encoding="utf-8")))
    for i, (num, name, _) in enumerate(found, start=1):
        if num != i:
            raise StoreError(f"{directory}: migration {name} should be number {i:04d} (numbers run 1, 2, 3… with no gaps)")
    return found


def split_sql(script: str) -> list[str]:
    """Complete SQL statements of ``script`` (so each runs inside our own transaction)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            stmt = buf.strip()
            if stmt and not all(ln.strip().startswith("--") or not ln.strip() for ln in stmt.splitlines()):
                out.append(stmt)
            buf = ""
    if buf.strip() and not all(ln.strip().startswith("--") or not ln.strip() for ln in buf.splitlines()):
        raise StoreError(f"incomplete SQL statement at the end of a migration: {buf.strip()[:80]!r}")
    return out


def locator_row(loc: Locator) -> tuple[Any, ...]:
    """(loc_type, track_id, start_ms, end_ms, book, book_key, loc, addr_label, file, page, section, para)."""
    if isinstance(loc, TranscriptLocator):
        return ("t", loc.track_id, int(loc.start_ms), int(loc.end_ms), None, None, None, None, None, None, None, None)
    if isinstance(loc, AddressLocator):
        return ("a", None, None, None, loc.book, book_key(loc.book), loc.loc, loc.label, None, None, None, None)
    if isinstance(loc, FileLocator):
        return ("f", None, None, None, None, None, None, None, loc.file, loc.page, loc.section, loc.para)
    raise StoreError(f"unknown locator type {type(loc).__name__}")


def book_key(book: str) -> str:
    """How a book name is compared in the exact address lookup: folded (case and diacritics)."""
    return " ".join(fold(book).split())


def fragment_from_row(row: sqlite3.Row | tuple[Any, ...]) -> Fragment:
    (fid, sid, ordinal, kind, lang, text, lt, track, start, end, book, loc, label, file, page, section, ch, para) = row
    locator: Locator
    if lt == "t":
        locator = TranscriptLocator(track, start, end)
    elif lt == "a":
        locator = AddressLocator(book, loc, label)
    else:
        locator = FileLocator(file, page, section, para)
    return Fragment(fid, sid, ordinal, kind, lang, text, locator, ch)


def source_from_row(row: tuple[Any, ...]) -> Source:
    sid, kind, title, lang, ch, blob, name, media, origin, meta, collection = row
    return Source(sid, kind, title, lang, ch, blob, name, media, origin, json.loads(meta), collection)


def legacy_collection(origin: str, source_id: str) -> str:
    """The collection of a source stored before collections existed (the stores' migrations use it):
    the folder its id is relative to when ``origin`` ends in ``/<id>``, else the origin's folder."""
    if not origin:
        return ""
    if origin.endswith("/" + source_id):
        folder = origin[: -len(source_id) - 1]
    else:
        folder = origin.rsplit("/", 1)[0] if "/" in origin else ""
    name = folder.rsplit("/", 1)[-1]
    cleaned = "".join("_" if (c in "\\#" or unicodedata.category(c)[0] == "C") else c for c in name)
    return cleaned.lstrip(".") or "root"
