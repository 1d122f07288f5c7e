"""``ocr``: text recognition of scanned pages and images (Tesseract)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from footnote.settings.base import _Frozen


class OcrSettings(_Frozen):
    """Scanned PDF pages (no text layer) and images (.png .jpg .tif) are read with Tesseract, Debian's
    ``tesseract-ocr`` (``make ocr``; ``make test`` installs it)."""

    enabled: bool = Field(
        True,
        description="Recognise the text of images and of PDF pages that have no text layer. Off (or Tesseract "
        "missing): such a PDF page is skipped, an image or a PDF with no text layer at all fails alone, saying so.",
    )
    command: str = Field("tesseract", description="The Tesseract program (a name on PATH or a path).")
    languages: str = Field(
        "eng+rus",
        description="Tesseract's language models tried on every page, joined with + (installed: eng, rus, deu and "
        "Devanagari for Sanskrit and Hindi by `make ocr`). Each one added costs time on every page; a "
        "collection in German adds deu, one with Devanagari adds Devanagari. `ingest --lang` (ru, en, de, "
        "sa, hi) narrows it to that language's model.",
    )
    dpi: int = Field(
        300, ge=70, le=600,
        description="Resolution a PDF page is rendered at for recognition (and an image without a resolution "
        "of its own is taken to have): 300 is Tesseract's own advice; below 200 small print is lost.",
    )
    page_seg_mode: int = Field(
        3, ge=0, le=13,
        description="Tesseract's page segmentation mode (3: fully automatic layout, columns found; 6: one block).",
    )
    workers: int = Field(
        0, ge=0,
        description="Pages recognised at once, a Tesseract process each (0: one per core this process may use).",
    )
    page_timeout_s: float = Field(
        180.0, gt=0,
        description="Longest a page's recognition may take; a page past it fails its source alone, named.",
    )
    script_retry_below: float = Field(
        70.0, ge=0, le=100,
        description="A page read with a mean word confidence below this is checked for its script (Tesseract's "
        "orientation and script detection); when the script's model is installed but not among ocr.languages "
        "(Devanagari on a page of Sanskrit, say), the page is read again with it and the surer reading kept.",
    )
    deskew_max_degrees: float = Field(
        5.0, ge=0, le=15,
        description="A page scanned askew is straightened before recognition when its lines lean by at least "
        "ocr.deskew_min_degrees and at most this many degrees (found by the projection of its ink; 0: never). "
        "Tesseract's own layout analysis drops whole paragraphs of a page leaning 2° with a little noise.",
    )
    deskew_min_degrees: float = Field(
        0.3, ge=0,
        description="Smallest lean that is straightened (below it rotating costs more sharpness than it gains).",
    )
    max_pages: int = Field(
        2000, ge=1,
        description="A file with more pages (or image frames) to read by OCR than this is refused whole, before any "
        "is read (at ~2 s a page on two cores, 2,000 pages is an hour).",
    )
    max_page_pixels: int = Field(
        120_000_000, ge=1_000_000,
        description="A page image larger than this (pixels; an A3 page at 600 dpi is 70 million) is refused before it "
        "is decoded: a small file can describe an enormous picture (a decompression bomb).",
    )
    blank_ink_share: float = Field(
        0.0005, ge=0, le=1,
        description="A page with less of its area dark than this share is blank: not sent to Tesseract.",
    )
    searchable_every_pages: int = Field(
        25, ge=0,
        description="A new scan being read by OCR is written for search every this many pages, while the rest are "
        "read, and replaced by the whole when it is done (a scan already stored stays as it was until then; a scan "
        "that fails or is interrupted is taken out again). 0: searchable only when whole.",
    )
    cache_dir: str = Field(
        "~/.cache/footnote/ocr",
        description="Where each recognised page is kept by its file's content, page number and these settings: an "
        "ingest stopped half-way through a long scan resumes from its last page, and a citation's page lights its "
        "words without reading the page again. Empty: no cache.",
    )
    min_confidence: float = Field(
        30.0, ge=0, le=100,
        description="Words Tesseract is less sure of than this (0-100) are left out of the text: noise read "
        "from a stain or an image is most of what falls below.",
    )

    @property
    def cache_path(self) -> Path | None:
        """``cache_dir`` with ``~`` expanded; None when empty."""
        return Path(self.cache_dir).expanduser() if self.cache_dir.strip() else None
