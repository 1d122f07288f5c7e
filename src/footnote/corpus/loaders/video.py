"""Video lectures (``.mp4 .webm .mkv .mov``): a track like a recording, its original the video itself.

A video pairs with a transcript beside it (same stem: ``.srt``, ``.vtt``, ``.json``) exactly as audio
does, and is recognised with ``--transcribe`` (its sound, decoded by PyAV — faster-whisper's own
decoder — so no new system dependency). A video with neither but with a **text subtitle track inside
it** (mov_text in MP4/MOV, SubRip/WebVTT/ASS in Matroska/WebM) is read from that track: the first text
subtitle stream, or the one in ``--lang`` when there are several. Its cues keep the track's times in
milliseconds; the chip plays the video from the cue span's start.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from footnote.corpus.asr import local_media
from footnote.corpus.loaders.base import LoadContext, make_source, media_type, read_bytes
from footnote.errors import InputError
from footnote.records.fragments import Cue, Document

VIDEO_SUFFIXES = (".mp4", ".webm", ".mkv", ".mov")
_TEXT_CODECS = {"mov_text", "subrip", "srt", "webvtt", "ass", "ssa", "text"}
_ASS_TAGS = re.compile(r"\{[^}]*\}")
_ASS_DRAWING = re.compile(r"\{[^}]*\\p[1-9][^}]*\}.*?(?:\{[^}]*\\p0[^}]*\}|$)", re.DOTALL)


def is_video(path: Path) -> bool:
    return path.suffix.lower() in VIDEO_SUFFIXES


def _streams(container: Any) -> list[Any]:
    return [s for s in container.streams.subtitles if (s.codec_context.name or "") in _TEXT_CODECS]


def has_text_subtitles(path: Path) -> bool:
    """Whether a video file holds a text subtitle track (False for audio files and unreadable ones)."""
    if not is_video(path):
        return False
    import av

    try:
        with av.open(local_media(path)) as c:
            return bool(_streams(c))
    except Exception:  # an unreadable file is reported by the loader that reads it
        return False


def _cue_text(rect: Any) -> str:
    """A subtitle rectangle's text: ASS dialogue lines carry 8 fields before the text and style tags inside."""
    ass = getattr(rect, "ass", None)
    raw = ass or getattr(rect, "text", None) or b""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if ass and text.count(",") >= 8:  # ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text
        text = text.split(",", 8)[-1]
    text = _ASS_DRAWING.sub(" ", text)  # a vector drawing ({\\p1}m 0 0 l …{\\p0}) is not text
    text = _ASS_TAGS.sub("", text).replace("\\N", " ").replace("\\n", " ").replace("\\h", " ")
    return " ".join(text.split())


def embedded_cues(path: Path, lang: str | None) -> tuple[tuple[Cue, ...], str | None]:
    """The cues of the video's text subtitle track (the one in ``lang`` when several) and its language."""
    import av

    try:
        container = av.open(local_media(path))
    except Exception as e:
        raise InputError(path, f"not a readable video ({type(e).__name__}: {e})") from e
    with container:
        streams = _streams(container)
        if not streams:
            raise InputError(path, "a video needs a transcript of the same stem (.srt, .vtt or .json), a text "
                             "subtitle track inside it, or its speech recognised with --transcribe")
        picked = next((s for s in streams if lang and (s.language or "").lower().startswith(lang)), streams[0])
        cues: list[Cue] = []
        for packet in container.demux(picked):
            if packet.pts is None or packet.size == 0:
                continue
            start = int(float(packet.pts * packet.time_base) * 1000)
            dur = int(float((packet.duration or 0) * packet.time_base) * 1000)
            for sub in packet.decode():
                # PyAV ≥ 14 yields the subtitle rectangles themselves; older ones a set holding them
                rects = sub.rects if hasattr(sub, "rects") else [sub] if hasattr(sub, "ass") else list(sub)
                texts = [t for r in rects if (t := _cue_text(r))]
                end_ms = start + max(dur, int(getattr(sub, "end_display_time", 0) or 0))
                if texts:
                    cues.append(Cue(start, max(end_ms, start + 1), " ".join(texts)))
        track_lang = (picked.language or "").lower() or None
    if not cues:
        raise InputError(path, "the video's subtitle track holds no text")
    cues.sort(key=lambda c: c.start_ms)
    return tuple(cues), track_lang


# ISO 639-2 (what containers tag tracks with) → the two-letter codes the corpus uses, for the usual ones
_ISO3 = {"eng": "en", "rus": "ru", "deu": "de", "ger": "de", "fra": "fr", "fre": "fr", "spa": "es", "por": "pt",
         "ita": "it", "san": "sa", "hin": "hi", "ukr": "uk", "pol": "pl", "nld": "nl", "dut": "nl"}


def load_video_subtitles(path: Path, ctx: LoadContext) -> Iterator[Document]:
    data = read_bytes(path)
    cues, track_lang = embedded_cues(path, ctx.lang)
    kind = ctx.check_kind(ctx.kind or ctx.settings.corpus.transcript_kind, path)
    declared = _ISO3.get(track_lang or "", track_lang if track_lang and len(track_lang) == 2 else None)
    lang = ctx.choose_lang(declared, " ".join(c.text for c in cues[:200]))
    source = make_source(
        id=ctx.source_id(path), kind=kind, title=path.stem, lang=lang,
        content_hash=ctx.fingerprint(data, "embedded-subtitles"), original=data, original_name=path.name,
        media=media_type(path), origin=ctx.origin(path), collection=ctx.collection,
        meta={"audio": path.name, "transcript": f"{path.name} (subtitle track)"},
    )
    yield Document(source=source, original=data, cues=cues, path=path)
