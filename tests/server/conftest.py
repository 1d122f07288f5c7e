"""A real server over the demo corpus for the API and browser tests (session-scoped).

The store is a real SQLite file in a temporary folder, filled by the real ingestion from ``demo/``
plus one extra source whose text carries a ``<script>`` tag (the escaping test). The embedder is the
deterministic ``hash`` one (fast on 2 cores); the server is uvicorn on a free loopback port in a thread.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from serverkit import LiveServer, build_store, serving

from footnote.corpus.ingest_report import IngestStatus
from footnote.corpus.ocr import Ocr
from footnote.engine import Engine
from footnote.settings import Settings, load_settings
from footnote.testing import under_ci

FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats"
HAVE_OCR = Ocr(Settings().ocr).available()


@pytest.fixture(scope="session")
def served_store(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> tuple[Path, Settings]:
    if not (demo_dir / "lectures").is_dir():
        pytest.fail(f"the demo corpus is missing under {demo_dir}")
    root = tmp_path_factory.mktemp("served")
    return root, build_store(root, demo_dir)


@pytest.fixture(scope="session")
def live(served_store: tuple[Path, Settings]) -> Iterator[LiveServer]:
    root, settings = served_store
    with serving(settings, root) as server:
        yield server


@pytest.fixture(scope="session")
def archive(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Iterator[LiveServer]:
    """A live server over one file of each archive format (tests/data/formats; a scan when Tesseract is there)."""
    root = tmp_path_factory.mktemp("archive")
    folder = root / "archive"
    folder.mkdir()
    for name in ("report.docx", "book.epub", "marrowick-light.html", "lecture.mp4"):
        shutil.copy(FORMATS / name, folder / name)
    if HAVE_OCR:
        shutil.copy(shared_dir / "data/scans/phototest.tif", folder / "phototest.tif")
    settings = load_settings(None, **{"store.url": str(root / "store.db"), "embedder.name": "hash",
                                      "ocr.cache_dir": str(root / "ocr-cache")})
    with Engine.from_settings(settings) as engine:
        report = engine.ingest([folder])
        assert report.ok and report.count(IngestStatus.ADDED) == (5 if HAVE_OCR else 4), report.summary()
        again = engine.ingest([folder])  # an unchanged folder writes nothing
        assert again.count(IngestStatus.UNCHANGED) == report.count(IngestStatus.ADDED), again.summary()
    with serving(settings, root) as live:
        yield live


# --- browser -----------------------------------------------------------------------------------

CHROMIUM = os.environ.get("FOOTNOTE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def _browser_missing(reason: str) -> None:
    message = f"{reason}: install Debian's browser with 'apt-get install chromium' (or set FOOTNOTE_CHROMIUM)"
    if under_ci():
        pytest.fail(message + " — under CI the browser tests must run")
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _browser_missing("the playwright package is not installed")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        _browser_missing(f"no Chromium at {CHROMIUM}")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
