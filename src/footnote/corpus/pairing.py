"""Which transcript goes with which audio, decided for a whole ingest run before anything is loaded.

A track is one transcript plus (optionally) the audio it transcribes. Rules, in order:

1. **One transcript per track.** Transcripts with the same stem in the same folder (``talk.srt`` and
   ``talk.json``: a subtitle file and the sync map it was made from) describe the same track: the
   first in ``settings.corpus.transcript_preference`` is loaded, the others are reported as
   *superseded* and not loaded (they would make duplicate tracks).
2. **Explicit pairing wins.** ``--audio FILE`` (one transcript only) names the audio; else a sidecar
   ``<stem>.audio`` beside the transcript whose first line names the audio file (relative to the
   sidecar's folder); else a JSON transcript / sync map of the track with a top-level ``"audio"``
   key naming it (same rule).
3. **Same stem** otherwise: ``talk.mp3`` beside ``talk.srt``.

Audio named by a sidecar or a sync map must exist and must lie inside the ingested folder (a
symlink or ``../`` out of it is refused, as for every walked file). Audio found in the folder that
no transcript took is reported as *unpaired*. Every pairing made is reported with how it was made.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from footnote.corpus.loaders import outside_root
from footnote.corpus.loaders.transcripts import TRANSCRIPT_SUFFIXES, find_audio
from footnote.errors import InputError, UsageError
from footnote.settings import Settings

log = logging.getLogger(__name__)

SIDECAR_SUFFIX = ".audio"


@dataclass(frozen=True)
class Pairing:
    """A transcript and the audio it was paired with, and how (``same stem``, ``--audio``,
    ``sidecar talk.audio``, ``named in talk.json``)."""

    transcript: str
    audio: str
    how: str

    def to_dict(self) -> dict[str, str]:
        return {"transcript": self.transcript, "audio": self.audio, "how": self.how}


@dataclass
class TrackPlan:
    files: list[tuple[Path, Path]]
    audio: dict[Path, Path] = field(default_factory=dict)
    pairings: list[Pairing] = field(default_factory=list)
    superseded: list[tuple[Path, Path]] = field(default_factory=list)  # (not loaded, loaded instead)
    unpaired_audio: list[Path] = field(default_factory=list)
    problems: dict[Path, InputError] = field(default_factory=dict)  # transcript → why it cannot load


def _json_audio(path: Path) -> str | None:
    """The ``"audio"`` a JSON transcript names, or None (unreadable JSON is the loader's to report)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    value = data.get("audio") if isinstance(data, dict) else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def _sidecar_audio(sidecar: Path) -> str | None:
    try:
        lines = sidecar.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(sidecar, f"cannot read the audio sidecar: {e}") from e
    name = next((ln.strip() for ln in lines if ln.strip()), "")
    if not name:
        raise InputError(sidecar, "the audio sidecar names no audio file (its first line should)")
    return name


def _named(transcript: Path, named_by: Path, name: str, root: Path, settings: Settings) -> Path:
    audio = named_by.parent / name
    if audio.suffix.lower() not in {e.lower() for e in settings.corpus.audio_extensions}:
        raise InputError(named_by, f"names {name!r} as the audio of {transcript.name}, which is not an audio "
                         f"file ({', '.join(settings.corpus.audio_extensions)})")
    if not audio.is_file():
        raise InputError(named_by, f"names {name!r} as the audio of {transcript.name}; there is no such file")
    if outside_root(audio, root):
        raise InputError(named_by, f"names {name!r} as the audio of {transcript.name}; it lies outside "
                         f"{root} (through a symlink or '..'): not followed")
    return audio


def plan_tracks(
    files: Sequence[tuple[Path, Path]],
    settings: Settings,
    *,
    audio_found: Sequence[tuple[Path, Path]] = (),
    explicit_audio: Path | None = None,
) -> TrackPlan:
    """Decide the tracks of a run (see the module docstring). ``files`` are ``iter_files``' (file,
    root) pairs; ``audio_found`` the audio files met in walked folders."""
    tsuffixes = set(TRANSCRIPT_SUFFIXES)
    pref = [s.lower() for s in settings.corpus.transcript_preference]

    def rank(p: Path) -> tuple[int, str]:
        s = p.suffix.lower()
        return (pref.index(s) if s in pref else len(pref), p.name)

    groups: dict[tuple[Path, str], list[tuple[Path, Path]]] = {}
    for f, root in files:
        if f.suffix.lower() in tsuffixes and f.exists():
            groups.setdefault((f.parent, f.stem), []).append((f, root))
    drop: set[Path] = set()
    plan = TrackPlan(files=[])
    chosen: dict[Path, tuple[Path, list[Path]]] = {}  # kept transcript → (root, the group's files)
    for members in groups.values():
        members.sort(key=lambda m: rank(m[0]))
        keep, root = members[0]
        chosen[keep] = (root, [m[0] for m in members])
        for other, _ in members[1:]:
            drop.add(other)
            plan.superseded.append((other, keep))
    plan.files = [(f, r) for f, r in files if f not in drop]

    if explicit_audio is not None:
        if len(chosen) != 1:
            raise UsageError(f"--audio {explicit_audio} pairs one transcript; this run has {len(chosen)} "
                             "(name a single .srt, .vtt or .json file)")
        if not explicit_audio.is_file():
            raise UsageError(f"--audio {explicit_audio}: no such file")
        if explicit_audio.suffix.lower() not in {e.lower() for e in settings.corpus.audio_extensions}:
            raise UsageError(f"--audio {explicit_audio}: not an audio file "
                             f"({', '.join(settings.corpus.audio_extensions)})")

    exts = settings.corpus.audio_extensions
    for transcript, (root, group) in chosen.items():
        try:
            audio, how = _audio_for(transcript, root, group, settings, explicit_audio, exts)
        except InputError as e:
            plan.problems[transcript] = e
            continue
        if audio is not None:
            plan.audio[transcript] = audio
            plan.pairings.append(Pairing(str(transcript), str(audio), how))
    paired = {a.resolve() for a in plan.audio.values()}
    plan.unpaired_audio = [a for a, _ in audio_found if a.resolve() not in paired]
    for p in plan.pairings:
        log.info("paired %s with %s (%s)", p.transcript, p.audio, p.how)
    return plan


def _audio_for(
    transcript: Path, root: Path, group: list[Path], settings: Settings, explicit: Path | None,
    exts: tuple[str, ...],
) -> tuple[Path | None, str]:
    if explicit is not None:
        return explicit, "--audio"
    sidecar = transcript.with_suffix(SIDECAR_SUFFIX)
    if sidecar.is_file():
        name = _sidecar_audio(sidecar)
        assert name is not None
        return _named(transcript, sidecar, name, root, settings), f"sidecar {sidecar.name}"
    for member in group:
        if member.suffix.lower() == ".json":
            name = _json_audio(member)
            if name is not None:
                return _named(transcript, member, name, root, settings), f"named in {member.name}"
    audio = find_audio(transcript, exts, root)
    return (audio, "same stem") if audio is not None else (None, "")
