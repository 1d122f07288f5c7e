"""Ingestion: ``load → chunk → index`` (searchable at once), then ``embed`` as a resumable backlog.

- Each source's ``content_hash`` covers its bytes and every option that changes its fragments (see
  ``LoadContext.fingerprint``; the embedder's name is mixed in here). A stored source with the same
  hash is **unchanged**: nothing is written. A different hash is **replaced** with one
  ``store.put_source`` call (one transaction), an absent one is **added**.
- A source that fails to load (or to embed, or to store) is a **failed** entry; the store is untouched
  for it and the other sources go on.
- Fragments and their lexical indexes are written first (``put_source`` without vectors, gathered up
  to ``settings.corpus.ingest_flush_fragments`` fragments across small sources): the collection is
  searchable on the lexical lanes as soon as each write commits. The vectors follow as a backlog
  (``footnote.corpus.embedding``): run here unless ``wait=False``, else by ``footnote serve`` or
  ``footnote reembed``.
- Ctrl-C (KeyboardInterrupt) commits every source loaded so far and every finished embedding task, and
  returns a report marked ``interrupted``; running the same command again resumes (unchanged sources are
  skipped, the backlog is what still has no vector).
- Recordings without a transcript are recognised with ``transcribe`` (``asr.enabled``), after the
  other files, each written as soon as it is done (:mod:`footnote.corpus.ingest_audio`).
- Prune (``prune=True``): a stored source whose ``origin`` (the absolute path of the file it came from)
  is one of the given paths or lies under one of the given directories, and which this run did not see,
  is deleted. A file that still exists but failed to load counts as seen: its sources are kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from footnote.corpus.asr import Transcriber
from footnote.corpus.chunkers import chunk_document
from footnote.corpus.collections import SourceIndex, check_collection, default_collection, same_origin
from footnote.corpus.embedding import BacklogEmbedder, EmbedProgress, EmbedReport
from footnote.corpus.ingest_audio import (
    AudioMeter,
    AudioProgress,
    Transcribed,
    bare_audio,
    machine_sources,
    make_transcriber,
    take_over,
    takeover_id,
    unchanged_recording,
)
from footnote.corpus.ingest_report import (
    IngestEntry,
    IngestProgress,
    IngestProgressSink,
    IngestReport,
    IngestStatus,
    OcrProgress,
)
from footnote.corpus.inventory import take_inventory
from footnote.corpus.loaders import EARLY_HASH, LoadContext, early_hash, iter_files, load_entries
from footnote.corpus.loaders.base import read_bytes
from footnote.corpus.loaders.video import has_text_subtitles
from footnote.corpus.notices import notice_reason
from footnote.corpus.pairing import plan_tracks
from footnote.corpus.recognition import AWAITING, needs_recognition, options_of, placeholder
from footnote.errors import FootnoteError, InputError, UsageError
from footnote.models.protocols import Embedder
from footnote.records.fragments import Document, Fragment, Source
from footnote.records.lang import detect_lang
from footnote.settings import Settings
from footnote.store.protocol import SourceStore, SourceWrite, VectorStore
from footnote.store.recognition import RecognitionJob, RecognitionStore, Task

log = logging.getLogger(__name__)

_LANG = re.compile(r"[a-z]{2,3}(?:[-_][a-z0-9]{2,8})*")

Progress = Callable[[int, int, str], None]

__all__ = ["IngestEntry", "IngestProgress", "IngestProgressSink", "IngestReport", "IngestStatus", "Ingestor"]


@dataclass
class _Pending:
    path: str
    doc: Document
    fragments: list[Fragment]
    status: IngestStatus
    slot: int  # index of this source's entry in the report (filled in when written)


class IngestStore(SourceStore, VectorStore, RecognitionStore, Protocol):
    """What an ingest writes: sources and their fragments, the embedder's binding and backlog, recognition jobs."""

    url: str

class Ingestor:
    """Runs ingestion against a store with an (optional) embedder. Construct per run or reuse."""

    def __init__(self, settings: Settings, store: IngestStore, embedder: Embedder | None,
                 transcriber: Transcriber | None = None) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self._transcriber = transcriber  # built on first need (make_transcriber) when None
        self._timings: dict[str, float] = {}
        self._ids = SourceIndex([])
        self._hashes: dict[str, str] = {}
        self._chunked = 0
        self._indexed = 0

    # -- helpers ---------------------------------------------------------------------------------
    def _tick(self, stage: str, t0: float) -> None:
        self._timings[stage] = self._timings.get(stage, 0.0) + (time.perf_counter() - t0) * 1000

    def _final_hash(self, doc: Document) -> str:
        source = doc.source
        h = source.content_hash
        # A language other than the script rule's (ru for Cyrillic, else the default) — detected by
        # py3langid or declared — changes the stems, so it is part of the hash; sources the rule
        # already got right keep the hash they had before detection knew more languages (no re-embedding).
        sample = " ".join(c.text for c in doc.cues) if doc.cues else "\n".join(b.text for b in doc.blocks)
        if source.lang != detect_lang(sample[: self.settings.corpus.lang_detect_chars], self.settings.corpus.default_lang):
            h = hashlib.sha256(f"{h}|lang={source.lang}".encode()).hexdigest()
        name = self.embedder.name if self.embedder is not None else "none"
        if name == self.settings.embedder.name:
            return h
        return hashlib.sha256(f"{h}|embedder={name}".encode()).hexdigest()

    def _flush(self, pending: list[_Pending], entries: list[IngestEntry]) -> None:
        """Write the gathered sources without vectors, all in one transaction (``put_sources``: the
        lexical statistics and indexes are updated once per batch); if the batch fails, source by
        source, so one bad source fails alone. Searchable lexically as soon as this returns."""
        if not pending:
            return
        t1 = time.perf_counter()
        try:
            if len(pending) > 1:
                try:
                    self.store.put_sources([SourceWrite(p.doc.source, p.fragments, None, p.doc.original, p.doc.cues)
                                            for p in pending])
                except FootnoteError as e:  # rolled back: find the culprit one source at a time
                    log.info("writing %d sources together failed (%s); writing them one by one", len(pending), e)
                else:
                    for p in pending:
                        self._written(p, entries)
                    pending.clear()
                    return
            for p in pending:
                try:
                    self.store.put_source(p.doc.source, p.fragments, None, p.doc.original, cues=p.doc.cues)
                except Exception as e:  # the store rolled back: the source is as it was
                    if not isinstance(e, FootnoteError):
                        log.exception("put_source(%r) failed", p.doc.source.id)
                    entries[p.slot] = IngestEntry(p.path, p.doc.source.id, IngestStatus.FAILED, 0, str(e))
                    continue
                self._written(p, entries)
            pending.clear()
        finally:
            self._tick("index", t1)

    def _written(self, p: _Pending, entries: list[IngestEntry]) -> None:
        self._indexed += len(p.fragments)
        self._hashes[p.doc.source.id] = p.doc.source.content_hash
        entries[p.slot] = IngestEntry(p.path, p.doc.source.id, p.status, len(p.fragments))

    def prepare(self, doc: Document) -> tuple[Document, list[Fragment]]:
        """A loaded document chunked, with its final hash and fragment count (what a write needs)."""
        return self._prepare(doc)

    def _prepare(self, doc: Document) -> tuple[Document, list[Fragment]]:
        t0 = time.perf_counter()
        frags = chunk_document(doc, self.settings)
        self._tick("chunk", t0)
        self._chunked += len(frags)
        if not frags:
            raise InputError(doc.path or doc.source.id, "no text to index")
        meta = {**doc.source.meta, "fragments": str(len(frags))}
        if doc.path is not None and doc.path.suffix.lower() in EARLY_HASH:  # a scan: known unchanged before loading
            meta["load_hash"] = doc.source.content_hash
        src = dataclasses.replace(doc.source, content_hash=self._final_hash(doc), meta=meta)
        return dataclasses.replace(doc, source=src), frags

    # -- the run ---------------------------------------------------------------------------------
    def run(
        self,
        paths: Sequence[str | Path],
        *,
        kind: str | None = None,
        lang: str | None = None,
        prune: bool = False,
        progress: Progress | None = None,
        collection: str | None = None,
        audio: str | Path | None = None,
        events: IngestProgressSink | None = None,
        wait: bool = True,
        workers: int | None = None,
        transcribe: bool | None = None,
        recognise_later: bool = False,
    ) -> IngestReport:
        """Ingest ``paths``; with ``wait`` (and an embedder) embed the backlog before returning, on
        ``workers`` workers (None: ``settings.backlog.ingest_workers``). ``progress`` gets
        (files done, files total, label); ``events`` a per-stage :class:`IngestProgress`. ``transcribe``
        (None: ``settings.asr.enabled``) recognises recordings that have no transcript. ``recognise_later``: such
        recordings and scanned pages are stored as placeholders with a job for ``footnote worker``
        (``footnote.corpus.recognition``), not recognised here."""
        start = time.perf_counter()
        self._timings = {}
        self._chunked = self._indexed = 0
        if kind is not None and kind not in self.settings.corpus.kinds:
            raise UsageError(f"unknown kind {kind!r} (known: {', '.join(self.settings.corpus.kinds)})")
        if lang is not None:
            lang = lang.strip().lower() or None
            if lang is not None and not _LANG.fullmatch(lang):
                raise UsageError(f"--lang {lang!r} is not a language code (e.g. en, ru, de)")
        if self.embedder is not None:
            self.store.bind_embedder(self.embedder.name, self.embedder.dim)  # StoreError on a mismatch
        if collection is not None:
            collection = check_collection(collection)
        refused: list[tuple[Path, str]] = []
        audio_found: list[tuple[Path, Path]] = []
        files = iter_files(paths, self.settings.corpus.audio_extensions, self.settings.corpus.skip_stems,
                           refused=refused, audio_found=audio_found,
                           is_notice=lambda f: notice_reason(f, self.settings.corpus))
        plan = plan_tracks(files, self.settings, audio_found=audio_found,
                           explicit_audio=Path(audio) if audio is not None else None)
        files = plan.files
        # a video that no transcript took but that carries its own subtitle track is a track of its own
        subtitled = [(a, r) for a, r in audio_found if a in set(plan.unpaired_audio) and has_text_subtitles(a)]
        if subtitled:
            files = files + subtitled
            plan.unpaired_audio = [a for a in plan.unpaired_audio if a not in {v for v, _ in subtitled}]
        exts = self.settings.corpus.audio_extensions
        asr_files: set[Path] = set()
        transcriber: Transcriber | None = None
        if recognise_later or (self.settings.asr.enabled if transcribe is None else transcribe):
            bare = [x for x in bare_audio(files, plan.unpaired_audio, audio_found, exts) if not has_text_subtitles(x[0])]
            asr_files = {f for f, _ in bare}
            files = [x for x in files if x[0] not in asr_files] + bare  # text first: searchable sooner
            plan.unpaired_audio = []
            if bare:
                transcriber = self._transcriber = self._transcriber or make_transcriber(self.settings)
        inventory = take_inventory(paths, [f for f, _ in files], self.settings, plan.unpaired_audio,
                                   set(plan.audio), [p for p, _ in refused])
        meter = AudioMeter(transcriber, sorted(asr_files)) if transcriber is not None else None
        transcribed: list[Transcribed] = []
        stored = self.store.list_sources()
        machine = machine_sources(stored)
        by_id = {src.id: src for src in stored}
        ids = SourceIndex(stored)
        self._ids = ids
        self._hashes = {src.id: src.content_hash for src in stored}  # one read, not one per source
        self._partials: set[str] = set()  # new scans written in part while their other pages are read
        self._jobs: dict[str, RecognitionJob] | None = None  # the store's recognition jobs, when a deferral asks
        names: dict[Path, str] = {}
        entries: list[IngestEntry] = []
        pending: list[_Pending] = []
        pending_frags = 0
        seen_ids: dict[str, str] = {}
        failed_origins: set[str] = set()
        flush_at = max(1, self.settings.corpus.ingest_flush_fragments)
        interrupted = False
        done_files = 0

        def emit(stage: str, label: str = "", embed: EmbedProgress | None = None,
                 audio: AudioProgress | None = None) -> None:
            if events is not None:
                events(IngestProgress(stage, done_files, len(files), self._chunked, self._indexed, label, embed, audio))

        def read_pages(path: Path, done: int, total: int) -> None:
            if events is not None:
                events(IngestProgress("ocr", done_files, len(files), self._chunked, self._indexed, str(path),
                                      ocr=OcrProgress(str(path), done, total)))

        def heard(path: Path, done_s: float, total_s: float) -> None:
            if meter is not None:
                emit("transcribe", str(path), audio=meter.snapshot(path, done_s, total_s))

        try:
            for n, (file, root) in enumerate(files, start=1):
                label = str(file)
                emit("load", label)
                origin = Path(os.path.abspath(file)).as_posix()
                t0 = time.perf_counter()
                if root not in names:
                    names[root] = collection or default_collection(root)
                # without --collection, a file already stored keeps its collection (and so its id)
                name = collection or ids.collection_of(origin) or names[root]
                try:
                    if file in plan.problems:
                        raise plan.problems[file]
                    is_asr = file in asr_files
                    kept = None if transcriber is None or not is_asr else unchanged_recording(
                        file, LoadContext(self.settings, kind, lang, root, name, ids.known_ids(name)), by_id, transcriber)
                    if kept is None and not is_asr:
                        kept = self._unchanged_scan(file, LoadContext(self.settings, kind, lang, root, name,
                                                                      ids.known_ids(name)), by_id)
                    if kept is not None:  # recognised before, nothing changed: not recognised again
                        seen_ids[kept[0]] = label
                        entries.append(IngestEntry(label, kept[0], IngestStatus.UNCHANGED, kept[1]))
                    elif recognise_later and (is_asr or needs_recognition(file)):
                        kept = self._defer(label, file, LoadContext(self.settings, kind, lang, root, name,
                                                                    ids.known_ids(name)),
                                           Task.ASR if is_asr else Task.OCR, seen_ids, entries, by_id)
                    for item in () if kept is not None else load_entries(file, settings=self.settings, kind=kind, lang=lang, root=root,
                                             collection=name, known_ids=ids.known_ids(name),
                                             audio=plan.audio.get(file),
                                             transcriber=transcriber if is_asr else None, asr_progress=heard,
                                             pages_read=read_pages):
                        self._tick("transcribe" if is_asr else "load", t0)
                        if isinstance(item, Document):
                            item = take_over(item, takeover_id(plan.audio.get(file), machine), ids, self._hashes)
                        if isinstance(item, InputError):
                            failed_origins.add(origin)
                            entries.append(IngestEntry(label, None, IngestStatus.FAILED, 0, item.message))
                            t0 = time.perf_counter()
                            continue
                        if item.partial:  # a scan's pages read so far: searchable while the rest are read
                            self._write_partial(item, seen_ids)
                            continue
                        pend = self._consider(label, item, seen_ids, entries)
                        if is_asr:
                            transcribed.append(Transcribed.of(label, item, time.perf_counter() - t0))
                        if pend is not None:
                            pending.append(pend)
                            pending_frags += len(pend.fragments)
                            # a recording is kept once recognised; a scan written in part, once whole
                            if pending_frags >= flush_at or is_asr or pend.doc.source.id in self._partials:
                                emit("index", label)
                                self._flush(pending, entries)
                                pending_frags = 0
                        t0 = time.perf_counter()
                except InputError as e:
                    self._tick("load", t0)
                    failed_origins.add(origin)
                    entries.append(IngestEntry(label, None, IngestStatus.FAILED, 0, e.message))
                except FootnoteError as e:
                    failed_origins.add(origin)
                    entries.append(IngestEntry(label, None, IngestStatus.FAILED, 0, str(e)))
                except Exception as e:  # a loader bug fails this file, never the run
                    log.exception("loading %s failed", file)
                    failed_origins.add(origin)
                    entries.append(IngestEntry(label, None, IngestStatus.FAILED, 0,
                                               f"{file}: unexpected error {type(e).__name__}: {e}"))
                self._drop_partials(entries)  # this file's part-written scans are whole now, or taken out again
                if meter is not None and file in asr_files:
                    meter.file_done(file)
                done_files = n
                emit("chunk", label)
                if progress is not None:
                    progress(n, len(files), label)
        except KeyboardInterrupt:
            interrupted = True
            self._drop_partials(entries)  # a scan cut short is taken out: each source is whole or absent
            # the sources of a file cut short are dropped (their provisional entries say "not written");
            # every source read in full before it is committed below
            log.info("interrupted after %d of %d files", done_files, len(files))
        try:
            self._flush(pending, entries)
        except KeyboardInterrupt:  # a second Ctrl-C: what is committed stays committed
            interrupted = True
        emit("index")
        lexical_seconds = time.perf_counter() - start
        pruned: list[str] = []
        if prune and not interrupted:
            t0 = time.perf_counter()
            # a file named for pruning that is gone is not a failure: its sources go
            gone = {Path(os.path.abspath(p)).as_posix() for p in paths if not Path(p).exists()}
            entries = [e for e in entries if not (e.source_id is None and Path(os.path.abspath(e.path)).as_posix() in gone)]
            pruned = self._prune(paths, set(seen_ids), failed_origins - gone, entries)
            self._tick("prune", t0)
        for path, why in refused:  # the report carries them; the CLI and API say them once
            log.info("refused %s: %s", path, why)
        flush = getattr(self.store, "flush_text_indexes", None)  # PostgreSQL: no GIN pending list left to searches
        if callable(flush) and (done_files or pruned):
            flush()
        embed_report: EmbedReport | None = None
        if self.embedder is not None and wait and not interrupted:
            t0 = time.perf_counter()
            embed_report = BacklogEmbedder(self.settings, self.store, self.embedder).run(
                progress=lambda ep: emit("embed", embed=ep), workers=workers,
            )
            self._tick("embed", t0)
            interrupted = embed_report.interrupted
        return IngestReport(
            notes=inventory.notes,
            hidden=inventory.hidden,
            files_total=len(files),
            files_done=done_files,
            interrupted=interrupted,
            embed=embed_report,
            lexical_seconds=lexical_seconds,
            refused=tuple((str(p), why) for p, why in refused),
            pairings=tuple(plan.pairings),
            superseded=tuple((str(a), str(b)) for a, b in plan.superseded),
            unpaired_audio=tuple(str(a) for a in plan.unpaired_audio),
            collections=tuple((str(r), n) for r, n in names.items()),
            pruned=tuple(pruned),
            entries=tuple(entries),
            seconds=time.perf_counter() - start,
            embedder=self.embedder.name if self.embedder is not None else None,
            timings_ms=dict(self._timings),
            transcribed=tuple(transcribed),
        )


    def _defer(self, label: str, file: Path, ctx: LoadContext, task: Task, seen_ids: dict[str, str],
               entries: list[IngestEntry], stored: Mapping[str, Source]) -> tuple[str, int]:
        """A recording or scan left for ``footnote worker``: its placeholder and job written (one source, its
        original, no passages; ``footnote.corpus.recognition``). Returns (id, 0), as an unchanged file does. The same
        bytes a worker recognised already are unchanged (the worker's OCR or speech model may not be here)."""
        data = read_bytes(file)
        src = placeholder(file, data, ctx, task)
        sid = src.id
        done = stored.get(sid)
        if (done is not None and not done.content_hash.startswith("awaiting:") and sid not in seen_ids
                and done.blob_sha256 == src.blob_sha256 and done.origin == src.origin):
            seen_ids[sid] = label
            n = int(done.meta.get("fragments", "0") or 0)
            entries.append(IngestEntry(label, sid, IngestStatus.UNCHANGED, n))
            return sid, n
        if sid in seen_ids:
            entries.append(IngestEntry(label, sid, IngestStatus.FAILED, 0,
                                       f"duplicate source id {sid!r} (also from {seen_ids[sid]})"))
            return sid, 0
        seen_ids[sid] = label
        taken = self._ids.collision(src)
        if taken is not None:
            entries.append(IngestEntry(label, sid, IngestStatus.FAILED, 0, taken))
            return sid, 0
        if self._hashes.get(sid) == src.content_hash:  # left for a worker before, and not recognised yet
            if self._jobs is None:  # read once per run, at the first placeholder found unchanged
                self._jobs = {j.source_id: j for j in self.store.recognition_jobs()}
            job = self._jobs.get(sid)
            if job is not None and job.tries < self.settings.backlog.recognition_tries:
                entries.append(IngestEntry(label, sid, IngestStatus.DEFERRED, 0, f"waits for {AWAITING[task]}"))
                return sid, 0
            self.store.put_recognition_job(sid, task, options_of(ctx))  # given up on (or lost): tried again
            why = f" (it failed {job.tries} times: {job.error})" if job is not None and job.error else ""
            entries.append(IngestEntry(label, sid, IngestStatus.DEFERRED, 0,
                                       f"left for footnote worker again{why}"))
            return sid, 0
        self.store.put_source(src, [], None, data)
        self.store.put_recognition_job(sid, task, options_of(ctx))
        self._hashes[sid] = src.content_hash
        entries.append(IngestEntry(label, sid, IngestStatus.DEFERRED, 0, f"{AWAITING[task]} left for footnote worker"))
        return sid, 0

    def _write_partial(self, doc: Document, seen_ids: Mapping[str, str]) -> None:
        """A new scan's pages read so far, written for search (``ocr.searchable_every_pages``) under a hash that
        is never its whole's, so an interrupted run never leaves it looking complete. A source already stored is
        not touched (it stays as it was until its whole replaces it), nor one whose id another file has."""
        sid = doc.source.id
        if sid in seen_ids or (sid in self._hashes and sid not in self._partials) or self._ids.collision(doc.source):
            return
        frags = chunk_document(doc, self.settings)
        if not frags:
            return
        pages = doc.source.meta.get("ocr_pages", "")
        src = dataclasses.replace(doc.source, content_hash="partial:" + doc.source.content_hash,
                                  meta={**doc.source.meta, "fragments": str(len(frags)),
                                        "partial": f"{len(pages.split(',')) if pages else 0} pages read so far"})
        try:
            self.store.put_source(src, frags, None, doc.original)
        except FootnoteError as e:  # a part not written costs the early search, not the scan
            log.warning("%s: the pages read so far were not written (%s)", doc.path, e)
            return
        self._partials.add(sid)
        self._hashes[sid] = src.content_hash

    def _drop_partials(self, entries: Sequence[IngestEntry]) -> None:
        """At the end of a file (or an interrupt): take out the part-written scans whose whole was not written,
        so a failed or interrupted scan leaves the store as it was."""
        if not self._partials:
            return
        whole = {e.source_id for e in entries if e.status in (IngestStatus.ADDED, IngestStatus.REPLACED)}
        for sid in list(self._partials):
            if sid in whole:
                self._partials.discard(sid)
            else:
                try:
                    self.store.delete_source(sid)
                except FootnoteError as e:
                    log.warning("a part-written scan %s could not be taken out: %s", sid, e)
                self._partials.discard(sid)
                self._hashes.pop(sid, None)

    def _unchanged_scan(self, file: Path, ctx: LoadContext, stored: Mapping[str, Source]) -> tuple[str, int] | None:
        """(id, fragments) of the stored source of ``file`` when its content hash, known before loading (a
        PDF, a scan: ``loaders.EARLY_HASH``), is the stored one: it is not loaded, nor read by OCR, again."""
        sid = ctx.source_id(file)
        src = stored.get(sid)
        if src is None or not same_origin(src.origin, ctx.origin(file)):
            return None
        if not src.meta.get("load_hash") or early_hash(file, ctx) != src.meta["load_hash"]:
            return None
        n = src.meta.get("fragments", "")  # written by _prepare: no store read for an unchanged scan
        return sid, int(n) if n.isdigit() else len(self.store.fragments_of(sid))

    def _consider(
        self, label: str, doc: Document, seen_ids: dict[str, str], entries: list[IngestEntry]
    ) -> _Pending | None:
        sid = doc.source.id
        if sid in seen_ids:
            entries.append(IngestEntry(label, sid, IngestStatus.FAILED, 0,
                                       f"duplicate source id {sid!r} (also from {seen_ids[sid]})"))
            return None
        seen_ids[sid] = label
        taken = self._ids.collision(doc.source)
        if taken is not None:
            entries.append(IngestEntry(label, sid, IngestStatus.FAILED, 0, taken))
            return None
        try:
            doc, frags = self._prepare(doc)
        except InputError as e:
            entries.append(IngestEntry(label, sid, IngestStatus.FAILED, 0, e.message))
            return None
        stored = self._hashes.get(sid)
        if stored == doc.source.content_hash and not self._ids.moved(doc.source):
            entries.append(IngestEntry(label, sid, IngestStatus.UNCHANGED, len(frags)))
            return None
        status = IngestStatus.ADDED if stored is None or sid in self._partials else IngestStatus.REPLACED
        # a provisional entry keeps the report in input order; _flush replaces it with the outcome
        entries.append(IngestEntry(label, sid, IngestStatus.FAILED, 0, "not written (ingestion stopped)"))
        return _Pending(label, doc, frags, status, len(entries) - 1)

    def _prune(
        self, paths: Iterable[str | Path], seen_ids: set[str], failed_origins: set[str], entries: list[IngestEntry]
    ) -> list[str]:
        roots = [Path(os.path.abspath(p)).as_posix() for p in paths]
        out: list[str] = []
        for src in self.store.list_sources():
            if src.id in seen_ids or not src.origin or src.origin in failed_origins:
                continue
            if any(src.origin == r or src.origin.startswith(r.rstrip("/") + "/") for r in roots):
                try:
                    self.store.delete_source(src.id)
                except FootnoteError as e:
                    entries.append(IngestEntry(src.origin, src.id, IngestStatus.FAILED, 0, f"prune failed: {e}"))
                    continue
                out.append(src.id)
        return out
