"""Markdown and plain text, with optional front matter (``kind``, ``title``, ``lang``, ``book``, ``id``).

Markdown sections come from ATX headings (``#`` … ``######``; not inside fenced code): each heading's
text becomes the ``section`` of the block under it. Plain text has no headings: one block.

Verse books: when the front matter names a ``book``, a heading ``<BOOK> <loc>`` (loc = dotted numbers,
e.g. ``## HB 1.1``) starts a verse block addressed ``(book, loc, "HB 1.1")``; a deeper sub-heading
named in ``settings.corpus.commentary_headings`` (``Commentary``, ``Комментарий``…) under it starts a
commentary block with the same address. Any other deeper sub-heading also keeps the address (as
commentary); a heading at the verse's level or above ends it. Unaddressed text in a verse book gets
the commentary kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from footnote.corpus.loaders.base import LoadContext, decode_text, make_source, media_type, read_bytes
from footnote.corpus.loaders.frontmatter import split_front_matter
from footnote.errors import InputError
from footnote.records.fragments import AddressLocator, Block, Document

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
MARKDOWN_SUFFIXES = (".md", ".markdown")

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _sections(body: str, markdown: bool) -> list[tuple[int, str | None, str]]:
    """(heading level, heading text, body text) in order; level 0 / None for text before any heading."""
    if not markdown:
        return [(0, None, body)]
    out: list[tuple[int, str | None, str]] = []
    level: int = 0
    heading: str | None = None
    buf: list[str] = []
    in_fence = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m:
            out.append((level, heading, "\n".join(buf)))
            level, heading, buf = len(m.group(1)), m.group(2).strip(), []
        else:
            buf.append(line)
    out.append((level, heading, "\n".join(buf)))
    return out


def load_text(path: Path, ctx: LoadContext) -> Iterator[Document]:
    data = read_bytes(path)
    text = decode_text(path, data)
    fm = split_front_matter(path, text)
    if not fm.body.strip():
        raise InputError(path, "no text after the front matter" if fm.fields else "empty file")
    corpus = ctx.settings.corpus
    kind = ctx.check_kind(fm.get("kind") or ctx.kind or corpus.default_text_kind, path)
    lang = ctx.choose_lang(fm.get("lang"), fm.body)
    markdown = path.suffix.lower() in MARKDOWN_SUFFIXES
    sections = _sections(fm.body, markdown)

    book_written = fm.get("book")
    verse_re: re.Pattern[str] | None = None
    book = ""
    if book_written:
        book = corpus.book_aliases.get(book_written.lower(), book_written)
        names = "|".join(re.escape(b) for b in {book_written, book})
        verse_re = re.compile(rf"^(?:{names})\s+(\d+(?:\.\d+)*)\.?$", re.IGNORECASE)
        ctx.check_kind(corpus.verse_kind, path)
        ctx.check_kind(corpus.commentary_kind, path)
    plain_kind = corpus.commentary_kind if (verse_re and kind == corpus.verse_kind) else kind

    blocks: list[Block] = []
    current: AddressLocator | None = None
    verse_level = 0
    first_h1: str | None = None
    for level, heading, body in sections:
        if heading is not None and level == 1 and first_h1 is None:
            first_h1 = heading
        block_kind, address, section = plain_kind, None, heading
        m = verse_re.match(heading) if (verse_re and heading) else None
        if m:
            current = AddressLocator(book, m.group(1), f"{book} {m.group(1)}")
            verse_level = level
            block_kind, address, section = corpus.verse_kind, current, current.label
        elif current is not None and heading is not None and level > verse_level:
            block_kind, address, section = corpus.commentary_kind, current, heading
        elif heading is not None:
            current = None
        if body.strip():
            blocks.append(Block(text=body.strip(), kind=block_kind, lang=lang, address=address, section=section))
    if not blocks:
        raise InputError(path, "no text (only headings)")

    title = fm.get("title") or first_h1 or path.stem
    meta = {k: v for k, v in fm.fields.items() if k not in ("kind", "title", "lang", "id")}
    source = make_source(
        id=fm.get("id") or ctx.source_id(path), kind=kind, title=title, lang=lang,
        content_hash=ctx.fingerprint(data), original=data, original_name=path.name,
        media=media_type(path), origin=ctx.origin(path), collection=ctx.collection, meta=meta,
    )
    yield Document(source=source, original=data, blocks=tuple(blocks), path=path)
