"""What every loader shares: decoding with clear errors, the options fingerprint, source building."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footnote.corpus.lang import detect_lang
from footnote.corpus.records import Source, sha256_bytes
from footnote.errors import InputError
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
    ".srt": "application/x-subrip",
    ".vtt": "text/vtt",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".ndjson": "application/jsonl",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".pdf": "application/pdf",
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

    def source_id(self, path: Path) -> str:
        """Stable id of a file source: its path relative to the ingested root, posix style."""
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        if rel.startswith(".."):
            return path.name
        return Path(rel).as_posix()

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

    def choose_lang(self, declared: str | None, text: str) -> str:
        """Declared in the file, else --lang, else detected from the text."""
        if declared:
            return declared.strip().lower()
        if self.lang:
            return self.lang
        return detect_lang(text[:2_000], self.settings.corpus.default_lang)


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


def decode_text(path: Path, data: bytes) -> str:
    """UTF-8 text (a BOM is dropped) or InputError: empty file, binary data, wrong encoding (with line)."""
    if not data.strip():
        raise InputError(path, "empty file")
    if _looks_binary(data):
        raise InputError(path, "binary data, not a text file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(path, f"not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}); "
                         "convert the file to UTF-8", line=line) from e
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise InputError(path, "empty file")
    return text
