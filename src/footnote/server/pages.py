"""PDF pages rendered to PNG with the cited passage highlighted (pypdfium2 + Pillow).

The passage is found on the page by words, not by exact string: the page's text (PDFium's text page)
and the passage are split into words, matched with difflib, and every run of at least
``highlight_min_words`` consecutive matching words is highlighted with PDFium's own line rectangles for
that character range — robust to the whitespace and line-break differences between the stored fragment
and the page's text layer. PDFium is not thread-safe: pages are rendered in a bounded pool of worker
processes (see :class:`PageRenderer`), each under a pixel budget.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import math
import multiprocessing
import os
import re
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from footnote.corpus.loaders.scans import open_frame
from footnote.corpus.ocr import Ocr, fit_scale, page_bytes
from footnote.errors import InputError, NotFound, OcrFailed, OcrUnavailable
from footnote.lifeline import bind_to_parent
from footnote.lru import LruCache
from footnote.settings import OcrSettings

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
    #: the highlighted passage's bounding box in image pixels (left, top, right, bottom); None: nothing lit
    box: tuple[int, int, int, int] | None = None


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
    """Renders pages of stored PDFs; a small LRU keeps recent images.

    Rendering runs in a bounded pool of worker *processes* (``workers``; PDFium is not thread-safe, so a
    process each instead of one global lock that made every page wait behind the slowest), and each
    page is rendered at ``scale`` or less: no image has more than ``max_pixels`` pixels (a 14,400 pt
    square page at 1.5× would be 466 megapixels). More requests than workers wait for a free one."""

    def __init__(self, scale: float, cache_size: int, min_words: int, *, max_pixels: int = 16_000_000,
                 workers: int = 2) -> None:
        self.scale = scale
        self.min_words = min_words
        self.max_pixels = max_pixels
        self.workers = max(1, workers)
        self._cache: LruCache[tuple[str, int, str], RenderedPage] = LruCache(cache_size)
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # spawn, not fork: the server process has threads. Each renderer dies with the server (a
                # watchdog on its pid; no PR_SET_PDEATHSIG: the request thread that starts a renderer ends
                # long before the server does)
                self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=bind_to_parent, initargs=(os.getpid(), False))
            return self._pool

    def close(self) -> None:
        """Stop the renderers now (server shutdown, or a pool whose worker died): a render in flight fails,
        no renderer outlives the pool."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            procs = list(getattr(pool, "_processes", {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in procs:
                proc.terminate()

    def render(self, data: bytes, name: str, page: int, passage: str | None, *, image: bool = False,
               ocr: OcrSettings | None = None, ocr_languages: str = "") -> RenderedPage:
        """Page ``page`` of a stored PDF (or, with ``image``, frame ``page`` of a stored scan) as PNG with
        ``passage`` lit. ``ocr``: how the source was read where a page has no text layer (the page is read
        again to find the passage's word boxes)."""
        key = (hashlib.sha256(data).hexdigest(), page, passage or "")
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        job = _Job(data, name, page, passage, self.scale, self.min_words, self.max_pixels, image, ocr, ocr_languages)
        try:
            out = self._executor().submit(render_page, job).result()
        except BrokenProcessPool:
            self.close()  # a worker died (out of memory?): the next request gets a fresh pool
            raise InputError(name, f"rendering page {page} failed: the renderer process died") from None
        if isinstance(out, _Failure):
            if out.kind == "not_found":
                raise NotFound(out.message)
            raise InputError(name, out.message)
        self._cache.put(key, out)
        return out


@dataclass(frozen=True)
class _Job:
    data: bytes
    name: str
    page: int
    passage: str | None
    scale: float
    min_words: int
    max_pixels: int
    image: bool = False
    ocr: OcrSettings | None = None
    ocr_languages: str = ""


@dataclass(frozen=True)
class _Failure:
    kind: str  # "not_found" | "input"
    message: str


def render_page(job: _Job) -> RenderedPage | _Failure:
    """Render one page (in a worker process): PNG with the passage's word runs highlighted."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    if job.image:
        got = _scan_page(job)
        if isinstance(got, _Failure):
            return got
        image, pages, boxes = got
    else:
        try:
            doc = pdfium.PdfDocument(job.data)
        except pdfium.PdfiumError as e:
            return _Failure("input", f"cannot open the stored PDF: {e}")
        try:
            pages = len(doc)
            if job.page < 1 or job.page > pages:
                return _Failure("not_found", f"{job.name} has no page {job.page} (it has {pages})")
            page = doc[job.page - 1]
            try:
                w, h = page.get_size()
                scale = fit_scale(w, h, job.scale, job.max_pixels)
                image = page.render(scale=scale).to_pil().convert("RGBA")
                boxes = _boxes(page, job.passage, scale, job.min_words) if job.passage else []
                if job.passage and not boxes and job.ocr is not None and _no_text(page):  # a scanned page
                    ocr_scale = fit_scale(w, h, job.ocr.dpi / 72, job.ocr.max_page_pixels)
                    scan = page.render(scale=ocr_scale, grayscale=True).to_pil()
                    k = scale / ocr_scale
                    boxes = [(a * k, b * k, c * k, d * k) for a, b, c, d in _ocr_boxes(scan, job)]
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
    box = None
    if boxes:  # where the reader's eye goes: a phone's viewer scrolls the zoomed page to it
        box = (max(0, int(min(b[0] for b in boxes)) - 2), max(0, int(min(b[1] for b in boxes)) - 2),
               min(image.width, int(max(b[2] for b in boxes)) + 3), min(image.height, int(max(b[3] for b in boxes)) + 3))
    return RenderedPage(buf.getvalue(), job.page, pages, len(boxes), image.width, image.height, box)


def _no_text(page: object) -> bool:
    textpage = page.get_textpage()  # type: ignore[attr-defined]
    try:
        return not textpage.get_text_range().strip()
    finally:
        textpage.close()


def _scan_page(job: _Job) -> tuple[Any, int, list[tuple[float, float, float, float]]] | _Failure:
    """Frame ``job.page`` of a stored image, scaled to the pixel budget, and the passage's OCR word boxes."""
    from PIL import Image, UnidentifiedImageError

    try:
        pages = int(getattr(Image.open(io.BytesIO(job.data)), "n_frames", 1) or 1)
        if job.page < 1 or job.page > pages:
            return _Failure("not_found", f"{job.name} has no page {job.page} (it has {pages})")
        limit = job.ocr.max_page_pixels if job.ocr is not None else OcrSettings().max_page_pixels
        scan = open_frame(job.data, job.page - 1, limit)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as e:
        return _Failure("input", f"cannot open the stored image: {e}")
    boxes = _ocr_boxes(scan, job) if job.passage and job.ocr is not None else []
    k = min(1.0, math.sqrt(job.max_pixels / max(1, scan.width * scan.height)))
    image = scan.convert("RGBA")
    if k < 1.0:
        image = image.resize((max(1, int(scan.width * k)), max(1, int(scan.height * k))))
        boxes = [(a * k, b * k, c * k, d * k) for a, b, c, d in boxes]
    return image, pages, boxes


def _ocr_boxes(scan: Any, job: _Job) -> list[tuple[float, float, float, float]]:
    """The boxes (in ``scan``'s pixels) of the words of ``job.passage`` on the page, read again by OCR."""
    if job.ocr is None or not job.passage:
        return []
    ocr = Ocr(job.ocr, job.ocr_languages or None)
    page = ocr.cached(hashlib.sha256(job.data).hexdigest(), job.page)  # read at ingest: no second reading
    if page is None or (page.width, page.height) != (scan.width, scan.height):
        try:
            dpi = scan.info.get("dpi")
            page = ocr.recognise(page_bytes(scan), int(dpi[0]) if dpi else None)
        except (OcrUnavailable, OcrFailed):
            return []
    text, at = "", []
    for w in page.words:  # the page's words on one line, each word's place in it
        if text:
            text += " "
        at.append((len(text), len(text) + len(w.text), w))
        text += w.text
    spans = match_spans(text, job.passage, job.min_words)
    return [tuple(float(v) for v in w.box) for a, b, w in at  # type: ignore[misc]
            if any(a < e and b > s for s, e in spans)]


def _boxes(page: object, passage: str, scale: float, min_words: int) -> list[tuple[float, float, float, float]]:
    textpage = page.get_textpage()  # type: ignore[attr-defined]
    try:
        n = textpage.count_chars()
        text = textpage.get_text_range(0, n)
        if len(text) != n:  # keep char indices aligned with string positions
            text = "".join(textpage.get_text_range(i, 1) or " " for i in range(n))
        left, _bottom, _right, top = page.get_cropbox()  # type: ignore[attr-defined]
        s = scale
        boxes = []
        for start, end in match_spans(text, passage, min_words):
            for i in range(textpage.count_rects(start, end - start)):
                rl, rb, rr, rt = textpage.get_rect(i)
                boxes.append(((rl - left) * s, (top - rt) * s, (rr - left) * s, (top - rb) * s))
        return boxes
    finally:
        textpage.close()
