"""A machine-transcribed recording in the web chat: its chip says "machine transcript" and replays the
recording itself from the quoted line (a real Chromium; the recognition is a fixed transcript of a
real 7-second clip of the LibriVox sonnet, so this test needs no speech model)."""

from __future__ import annotations

import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from serverkit import start_server, stop_server

from footnote.corpus.asr import MachineTranscript, iter_samples
from footnote.corpus.ingest import Ingestor
from footnote.engine import Engine
from footnote.models.whisper import SAMPLE_RATE, Segment, Word
from footnote.server.app import create_app
from footnote.settings import load_settings

pytestmark = [pytest.mark.browser, pytest.mark.integration]
TIMEOUT_MS = 30_000
LINES = [(200, 2800, "From fairest creatures we desire increase,"),
         (3500, 6100, "that thereby beauty's rose might never die.")]


class _Fixed:
    name = "fixed"

    def duration(self, path: Path) -> float:
        return 7.0

    def transcribe(self, path: Path, data: bytes, *, language: str | None, progress: object = None) -> MachineTranscript:
        segs = []
        for start, end, text in LINES:
            ws = text.split()
            step = (end - start) // len(ws)
            segs.append(Segment(start, end, text, tuple(Word(start + i * step, start + (i + 1) * step, " " + w)
                                                        for i, w in enumerate(ws))))
        return MachineTranscript(tuple(segs), "en", 0.99, False, 7.0, "fixed")


def test_machine_transcript_chip_says_so_and_plays_the_recording(browser: Any, tmp_path: Path, shared_dir: Path) -> None:
    d = tmp_path / "talks"
    d.mkdir()
    samples = np.concatenate(list(iter_samples(shared_dir / "data/sonnets/p001.mp3")))[int(2.3 * SAMPLE_RATE):int(9.3 * SAMPLE_RATE)]
    with wave.open(str(d / "sonnet.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes((samples * 32767).astype("<i2").tobytes())
    settings = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash"})
    engine = Engine.from_settings(settings)
    assert Ingestor(settings, engine.store, engine.embedder, transcriber=_Fixed()).run([d], transcribe=True).ok
    url, server, thread = start_server(create_app(engine, settings))
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        pg.goto(url + "/")
        pg.wait_for_selector("#status-line:not(:empty)", timeout=TIMEOUT_MS)
        pg.fill("#question", "Which creatures do we desire increase from?")
        pg.click("#ask-button")
        pg.wait_for_function("() => document.querySelector('.turn')?.dataset.done === 'true'", timeout=TIMEOUT_MS)
        pg.wait_for_function("() => document.querySelector('.turn')?.dataset.spans === 'true'",
                             timeout=TIMEOUT_MS)
        chip = pg.locator(".turn__answer .chip--transcript").first
        assert chip.get_attribute("data-transcript") == "machine"
        assert "machine transcript" in (chip.get_attribute("aria-label") or "")
        play = int(chip.get_attribute("data-play-start-ms"))
        assert abs(play - LINES[0][0]) <= 500  # the quoted line, not the whole window
        chip.click()
        pg.wait_for_selector("#viewer:not([hidden]) #viewer-audio:not([hidden])", timeout=TIMEOUT_MS)
        src = pg.evaluate("() => document.getElementById('player').currentSrc")
        assert src.endswith("/api/sources/talks/sonnet.wav")  # the recording itself
    finally:
        ctx.close()
        stop_server(server, thread)
        engine.close()
    assert not errors, errors
