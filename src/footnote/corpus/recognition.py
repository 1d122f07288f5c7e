"""Speech recognition and OCR as shared work: ``footnote ingest --recognise-later`` and ``footnote worker``.

Recognition is the slow part of an ingest (minutes of CPU per recording or scanned page). With
``--recognise-later`` an ingest does not run it: each recording without a transcript, and each scanned page,
is stored as a **placeholder** — the source with its original file and no passages yet (``meta.awaiting``:
``asr`` or ``ocr``) — with a job in the store (``footnote.store.recognition``). Any ``footnote worker`` that
reaches the store then claims one job at a time (a lease, renewed while it works: a killed worker's job passes to
another), reads the original from the store, recognises it with its own models, and writes the source's passages
under the same id, collection and origin — exactly what an ingest that recognised it would have written, so
ingesting the folder again finds it unchanged. Its passages then join the embedding backlog that the workers
embed. A job that fails is released with its error and tried again, at most ``backlog.recognition_tries`` times.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from footnote.corpus.loaders.audio import load_audio
from footnote.corpus.loaders.base import LoadContext, make_source, media_type, read_bytes
from footnote.corpus.loaders.pdf import PDF_SUFFIXES, load_pdf, needs_ocr
from footnote.corpus.loaders.scans import IMAGE_SUFFIXES, load_image
from footnote.errors import FootnoteError, InputError
from footnote.records.fragments import Document, Source
from footnote.settings import Settings
from footnote.store.recognition import RecognitionJob, Task

if TYPE_CHECKING:
    from footnote.corpus.ingest import IngestStore

log = logging.getLogger(__name__)

#: What ``meta.awaiting`` says of a placeholder, by task (the chat and ``footnote sources`` show it).
AWAITING = {Task.ASR: "speech recognition", Task.OCR: "OCR"}


def placeholder(file: Path, data: bytes, ctx: LoadContext, task: Task) -> Source:
    """The source a recording or scan is stored as until a worker recognises it: its original, no passages."""
    c = ctx.settings.corpus
    kind = c.transcript_kind if task is Task.ASR else (ctx.kind or c.default_text_kind)
    return make_source(
        id=ctx.source_id(file), kind=kind, title=file.stem, lang=ctx.lang or c.default_lang,
        content_hash="awaiting:" + ctx.fingerprint(data, task.value), original=data, original_name=file.name,
        media=media_type(file), origin=ctx.origin(file),
        meta={"awaiting": AWAITING[task], "fragments": "0"}, collection=ctx.collection,
    )


def needs_recognition(file: Path) -> bool:
    """Whether ``ingest --recognise-later`` leaves ``file`` to a worker for OCR: a scanned page (an image), or a PDF
    with a page without a text layer (recordings are decided by the ingest: those no transcript took)."""
    suffix = file.suffix.lower()
    if suffix in IMAGE_SUFFIXES:  # one that is not an image at all fails here, at once, as a plain ingest says
        return _looks_like_image(file)
    if suffix in PDF_SUFFIXES:
        try:
            return needs_ocr(file, read_bytes(file))
        except InputError:
            return False
    return False


def _looks_like_image(file: Path) -> bool:
    from PIL import Image

    try:
        with Image.open(file) as img:
            return img.width > 0 and img.height > 0
    except Exception:  # anything Pillow cannot open is read (and refused) by the ingest itself
        return False


def options_of(ctx: LoadContext) -> dict[str, str | None]:
    """The load options a worker needs to recognise the file as the ingest would have."""
    return {"kind": ctx.kind, "lang": ctx.lang}


class Recognizer:
    """Runs claimed jobs in one worker process (``footnote worker``): the transcriber is built on first need."""

    def __init__(self, settings: Settings, store: IngestStore, holder: str) -> None:
        self.settings = settings
        self.store = store
        self.holder = holder
        self._transcriber = None

    def tasks(self) -> tuple[Task, ...]:
        """What this machine can recognise: speech when the speech model is installed, scans when Tesseract is."""
        from footnote.corpus.ocr import Ocr

        out = []
        if (self.settings.models.dir_path / self.settings.asr.model / "model.bin").is_file():
            out.append(Task.ASR)
        if Ocr(self.settings.ocr).available():
            out.append(Task.OCR)
        return tuple(out)

    def _documents(self, job: RecognitionJob, src: Source, data: bytes) -> Document:
        name = os.path.basename(src.original_name or src.id.rsplit("/", 1)[-1]) or "original"
        with tempfile.TemporaryDirectory(prefix="footnote-recognise-") as tmp:
            path = Path(tmp) / name
            path.write_bytes(data)
            ctx = LoadContext(self.settings, job.options.get("kind"), job.options.get("lang"), Path(tmp),
                              src.collection, known_ids={Path(os.path.abspath(path)).as_posix(): src.id})
            if job.task is Task.ASR:
                if self._transcriber is None:
                    from footnote.corpus.ingest_audio import make_transcriber

                    self._transcriber = make_transcriber(self.settings)  # type: ignore[assignment]
                docs = list(load_audio(path, ctx, self._transcriber))  # type: ignore[arg-type]
            elif path.suffix.lower() in PDF_SUFFIXES:
                docs = [d for d in load_pdf(path, ctx) if not d.partial]
            else:
                docs = [d for d in load_image(path, ctx) if not d.partial]
        if not docs:
            raise InputError(src.id, "nothing was recognised")
        doc = docs[-1]  # its path keeps the file's suffix: a scan's load hash is kept as an ingest keeps it
        return dataclasses.replace(doc, source=dataclasses.replace(doc.source, origin=src.origin))

    def run_one(self, job: RecognitionJob, stop: threading.Event | None = None) -> int | None:
        """Recognise one claimed job and write its source's passages; the passages written (None: the source was
        removed or replaced meanwhile). The job is finished either way; an error releases it with the reason."""
        from footnote.corpus.ingest import Ingestor

        try:
            src = self.store.get_source(job.source_id)
            original = self.store.get_original(job.source_id)
            if src is None or original is None or not src.content_hash.startswith("awaiting:"):
                self.store.finish_recognition_job(job.source_id, self.holder)  # gone, or ingested otherwise since
                return None
            try:
                doc = self._documents(job, src, original.data)
            except InputError as e:  # named by the file it came from, not the worker's copy of it
                raise InputError(src.id, e.problem, e.line) from e
            doc, frags = Ingestor(self.settings, self.store, None).prepare(doc)
            if self.store.source_hash(job.source_id) != src.content_hash:  # replaced while it was recognised
                self.store.finish_recognition_job(job.source_id, self.holder)
                return None
            self.store.put_source(doc.source, frags, None, doc.original, cues=doc.cues)
        except FootnoteError as e:
            log.warning("recognising %s failed: %s", job.source_id, e.message)
            self.store.finish_recognition_job(job.source_id, self.holder, error=e.message)
            raise
        except Exception as e:  # a recogniser's bug fails this job, never the worker
            log.exception("recognising %s failed", job.source_id)
            self.store.finish_recognition_job(job.source_id, self.holder, error=f"{type(e).__name__}: {e}")
            raise FootnoteError(f"recognising {job.source_id} failed: {type(e).__name__}: {e}") from e
        self.store.finish_recognition_job(job.source_id, self.holder)
        return len(frags)
