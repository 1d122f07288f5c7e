"""Recognition as shared work (``footnote ingest --recognise-later`` and ``footnote worker``; docs/postgres.md):
the ingest stores each scan and each recording without a transcript as a placeholder with a job; worker processes
— on SQLite, and two at once on PostgreSQL — recognise each exactly once and write what an ingest that recognised
it would have written, so the folder ingested again is unchanged; a file that cannot be read fails its job with the
reason, and the worker still ends."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from asr_support import asr_settings, clip, whisper_or_skip, write_wav

from footnote.corpus.ingest_report import IngestStatus
from footnote.engine import Engine
from footnote.settings import load_settings
from footnote.store import open_store

FOOTNOTE = str(Path(sys.executable).with_name("footnote"))
SCANS = ("phototest.tif", "eurotext.tif", "8071_093.3B.tif", "8087_054.3B.tif")


def _worker(env: dict[str, str], *extra: str, timeout: int = 600) -> subprocess.Popen[str]:
    return subprocess.Popen([FOOTNOTE, "worker", "--until-empty", "--poll", "0.1", "--workers", "1", "--json", *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _done(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    report: dict[str, object] = json.loads(out)
    return report


def _env(store: str, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "FOOTNOTE_STORE": store, "FOOTNOTE_CONFIG": str(tmp_path / "none.toml")}


def test_a_scan_left_for_a_worker(tmp_path: Path, shared_dir: Path, ocr_installed: None) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    shutil.copy(shared_dir / "data/scans/phototest.tif", folder / "page.tif")
    (folder / "note.md").write_text("---\ntitle: A note\n---\nThe archive holds one scanned page.\n", encoding="utf-8")
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash",
                                      "ocr.cache_dir": str(tmp_path / "ocr-cache")})
    (tmp_path / "none.toml").write_text(f'[ocr]\ncache_dir = "{tmp_path / "ocr-cache"}"\n', encoding="utf-8")
    with Engine.from_settings(settings) as engine:
        report = engine.ingest([folder], recognise_later=True)
        statuses = {e.source_id: e.status for e in report.entries}
        assert statuses == {"archive/note.md": IngestStatus.ADDED, "archive/page.tif": IngestStatus.DEFERRED}
        held = engine.store.get_source("archive/page.tif")
        assert held is not None and held.meta["awaiting"] == "OCR" and engine.store.fragments_of(held.id) == []
        assert engine.store.get_original(held.id).data == (folder / "page.tif").read_bytes()  # type: ignore[union-attr]
        assert engine.status()["recognition"]["waiting"] == 1
        assert not engine.search("quick brown dog jumped").candidates or all(
            c.fragment.source_id != held.id for c in engine.search("quick brown dog jumped").candidates)
    done = _done(_worker(_env(settings.store.url, tmp_path)))
    assert done["recognised"] == 1 and done["to_recognise"] == 0 and done["remaining"] == 0
    with Engine.from_settings(settings) as engine:
        page = engine.store.get_source("archive/page.tif")
        assert page is not None and "awaiting" not in page.meta and page.meta["ocr_pages"] == "1"
        assert page.origin == (folder / "page.tif").resolve().as_posix()  # the file's own place, not the worker's
        hits = engine.search("quick brown dog jumped over the lazy fox").candidates
        assert hits and hits[0].fragment.source_id == "archive/page.tif"
        again = engine.ingest([folder], recognise_later=True)  # what the worker wrote is what an ingest writes
        assert {e.status for e in again.entries} == {IngestStatus.UNCHANGED}, again.entries
        assert engine.status()["recognition"] is None


def test_a_recording_left_for_a_worker(tmp_path: Path, shared_dir: Path) -> None:
    settings = asr_settings(tmp_path)
    whisper_or_skip(settings)
    folder = tmp_path / "talks"
    folder.mkdir()
    mp3 = next((shared_dir / "data").rglob("*.mp3"))
    write_wav(folder / "talk.wav", clip(mp3, 30.0, 42.0))
    (tmp_path / "none.toml").write_text(f'[asr]\ncache_dir = "{tmp_path / "asr-cache"}"\nnice = 0\n', encoding="utf-8")
    with Engine.from_settings(settings) as engine:
        report = engine.ingest([folder], recognise_later=True)
        assert [e.status for e in report.entries] == [IngestStatus.DEFERRED]
    done = _done(_worker(_env(settings.store.url, tmp_path)))
    assert done["recognised"] == 1 and done["recognition_failed"] == 0
    with Engine.from_settings(settings) as engine:
        talk = engine.store.get_source("talks/talk.wav")
        assert talk is not None and talk.meta["transcript_by"] == "machine" and talk.kind == "track_transcript"
        assert engine.store.fragments_of(talk.id) and engine.store.get_cues(talk.id)
        again = engine.ingest([folder], transcribe=True)  # recognised once: an ingest that would recognise it agrees
        assert [e.status for e in again.entries] == [IngestStatus.UNCHANGED]


def test_a_file_that_cannot_be_read_fails_its_job_with_the_reason(tmp_path: Path, shared_dir: Path,
                                                                   ocr_installed: None) -> None:
    """A scan whose header reads but whose pixels do not fails at the worker, named by its own id; one that is no image
    at all fails at the ingest, at once; removing a placeholder takes its job; an ingest starts a given-up job over."""
    folder = tmp_path / "bad"
    folder.mkdir()
    whole = (shared_dir / "data/scans/phototest.tif").read_bytes()
    (folder / "torn.tif").write_bytes(whole[: len(whole) // 3])  # the header and a third of the strips
    (folder / "empty.png").write_bytes(b"")
    (folder / "gone.tif").write_bytes(whole)
    (tmp_path / "none.toml").write_text("[backlog]\nrecognition_tries = 2\n", encoding="utf-8")
    settings = load_settings(tmp_path / "none.toml", **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash"})
    with Engine.from_settings(settings) as engine:
        report = engine.ingest([folder], recognise_later=True)
        statuses = {e.source_id or e.path: e.status for e in report.entries}
        assert statuses["bad/torn.tif"] is IngestStatus.DEFERRED and statuses["bad/gone.tif"] is IngestStatus.DEFERRED
        assert [e.error for e in report.entries if e.status is IngestStatus.FAILED] == [f"{folder / 'empty.png'}: empty file"]
        assert engine.store.delete_sources(["bad/gone.tif"]) == ["bad/gone.tif"]
        assert [j.source_id for j in engine.store.recognition_jobs()] == ["bad/torn.tif"]  # the removed one's job went
    done = _done(_worker(_env(settings.store.url, tmp_path)))  # ends: the job is past its tries
    assert done["recognised"] == 0 and done["recognition_failed"] == 2 and done["to_recognise"] == 1
    status = subprocess.run([FOOTNOTE, "status"], env=_env(settings.store.url, tmp_path), capture_output=True,
                            text=True, timeout=120)
    assert "failed:    bad/torn.tif (ocr, 2 tries): bad/torn.tif: " in status.stdout, status.stdout
    assert "footnote-recognise-" not in status.stdout  # named by the file, never the worker's temporary copy
    with Engine.from_settings(settings) as engine:  # given up on: the next ingest starts it over
        again = engine.ingest([folder], recognise_later=True)
        [torn] = [e for e in again.entries if e.source_id == "bad/torn.tif"]
        assert torn.status is IngestStatus.DEFERRED and "again (it failed 2 times" in (torn.error or "")
        # (the removed scan's file is still in the folder: the ingest leaves it for a worker again, as it should)
        assert [(j.source_id, j.tries) for j in engine.store.recognition_jobs()] == [("bad/gone.tif", 0),
                                                                                     ("bad/torn.tif", 0)]


@pytest.mark.integration
def test_two_workers_recognise_each_scan_once_on_postgres(pg_url: str, tmp_path: Path, shared_dir: Path,
                                                         ocr_installed: None) -> None:
    folder = tmp_path / "scans"
    folder.mkdir()
    for name in SCANS:
        shutil.copy(shared_dir / "data/scans" / name, folder / name)
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    env = _env(pg_url, tmp_path)
    made = subprocess.run([FOOTNOTE, "ingest", str(folder), "--embedder", "hash", "--recognise-later", "--json"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["summary"]["deferred"] == len(SCANS)
    procs = []
    for name in ("one", "two"):
        models = tmp_path / f"models-{name}"  # each "machine" its own models directory (OCR needs none)
        models.mkdir()
        procs.append(_worker({**env, "FOOTNOTE_MODELS_DIR": str(models)}))
    reports = [_done(p) for p in procs]
    assert sum(int(r["recognised"]) for r in reports) == len(SCANS)  # each scan once: no job held by two workers
    assert all(r["to_recognise"] == 0 and r["remaining"] == 0 for r in reports)
    store = open_store(pg_url, load_settings(None).store, create=False)
    try:
        assert store.recognition_jobs() == []
        for name in SCANS:
            src = store.get_source(f"scans/{name}")
            assert src is not None and "awaiting" not in src.meta and store.fragments_of(src.id), name
        assert store.backlog().pending == 0  # and embedded by the same workers
    finally:
        store.close()


def test_a_scanned_pdf_is_left_for_a_worker_and_a_text_pdf_is_not(tmp_path: Path, shared_dir: Path,
                                                                    ocr_installed: None) -> None:
    from reportlab.pdfgen import canvas

    folder = tmp_path / "pdfs"
    folder.mkdir()
    scanned = canvas.Canvas(str(folder / "scanned.pdf"))  # a page that is only an image: no text layer
    scanned.drawImage(str(shared_dir / "data/scans/phototest.tif"), 36, 200, width=520, height=380)
    scanned.save()
    text = canvas.Canvas(str(folder / "typed.pdf"))
    text.drawString(72, 720, "The harbour master keeps the tide tables in the north office.")
    text.save()
    (tmp_path / "none.toml").write_text(f'[ocr]\ncache_dir = "{tmp_path / "ocr-cache"}"\n', encoding="utf-8")
    settings = load_settings(tmp_path / "none.toml", **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash"})
    with Engine.from_settings(settings) as engine:
        report = engine.ingest([folder], recognise_later=True)
        assert {e.source_id: e.status for e in report.entries} == {
            "pdfs/scanned.pdf": IngestStatus.DEFERRED, "pdfs/typed.pdf": IngestStatus.ADDED}
    assert _done(_worker(_env(settings.store.url, tmp_path)))["recognised"] == 1
    with Engine.from_settings(settings) as engine:
        hits = engine.search("quick brown dog jumped over the lazy fox").candidates
        assert hits and hits[0].fragment.source_id == "pdfs/scanned.pdf"
    # ingested again where Tesseract is not: the bytes a worker recognised are unchanged, not left again
    no_ocr = settings.with_overrides(**{"ocr.enabled": False})
    with Engine.from_settings(no_ocr) as engine:
        again = engine.ingest([folder], recognise_later=True)
        # (the typed PDF is loaded again: OCR being on or off is part of every PDF's hash, as in any ingest)
        assert {e.source_id: e.status for e in again.entries}["pdfs/scanned.pdf"] is IngestStatus.UNCHANGED
        assert engine.store.recognition_jobs() == []
        assert engine.store.fragments_of("pdfs/scanned.pdf")
