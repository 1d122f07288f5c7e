"""Shared helpers of the corpus tests (imported by name: pytest puts this folder on sys.path)."""

from __future__ import annotations

import io
import json
import random
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pypdf import PdfReader, PdfWriter

from footnote.records.fragments import Cue, Fragment, Source


class CountingStore:
    """Wraps a real store and counts the calls that write."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.writes: list[tuple[str, str]] = []

    def put_source(self, source: Source, fragments: Sequence[Fragment], embeddings: np.ndarray | None,
                   original: bytes, cues: Sequence[Cue] = ()) -> None:
        self.writes.append(("put", source.id))
        self.inner.put_source(source, fragments, embeddings, original, cues=cues)

    def put_sources(self, writes: Sequence[Any]) -> None:
        self.inner.put_sources(writes)
        self.writes += [("put", w.source.id) for w in writes]

    def delete_source(self, source_id: str) -> None:
        self.writes.append(("delete", source_id))
        self.inner.delete_source(source_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def generation(db: Path) -> int:
    """The store's write generation (bumped by every write transaction), read with plain sqlite3."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])


def bad_inputs(d: Path, shared: Path) -> dict[str, tuple[str, int | None]]:
    """Write every kind of bad input; returns file name → (expected words in the error, line)."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "empty.md").write_bytes(b"")
    (d / "garbage.txt").write_bytes(random.Random(7).randbytes(4096))
    (d / "cp1251.md").write_bytes("# Глава\n\nТекст в неверной кодировке.\n".encode("cp1251"))
    (d / "badtime.srt").write_text("1\n00:00:01,000 --> 00:00:02,500\nok\n\n2\n00:00:03,000 --> 00:00:0X,500\nbad\n",
                                   encoding="utf-8")
    (d / "badcue.vtt").write_text("WEBVTT\n\n00:01.000 --> 00:02\nhello\n", encoding="utf-8")
    (d / "reversed.srt").write_text("1\n00:00:05,000 --> 00:00:02,000\nbackwards\n", encoding="utf-8")
    (d / "overlap.vtt").write_text("WEBVTT\n\n00:00.000 --> 00:05.000\na\n\n00:04.000 --> 00:06.000\nb\n",
                                   encoding="utf-8")
    (d / "backwards.json").write_text(json.dumps([{"start": 1.5, "end": 0.5, "text": "x"}]), encoding="utf-8")
    (d / "corrupt.pdf").write_bytes(b"%PDF-1.7\n" + random.Random(3).randbytes(2000))
    reader = PdfReader(shared / "data/pdf/GeoTopo-komprimiert.pdf")
    writer = PdfWriter()
    writer.add_page(reader.pages[9])
    writer.encrypt(user_password="secret", owner_password="owner")
    buf = io.BytesIO()
    writer.write(buf)
    (d / "encrypted.pdf").write_bytes(buf.getvalue())
    (d / "rows.jsonl").write_text('{"id": "row-a", "text": "Alpha row text."}\n{"id": "row-b", "text": "unterminated\n'
                                  '{"id": "row-c", "text": "Gamma row text."}\n', encoding="utf-8")
    return {
        "empty.md": ("empty file", None),
        "garbage.txt": ("binary", None),
        "cp1251.md": ("UTF-8", 1),
        "badtime.srt": ("malformed timestamp", 6),
        "badcue.vtt": ("malformed timestamp", 3),
        "reversed.srt": ("reversed", 2),
        "overlap.vtt": ("overlaps", 6),
        "backwards.json": ("reversed", None),
        "corrupt.pdf": ("corrupt", None),
        "encrypted.pdf": ("encrypted", None),
        "rows.jsonl": ("not valid JSON", 2),
    }
