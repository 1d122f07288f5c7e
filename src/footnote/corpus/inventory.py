"""What a folder walk left out, and why — for ingest's per-file summary.

``iter_files`` (``corpus.loaders``) lists what will be loaded; this names every other regular file under
the given folders with the reason it was not taken (unsupported type, audio without a transcript, a
README-like name), and notes transcripts that are ingested without audio. Hidden files and folders are
counted, not listed.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from footnote.corpus.loaders import supported_suffixes
from footnote.corpus.loaders.transcripts import TRANSCRIPT_SUFFIXES
from footnote.corpus.loaders.video import is_video
from footnote.corpus.notices import SKIP_HINT as NOTICE_HINT
from footnote.corpus.notices import notice_reason
from footnote.settings import Settings


@dataclass(frozen=True)
class FileNote:
    """A file not ingested (``skipped``) or ingested with a caveat (``note``), and why."""

    path: str
    reason: str
    skipped: bool = True

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "reason": self.reason, "skipped": self.skipped}


@dataclass(frozen=True)
class Inventory:
    notes: tuple[FileNote, ...]
    hidden: int  # hidden files (under a dot-folder or dot-named) left out

    @property
    def skipped(self) -> tuple[FileNote, ...]:
        return tuple(n for n in self.notes if n.skipped)


def _key(p: Path) -> str:
    return os.path.realpath(p)


def take_inventory(
    paths: Iterable[str | Path],
    listed: Sequence[Path],
    settings: Settings,
    unpaired_audio: Sequence[Path] = (),
    with_audio: Collection[Path] = (),
    refused: Sequence[Path] = (),
) -> Inventory:
    """Notes on the files under the directories in ``paths`` that ``listed`` (the walk's result) left
    out — ``unpaired_audio`` (audio no transcript took, from the pairing plan) named as such, audio that
    a transcript took not at all — and on listed transcripts with no audio (not in ``with_audio``).
    ``refused`` files (symlinks out of the folder) are reported by the ingest report itself."""
    audio = {e.lower() for e in settings.corpus.audio_extensions}
    skip_stems = {s.lower() for s in settings.corpus.skip_stems}
    known = set(supported_suffixes())
    transcripts = set(TRANSCRIPT_SUFFIXES)
    taken = {_key(p) for p in listed} | {_key(p) for p in refused}
    lonely = {_key(p) for p in unpaired_audio}
    notes: list[FileNote] = []
    hidden = 0
    for root in map(Path, paths):
        if not root.is_dir():
            continue
        for f in sorted(root.rglob("*")):
            if f.is_symlink() or not f.is_file() or _key(f) in taken:
                continue
            rel = f.relative_to(root).parts
            if any(p.startswith(".") for p in rel):
                hidden += 1
                continue
            suffix = f.suffix.lower()
            if suffix in audio:
                if _key(f) in lonely and is_video(f):
                    notes.append(FileNote(str(f), "video without a transcript or a text subtitle track (no transcript "
                                          "names it; pair with --audio or a .audio sidecar, or recognise its speech "
                                          "with --transcribe)"))
                elif _key(f) in lonely:
                    notes.append(FileNote(str(f), "audio without a transcript (no transcript names it; pair with --audio or a .audio sidecar, "
                                          "or recognise its speech with --transcribe)"))
            elif f.name.split(".")[0].lower() in skip_stems:
                notes.append(FileNote(str(f), "skipped by name (settings.corpus.skip_stems; name the file to ingest it)"))
            elif suffix in known and (why := notice_reason(f, settings.corpus)):
                notes.append(FileNote(str(f), f"{why}: not corpus ({NOTICE_HINT})"))
            elif suffix not in known:
                notes.append(FileNote(str(f), f"unsupported file type {suffix or '(no extension)'}"))
    paired = {_key(p) for p in with_audio}
    for f in listed:
        if f.suffix.lower() in transcripts and f.is_file() and _key(f) not in paired:
            notes.append(FileNote(str(f), "transcript without audio (ingested; no playable track)", skipped=False))
    return Inventory(tuple(notes), hidden)
