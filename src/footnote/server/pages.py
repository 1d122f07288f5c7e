"""PDF pages rendered to PNG with the cited passage highlighted (pypdfium2 + Pillow).

The passage is found on the page by words, not by exact string: the page's text (PDFium's text page)
and the passage are split into words, matched with difflib, and every run of at least
``highlight_min_words`` consecutive matching words is highlighted with PDFium's own line rectangles for
that character range — robust to the whitespace and line-break differences between the stored fragment
and the page's text layer. PDFium is not thread-safe, so one lock serialises every call into it.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

from footnote.errors import InputError, NotFound

_WORD = re.compile(r"\w+", re.UNICODE)

HIGHLIGHT_FILL = (255, 214, 0, 96)
HIGHLIGHT_EDGE = (230, 160, 0, 200)


@dataclass(frozen=True)
class RenderedPage:
    png: bytes
    page: int
    pages: int
    highlights: int
    width: int
    height: int


def _words(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0).casefold(), m.start(), m.end()) for m in _WORD.finditer(text)]


def quoted_in(claim: str, passage: str) -> bool:
    """True when the words of ``claim`` appear, in order and contiguously, in ``passage`` (a quoted sentence)."""
    cw = [w for w, _, _ in _words(claim)]
    pw = [w for w, _, _ in _words(passage)]
    if not cw or len(cw) > len(pw):
        return False
    n = len(cw)
    return any(pw[i : i + n] == cw for i in range(len(pw) - n + 1))


def match_spans(page_text: str, passage: str, min_words: int) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of ``page_text`` covered by the passage's word runs."""
    pw = _words(page_text)
    qw = _words(passage)
    if not pw or not qw:
        return []
    need = min(min_words, len(qw))
    sm = difflib.SequenceMatcher(None, [w for w, _, _ in pw], [w for w, _, _ in qw], autojunk=False)
    spans = []
    for block in sm.get_matching_blocks():
        if block.size >= need and block.size > 0:
            first = pw[block.a]
            last = pw[block.a + block.size - 1]
            spans.append((first[1], last[2]))
    return spans


class PageRenderer:
    """Renders pages of stored PDFs; a small LRU keeps recent images."""

    def __init__(self, scale: float, cache_size: int, min_words: int) -> None:
        self.scale = scale
        self.min_words = min_words
        self._cache_size = cache_size
        self._cache: OrderedDict[tuple[str, int, str], RenderedPage] = OrderedDict()
        self._lock = threading.Lock()

    def render(self, data: bytes, name: str, page: int, passage: str | None) -> RenderedPage:
        key = (hashlib.sha256(data).hexdigest(), page, passage or "")
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
            out = self._render_locked(data, name, page, passage)
            self._cache[key] = out
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
            return out

    def _render_locked(self, data: bytes, name: str, page_no: int, passage: str | None) -> RenderedPage:
        import pypdfium2 as pdfium
        from PIL import Image, ImageDraw

        try:
            doc = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as e:
            raise InputError(name, f"cannot open the stored PDF: {e}") from e
        try:
            pages = len(doc)
            if page_no < 1 or page_no > pages:
                raise NotFound(f"{name} has no page {page_no} (it has {pages})")
            page = doc[page_no - 1]
            try:
                image = page.render(scale=self.scale).to_pil().convert("RGBA")
                boxes = self._boxes(page, passage) if passage else []
            finally:
                page.close()
        finally:
            doc.close()
        if boxes:
            overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
            draw = ImageDraw.Draw(overlay)
            for x0, y0, x1, y1 in boxes:
                draw.rectangle((x0 - 2, y0 - 2, x1 + 2, y1 + 2), fill=HIGHLIGHT_FILL, outline=HIGHLIGHT_EDGE, width=2)
            image = Image.alpha_composite(image, overlay)
        buf = io.BytesIO()
        image.convert("RGB").save(buf, format="PNG", optimize=False)
        return RenderedPage(buf.getvalue(), page_no, pages, len(boxes), image.width, image.height)

    def _boxes(self, page: object, passage: str) -> list[tuple[float, float, float, float]]:
        textpage = page.get_textpage()  # type: ignore[attr-defined]
        try:
            n = textpage.count_chars()
            text = textpage.get_text_range(0, n)
            if len(text) != n:  # keep char indices aligned with string positions
                text = "".join(textpage.get_text_range(i, 1) or " " for i in range(n))
            left, _bottom, _right, top = page.get_cropbox()  # type: ignore[attr-defined]
            s = self.scale
            boxes = []
            for start, end in match_spans(text, passage, self.min_words):
                for i in range(textpage.count_rects(start, end - start)):
                    rl, rb, rr, rt = textpage.get_rect(i)
                    boxes.append(((rl - left) * s, (top - rt) * s, (rr - left) * s, (top - rb) * s))
            return boxes
        finally:
            textpage.close()
