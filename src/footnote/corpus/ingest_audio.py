"""The speech-recognition part of an ingest run: which recordings are transcribed, progress by audio
seconds, and a corrected transcript taking over its recording's machine-transcribed source.

- With ``--transcribe`` (or ``asr.enabled``) every audio file no transcript took — found in a walked
  folder or named on the command line — is a source of its own (:mod:`footnote.corpus.loaders.audio`);
  they are loaded after the other files, so text is searchable first. Without it they stay *unpaired*
  and the summary says how to transcribe them.
- Progress: each recording's duration is read from its headers before any recognition, so the run
  reports seconds done of seconds in this file and of all the files (:class:`AudioProgress`).
- Takeover: a transcript paired with an audio file whose source in the store is a machine transcript
  (``meta["transcript_by"] == "machine"``) takes that source's id — the curator's correction replaces
  the machine text under the same id (its fragments are rewritten and re-embedded; the old vectors go
  with the old rows).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from footnote.corpus.asr import AudioTranscriber, Transcriber, TranscriptCache
from footnote.corpus.collections import SourceIndex, same_origin
from footnote.corpus.loaders.audio import MACHINE, audio_hash
from footnote.corpus.loaders.base import LoadContext
from footnote.errors import InputError
from footnote.records.fragments import Document, Source
from footnote.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AudioProgress:
    """Seconds of audio recognised: in the current file and over every file this run transcribes."""

    file: str
    file_done_s: float
    file_total_s: float
    done_s: float
    total_s: float


@dataclass(frozen=True)
class Transcribed:
    """A recording this run transcribed (or found transcribed in the cache)."""

    path: str
    source_id: str
    duration_s: float
    language: str
    language_probability: float | None  # None: forced (--lang, asr.language)
    seconds: float  # wall seconds reading it in this run (about 0 when it was in the cache)

    @classmethod
    def of(cls, path: str, doc: Document, seconds: float) -> Transcribed:
        m = doc.source.meta
        prob = m.get("asr_language_probability")
        return cls(path, doc.source.id, float(m.get("asr_duration_s") or 0), doc.source.lang,
                   float(prob) if prob else None, seconds)

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "source_id": self.source_id, "duration_s": round(self.duration_s, 1),
                "language": self.language, "language_probability": self.language_probability,
                "seconds": round(self.seconds, 1)}


def make_transcriber(settings: Settings) -> Transcriber:
    """Whisper from ``models.dir`` (loaded only when a recording is not in the cache)."""
    from footnote.models.whisper import WhisperRecognizer

    asr = settings.asr
    return AudioTranscriber(asr, WhisperRecognizer(asr, settings.models.dir_path), TranscriptCache(asr.cache_path))


def bare_audio(files: Sequence[tuple[Path, Path]], unpaired: Sequence[Path], found: Sequence[tuple[Path, Path]],
               audio_exts: Iterable[str]) -> list[tuple[Path, Path]]:
    """(audio, root) of every recording without a transcript: unpaired ones from walked folders and
    audio files named on the command line that no transcript stood in for."""
    exts = {e.lower() for e in audio_exts}
    lonely = {os.path.realpath(p) for p in unpaired}
    out = [(f, r) for f, r in files if f.suffix.lower() in exts]
    out += [(a, r) for a, r in found if os.path.realpath(a) in lonely]
    return out


class AudioMeter:
    """Turns a transcriber's per-file progress into :class:`AudioProgress` over the whole run."""

    def __init__(self, transcriber: Transcriber, files: Sequence[Path]) -> None:
        self.durations: dict[str, float] = {}
        for f in files:
            try:
                self.durations[str(f)] = transcriber.duration(f)
            except InputError:  # the loader reports it, alone
                self.durations[str(f)] = 0.0
        self.total_s = sum(self.durations.values())
        self.finished_s = 0.0

    def snapshot(self, path: Path, done_s: float, total_s: float) -> AudioProgress:
        return AudioProgress(str(path), done_s, total_s, self.finished_s + done_s, self.total_s)

    def file_done(self, path: Path) -> None:
        self.finished_s += self.durations.get(str(path), 0.0)


def unchanged_recording(file: Path, ctx: LoadContext, stored: Mapping[str, Source],
                        transcriber: Transcriber) -> tuple[str, int] | None:
    """(id, fragments) of the stored machine track of ``file`` when nothing that shapes it changed (the
    audio's bytes, the recogniser and its settings, the forced language): it is not recognised again,
    even when the transcript cache is gone (another machine, a cleaned cache)."""
    sid = ctx.source_id(file)
    src = stored.get(sid)
    if src is None or src.meta.get("transcript_by") != MACHINE or not src.meta.get("asr_key"):
        return None
    if not same_origin(src.origin, ctx.origin(file)):
        return None
    try:
        data = file.read_bytes()
    except OSError:
        return None  # the loader reports it
    if src.meta["asr_key"] != audio_hash(ctx, data, transcriber):
        return None
    n = src.meta.get("fragments", "")
    return sid, int(n) if n.isdigit() else 0


def machine_sources(stored: Iterable[Source]) -> dict[str, str]:
    """origin (the recording's absolute path) → id of each machine-transcribed source in the store."""
    return {s.origin: s.id for s in stored if s.meta.get("transcript_by") == MACHINE and s.origin}


def takeover_id(audio: Path | None, machine: dict[str, str]) -> str | None:
    """The id of the machine-transcribed source of ``audio`` that a transcript paired with it replaces."""
    if audio is None:
        return None
    origin = Path(os.path.abspath(audio)).as_posix()
    found = machine.get(origin)
    if found is None:
        real = os.path.realpath(audio)
        found = next((sid for o, sid in machine.items() if os.path.realpath(o) == real), None)
    return found


def take_over(doc: Document, machine_id: str | None, ids: SourceIndex, stored_hashes: dict[str, str]) -> Document:
    """``doc`` under the id of its recording's machine-transcribed source, when it is a transcript paired
    with that recording and not stored under an id of its own already; else ``doc`` as it is."""
    if machine_id is None or doc.source.meta.get("transcript_by") or doc.source.id == machine_id:
        return doc
    if doc.source.id in stored_hashes:
        return doc
    log.info("%s replaces the machine transcript %s", doc.path, machine_id)
    ids.release(machine_id)  # the recording's file still exists: not a collision, a correction
    return dataclasses.replace(doc, source=dataclasses.replace(doc.source, id=machine_id))
