"""Scanned pages: images (``.png .jpg .jpeg .tif .tiff``, a multi-page TIFF a page per frame) and the PDF
pages that have no text layer, read with Tesseract (:mod:`footnote.corpus.ocr`).

A scan is cited like a PDF: by page; the chip opens the page image with the passage's word boxes lit
(the server reads the page again to find them: ``footnote.server.pages``). Every recognised source
says so in its metadata — ``ocr`` (the engine and languages), ``ocr_pages`` (which pages were read by
OCR) and ``ocr_confidence`` (each such page's mean word confidence, ``"3:91.5,4:88.0"``) — and every
citation of such a page carries ``ocr: true`` with that page's confidence.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from footnote.corpus.loaders.base import LoadContext, make_source, media_type, read_bytes
from footnote.corpus.ocr import Ocr, OcrPage, Rendered, page_bytes
from footnote.errors import InputError, OcrFailed, OcrUnavailable
from footnote.records.fragments import Block, Document, sha256_bytes

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff")
IMAGE_MEDIA = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".tif": "image/tiff",
               ".tiff": "image/tiff"}


def ocr_meta(ocr: Ocr, pages: Mapping[int, OcrPage]) -> dict[str, str]:
    """The metadata that says a source (or some of its pages) was read by OCR; ``ocr_models`` names the pages
    read again in their own script's model (``"1:Devanagari"``)."""
    meta = {
        "ocr": ocr.name,
        "ocr_pages": ",".join(str(n) for n in sorted(pages)),
        "ocr_confidence": ",".join(f"{n}:{pages[n].confidence:.1f}" for n in sorted(pages)),
    }
    other = [f"{n}:{pages[n].languages}" for n in sorted(pages) if pages[n].languages not in ("", ocr.languages)]
    if other:
        meta["ocr_models"] = ",".join(other)
    return meta


def ocr_languages(meta: Mapping[str, str]) -> str:
    """The Tesseract languages a source was read with (from ``meta["ocr"]``, "tesseract eng+rus psm3"), or ""."""
    parts = meta.get("ocr", "").split()
    return parts[1] if len(parts) >= 2 and parts[0] == "tesseract" else ""


def recognise_pages(path: Path, ocr: Ocr, renders: list[tuple[int, Callable[[], Rendered]]],
                    data: bytes, ctx: LoadContext) -> Iterator[tuple[dict[int, OcrPage], bool]]:
    """The pages read so far, every ``ocr.searchable_every_pages`` pages (``False``: not yet whole), then all of
    them (``True``). Each page is kept in ``ocr.cache_dir`` by the file's content as it ends (a stopped ingest
    resumes) and ``ctx.pages_read`` hears of it. InputError names the file and what failed."""
    total = len(renders)
    every = ctx.settings.ocr.searchable_every_pages
    got: dict[int, OcrPage] = {}

    def done(n: int, page: OcrPage) -> None:
        got[n] = page
        if ctx.pages_read is not None:
            ctx.pages_read(path, len(got), total)

    try:
        for _n, _page in ocr.recognise_all(renders, doc_sha=sha256_bytes(data), done=done):
            if every and len(got) % every == 0 and len(got) < total:
                yield dict(got), False
    except OcrUnavailable as e:
        raise InputError(path, f"needs OCR, which is not available: {e}") from e
    except OcrFailed as e:
        raise InputError(path, f"OCR failed: {e}") from e
    yield got, True


def open_frame(data: bytes, index: int, max_pixels: int) -> Any:
    """Frame ``index`` (0-based) of an image file, decoded — after its size is checked against ``max_pixels``
    from its header alone (a small file can describe an enormous picture). Raises ValueError with the reason."""
    from PIL import Image

    img = Image.open(io.BytesIO(data))
    if index:
        img.seek(index)
    if img.width * img.height > max_pixels:
        raise ValueError(f"page {index + 1} is {img.width}×{img.height} pixels, more than ocr.max_page_pixels "
                         f"({max_pixels:,}): refused undecoded")
    img.load()
    return img


def _count_frames(path: Path, data: bytes, ctx: LoadContext) -> int:
    """How many pages the image holds (checked against ``ocr.max_pages``); its first page's size is checked."""
    from PIL import Image, UnidentifiedImageError

    s = ctx.settings.ocr
    try:
        img = Image.open(io.BytesIO(data))
        n = int(getattr(img, "n_frames", 1) or 1)
    except UnidentifiedImageError:
        raise InputError(path, "not a readable image (no image format Pillow knows)") from None
    except Image.DecompressionBombError as e:  # a small file that describes an enormous picture
        raise InputError(path, f"the image is too large to read ({e})") from e
    except (OSError, ValueError, SyntaxError) as e:
        raise InputError(path, f"corrupt or truncated image ({e})") from e
    if n > s.max_pages:
        raise InputError(path, f"{n:,} pages to read by OCR, more than ocr.max_pages ({s.max_pages:,}): refused unread")
    return n


def image_hash(ctx: LoadContext, data: bytes) -> str:
    """The content hash of a scan, known before reading it (an unchanged scan is not read by OCR again)."""
    return ctx.fingerprint(data, Ocr.for_lang(ctx.settings.ocr, ctx.lang).name)


def load_image(path: Path, ctx: LoadContext) -> Iterator[Document]:
    data = read_bytes(path)
    if not data:
        raise InputError(path, "empty file")
    if not ctx.settings.ocr.enabled:
        raise InputError(path, "an image is read by OCR, which is off (ocr.enabled = false)")
    frames = _count_frames(path, data, ctx)
    ocr = Ocr.for_lang(ctx.settings.ocr, ctx.lang)
    limit = ctx.settings.ocr.max_page_pixels

    def render(index: int) -> Callable[[], Rendered]:
        def go() -> Rendered:  # one frame decoded at a time, in the worker that reads it
            try:
                frame = open_frame(data, index, limit)
            except (OSError, ValueError, SyntaxError, EOFError) as e:
                raise InputError(path, f"corrupt, truncated or too large image ({e})") from e
            dpi = frame.info.get("dpi")  # the image's own resolution guides Tesseract's size assumptions
            return page_bytes(frame), frame.width, frame.height, round(float(dpi[0])) if dpi else None
        return go

    kind = ctx.check_kind(ctx.kind or ctx.settings.corpus.default_text_kind, path)
    for pages, whole in recognise_pages(path, ocr, [(n + 1, render(n)) for n in range(frames)], data, ctx):
        read = {n: p for n, p in pages.items() if p.text.strip()}
        if not read:
            if whole:
                raise InputError(path, "no text found in this image (a photograph, or a page too faint to read?)")
            continue
        lang = ctx.choose_lang(None, "\n".join(p.text for p in list(read.values())[:20]))
        blocks = tuple(Block(text=p.text, kind=kind, lang=lang, page=n) for n, p in sorted(read.items()))
        meta = {"pages": str(frames), **ocr_meta(ocr, read)}
        source = make_source(
            id=ctx.source_id(path), kind=kind, title=path.stem, lang=lang, content_hash=image_hash(ctx, data),
            original=data, original_name=path.name, media=media_type(path), origin=ctx.origin(path),
            collection=ctx.collection, meta=meta,
        )
        yield Document(source=source, original=data, blocks=blocks, path=path, partial=not whole)
