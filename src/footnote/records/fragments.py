"""Records that flow from loaders through chunkers into the store.

A loader reads one file and yields :class:`Document` objects (one per source: a JSONL corpus file
yields many). A chunker turns a document into :class:`Fragment` objects. The store keeps
:class:`Source` rows, fragments, their embeddings and the original bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any


class KindGroup(StrEnum):
    """The three groups the dense lanes and reserves work per. Which kind falls in which group is a setting."""

    LECTURES = "lectures"
    VERSES = "verses"
    LIBRARY = "library"


# The design's default kinds. The set is configurable (``settings.corpus.kinds``); code never
# branches on a literal kind name except through the settings' kind→group map.
DEFAULT_KINDS: tuple[str, ...] = ("track_transcript", "verse", "commentary", "prose_chapter", "letter")


@dataclass(frozen=True)
class TranscriptLocator:
    """Where a transcript citation lands: a track and an exact millisecond span."""

    track_id: str
    start_ms: int
    end_ms: int


@dataclass(frozen=True)
class AddressLocator:
    """A structural address in a book, e.g. ``("BG", "2.13", "BG 2.13")``."""

    book: str
    loc: str
    label: str


@dataclass(frozen=True)
class FileLocator:
    """A place in a file: page (1-based, PDFs and scans), section (heading, or heading path "A › B") and
    paragraph (1-based, counted from the start of the document or EPUB chapter: DOCX, EPUB, HTML) where known."""

    file: str
    page: int | None = None
    section: str | None = None
    para: int | None = None


@dataclass(frozen=True)
class NoteLocator:
    """Where a pinned curated note's citation lands: the note itself (never a stored fragment's
    locator: a pinned note is cited, never searched)."""

    note: str
    title: str
    author: str
    updated: float


Locator = TranscriptLocator | AddressLocator | FileLocator | NoteLocator


def locator_to_dict(loc: Locator) -> dict[str, Any]:
    """The locator as the JSON object the command and HTTP contracts use (no type tag; fields tell)."""
    if isinstance(loc, TranscriptLocator):
        return {"track_id": loc.track_id, "start_ms": loc.start_ms, "end_ms": loc.end_ms}
    if isinstance(loc, AddressLocator):
        return {"book": loc.book, "loc": loc.loc, "label": loc.label}
    if isinstance(loc, NoteLocator):
        return {"note": loc.note, "title": loc.title, "author": loc.author, "updated": loc.updated}
    out: dict[str, Any] = {"file": loc.file, "page": loc.page, "section": loc.section}
    if loc.para is not None:  # only documents without pages have paragraph numbers
        out["para"] = loc.para
    return out


def fragment_dict(f: Fragment) -> dict[str, Any]:
    """A fragment as every surface shows it — a search's notes (CLI and HTTP), a citation, the MCP tools:
    its ids, kind, language, locator and text; each surface adds its own fields (a rank, a score, a title,
    a label)."""
    return {"source_id": f.source_id, "fragment_id": f.id, "kind": f.kind, "lang": f.lang,
            "locator": locator_to_dict(f.locator), "text": f.text}


def locator_from_dict(d: Mapping[str, Any]) -> Locator:
    """Inverse of :func:`locator_to_dict`."""
    if "track_id" in d:
        return TranscriptLocator(str(d["track_id"]), int(d["start_ms"]), int(d["end_ms"]))
    if "book" in d:
        return AddressLocator(str(d["book"]), str(d["loc"]), str(d["label"]))
    if "note" in d:
        return NoteLocator(str(d["note"]), str(d.get("title", "")), str(d.get("author", "")), float(d.get("updated", 0.0)))
    page, para = d.get("page"), d.get("para")
    return FileLocator(str(d["file"]), int(page) if page is not None else None, d.get("section"),
                       int(para) if para is not None else None)


def page_confidence(meta: Mapping[str, str], page: int | None) -> float | None:
    """The mean word confidence of ``page`` when the source's metadata says it was read by OCR (its
    ``ocr_confidence``, ``"3:91.5,4:88.0"``: ``corpus/loaders/scans.py``), else None."""
    if page is None or "ocr_confidence" not in meta:
        return None
    for item in meta["ocr_confidence"].split(","):
        n, _, conf = item.partition(":")
        if n.strip() == str(page):
            try:
                return float(conf)
            except ValueError:
                return None
    return None


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Source:
    """The original thing fragments come from: a track, a book, a letter, a file, a corpus row.

    ``content_hash`` decides idempotency: it covers the source's own bytes *and* every option that
    changes its fragments (kind/lang overrides, chunker settings), so an unchanged hash means
    nothing to write. ``blob_sha256`` names the stored original (content-addressed); ``original_name``
    and ``media_type`` are how it is served back (for a track: the audio file). ``collection``
    groups the sources ingested together; file sources get ids ``"<collection>/<path in folder>"``.
    """

    id: str
    kind: str
    title: str
    lang: str
    content_hash: str
    blob_sha256: str
    original_name: str
    media_type: str
    origin: str = ""
    meta: Mapping[str, str] = field(default_factory=dict)
    collection: str = ""  # the named folder (or --collection NAME) it was ingested under; "" for none


@dataclass(frozen=True)
class Fragment:
    """One searchable unit. ``id`` is ``f"{source_id}#{ordinal}"``."""

    id: str
    source_id: str
    ordinal: int
    kind: str
    lang: str
    text: str
    locator: Locator
    content_hash: str


@dataclass(frozen=True)
class Cue:
    """One timed line of a transcript, in milliseconds."""

    start_ms: int
    end_ms: int
    text: str


@dataclass(frozen=True)
class Block:
    """One structural block of library text before chunking: a verse, a commentary, a paragraph run
    under a heading, or one PDF page. Chunkers never merge blocks across ``page`` or ``address``."""

    text: str
    kind: str
    lang: str
    address: AddressLocator | None = None
    page: int | None = None
    section: str | None = None
    #: Section titles that start inside this block, in order (a PDF page's outline entries): the chunker
    #: names each fragment after the one whose heading it starts with, else the one in force before it
    #: (``section`` at the block's start).
    section_marks: tuple[str, ...] = ()
    #: The number of the block's first paragraph in its document (DOCX, EPUB chapter, HTML; None elsewhere):
    #: the chunker gives each fragment the number of the paragraph it starts in.
    para: int | None = None


@dataclass(frozen=True)
class Document:
    """What a loader yields: a source, its content (cues for a track, blocks otherwise) and the original.

    ``original`` is the bytes stored and served as uploaded (for a track: the audio file when one sits
    next to the transcript, else the transcript itself).
    """

    source: Source
    original: bytes
    cues: tuple[Cue, ...] = ()
    blocks: tuple[Block, ...] = ()
    path: Path | None = None
    #: the pages of a scan read so far (``ocr.searchable_every_pages``): written for search while the rest are
    #: read, then replaced by the whole document the loader yields last
    partial: bool = False
