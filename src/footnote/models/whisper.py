"""Whisper speech recognition on the CPU: faster-whisper (CTranslate2) over the installed model folder.

The model is the one ``footnote models install whisper-base`` put under ``models.dir`` (its
``model.bin`` verified by a pinned sha256 when installed); it is loaded lazily, on the first
recognition, with ``local_files_only=True`` from that folder — no model hub is ever contacted. A model
that is not installed is a :class:`~footnote.errors.ModelError` saying how to install it.

:class:`WhisperRecognizer` turns 16 kHz mono float32 samples into segments with word timings
(milliseconds, relative to the samples given) and the language spoken (forced, or detected with its
probability).
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from footnote.cpu import available_cores
from footnote.errors import ModelError
from footnote.settings import AsrSettings

log = logging.getLogger(__name__)

SAMPLE_RATE = 16_000


@dataclass(frozen=True)
class Word:
    start_ms: int
    end_ms: int
    text: str  # as recognised, with its leading space and punctuation


@dataclass(frozen=True)
class Segment:
    start_ms: int
    end_ms: int
    text: str
    words: tuple[Word, ...] = ()


@dataclass(frozen=True)
class Recognition:
    segments: tuple[Segment, ...]
    language: str
    language_probability: float  # 1.0 when the language was forced


class Recognizer(Protocol):
    """Speech → timed words. ``name`` identifies the model and every setting that changes its output."""

    @property
    def name(self) -> str: ...

    def recognize(self, samples: np.ndarray, *, language: str | None) -> Recognition: ...


class WhisperRecognizer:
    """faster-whisper over ``<models.dir>/<asr.model>``; thread-safe (one recognition at a time)."""

    def __init__(self, settings: AsrSettings, models_dir: Path) -> None:
        self.settings = settings
        self.home = models_dir / settings.model
        self._model: Any = None
        self._lock = threading.Lock()
        self._niced = False

    @property
    def name(self) -> str:
        s = self.settings
        return f"{s.model}|beam={s.beam_size}|{s.compute_type}|vad={s.vad}"

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        if not (self.home / "model.bin").is_file():
            raise ModelError(f"the speech model {self.settings.model} is not installed in {self.home}: run "
                             f"`footnote models install {self.settings.model}` (or `make models`)")
        if self.settings.nice > 0 and not self._niced:
            try:  # the ingest yields the CPU to a server on the same machine
                os.nice(self.settings.nice)
            except OSError as e:  # pragma: no cover - a platform without nice
                log.info("could not lower the CPU priority: %s", e)
            self._niced = True
        try:
            from faster_whisper import WhisperModel
        except ImportError as e:  # pragma: no cover - a dependency of the project
            raise ModelError(f"faster-whisper is not installed ({e}); reinstall footnote") from e
        threads = self.settings.threads or available_cores()
        try:
            self._model = WhisperModel(str(self.home), device="cpu", compute_type=self.settings.compute_type,
                                       cpu_threads=threads, local_files_only=True)
        except (RuntimeError, ValueError, OSError) as e:
            raise ModelError(f"cannot load the speech model from {self.home}: {e}") from e
        log.info("loaded %s (%s, %d threads)", self.home, self.settings.compute_type, threads)
        return self._model

    def recognize(self, samples: np.ndarray, *, language: str | None) -> Recognition:
        with self._lock:
            model = self._load()
            if language and language not in model.supported_languages:
                raise ModelError(f"{self.settings.model} does not know the language {language!r} (it knows "
                                 f"{', '.join(sorted(model.supported_languages))})")
            segments, info = model.transcribe(
                samples, language=language or None, beam_size=self.settings.beam_size, word_timestamps=True,
                vad_filter=self.settings.vad, condition_on_previous_text=True,
            )
            out: list[Segment] = []
            for seg in segments:  # a generator: recognition happens while it is read
                words = tuple(Word(round(w.start * 1000), round(w.end * 1000), w.word) for w in (seg.words or ()))
                text = " ".join(seg.text.split())
                if text:
                    out.append(Segment(round(seg.start * 1000), round(seg.end * 1000), text, words))
        prob = 1.0 if language else float(info.language_probability)
        return Recognition(tuple(out), str(info.language), prob)
