"""PDF, one block per page (pypdfium2): ``page`` is 1-based. When the PDF has an outline (bookmarks),
a page's ``section`` is the title of the last entry that starts before the page and its
``section_marks`` the titles of the entries that start on it: the chunker names each fragment after the
section whose heading it starts with (else the one in force), so a passage's caption is the section
that contains it, not the last one on its page.

The text layer is read with its fonts (``pdf_text``): a heading line (bold or large, short) is set apart
as a paragraph of its own, so no sentence starts with it, and TeX's math-extension glyphs stored under
ASCII codes are read as the symbols they draw (⋃, not "[").

Pages without a text layer are read by OCR (Tesseract, :mod:`footnote.corpus.loaders.scans`: only those
pages, rendered at ``ocr.dpi``, in parallel) and say so in the source's metadata; with OCR off or not
installed they are skipped. A PDF with no text at all, an encrypted PDF that needs a password, and a
corrupt file are InputErrors.
"""

from __future__ import annotations

import bisect
import logging
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium

from footnote.corpus.loaders.base import LoadContext, make_source, read_bytes
from footnote.corpus.loaders.pdf_text import PageText, page_text, read_page, unmapped_math_fonts
from footnote.corpus.loaders.scans import ocr_meta, recognise_pages
from footnote.corpus.ocr import Ocr, OcrPage, Rendered, fit_scale, page_bytes
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


def needs_ocr(path: Path, data: bytes) -> bool:
    """Whether a PDF has a page without a text layer (``ingest --recognise-later`` leaves such a PDF to a worker);
    an unreadable PDF is not (it fails where it is loaded, with the reason)."""
    try:
        pdf = _open(path, data)
    except InputError:
        return False
    try:
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            empty = not textpage.get_text_range().strip()
            textpage.close()
            page.close()
            if empty:
                return True
        return False
    except pdfium.PdfiumError:
        return False
    finally:
        pdf.close()


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


def pdf_hash(ctx: LoadContext, data: bytes) -> str:
    """The content hash of a PDF, known before reading it: its bytes, the options, and how its pages without
    text would be read (an unchanged scanned PDF is not read by OCR again)."""
    return ctx.fingerprint(data, Ocr.for_lang(ctx.settings.ocr, ctx.lang).name if _ocr_ready(ctx) else "")


def _ocr_ready(ctx: LoadContext) -> bool:
    return ctx.settings.ocr.enabled and Ocr.for_lang(ctx.settings.ocr, ctx.lang).available()


def _recognise_scanned(path: Path, pdf: Any, data: bytes, indexes: list[int],
                       ctx: LoadContext) -> Iterator[tuple[dict[int, OcrPage], bool]]:
    """The pages (0-based) without a text layer read by OCR so far, then all (``True``: see
    :func:`~footnote.corpus.loaders.scans.recognise_pages`); none when OCR is off or not installed (such pages
    are skipped, as before OCR; a PDF with no text at all then says why)."""
    if not indexes or not _ocr_ready(ctx):
        if indexes:
            log.info("%s: %d page(s) without a text layer skipped (OCR off or not installed)", path, len(indexes))
        yield {}, True
        return
    ocr = Ocr.for_lang(ctx.settings.ocr, ctx.lang)
    if len(indexes) > ctx.settings.ocr.max_pages:
        raise InputError(path, f"{len(indexes):,} pages without a text layer to read by OCR, more than ocr.max_pages "
                         f"({ctx.settings.ocr.max_pages:,}): refused unread")
    lock = threading.Lock()  # PDFium is not thread-safe: pages render one at a time, OCR runs in parallel
    scale = ctx.settings.ocr.dpi / 72

    def render(i: int) -> Callable[[], Rendered]:
        def go() -> Rendered:
            with lock:
                page = pdf[i]
                try:
                    w, h = page.get_size()
                    image = page.render(scale=fit_scale(w, h, scale, ctx.settings.ocr.max_page_pixels), grayscale=True).to_pil()
                finally:
                    page.close()
            return page_bytes(image), image.width, image.height, ctx.settings.ocr.dpi
        return go

    for found, whole in recognise_pages(path, ocr, [(i + 1, render(i)) for i in indexes], data, ctx):
        yield {n - 1: p for n, p in found.items()}, whole


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
        layer = [_page_text(page_text(got, math_fonts)) for got in read]
        meta_title = ""
        try:
            meta_title = (pdf.get_metadata_dict().get("Title") or "").strip()
        except Exception:
            meta_title = ""
        for scanned, whole in _recognise_scanned(path, pdf, data, [i for i, t in enumerate(layer) if not t], ctx):
            texts = [scanned[i].text if i in scanned else t for i, t in enumerate(layer)]
            pages: list[tuple[int, str, str | None, tuple[str, ...]]] = []
            for i, text in enumerate(texts):
                if not text:
                    continue
                before = bisect.bisect_left(starts, i) - 1  # the last entry starting before this page
                on_page = tuple(titles[bisect.bisect_left(starts, i) : bisect.bisect_right(starts, i)])
                pages.append((i + 1, text, titles[before] if before >= 0 else None, on_page))
            if not pages:
                if not whole:
                    continue
                if not any(texts) and not _ocr_ready(ctx):
                    raise InputError(path, "PDF has no text layer (scanned images only?) and OCR is not available: "
                                     "`make ocr` installs Tesseract (or set ocr.enabled = true)")
                raise InputError(path, "PDF has no text: no text layer, and OCR found none on its pages")
            lang = ctx.choose_lang(None, "\n".join(t for _, t, _, _ in pages[:20]))
            blocks = tuple(Block(text=t, kind=kind, lang=lang, page=p, section=s, section_marks=m)
                           for p, t, s, m in pages)
            ocr = ocr_meta(Ocr.for_lang(ctx.settings.ocr, ctx.lang), {i + 1: p for i, p in scanned.items() if p.text})
            source = make_source(
                id=ctx.source_id(path), kind=kind, title=meta_title or path.stem, lang=lang,
                content_hash=pdf_hash(ctx, data), original=data, original_name=path.name,
                media="application/pdf", origin=ctx.origin(path), collection=ctx.collection,
                meta={"pages": str(len(pages)), **(ocr if scanned else {})},
            )
            yield Document(source=source, original=data, blocks=blocks, path=path, partial=not whole)
    finally:
        pdf.close()
