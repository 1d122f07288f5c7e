"""A recording without a transcript → one track whose cues are a machine transcript.

The track's original is the audio itself (the chip replays the recording, which is the ground truth);
its cues come from :mod:`footnote.corpus.asr`. The source is marked ``meta["transcript_by"] =
"machine"`` — every citation of it says so (``transcript: "machine"``) — with the model, the language
recognised and how sure the recogniser was (``asr_language``, ``asr_language_probability``, or
``asr_language_forced``).

Its content hash covers the audio's bytes, the recogniser and its settings and the forced language, so
it is known before recognition: an unchanged recording is skipped without loading the model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from footnote.corpus.asr import AsrProgress, Transcriber, machine_cues
from footnote.corpus.loaders.base import LoadContext, make_source, media_type, read_bytes
from footnote.corpus.loaders.transcripts import audio_title
from footnote.errors import InputError
from footnote.records.fragments import Document

MACHINE = "machine"


def forced_language(ctx: LoadContext) -> str | None:
    """``--lang`` wins, then ``asr.language``; None: the recogniser detects it."""
    return ctx.lang or (ctx.settings.asr.language.strip().lower() or None)


def audio_hash(ctx: LoadContext, data: bytes, transcriber: Transcriber) -> str:
    """The content hash of a machine track, computable before recognising it."""
    s = ctx.settings.asr
    return ctx.fingerprint(data, f"asr|{transcriber.name}|lang={forced_language(ctx) or ''}|"
                                 f"cues={s.cue_max_ms},{s.cue_gap_ms}")


def load_audio(path: Path, ctx: LoadContext, transcriber: Transcriber,
               progress: AsrProgress | None = None) -> Iterator[Document]:
    data = read_bytes(path)
    if not data:
        raise InputError(path, "empty audio file")
    lang = forced_language(ctx)
    mt = transcriber.transcribe(path, data, language=lang, progress=progress)
    s = ctx.settings.asr
    cues = machine_cues(mt.segments, s.cue_max_ms, s.cue_gap_ms)
    if not cues:
        raise InputError(path, f"no speech recognised in {mt.duration_s:.0f} s of audio (silence, music or noise?)")
    kind = ctx.check_kind(ctx.kind or ctx.settings.corpus.transcript_kind, path)
    content_hash = audio_hash(ctx, data, transcriber)
    meta = {
        "audio": path.name, "transcript_by": MACHINE, "asr_key": content_hash, "asr_model": mt.model.split("|", 1)[0],
        "asr_language": mt.language, "asr_duration_s": f"{mt.duration_s:.1f}",
    }
    if mt.language_forced:
        meta["asr_language_forced"] = "true"
    else:
        meta["asr_language_probability"] = f"{mt.language_probability:.2f}"
    source = make_source(
        id=ctx.source_id(path), kind=kind, title=audio_title(data) or path.stem, lang=mt.language,
        content_hash=content_hash, original=data, original_name=path.name,
        media=media_type(path), origin=ctx.origin(path), collection=ctx.collection, meta=meta,
    )
    yield Document(source=source, original=data, cues=tuple(cues), path=path)
