"""PDF, one block per page (pypdfium2): ``page`` is 1-based. When the PDF has an outline (bookmarks),
a page's ``section`` is the title of the last entry that starts before the page and its
``section_marks`` the titles of the entries that start on it: the chunker names each fragment after the
section whose heading it starts with (else the one in force), so a passage's caption is the section
that contains it, not the last one on its page.

The text layer is read with its fonts (``pdf_text``): a heading line (bold or large, short) is set apart
as a paragraph of its own, so no sentence starts with it, and TeX's math-extension glyphs stored under
ASCII codes are read as the symbols they draw (⋃, not "[").

Pages without a text layer are skipped; a PDF with none at all, an encrypted PDF that needs a
password, and a corrupt file are InputErrors.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium

from footnote.corpus.loaders.base import LoadContext, make_source, read_bytes
from footnote.corpus.loaders.pdf_text import PageText, page_text, read_page, unmapped_math_fonts
from footnote.errors import InputError
from footnote.records.fragments import Block, Document

log = logging.getLogger(__name__)

PDF_SUFFIXES = (".pdf",)

_SOFT_HYPHEN = re.compile(r"[\ufffe\u00ad]\n?")
_HYPHEN = re.compile(r"(\w)-\n(?=[a-zäöüßа-яё])")


def _open(path: Path, data: bytes) -> Any:
    if not data:
        raise InputError(path, "empty file")
    if not data.lstrip()[:5] == b"%PDF-":
        raise InputError(path, "not a PDF file (no %PDF- header)")
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        msg = str(e)
        if "password" in msg.lower():
            raise InputError(path, "encrypted PDF: it needs a password; decrypt it first") from e
        raise InputError(path, f"corrupt or unreadable PDF ({msg})") from e


def _outline(pdf: Any) -> tuple[list[int], list[str]]:
    """Start page indexes (sorted) and titles of the outline entries; empty when there is none."""
    entries: list[tuple[int, int, str]] = []
    try:
        for n, bm in enumerate(pdf.get_toc()):
            dest = bm.get_dest()
            idx = dest.get_index() if dest is not None else None
            title = (bm.get_title() or "").strip()
            if idx is not None and title:
                entries.append((idx, n, title))
    except Exception as e:  # a broken outline costs sections, not the document
        log.debug("outline unreadable: %s", e)
        return [], []
    entries.sort()
    return [e[0] for e in entries], [e[2] for e in entries]


def _page_text(raw: str) -> str:
    text = raw.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = _SOFT_HYPHEN.sub("", text)
    text = _HYPHEN.sub(r"\1", text)
    text = "\n".join(line.rstrip() for line in text.split("\n")).strip()
    return re.sub(r"\n{3,}", "\n\n", text)  # headings set apart: one blank line between paragraphs


def load_pdf(path: Path, ctx: LoadContext) -> Iterator[Document]:
    data = read_bytes(path)
    pdf = _open(path, data)
    try:
        kind = ctx.check_kind(ctx.kind or ctx.settings.corpus.default_text_kind, path)
        starts, titles = _outline(pdf)
        c = ctx.settings.corpus
        read: list[PageText] = []
        for i in range(len(pdf)):
            try:
                page = pdf[i]
                textpage = page.get_textpage()
                read.append(read_page(textpage, c.pdf_heading_size_ratio, c.pdf_heading_max_words))
                textpage.close()
                page.close()
            except pdfium.PdfiumError as e:
                raise InputError(path, f"corrupt PDF: page {i + 1} cannot be read ({e})") from e
        math_fonts = unmapped_math_fonts(read)
        pages: list[tuple[int, str, str | None, tuple[str, ...]]] = []
        for i, got in enumerate(read):
            text = _page_text(page_text(got, math_fonts))
            if not text:
                continue
            before = bisect.bisect_left(starts, i) - 1  # the last entry starting before this page
            on_page = tuple(titles[bisect.bisect_left(starts, i) : bisect.bisect_right(starts, i)])
            pages.append((i + 1, text, titles[before] if before >= 0 else None, on_page))
        if not pages:
            raise InputError(path, "PDF has no text layer (scanned images only?)")
        meta_title = ""
        try:
            meta_title = (pdf.get_metadata_dict().get("Title") or "").strip()
        except Exception:
            meta_title = ""
    finally:
        pdf.close()
    lang = ctx.choose_lang(None, "\n".join(t for _, t, _, _ in pages[:20]))
    blocks = tuple(Block(text=t, kind=kind, lang=lang, page=p, section=s, section_marks=m) for p, t, s, m in pages)
    source = make_source(
        id=ctx.source_id(path), kind=kind, title=meta_title or path.stem, lang=lang,
        content_hash=ctx.fingerprint(data), original=data, original_name=path.name,
        media="application/pdf", origin=ctx.origin(path), collection=ctx.collection, meta={"pages": str(len(pages))},
    )
    yield Document(source=source, original=data, blocks=blocks, path=path)
