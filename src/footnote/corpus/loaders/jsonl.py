"""Corpus JSON Lines (``eval/README.md`` format): one source per row.

Row: ``{"id", "kind", "title", "lang", "text", "address": {"book", "loc", "label"}}`` — ``id`` and
``text`` are required; ``kind`` defaults to --kind or the default text kind, ``lang`` to --lang or
detection, ``title`` to the id. A row with an address becomes one block carrying it. The original of a
row is the row's own line (UTF-8 JSON). A bad line is yielded as an :class:`InputError` naming
``file:line`` so the good rows of the file still ingest.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from footnote.corpus.loaders.base import LoadContext, decode_text, make_source, read_bytes
from footnote.errors import InputError
from footnote.records.fragments import AddressLocator, Block, Document

JSONL_SUFFIXES = (".jsonl", ".ndjson")


def _str(row: dict[str, Any], key: str, path: Path, line: int, required: bool = False) -> str | None:
    v = row.get(key)
    if v is None:
        if required:
            raise InputError(path, f"row has no {key!r}", line=line)
        return None
    if not isinstance(v, str | int | float) or isinstance(v, bool):
        raise InputError(path, f"{key!r} must be a string, got {type(v).__name__}", line=line)
    return str(v)


def _address(row: dict[str, Any], path: Path, line: int) -> AddressLocator | None:
    a = row.get("address")
    if a is None:
        return None
    if not isinstance(a, dict) or not a.get("book") or not a.get("loc"):
        raise InputError(path, "'address' must be an object with 'book' and 'loc' (and 'label')", line=line)
    book, loc = str(a["book"]), str(a["loc"])
    return AddressLocator(book, loc, str(a.get("label") or f"{book} {loc}"))


def _row(path: Path, raw: str, line: int, ctx: LoadContext) -> Document:
    try:
        row = json.loads(raw)
    except json.JSONDecodeError as e:
        raise InputError(path, f"not valid JSON: {e.msg} (column {e.colno})", line=line) from e
    if not isinstance(row, dict):
        raise InputError(path, f"expected a JSON object, got {type(row).__name__}", line=line)
    rid = _str(row, "id", path, line, required=True) or ""
    if not rid.strip():
        raise InputError(path, "row has an empty 'id'", line=line)
    text = (_str(row, "text", path, line, required=True) or "").replace("\ufeff", "").strip()
    if not text:
        raise InputError(path, f"row {rid!r} has empty 'text'", line=line)
    kind = ctx.check_kind(_str(row, "kind", path, line) or ctx.kind or ctx.settings.corpus.default_text_kind,
                          path, line)
    lang = ctx.choose_lang(_str(row, "lang", path, line), text)
    title = _str(row, "title", path, line) or rid
    address = _address(row, path, line)
    original = raw.strip().encode("utf-8")
    source = make_source(
        id=rid, kind=kind, title=title, lang=lang, content_hash=ctx.fingerprint(original),
        original=original, original_name=f"{path.stem}-{line}.json", media="application/json",
        origin=ctx.origin(path), collection=ctx.collection, meta={"line": str(line)},
    )
    block = Block(text=text, kind=kind, lang=lang, address=address)
    return Document(source=source, original=original, blocks=(block,), path=path)


def load_jsonl_entries(path: Path, ctx: LoadContext) -> Iterator[Document | InputError]:
    """Each good row as a Document, each bad line as an InputError (the file goes on)."""
    text = decode_text(path, read_bytes(path))
    found = False
    for i, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        found = True
        try:
            yield _row(path, raw, i, ctx)
        except InputError as e:
            yield e
    if not found:
        raise InputError(path, "empty file")
