"""Helpers for the speech-recognition tests: clips cut from the shared LibriVox recording, the real
Whisper recogniser (skipped with a reason only when the model is genuinely not installed; under CI it
must be: `make models` installs it), and a scripted recogniser for interruption tests."""

from __future__ import annotations

import wave
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from footnote.corpus.asr import AudioTranscriber, TranscriptCache, iter_samples
from footnote.models.whisper import SAMPLE_RATE, Recognition, Segment, WhisperRecognizer, Word
from footnote.settings import Settings, load_settings
from footnote.testing import under_ci


def write_wav(path: Path, samples: np.ndarray) -> Path:
    pcm = (np.clip(samples, -1, 1) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(pcm.tobytes())
    return path


def clip(mp3: Path, start_s: float, end_s: float) -> np.ndarray:
    samples = np.concatenate(list(iter_samples(mp3)))
    return samples[int(start_s * SAMPLE_RATE): int(end_s * SAMPLE_RATE)]


def asr_settings(tmp_path: Path, **over: object) -> Settings:
    return load_settings(None, **{"store.url": str(tmp_path / "store.db"), "embedder.name": "hash",
                                  "asr.cache_dir": str(tmp_path / "asr-cache"), "asr.nice": 0, **over})


def whisper_or_skip(settings: Settings) -> WhisperRecognizer:
    rec = WhisperRecognizer(settings.asr, settings.models.dir_path)
    if not (rec.home / "model.bin").is_file():
        msg = f"whisper-base is not installed in {rec.home} (footnote models install whisper-base; make models)"
        if under_ci():
            raise RuntimeError(msg)
        pytest.skip(msg)
    return rec


def real_transcriber(settings: Settings) -> AudioTranscriber:
    return AudioTranscriber(settings.asr, whisper_or_skip(settings), TranscriptCache(settings.asr.cache_path))


class ScriptedRecognizer:
    """One segment per 10 s of speech-length samples (``word N`` with exact times); ``on_call`` may raise
    (a Ctrl-C) on a given call — the recognition of that window never finishes."""

    def __init__(self, on_call: Callable[[int], None] | None = None) -> None:
        self.calls: list[int] = []  # samples per call
        self.on_call = on_call

    @property
    def name(self) -> str:
        return "scripted"

    def recognize(self, samples: np.ndarray, *, language: str | None) -> Recognition:
        self.calls.append(len(samples))
        if self.on_call is not None:
            self.on_call(len(self.calls))
        ms = len(samples) * 1000 // SAMPLE_RATE
        segs = []
        for k, start in enumerate(range(0, ms - 500, 10_000)):
            end = min(start + 9_000, ms)
            segs.append(Segment(start, end, f"word{k} again.",
                                (Word(start, start + 2000, f" word{k}"), Word(start + 2500, end, " again."))))
        return Recognition(tuple(segs), language or "en", 1.0 if language else 0.9)
