"""Machine transcripts of recordings that have none: decode → recognise a window at a time → cues.

- **Decoding** (PyAV, shipped with faster-whisper): the audio is streamed and resampled to 16 kHz mono,
  never held whole in memory; a file that is not audio, has no audio stream, or is longer than
  ``asr.max_audio_s`` fails alone with ``path: problem`` (:class:`~footnote.errors.InputError`).
- **Windows**: ``asr.window_s`` (600 s) of samples are recognised at a time. Every window but the last
  keeps all its segments except the last one (which the window's end may have cut) and the next window
  starts where the last kept segment ends, so no word is lost at a boundary and time stays exact: every
  time is the recogniser's own, shifted by the window's offset in the file.
- **Resumable**: after each window the new segments and the resume point are appended to
  ``<asr.cache_dir>/<key>.part.jsonl`` and fsync'd; a run stopped by Ctrl-C or ``kill -9`` continues
  from the last whole window. A finished transcript is ``<key>.json``: ingesting the same audio with
  the same settings again does not recognise it again. ``key`` covers the audio's bytes, the model and
  every setting that changes its output, and the forced language.
- **Cues**: the recogniser's words are grouped into short cues that end at punctuation, at a pause of
  ``asr.cue_gap_ms`` or after ``asr.cue_max_ms`` — about a line of verse or a clause of speech, so a
  chip that quotes a sentence plays just that sentence (the store's cue table, as for a human transcript).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from footnote.errors import InputError
from footnote.models.whisper import SAMPLE_RATE, Recognizer, Segment, Word
from footnote.records.fragments import Cue
from footnote.settings import AsrSettings

log = logging.getLogger(__name__)

CACHE_VERSION = 1
#: (file, seconds of audio done, seconds of audio in the file)
AsrProgress = Callable[[Path, float, float], None]
_END_PUNCT = re.compile(r"[.,;:!?…。，、！？]+[\"'”’)\]]*$")


@dataclass(frozen=True)
class MachineTranscript:
    """What recognition made of one recording: timed segments (with words) and the language."""

    segments: tuple[Segment, ...]
    language: str
    language_probability: float
    language_forced: bool
    duration_s: float
    model: str
    recognised_s: float = 0.0  # wall seconds spent recognising in this run (0: all from the cache)
    resumed_from_s: float = 0.0  # audio seconds already done by an interrupted run

    def to_json(self) -> dict[str, Any]:
        return {"version": CACHE_VERSION, "language": self.language,
                "language_probability": round(self.language_probability, 4),
                "language_forced": self.language_forced, "duration_s": self.duration_s, "model": self.model,
                "segments": [_seg_json(s) for s in self.segments]}


class Transcriber(Protocol):
    """A recording → its machine transcript (``progress`` by audio seconds)."""

    @property
    def name(self) -> str: ...

    def transcribe(self, path: Path, data: bytes, *, language: str | None,
                   progress: AsrProgress | None = None) -> MachineTranscript: ...

    def duration(self, path: Path) -> float: ...


def _seg_json(s: Segment) -> dict[str, Any]:
    return {"start_ms": s.start_ms, "end_ms": s.end_ms, "text": s.text,
            "words": [[w.start_ms, w.end_ms, w.text] for w in s.words]}


def _seg_from(d: dict[str, Any]) -> Segment:
    words = tuple(Word(int(w[0]), int(w[1]), str(w[2])) for w in d.get("words", []))
    return Segment(int(d["start_ms"]), int(d["end_ms"]), str(d["text"]), words)


# -- decoding ------------------------------------------------------------------------------------

def _av_errors() -> tuple[type[BaseException], ...]:
    import av

    return (av.error.FFmpegError, OSError, ValueError, IndexError)


def local_media(path: Path) -> str:
    """``path`` as FFmpeg must read it: a local file, never a URL or protocol (a file named ``concat:a|b`` or
    ``pipe:0.mkv`` would otherwise read other files, or standard input)."""
    return "file:" + os.path.abspath(path)


def probe_duration(path: Path) -> float:
    """Seconds of audio in ``path`` from its headers (decoded and counted when they say nothing)."""
    import av

    try:
        with av.open(local_media(path), metadata_errors="ignore") as c:
            if not c.streams.audio:
                raise InputError(path, "no audio stream in the file")
            st = c.streams.audio[0]
            if st.duration is not None and st.time_base is not None:
                return float(st.duration * st.time_base)
            if c.duration is not None:
                return float(c.duration) / av.time_base
    except _av_errors() as e:
        raise InputError(path, f"not a readable audio file ({_why(e)})") from e
    return sum(len(x) for x in iter_samples(path)) / SAMPLE_RATE


def _why(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.split(": '", 1)[0][:200]


def iter_samples(path: Path, skip_s: float = 0.0, block_s: float = 30.0) -> Iterator[np.ndarray]:
    """16 kHz mono float32 samples of ``path`` from ``skip_s`` on, in blocks of about ``block_s``."""
    import av

    skip = round(skip_s * SAMPLE_RATE)
    block = int(block_s * SAMPLE_RATE)
    pending: list[np.ndarray] = []
    have = 0
    try:
        with av.open(local_media(path), metadata_errors="ignore") as c:
            if not c.streams.audio:
                raise InputError(path, "no audio stream in the file")
            resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
            frames = c.decode(audio=0)
            while True:
                try:
                    frame = next(frames)
                except StopIteration:
                    frame = None
                except av.error.InvalidDataError:  # a damaged frame: skipped, as ffmpeg does
                    continue
                if frame is not None:
                    frame.pts = None
                for out in resampler.resample(frame):
                    arr = out.to_ndarray().reshape(-1).astype(np.float32) / 32768.0
                    if skip:
                        cut = min(skip, len(arr))
                        arr, skip = arr[cut:], skip - cut
                    if len(arr):
                        pending.append(arr)
                        have += len(arr)
                    if have >= block:
                        yield np.concatenate(pending)
                        pending, have = [], 0
                if frame is None:
                    break
    except _av_errors() as e:
        raise InputError(path, f"audio cannot be decoded ({_why(e)})") from e
    if pending:
        yield np.concatenate(pending)


# -- the cache -----------------------------------------------------------------------------------

@dataclass
class _Partial:
    header: dict[str, Any]
    segments: list[Segment] = field(default_factory=list)
    next_ms: int = 0


class TranscriptCache:
    """Finished machine transcripts and the progress of interrupted ones, by key, in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def done_path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def part_path(self, key: str) -> Path:
        return self.folder / f"{key}.part.jsonl"

    def load_done(self, key: str) -> MachineTranscript | None:
        try:
            d = json.loads(self.done_path(key).read_text(encoding="utf-8"))
            if d.get("version") != CACHE_VERSION:
                return None
            return MachineTranscript(tuple(_seg_from(s) for s in d["segments"]), str(d["language"]),
                                     float(d["language_probability"]), bool(d["language_forced"]),
                                     float(d["duration_s"]), str(d["model"]))
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None

    def load_partial(self, key: str) -> _Partial | None:
        """What an interrupted run finished: segments up to its last whole window (a line cut by a kill
        and anything after the last resume point are ignored)."""
        try:
            lines = self.part_path(key).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return None
        try:
            header = json.loads(lines[0])
        except (ValueError, IndexError):
            return None
        if header.get("version") != CACHE_VERSION:
            return None
        part = _Partial(header)
        pending: list[Segment] = []
        for line in lines[1:]:
            try:
                d = json.loads(line)
                if "next_ms" in d:
                    part.segments.extend(pending)
                    pending = []
                    part.next_ms = int(d["next_ms"])
                    part.header.update({k: d[k] for k in ("language", "language_probability") if k in d})
                else:
                    pending.append(_seg_from(d))
            except (ValueError, KeyError, TypeError, IndexError):
                break
        return part

    def start_partial(self, key: str, header: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.part_path(key).open("w", encoding="utf-8") as f:
            f.write(json.dumps(header) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def append_window(self, key: str, segments: Sequence[Segment], next_ms: int, language: str, prob: float) -> None:
        lines = [json.dumps(_seg_json(s), ensure_ascii=False) for s in segments]
        lines.append(json.dumps({"next_ms": next_ms, "language": language, "language_probability": prob}))
        with self.part_path(key).open("a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def finish(self, key: str, transcript: MachineTranscript) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{key}.json.tmp"
        tmp.write_text(json.dumps(transcript.to_json(), ensure_ascii=False), encoding="utf-8")
        tmp.replace(self.done_path(key))
        self.part_path(key).unlink(missing_ok=True)


# -- recognition ---------------------------------------------------------------------------------

class AudioTranscriber:
    """:class:`Transcriber` over a :class:`~footnote.models.whisper.Recognizer`, windowed, cached, resumable."""

    def __init__(self, settings: AsrSettings, recognizer: Recognizer, cache: TranscriptCache) -> None:
        self.settings = settings
        self.recognizer = recognizer
        self.cache = cache

    @property
    def name(self) -> str:
        return f"{self.recognizer.name}|window={self.settings.window_s}"

    def key(self, data: bytes, language: str | None) -> str:
        h = hashlib.sha256(data)
        h.update(f"|v{CACHE_VERSION}|{self.name}|lang={language or ''}".encode())
        return h.hexdigest()

    def duration(self, path: Path) -> float:
        return probe_duration(path)

    def transcribe(self, path: Path, data: bytes, *, language: str | None,
                   progress: AsrProgress | None = None) -> MachineTranscript:
        key = self.key(data, language)
        done = self.cache.load_done(key)
        if done is not None:
            if progress:
                progress(path, done.duration_s, done.duration_s)
            return done
        duration = probe_duration(path)
        if duration > self.settings.max_audio_s:
            raise InputError(path, f"{duration / 3600:.1f} hours of audio; the limit is "
                             f"{self.settings.max_audio_s / 3600:.1f} hours (asr.max_audio_s)")
        part = self.cache.load_partial(key)
        if part is None:
            part = _Partial({"version": CACHE_VERSION, "audio": path.name, "language": language or "",
                             "language_probability": 1.0 if language else 0.0})
            self.cache.start_partial(key, part.header)
        else:
            log.info("%s: resuming at %.0f s of %.0f s", path, part.next_ms / 1000, duration)
        resumed = part.next_ms / 1000
        lang: str = part.header.get("language") or ""
        prob = float(part.header.get("language_probability") or 0.0)
        t0 = time.perf_counter()
        win = self.settings.window_s * SAMPLE_RATE
        buf = np.empty(0, dtype=np.float32)
        buf_ms = part.next_ms
        segments = part.segments

        def run(samples: np.ndarray, final: bool) -> int:
            nonlocal lang, prob
            rec = self.recognizer.recognize(samples, language=lang or None)
            if not lang:
                lang, prob = rec.language, rec.language_probability
            got = [_shift(s, buf_ms) for s in rec.segments]
            end_ms = buf_ms + round(len(samples) * 1000 / SAMPLE_RATE)
            if not final and len(got) > 1:  # the window's end may cut the last segment: do it again
                got, end_ms = got[:-1], got[-2].end_ms
            got = _monotonic(got, segments[-1].end_ms if segments else 0)
            segments.extend(got)
            end_ms = max(end_ms, buf_ms + 1)
            self.cache.append_window(key, got, end_ms, lang, prob)
            if progress:
                progress(path, min(end_ms / 1000, duration), duration)
            return end_ms

        if progress:
            progress(path, resumed, duration)
        decoded = 0  # samples decoded in this run (after ``resumed``)
        for block in iter_samples(path, skip_s=resumed):
            decoded += len(block)
            buf = np.concatenate([buf, block])
            while len(buf) >= win:
                nxt = run(buf[:win], final=False)
                buf = buf[(nxt - buf_ms) * SAMPLE_RATE // 1000:]
                buf_ms = nxt
        if len(buf) or not segments:
            run(buf if len(buf) else np.zeros(SAMPLE_RATE // 10, dtype=np.float32), final=True)
        heard = resumed + decoded / SAMPLE_RATE  # what the file really holds (a header only estimates it)
        if heard < duration - self.settings.truncated_tolerance_s:
            log.warning("%s: the audio ends at %.1f s though its header announces %.1f s (a truncated file?); "
                        "the transcript covers what is there", path, heard, duration)
        if heard > 0:
            duration = heard
        out = MachineTranscript(tuple(segments), lang, prob, bool(language), round(duration, 3), self.name,
                                time.perf_counter() - t0, resumed)
        self.cache.finish(key, out)
        return out


def _shift(s: Segment, ms: int) -> Segment:
    if not ms:
        return s
    return Segment(s.start_ms + ms, s.end_ms + ms, s.text,
                   tuple(Word(w.start_ms + ms, w.end_ms + ms, w.text) for w in s.words))


def _monotonic(segs: list[Segment], after_ms: int) -> list[Segment]:
    """Segments in time order, none starting before the previous one ends (the cue table's rule)."""
    out: list[Segment] = []
    last = after_ms
    for s in segs:
        if s.end_ms <= last:
            continue
        start = max(s.start_ms, last)
        words = tuple(Word(max(w.start_ms, start), max(w.end_ms, start), w.text) for w in s.words)
        out.append(Segment(start, s.end_ms, s.text, words))
        last = s.end_ms
    return out


# -- cues ----------------------------------------------------------------------------------------

def machine_cues(segments: Sequence[Segment], cue_max_ms: int, cue_gap_ms: int) -> list[Cue]:
    """Short cues from the recognised words: a cue ends after a word ending in punctuation, before a
    pause of ``cue_gap_ms``, after ``cue_max_ms`` or at a segment's end. Times are the words' own."""
    cues: list[Cue] = []
    last_end = 0

    def emit(start: int, end: int, text: str) -> None:
        nonlocal last_end
        text = " ".join(text.split())
        start = max(start, last_end)
        end = max(end, start)
        if text:
            cues.append(Cue(start, end, text))
            last_end = end

    for seg in segments:
        if not seg.words:
            emit(seg.start_ms, seg.end_ms, seg.text)
            continue
        cur: list[Word] = []
        for w in seg.words:
            if cur and (w.start_ms - cur[-1].end_ms >= cue_gap_ms or w.end_ms - cur[0].start_ms > cue_max_ms):
                emit(cur[0].start_ms, cur[-1].end_ms, "".join(x.text for x in cur))
                cur = []
            cur.append(w)
            if _END_PUNCT.search(w.text.strip()):
                emit(cur[0].start_ms, cur[-1].end_ms, "".join(x.text for x in cur))
                cur = []
        if cur:
            emit(cur[0].start_ms, cur[-1].end_ms, "".join(x.text for x in cur))
    return cues


def to_srt(cues: Sequence[Cue]) -> str:
    def t(ms: int) -> str:
        h, rest = divmod(ms, 3_600_000)
        m, rest = divmod(rest, 60_000)
        s, frac = divmod(rest, 1000)
        return f"{h:02d}:{m:02d}:{s:02d},{frac:03d}"

    return "".join(f"{i}\n{t(c.start_ms)} --> {t(c.end_ms)}\n{c.text}\n\n" for i, c in enumerate(cues, 1))


def to_vtt(cues: Sequence[Cue]) -> str:
    return "WEBVTT\n\n" + "".join(
        f"{i}\n{_vtt_time(c.start_ms)} --> {_vtt_time(c.end_ms)}\n{c.text}\n\n" for i, c in enumerate(cues, 1)
    )


def _vtt_time(ms: int) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, frac = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}.{frac:03d}"
