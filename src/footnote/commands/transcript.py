"""``footnote transcript export ID [--format srt|vtt] [--out FILE | --beside]``: a track's cues as subtitles.

Made for curators of machine transcripts: export, correct the text (and times, if need be), put the
file next to the recording (``--beside`` does that: ``talk.mp3`` → ``talk.srt``) and ingest the folder
again — the corrected transcript replaces the machine one under the same source id.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from footnote.commands.base import Ctx, common_options
from footnote.corpus.asr import to_srt, to_vtt
from footnote.errors import NotFound, UsageError


@click.group("transcript")
def transcript() -> None:
    """Transcripts of stored tracks (machine transcripts to correct)."""


@transcript.command("export")
@click.argument("source_id")
@click.option("--format", "fmt", type=click.Choice(["srt", "vtt"]), default="srt", show_default=True,
              help="SubRip or WebVTT.")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Write to this file (default: standard output).")
@click.option("--beside", is_flag=True,
              help="Write next to the recording it transcribes (its stem, .srt or .vtt), ready to correct and ingest.")
@common_options
def export(ctx: Ctx, source_id: str, fmt: str, out: Path | None, beside: bool) -> None:
    """Write the cues of track SOURCE_ID as SRT or WebVTT."""
    if out is not None and beside:
        raise UsageError("--out and --beside name two places; give one")
    with ctx.engine() as engine:
        src = engine.store.get_source(source_id)
        if src is None:
            raise NotFound(f"no source {source_id!r} in the store (see `footnote sources`)")
        cues = engine.store.get_cues(source_id)
    if not cues:
        raise NotFound(f"{source_id!r} is not a track with timed cues (a transcript or a recording)")
    text = to_srt(cues) if fmt == "srt" else to_vtt(cues)
    if beside:
        if not src.origin:
            raise UsageError(f"{source_id!r} has no file of origin to write beside; use --out")
        out = Path(src.origin).with_suffix("." + fmt)
        if out.exists():
            raise UsageError(f"{out} exists; not overwritten (move it away, or use --out)")
    if out is None:
        click.echo(text, nl=False)
        return
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    machine = " (machine transcript)" if src.meta.get("transcript_by") == "machine" else ""
    if ctx.as_json:
        ctx.emit({"source_id": source_id, "path": str(out), "cues": len(cues), "format": fmt,
                  "transcript": src.meta.get("transcript_by") or None})
    else:
        click.echo(f"wrote {len(cues)} cues of {source_id}{machine} to {out}")


def register(group: click.Group) -> None:
    group.add_command(transcript)
