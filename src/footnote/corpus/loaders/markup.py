"""Paragraphs under a heading path, from an HTML tree or a Word document: what the DOCX, EPUB and HTML
loaders share.

A loader reads its format into :class:`Para` items in reading order — a heading (level 1–6) or a
paragraph, a list item, a table row (cells joined by `` | ``), a quotation. :func:`blocks_of` numbers
them from 1 (headings included: "¶ 12" is the twelfth paragraph a reader counts from the top) and
groups the paragraphs under one heading path into a block whose ``section`` is that path
(``"Part I › Letters"``) and whose ``para`` is its first paragraph's number; the chunker gives every
fragment the number of the paragraph it starts in.

:func:`html_paras` walks a parsed HTML tree (lxml): scripts, styles, forms, navigation, headers,
footers and asides are dropped; inline markup is read as its text; a block element's loose text is a
paragraph of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from footnote.records.fragments import Block

#: Elements never read: code, styling, forms and the page's furniture.
SKIP_TAGS = frozenset({
    "script", "style", "noscript", "template", "form", "button", "select", "textarea", "input", "nav",
    "footer", "aside", "svg", "math", "iframe", "object", "embed", "canvas", "video", "audio", "head", "title",
    "meta", "link",
})
HEADINGS = {f"h{i}": i for i in range(1, 7)}
#: Elements whose content is one paragraph (unless they hold block elements themselves).
LEAF_BLOCKS = frozenset({"p", "li", "dt", "dd", "pre", "blockquote", "figcaption", "caption", "address", "td", "th"})
#: Elements that only hold others: their loose text (if any) is a paragraph between their children's.
CONTAINERS = frozenset({
    "html", "body", "div", "section", "article", "main", "ul", "ol", "dl", "table", "thead", "tbody", "tfoot",
    "figure", "details", "summary", "center", "hgroup", "fieldset", "blockquote", "li", "dd", "header",
})
BLOCK_TAGS = LEAF_BLOCKS | CONTAINERS | set(HEADINGS) | {"tr", "hr"}


@dataclass(frozen=True)
class Para:
    """A heading (``level`` 1–6) or a paragraph (``level`` 0) in reading order."""

    text: str
    level: int = 0


def clean(text: str) -> str:
    """Runs of whitespace (no-break spaces included) as one space; soft hyphens and zero-width marks dropped."""
    text = text.replace("\u00ad", "").replace("\u200b", "").replace("\ufeff", "")
    return " ".join(text.split())


def _tag(el: Any) -> str:
    tag = el.tag
    if not isinstance(tag, str):  # a comment or processing instruction
        return ""
    return tag.rsplit("}", 1)[-1].lower()  # XHTML's namespace (EPUB) dropped


def _has_block_child(el: Any) -> bool:
    return any(_tag(c) in BLOCK_TAGS for c in el.iterchildren())


def _inline_text(el: Any) -> str:
    """An element's text with its skipped descendants left out; ``<br>`` as a space."""
    return clean(_raw_text(el))


def _raw_text(el: Any) -> str:
    out: list[str] = []

    def walk(e: Any) -> None:
        tag = _tag(e)
        if tag in SKIP_TAGS:
            if e.tail:
                out.append(e.tail)
            return
        if tag == "br":
            out.append(" ")
        if e.text and tag:
            out.append(e.text)
        for c in e.iterchildren():
            walk(c)
        if e.tail:
            out.append(e.tail)

    if el.text:
        out.append(el.text)
    for c in el.iterchildren():
        walk(c)
    return "".join(out)


def html_paras(root: Any) -> Iterator[Para]:
    """The paragraphs and headings of an lxml HTML (or XHTML) tree in reading order."""

    def walk(el: Any) -> Iterator[Para]:
        tag = _tag(el)
        if not tag or tag in SKIP_TAGS:
            return
        if tag in HEADINGS:
            text = _inline_text(el)
            if text:
                yield Para(text, HEADINGS[tag])
            return
        if tag == "tr":
            cells = [_inline_text(c) for c in el.iterchildren() if _tag(c) in ("td", "th")]
            row = " | ".join(c for c in cells if c)
            if row:
                yield Para(row)
            return
        if tag in LEAF_BLOCKS and not _has_block_child(el):
            text = _inline_text(el)
            if text:
                yield Para(text)
            return
        # a container (or a leaf holding blocks): loose inline runs between the block children are paragraphs
        run: list[str] = [el.text or ""]
        for c in el.iterchildren():
            ctag = _tag(c)
            if ctag in BLOCK_TAGS or ctag in SKIP_TAGS or (ctag and _has_block_child(c)):
                text = clean("".join(run))
                if text:
                    yield Para(text)
                run = []
                yield from walk(c)
            elif ctag == "br":
                run.append(" ")
            elif ctag:
                run.append(_raw_text(c))
            run.append(c.tail or "")
        text = clean("".join(run))
        if text:
            yield Para(text)

    yield from walk(root)


def blocks_of(paras: Iterable[Para], *, kind: str, lang: str, prefix: tuple[str, ...] = (), start: int = 1) -> list[Block]:
    """Blocks of paragraphs under one heading path each (see the module's text). ``prefix`` heads every
    path (an EPUB chapter's title); ``start`` numbers the first paragraph."""
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    buf: list[str] = []
    first = start
    n = start - 1

    def flush() -> None:
        if buf:
            section = " › ".join((*prefix, *(t for _, t in path))) or None
            blocks.append(Block(text="\n\n".join(buf), kind=kind, lang=lang, section=section, para=first))
            buf.clear()

    for p in paras:
        n += 1
        if p.level:
            flush()
            while path and path[-1][0] >= p.level:
                path.pop()
            path.append((p.level, p.text))
            continue
        if not buf:
            first = n
        buf.append(p.text)
    flush()
    return blocks
