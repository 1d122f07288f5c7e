"""Transcripts: SubRip (.srt), WebVTT (.vtt) and JSON segments (.json) → one track per file.

A transcript with its audio (the same stem beside it, ``settings.corpus.audio_extensions``, or as
paired by :mod:`footnote.corpus.pairing`: ``--audio``, a ``.audio`` sidecar, a sync map's ``"audio"``)
becomes ONE track whose original is the audio; without audio the transcript itself is the original.

JSON shapes accepted:
- a list of segments ``[{"start", "end", "text"}]``, or ``{"segments": [...]}`` (Whisper's output);
- explicit ``start_ms``/``end_ms`` keys (milliseconds, always);
- the sync-map shape ``{"fragments": [{"begin", "end", "lines": [...]}]}`` (seconds, e.g. aeneas).
Unit rule for plain ``start``/``end``: a top-level ``"unit": "ms"|"s"`` wins; else any value with a
fractional part means seconds; else integers whose median segment length is at least
``settings.corpus.segment_ms_min_median`` are milliseconds, smaller ones seconds.

Every cue must have ``0 <= start <= end`` and start no earlier than the previous cue ends
(overlapping or reversed cues are errors naming the line, or the segment's index for JSON).
"""

from __future__ import annotations

import html
import io
import json
import os
import re
import statistics
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from footnote.corpus.loaders.base import LoadContext, decode_text, make_source, media_type, read_bytes
from footnote.errors import InputError
from footnote.records.fragments import Cue, Document

TRANSCRIPT_SUFFIXES = (".srt", ".vtt", ".json")

_SRT_TIME = re.compile(r"^\s*(\d+):([0-5]?\d):([0-5]?\d)[,.](\d{1,3})\s*$")
_VTT_TIME = re.compile(r"^\s*(?:(\d+):)?([0-5]?\d):([0-5]?\d)\.(\d{3})\s*$")
_TAG = re.compile(r"<[^>]*>")


#: An hour field longer than this is refused before it is turned into a number at all.
_MAX_HOUR_DIGITS = 9
#: Cue times beyond this are refused when no settings say otherwise (``settings.corpus.max_cue_ms``).
DEFAULT_MAX_CUE_MS = 3_600_000_000


def _ms(h: str | None, m: str, s: str, frac: str) -> int:
    return ((int(h or 0) * 60 + int(m)) * 60 + int(s)) * 1000 + int(frac.ljust(3, "0"))


def _parse_timing(
    path: Path, line: str, lineno: int, pattern: re.Pattern[str], max_ms: int = DEFAULT_MAX_CUE_MS
) -> tuple[int, int]:
    if "-->" not in line:
        raise InputError(path, f"expected a timing line 'start --> end', got {line.strip()[:60]!r}", line=lineno)
    left, right = line.split("-->", 1)
    right = right.strip().split()[0] if right.strip() else ""  # WebVTT cue settings follow the end time
    out = []
    for part in (left, right):
        m = pattern.match(part)
        if m is None:
            raise InputError(path, f"malformed timestamp {part.strip()[:40]!r}", line=lineno)
        hours = (m.group(1) or "").lstrip("0")
        ms = _ms(m.group(1), m.group(2), m.group(3), m.group(4)) if len(hours) <= _MAX_HOUR_DIGITS else None
        if ms is None or ms > max_ms:
            raise InputError(path, f"timestamp {part.strip()[:40]!r} is out of range (the limit is "
                             f"{max_ms // 3_600_000} hours)", line=lineno)
        out.append(ms)
    return out[0], out[1]


def _clean(text: str) -> str:
    return html.unescape(_TAG.sub("", text)).strip()


class _CueChecker:
    """Collects cues, rejecting reversed and overlapping ones with the place they occur."""

    def __init__(self, path: Path, max_ms: int = DEFAULT_MAX_CUE_MS) -> None:
        self.path = path
        self.max_ms = max_ms
        self.cues: list[Cue] = []
        self._last_end = 0
        self._seen = False

    def add(self, start: int, end: int, text: str, line: int | None, where: str = "cue") -> None:
        if start < 0 or end < 0:
            raise InputError(self.path, f"{where}: negative time", line=line)
        if start > self.max_ms or end > self.max_ms:
            raise InputError(self.path, f"{where}: time out of range (the limit is {self.max_ms // 3_600_000} hours)",
                             line=line)
        if end < start:
            raise InputError(self.path, f"{where}: reversed segment (ends at {end} ms before it starts at {start} ms)",
                             line=line)
        if self._seen and start < self._last_end:
            raise InputError(self.path, f"{where}: overlaps the previous segment (starts at {start} ms, "
                             f"previous ends at {self._last_end} ms)", line=line)
        self._seen = True
        self._last_end = end
        text = " ".join(text.split())
        if text:
            self.cues.append(Cue(start, end, text))


def _blocks(text: str) -> Iterator[tuple[int, list[str]]]:
    """Blank-line separated blocks with the 1-based line number of their first line."""
    lines = text.split("\n")
    start: int | None = None
    for i, line in enumerate([*lines, ""]):
        if line.strip():
            if start is None:
                start = i
        elif start is not None:
            yield start + 1, lines[start:i]
            start = None


def parse_srt(path: Path, text: str, max_ms: int = DEFAULT_MAX_CUE_MS) -> list[Cue]:
    chk = _CueChecker(path, max_ms)
    for lineno, block in _blocks(text):
        i = 0
        if "-->" not in block[0] and len(block) > 1:
            i = 1  # the cue number
        start, end = _parse_timing(path, block[i], lineno + i, _SRT_TIME, max_ms)
        chk.add(start, end, _clean("\n".join(block[i + 1 :])), lineno + i)
    if not chk.cues:
        raise InputError(path, "no cues with text")
    return chk.cues


def parse_vtt(path: Path, text: str, max_ms: int = DEFAULT_MAX_CUE_MS) -> list[Cue]:
    if not text.startswith("WEBVTT"):
        raise InputError(path, "not a WebVTT file (first line must be 'WEBVTT')", line=1)
    chk = _CueChecker(path, max_ms)
    for n, (lineno, block) in enumerate(_blocks(text)):
        if n == 0 or block[0].startswith(("NOTE", "STYLE", "REGION")):
            continue
        i = 0
        if "-->" not in block[0]:
            i = 1  # the cue identifier
            if len(block) < 2:
                raise InputError(path, f"expected a timing line after {block[0][:40]!r}", line=lineno)
        start, end = _parse_timing(path, block[i], lineno + i, _VTT_TIME, max_ms)
        chk.add(start, end, _clean("\n".join(block[i + 1 :])), lineno + i)
    if not chk.cues:
        raise InputError(path, "no cues with text")
    return chk.cues


def _num(path: Path, value: Any, where: str, max_ms: int = DEFAULT_MAX_CUE_MS) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InputError(path, f"{where}: time must be a number, got {value!r}")
    try:
        d = Decimal(str(value).strip())
    except InvalidOperation as e:
        raise InputError(path, f"{where}: malformed time {value!r}") from e
    if not d.is_finite():
        raise InputError(path, f"{where}: malformed time {value!r}")
    if d.copy_abs() > max_ms:  # out of range in seconds and in milliseconds alike; 1e999999999 stops here
        raise InputError(path, f"{where}: time {str(value)[:40]} out of range (the limit is {max_ms // 3_600_000} hours)")
    return d


def _segment_text(seg: dict[str, Any]) -> str:
    if "lines" in seg and isinstance(seg["lines"], list):
        return "\n".join(str(x) for x in seg["lines"])
    return str(seg.get("text", ""))


def parse_json_segments(
    path: Path, text: str, ms_min_median: int, max_ms: int = DEFAULT_MAX_CUE_MS
) -> tuple[list[Cue], str | None]:
    """Cues from JSON segments, and the language the file declares (sync maps carry one)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(path, f"not valid JSON: {e.msg}", line=e.lineno) from e
    unit: str | None = None
    if isinstance(data, dict):
        unit = data.get("unit") if isinstance(data.get("unit"), str) else None
        segs = data.get("fragments", data.get("segments"))
        begin_key, end_key = ("begin", "end") if "fragments" in data else ("start", "end")
        if "fragments" in data:
            unit = unit or "s"
    else:
        segs = data
        begin_key, end_key = "start", "end"
    if not isinstance(segs, list) or not segs:
        raise InputError(path, "JSON transcript must be a non-empty list of segments [{start, end, text}] "
                         "or {\"fragments\": [{begin, end, lines}]}")
    raw: list[tuple[Decimal, Decimal, str, str]] = []
    explicit_ms = False
    langs: set[str] = set()
    for i, seg in enumerate(segs):
        where = f"segment {i + 1}"
        if not isinstance(seg, dict):
            raise InputError(path, f"{where}: expected an object, got {type(seg).__name__}")
        if "start_ms" in seg or "end_ms" in seg:
            explicit_ms = True
            b, en = seg.get("start_ms"), seg.get("end_ms")
        else:
            b, en = seg.get(begin_key), seg.get(end_key)
        if b is None or en is None:
            raise InputError(path, f"{where}: missing {begin_key!r}/{end_key!r} (or start_ms/end_ms)")
        if isinstance(seg.get("language"), str):
            langs.add(seg["language"])
        raw.append((_num(path, b, where, max_ms), _num(path, en, where, max_ms), _segment_text(seg), where))
    if explicit_ms or unit in ("ms", "milliseconds"):
        scale = Decimal(1)
    elif unit in ("s", "seconds") or any(v != v.to_integral_value() for r in raw for v in r[:2]):
        scale = Decimal(1000)
    else:
        median = statistics.median([float(r[1] - r[0]) for r in raw])
        scale = Decimal(1) if median >= ms_min_median else Decimal(1000)
    chk = _CueChecker(path, max_ms)
    for b, en, t, where in raw:
        if b * scale > max_ms or en * scale > max_ms:  # before int(): 1e999999 must not become a number
            raise InputError(path, f"{where}: time out of range (the limit is {max_ms // 3_600_000} hours)")
        chk.add(int((b * scale).to_integral_value()), int((en * scale).to_integral_value()), t, None, where)
    if not chk.cues:
        raise InputError(path, "no segments with text")
    return chk.cues, (langs.pop() if len(langs) == 1 else None)


def find_audio(path: Path, extensions: tuple[str, ...], root: Path | None = None) -> Path | None:
    """The audio of the same stem beside ``path``. InputError when it is a symlink resolving outside
    ``root`` (the ingested folder): such a link is never followed."""
    for ext in extensions:
        for cand in (path.with_suffix(ext), path.with_suffix(ext.upper())):
            if cand.is_file():
                if root is not None and cand.is_symlink() and _outside(cand, root):
                    raise InputError(path, f"its audio {cand.name} is a symlink to {os.path.realpath(cand)}, "
                                     f"outside {root}: not followed")
                return cand
    return None


def _outside(path: Path, root: Path) -> bool:
    try:
        return not path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return True


def audio_title(data: bytes) -> str | None:
    """The title tag of an audio file (ID3, Vorbis comment, MP4 …), or None when it has none or cannot
    be read — a missing tag never fails a source."""
    try:
        import mutagen

        tagged = mutagen.File(io.BytesIO(data), easy=True)
    except Exception:  # mutagen raises many kinds on odd files; the title is optional
        return None
    tags = getattr(tagged, "tags", None) if tagged is not None else None
    if not tags:
        return None
    values = tags.get("title") or []
    title = str(values[0]).strip() if values else ""
    return title or None


def load_transcript(path: Path, ctx: LoadContext) -> Iterator[Document]:
    data = read_bytes(path)
    text = decode_text(path, data)
    suffix = path.suffix.lower()
    declared_lang: str | None = None
    max_ms = ctx.settings.corpus.max_cue_ms
    if suffix == ".srt":
        cues = parse_srt(path, text, max_ms)
    elif suffix == ".vtt":
        cues = parse_vtt(path, text, max_ms)
    else:
        cues, declared_lang = parse_json_segments(path, text, ctx.settings.corpus.segment_ms_min_median, max_ms)
    kind = ctx.check_kind(ctx.kind or ctx.settings.corpus.transcript_kind, path)
    all_text = " ".join(c.text for c in cues)
    lang = ctx.choose_lang(declared_lang, all_text)
    audio = ctx.audio if ctx.audio is not None else find_audio(path, ctx.settings.corpus.audio_extensions, ctx.root)
    # the cues themselves travel in Document.cues into the store's cues table (Store.get_cues), so a
    # citation of a ~45 s window can be narrowed to the sentence it quotes
    meta = {"transcript": path.name}
    title = path.stem
    if audio is not None:
        original = read_bytes(audio)
        if not original:
            raise InputError(audio, "empty audio file")
        name, media = audio.name, media_type(audio)
        meta["audio"] = audio.name
        title = audio_title(original) or title
        content_hash = ctx.fingerprint(data, original)
    else:
        original, name, media = data, path.name, media_type(path)
        content_hash = ctx.fingerprint(data)
    source = make_source(
        id=ctx.source_id(path), kind=kind, title=title, lang=lang, content_hash=content_hash,
        original=original, original_name=name, media=media, origin=ctx.origin(path), collection=ctx.collection, meta=meta,
    )
    yield Document(source=source, original=original, cues=tuple(cues), path=path)
