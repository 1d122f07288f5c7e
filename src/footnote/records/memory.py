"""Curated memory notes, the records: a note's kind, its fields and its content hash (docs/memory.md).
The note-file loader is ``footnote.corpus.memory``."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from footnote.records.fragments import sha256_text

#: A note id: letters, digits, ``-``, ``_`` and ``.``, 1–80 characters, starting with a letter or digit.
NOTE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
#: A note's language: a BCP 47-like tag (``en``, ``ru``, ``pt-BR``, ``sr-Latn``), never a path or markup.
LANG_TAG_PATTERN = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$"
LANG_TAG_RE = re.compile(LANG_TAG_PATTERN)


class NoteKind(StrEnum):
    PINNED = "pinned"  # an editor-blessed, citable answer to a specific question
    BOOST = "boost"  # a topic that nudges the scores of matching fragments
    MEMORY = "memory"  # background that shapes framing, never quoted or cited


@dataclass(frozen=True)
class MemoryNote:
    """One curated note. ``updated`` is when this version was written to the store (Unix seconds)."""

    id: str
    kind: NoteKind
    body: str
    triggers: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    author: str = ""
    title: str = ""
    lang: str = "en"
    updated: float = 0.0
    content_hash: str = ""
    origin: str = ""

    @property
    def label(self) -> str:
        """How the note is named to a reader: its title, else its id."""
        return self.title or self.id

    def summary(self) -> dict[str, Any]:
        """The row of ``footnote memory list --json`` and ``GET /api/memory``."""
        return {"id": self.id, "kind": self.kind.value, "title": self.label, "triggers": list(self.triggers),
                "sources": list(self.sources), "author": self.author, "updated": self.updated, "lang": self.lang}

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary(), "body": self.body, "content_hash": self.content_hash}


def note_hash(kind: NoteKind, body: str, triggers: Sequence[str], sources: Sequence[str], author: str, title: str,
              lang: str) -> str:
    return sha256_text(json.dumps([kind.value, body, list(triggers), list(sources), author, title, lang],
                                  ensure_ascii=False))


