"""What an ingest run reports: per-stage progress while it runs, an entry per source, the whole report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from footnote.corpus.embedding import EmbedProgress, EmbedReport
from footnote.corpus.ingest_audio import AudioProgress, Transcribed
from footnote.corpus.inventory import FileNote
from footnote.corpus.pairing import Pairing


@dataclass(frozen=True)
class IngestProgress:
    """A snapshot of a run, per stage: files loaded of the total, fragments chunked, fragments indexed
    (written, searchable lexically), and the embedding backlog once it runs."""

    stage: str  # "load" | "transcribe" | "ocr" | "chunk" | "index" | "embed"
    files_done: int
    files_total: int
    chunked: int
    indexed: int
    label: str = ""
    embed: EmbedProgress | None = None
    audio: AudioProgress | None = None
    ocr: OcrProgress | None = None


@dataclass(frozen=True)
class OcrProgress:
    """A scan being read by OCR: its file and pages read of its pages to read."""

    file: str
    pages_done: int
    pages_total: int


IngestProgressSink = Callable[[IngestProgress], None]



class IngestStatus(StrEnum):
    ADDED = "added"
    UNCHANGED = "unchanged"
    REPLACED = "replaced"
    FAILED = "failed"
    DEFERRED = "deferred"  # a recording or scan left for `footnote worker` (ingest --recognise-later)


@dataclass(frozen=True)
class IngestEntry:
    """What happened to one source (or to one file / JSONL line that failed before it had an id)."""

    path: str
    source_id: str | None
    status: IngestStatus
    fragments: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "source_id": self.source_id, "status": self.status.value,
                "fragments": self.fragments, "error": self.error}


@dataclass(frozen=True)
class IngestReport:
    entries: tuple[IngestEntry, ...]
    seconds: float
    embedder: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    pruned: tuple[str, ...] = ()
    #: (path, why) of files not followed: symlinks resolving outside the ingested folder
    refused: tuple[tuple[str, str], ...] = ()
    #: transcripts paired with audio, and how (footnote.corpus.pairing)
    pairings: tuple[Pairing, ...] = ()
    #: (transcript not loaded, the one loaded for the same track)
    superseded: tuple[tuple[str, str], ...] = ()
    #: audio files in the ingested folders that no transcript took
    unpaired_audio: tuple[str, ...] = ()
    #: collection name per ingested path
    collections: tuple[tuple[str, str], ...] = ()
    notes: tuple[FileNote, ...] = ()  # files skipped (and why), transcripts without audio
    hidden: int = 0
    files_total: int = 0
    files_done: int = 0
    interrupted: bool = False
    embed: EmbedReport | None = None
    lexical_seconds: float = 0.0  # from the start until every fragment was indexed (searchable)
    #: recordings whose speech this run recognised (or found recognised in the cache)
    transcribed: tuple[Transcribed, ...] = ()
    #: sentence vectors made after the embedding, ahead of the first searches (``backlog.warm_sentences_max_fragments``)
    sentences_warmed: int = 0
    sentences_seconds: float = 0.0
    #: why they were not made, when they were not ("", "too many fragments", "interrupted", …)
    sentences_skipped: str = ""

    @property
    def skipped(self) -> tuple[FileNote, ...]:
        return tuple(n for n in self.notes if n.skipped)

    @property
    def nothing_ingestible(self) -> bool:
        """No file under the given paths could be taken (all skipped, or none there)."""
        return self.files_total == 0 and not self.interrupted

    def count(self, status: IngestStatus) -> int:
        return sum(1 for e in self.entries if e.status is status)

    @property
    def fragments(self) -> int:
        """Fragments written in this run (added and replaced sources)."""
        return sum(e.fragments for e in self.entries if e.status in (IngestStatus.ADDED, IngestStatus.REPLACED))

    @property
    def failed(self) -> int:
        return self.count(IngestStatus.FAILED)

    @property
    def ok(self) -> bool:
        return (self.failed == 0 and not self.interrupted and not self.nothing_ingestible
                and (self.embed is None or self.embed.error is None))

    def summary(self) -> dict[str, Any]:
        return {
            "added": self.count(IngestStatus.ADDED),
            "unchanged": self.count(IngestStatus.UNCHANGED),
            "replaced": self.count(IngestStatus.REPLACED),
            "deferred": self.count(IngestStatus.DEFERRED),
            "failed": self.failed,
            "pruned": len(self.pruned),
            "refused": len(self.refused),
            "paired": len(self.pairings),
            "skipped": len(self.skipped),
            "fragments": self.fragments,
            "seconds": round(self.seconds, 3),
            "lexical_seconds": round(self.lexical_seconds, 3),
            "files": self.files_total,
            "files_done": self.files_done,
            "interrupted": self.interrupted,
            "embedding": self.embed.to_dict() if self.embed is not None else None,
            "embedder": self.embedder,
            "transcribed": len(self.transcribed),
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
        }

    def to_dict(self) -> dict[str, Any]:
        return {"sources": [e.to_dict() for e in self.entries], "summary": self.summary(),
                "pruned": list(self.pruned),
                "refused": [{"path": p, "reason": r} for p, r in self.refused],
                "pairings": [p.to_dict() for p in self.pairings],
                "superseded": [{"path": p, "by": b} for p, b in self.superseded],
                "unpaired_audio": list(self.unpaired_audio),
                "collections": [{"path": p, "collection": c} for p, c in self.collections],
                "skipped": [n.to_dict() for n in self.notes if n.skipped],
                "notes": [n.to_dict() for n in self.notes if not n.skipped], "hidden": self.hidden,
                "transcribed": [t.to_dict() for t in self.transcribed],
                "sentence_vectors": {"made": self.sentences_warmed, "seconds": round(self.sentences_seconds, 1),
                                     "skipped": self.sentences_skipped}}
