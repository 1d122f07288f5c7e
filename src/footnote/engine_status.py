"""What an engine says about itself (part of the composition root, ``engine.py``): the store's state, the
embedding backlog and the recognition jobs, the gate's calibration, the example questions the chat offers.
A mixin of :class:`~footnote.engine.Engine`."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footnote.models.protocols import ChatModel, Embedder, Reranker
from footnote.store.recognition import Task

if TYPE_CHECKING:
    from footnote.answer.types import Answer
    from footnote.retrieve.pipeline import Retriever
    from footnote.retrieve.types import SearchResult
    from footnote.settings import Settings
    from footnote.store import Store


class EngineStatus:
    """Status, backlog, recognition, gate note and example questions of an engine."""

    if TYPE_CHECKING:  # provided by Engine
        settings: Settings
        store: Store
        embedder: Embedder | None
        reranker: Reranker | None
        chat_models: dict[str, ChatModel]
        _examples: tuple[tuple[int, int], list[Any]] | None
        _examples_lock: threading.Lock

        @property
        def retriever(self) -> Retriever: ...

        def search(self, question: str, *, lang: str | None = None) -> SearchResult: ...

        def answer_result(self, question: str, result: SearchResult, *, fallback: bool | None = None,
                          model_check: bool = True) -> Answer: ...

    def backlog_status(self) -> dict[str, Any]:
        """The embedding state every surface shows (state, percent, rate, ETA, one line)."""
        from footnote.corpus.embedding import describe_backlog

        bound = self.store.embedder_info()
        bl = self.store.backlog()
        return describe_backlog(
            bl, bound=bound[0] if bound else None,
            embedder=self.embedder.name if self.embedder else None, cfg=self.settings.backlog,
            claims=self.store.claim_holders() if bl.pending else (),
        )

    def recognition_status(self) -> dict[str, Any] | None:
        """The speech-recognition and OCR jobs ``ingest --recognise-later`` left for ``footnote worker``: how many
        wait, which a worker holds now, which failed (None when there are none)."""
        jobs = self.store.recognition_jobs()
        if not jobs:
            return None
        now, limit = time.time(), self.settings.backlog.recognition_tries
        waiting = [j for j in jobs if j.until < now and j.tries < limit]
        return {"waiting": len(waiting),
                "waiting_asr": sum(1 for j in waiting if j.task is Task.ASR),
                "waiting_ocr": sum(1 for j in waiting if j.task is Task.OCR),
                "running": [j.to_dict() for j in jobs if j.until >= now],
                "failed": [j.to_dict() for j in jobs if j.error]}

    # -- example questions -------------------------------------------------------------------------
    def example_questions(self) -> list[Any]:
        """Answerable example questions made from the corpus's passages (``footnote.answer.examples``), read
        through a turn's reader and kept for one corpus generation (the first call searches: a second or more)."""
        from footnote.answer.examples import example_questions

        srv = self.settings.server
        reads = self.retriever.corpus()
        key = (reads.generation, self.store.vectors_generation())  # a source changed, or vectors came
        with self._examples_lock:
            if self._examples is not None and self._examples[0] == key:
                return list(self._examples[1])
            answers = None
            if not set(self.chat_models) - {"answer_check"}:  # the extractive answer costs no model call: check
                def answers(q: str, r: SearchResult) -> bool:  # the answer itself, by the rules alone
                    return self.answer_result(q, r, model_check=False).mode.value == "corpus"
            found = example_questions(reads, self.search, answers, n=srv.examples,
                                      scan_sources=srv.examples_scan_sources, max_searches=srv.examples_max_searches,
                                      scan_fragments=srv.examples_scan_fragments)
            self._examples = (key, found)
            return list(found)

    # -- status --------------------------------------------------------------------------------
    def gate_note(self) -> str | None:
        """A line saying the embedder's gate is uncalibrated (borrowed thresholds), else None."""
        if self.embedder is None or self.settings.gate.calibrated(self.embedder.name):
            return None
        fallback = self.settings.gate.uncalibrated_fallback
        return (f"embedder {self.embedder.name} has no calibrated gate thresholds: using {fallback}'s "
                f"(run `footnote calibrate` to fit its own)")

    def status(self) -> dict[str, Any]:
        st = self.store.stats()
        bound = self.store.embedder_info()
        lexical_only = self.embedder is None or st.embedded == 0
        gate = self.settings.gate
        emb = self.embedder.name if self.embedder else None
        return {
            "store": st.url,
            "empty": st.fragments == 0,
            "sources": st.sources,
            "fragments": st.fragments,
            "embedded": st.embedded,
            "by_kind": st.by_kind,
            "by_lang": st.by_lang,
            "embedder": emb,
            "embedder_model": _model_path(self.embedder),
            "embedder_model_installed": _model_installed(self.embedder),
            "store_embedder": bound[0] if bound else ("none" if st.fragments else None),
            "dim": bound[1] if bound else None,
            "gate_thresholds": None if emb is None else emb if gate.calibrated(emb) else gate.uncalibrated_fallback,
            "gate_calibrated": None if emb is None else gate.calibrated(emb),
            "gate_pairs": None if emb is None else gate.pairs_status(emb, sorted(st.by_lang)),
            "lexical_only": lexical_only,
            "embedding": self.backlog_status(),
            "recognition": self.recognition_status(),
            "reranker": self.reranker.name if self.reranker else "fusion",
            "chat_models": {role: m.name for role, m in self.chat_models.items()},
        }


def _model_path(embedder: Embedder | None) -> str | None:
    """Where the embedder's model file is, for those installed with ``footnote models install``."""
    path = getattr(embedder, "model_path", None)
    return str(path) if path is not None else None


def _model_installed(embedder: Embedder | None) -> bool | None:
    """Whether that model file is there (None: the embedder has no installed model file)."""
    path = _model_path(embedder)
    return None if path is None else Path(path).is_file()
