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

import re
from collections.abc import Callable, Iterable, Iterator
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


SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
#: A footnote mark (superscript digits) right after a sentence's punctuation: models write citations that way
#: too, and the answer's citation cleaner reads them as ``[n]`` (``answer/citations.py``): a quoted "1888.²"
#: would cite passage 2. The mark goes before the punctuation instead ("1888².").
_MARK_AFTER_STOP = re.compile(r"([.!?;:,])([⁰¹²³⁴⁵⁶⁷⁸⁹]+)")


def clean(text: str) -> str:
    """Runs of whitespace (no-break spaces included) as one space; soft hyphens and zero-width marks dropped;
    a footnote mark after punctuation put before it."""
    text = text.replace("\u00ad", "").replace("\u200b", "").replace("\ufeff", "")
    return _MARK_AFTER_STOP.sub(r"\2\1", " ".join(text.split()))


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


def _epub_type(e: Any) -> str:
    return " ".join(v for k, v in e.attrib.items() if k.endswith("type") and ("epub" in k or "ops" in k)).lower()


def is_backlink(e: Any) -> bool:
    """A footnote's link back to its reference ("↩︎"): not text."""
    return (e.get("role") == "doc-backlink" or "backlink" in _epub_type(e)
            or "footnote-back" in (e.get("class") or "") or (e.text_content() or "").strip() in ("↩", "↩︎"))


def noteref_mark(e: Any) -> str | None:
    """A footnote reference's number as superscript digits (EPUB noteref, doc-noteref, a bare <sup>1</sup>)."""
    tag = _tag(e)
    if tag not in ("a", "sup"):
        return None
    text = (e.text_content() or "").strip().strip("[]()")
    if not text.isdigit() or len(text) > 3:
        return None
    if tag == "sup" or e.get("role") == "doc-noteref" or "noteref" in _epub_type(e) or "footnote-ref" in (e.get("class") or ""):
        return text.translate(SUPERSCRIPT)
    return None


def _own_text(e: Any) -> str:
    """An inline element's own text (not its tail): a footnote mark, nothing for a back link, else its text."""
    if _tag(e) == "a" and is_backlink(e):
        return ""
    mark = noteref_mark(e)
    return mark if mark is not None else _raw_text(e)


def _raw_text(el: Any) -> str:
    out: list[str] = []

    def walk(e: Any) -> None:
        tag = _tag(e)
        if tag in SKIP_TAGS or (tag == "a" and is_backlink(e)):
            if e.tail:
                out.append(e.tail)
            return
        mark = noteref_mark(e)
        if mark is not None:
            out.append(mark)
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


_NOTE_ID = re.compile(r"(\d{1,3})$")


def note_number(li: Any) -> str | None:
    """The number of a footnote's own list item (EPUB ``footnote``/``endnote``, ``doc-endnote``, or an id like
    "fn3", "cite_note-3") as superscript digits, else None."""
    if li is None or _tag(li) != "li":
        return None
    kind = _epub_type(li) + " " + (li.get("role") or "")
    m = _NOTE_ID.search(li.get("id") or "")
    if m and ("note" in kind or re.match(r"^(fn|note|cite_note|endnote|footnote)", li.get("id") or "", re.I)):
        return m.group(1).translate(SUPERSCRIPT)
    return None


def _numbered_note(el: Any, text: str) -> str:
    """A footnote's own text after its number as the reference wrote it (``¹ …``), so the two meet in the text."""
    mark = note_number(el if _tag(el) == "li" else el.getparent())
    return text if mark is None or text.startswith(mark) else f"{mark} {text}"


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
                yield Para(_numbered_note(el, text))
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
                run.append(_own_text(c))
            run.append(c.tail or "")
        text = clean("".join(run))
        if text:
            yield Para(text)

    yield from walk(root)


def blocks_of(paras: Iterable[Para], *, kind: str, lang: str | Callable[[str], str], prefix: tuple[str, ...] = (),
              start: int = 1, title: str = "") -> list[Block]:
    """Blocks of paragraphs under one heading path each (see the module's text). ``prefix`` heads every
    path (an EPUB chapter's title); ``start`` numbers the first paragraph; the first heading, when it only repeats
    ``title`` (the source's, or the chapter's), is counted but is not a level of the path (``Godrevy › The keepers``
    under a page titled "Godrevy" is ``The keepers``). ``lang``: the language, or a function of a block's text
    that gives it (a Russian section of a document whose properties say English)."""
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    buf: list[str] = []
    first = start
    n = start - 1
    headings = 0
    same = clean(title).casefold()

    def flush() -> None:
        if buf:
            section = " › ".join((*prefix, *(t for _, t in path))) or None
            text = "\n\n".join(buf)
            blocks.append(Block(text=text, kind=kind, lang=lang(text) if callable(lang) else lang, section=section,
                                para=first))
            buf.clear()

    for p in paras:
        n += 1
        if p.level:
            flush()
            headings += 1
            if headings == 1 and same and p.text.casefold() == same:
                continue  # the title again: counted, not a level
            while path and path[-1][0] >= p.level:
                path.pop()
            path.append((p.level, p.text))
            continue
        if not buf:
            first = n
        buf.append(p.text)
    flush()
    return blocks
