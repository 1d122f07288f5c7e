"""What every loader shares: decoding with clear errors, the options fingerprint, source building."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from footnote.errors import InputError
from footnote.records.fragments import Source, sha256_bytes
from footnote.records.lang import detect_text_lang
from footnote.settings import Settings

# Bumped when a loader or chunker changes the fragments it makes from the same bytes: every stored
# source's content hash changes with it, so the next ingest replaces them.
FORMAT_VERSION = "1"

MEDIA_TYPES: dict[str, str] = {
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".opus": "audio/ogg",
    ".m4a": "audio/mp4",
    ".wav": "audio/wav",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".mkv": "video/x-matroska",
    ".mov": "video/quicktime",
    ".srt": "application/x-subrip",
    ".vtt": "text/vtt",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".ndjson": "application/jsonl",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".epub": "application/epub+zip",
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "text/html",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
}


def media_type(path: Path) -> str:
    return MEDIA_TYPES.get(path.suffix.lower(), "application/octet-stream")


@dataclass(frozen=True)
class LoadContext:
    """Everything a loader needs besides the file: settings, overrides, the ingested root."""

    settings: Settings
    kind: str | None
    lang: str | None
    root: Path
    collection: str = ""
    #: origin (absolute path) → the id a source from that file already has in this collection
    known_ids: Mapping[str, str] = field(default_factory=dict)
    #: the audio a transcript is paired with (decided by footnote.corpus.pairing); None: same stem
    audio: Path | None = None
    #: hears (file, pages read, pages to read) as a scan's pages are read by OCR (the ingest's progress line)
    pages_read: Callable[[Path, int, int], None] | None = None

    def source_id(self, path: Path) -> str:
        """Stable id of a file source: ``"<collection>/<path relative to the ingested root>"``, posix
        style (without a collection: the relative path). A file already stored under this collection
        keeps the id it has (stores from before collections had ids without the prefix)."""
        known = self.known_ids.get(self.origin(path))
        if known is not None:
            return known
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        rel = path.name if rel.startswith("..") else Path(rel).as_posix()
        return f"{self.collection}/{rel}" if self.collection else rel

    def origin(self, path: Path) -> str:
        """Where the source came from: the absolute path of the file (prune matches on it)."""
        return Path(os.path.abspath(path)).as_posix()

    def fingerprint(self, *parts: bytes | str) -> str:
        """Content hash: the given bytes plus every option that changes fragments."""
        h = hashlib.sha256()
        opts: dict[str, Any] = {
            "v": FORMAT_VERSION,
            "kind": self.kind,
            "lang": self.lang,
            "chunk": self.settings.chunk.model_dump(),
            "text_kind": self.settings.corpus.default_text_kind,
            "transcript_kind": self.settings.corpus.transcript_kind,
            "verse_kind": self.settings.corpus.verse_kind,
            "commentary_kind": self.settings.corpus.commentary_kind,
            "commentary_headings": list(self.settings.corpus.commentary_headings),
            "default_lang": self.settings.corpus.default_lang,
            "ms_median": self.settings.corpus.segment_ms_min_median,
            "embedder": self.settings.embedder.name,
        }
        h.update(json.dumps(opts, sort_keys=True).encode())
        for p in parts:
            data = p.encode("utf-8") if isinstance(p, str) else p
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
        return h.hexdigest()

    def check_kind(self, kind: str, path: Path, line: int | None = None) -> str:
        if kind not in self.settings.corpus.kinds:
            known = ", ".join(self.settings.corpus.kinds)
            raise InputError(path, f"unknown kind {kind!r} (known: {known})", line=line)
        return kind

    def choose_lang(self, declared: str | None, text: str, default: str | None = None) -> str:
        """Declared in the file, else --lang, else detected from the text (``default`` — else
        ``corpus.default_lang`` — where the detector is unsure and the script does not say)."""
        if declared:
            return declared.strip().lower()
        if self.lang:
            return self.lang
        c = self.settings.corpus
        return detect_text_lang(text, default or c.default_lang, min_confidence=c.lang_detect_min_confidence,
                                candidates=c.lang_detect_candidates, sample_chars=c.lang_detect_chars)


_LANG_CODE = re.compile(r"^[a-z]{2,3}$")


def declared_lang(value: str | None) -> str | None:
    """A language a file declares (``<html lang>``, ``dc:language``, a Word document's property) as the corpus
    writes it — its primary subtag, lower case ("en-GB" → "en") — or None when it is not a language code (then the
    text's own language is detected)."""
    primary = (value or "").strip().lower().replace("_", "-").split("-")[0]
    return primary if _LANG_CODE.match(primary) else None


def open_zip(path: Path, data: bytes, what: str, limit: int) -> zipfile.ZipFile:
    """A Word document's or an EPUB's zip, refused when not a zip or when its parts would unpack to more than
    ``limit`` bytes (``corpus.max_unpacked_bytes``; each name once: the sizes the zip declares, which reading never
    exceeds)."""
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise InputError(path, f"not a readable zip archive, so not a whole {what} (corrupt or truncated?): {e}") from e
    sizes = {i.filename: i.file_size for i in z.infolist()}
    total = sum(sizes.values())
    if total > limit:
        z.close()
        raise InputError(path, f"its parts unpack to {total:,} bytes, more than corpus.max_unpacked_bytes "
                         f"({limit:,}): refused unread (a zip bomb, or raise the limit)")
    return z


def block_lang_of(ctx: LoadContext, doc_lang: str) -> Callable[[str], str]:
    """The language of one section of a document (``corpus.block_lang_min_chars``): ``--lang`` when given, the
    document's for a short section, else the section's own text's."""
    def lang_of(text: str) -> str:
        if len(text) < ctx.settings.corpus.block_lang_min_chars:
            return ctx.lang or doc_lang
        return ctx.choose_lang(None, text, default=doc_lang)

    return lang_of


def make_source(
    *,
    id: str,
    kind: str,
    title: str,
    lang: str,
    content_hash: str,
    original: bytes,
    original_name: str,
    media: str,
    origin: str,
    meta: dict[str, str] | None = None,
    collection: str = "",
) -> Source:
    return Source(
        id=id,
        kind=kind,
        title=title,
        lang=lang,
        content_hash=content_hash,
        blob_sha256=sha256_bytes(original),
        original_name=original_name,
        media_type=media,
        origin=origin,
        meta=dict(meta or {}),
        collection=collection,
    )


def read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise InputError(path, "no such file") from e
    except IsADirectoryError as e:
        raise InputError(path, "is a directory") from e
    except OSError as e:
        raise InputError(path, f"cannot be read: {e.strerror or e}") from e
    return data


# Bytes that plain text may hold: tab, newlines, form feed, carriage return and everything from space up.
_TEXT_BYTES = bytes([9, 10, 11, 12, 13, *range(32, 256)])


def _looks_binary(data: bytes) -> bool:
    sample = data[:8192]
    if b"\x00" in sample:
        return True
    controls = len(sample.translate(None, _TEXT_BYTES))
    return controls > max(4, len(sample) // 100)


_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)


def _bom(data: bytes) -> tuple[str, int] | None:
    """(codec, BOM length) when ``data`` starts with a Unicode byte-order mark."""
    for mark, codec in _BOMS:
        if data.startswith(mark):
            return codec, len(mark)
    return None


def _utf16_without_bom(data: bytes) -> str | None:
    """'UTF-16LE'/'UTF-16BE' when the bytes look like UTF-16 text without a BOM (every other byte NUL)."""
    sample = data[:4096]
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
        return "UTF-16LE"
    if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "UTF-16BE"
    return None


def decode_text(path: Path, data: bytes) -> str:
    """Text of a file or InputError (empty file, binary data, wrong encoding with its line).

    UTF-8 is the encoding; a byte-order mark names another Unicode one (UTF-16/32, little or big
    endian), which is decoded; UTF-16 without a BOM is named as the problem it is."""
    if not data.strip():
        raise InputError(path, "empty file")
    bom = _bom(data)
    if bom is not None and bom[0] != "utf-8":
        codec, skip = bom
        try:
            text = data[skip:].decode(codec)
        except UnicodeDecodeError as e:
            raise InputError(path, f"starts with a {codec.upper()} byte-order mark but is not valid {codec.upper()} "
                             f"(at byte {e.start + skip}); convert the file to UTF-8") from e
        return _normalise(path, text)
    if _looks_binary(data):
        guess = _utf16_without_bom(data)
        if guess is not None:
            raise InputError(path, f"looks like {guess} text without a byte-order mark; convert the file to UTF-8")
        raise InputError(path, "binary data, not a text file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(path, f"not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}); "
                         "convert the file to UTF-8", line=line) from e
    return _normalise(path, text)


def _normalise(path: Path, text: str) -> str:
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        raise InputError(path, "binary data, not a text file (NUL characters)")
    if not text.strip():
        raise InputError(path, "empty file")
    return text
