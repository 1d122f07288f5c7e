"""The composition root: ``Engine.from_settings`` builds store, models and stages once; the CLI, the
server and the evaluation all go through it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace as dc_replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footnote.blas import limit_blas_threads
from footnote.engine_setup import (
    Question,
    check_question,
    embedder_for,
    missing_model_message,
    require_installed_model,
    settings_for_store,
    store_embedder,
)
from footnote.engine_status import EngineStatus
from footnote.errors import (
    FootnoteError,
    NotFound,
    StoreError,
)
from footnote.models.embedders import make_embedder
from footnote.models.protocols import ChatModel, Embedder, Reranker
from footnote.settings import Settings, load_settings
from footnote.store import Store, open_store
from footnote.store.conversations import TurnRecord, check_conversation_id, stored_answer

if TYPE_CHECKING:
    from footnote.answer.followup import PriorTurn
    from footnote.answer.pipeline import Answerer
    from footnote.answer.types import Answer, Event
    from footnote.corpus.embedding import EmbedProgressSink, EmbedReport
    from footnote.corpus.ingest import IngestProgressSink, IngestReport
    from footnote.corpus.memory_import import MemoryImporter, MemoryImportReport
    from footnote.records.memory import MemoryNote
    from footnote.retrieve.pipeline import Retriever
    from footnote.retrieve.types import SearchResult

log = logging.getLogger(__name__)


class Engine(EngineStatus):
    """Holds the store and the models; stages are built from them lazily."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        embedder: Embedder | None,
        reranker: Reranker | None = None,
        chat_models: dict[str, ChatModel] | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.reranker = reranker
        self.chat_models: dict[str, ChatModel] = dict(chat_models or {})
        if embedder is not None:
            store.bind_embedder(embedder.name, embedder.dim)
        self._retriever: Any = None
        self._answerer: Any = None
        self._examples: tuple[tuple[int, int], list[Any]] | None = None
        self._examples_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings | None = None, *, create: bool = True, **overrides: Any) -> Engine:
        """Build an engine from settings (or ``load_settings(**overrides)``).

        ``create=False`` (commands that only read): a store that does not exist is an error, not a new one.
        An embedder left unset in the settings follows the store's (see :func:`settings_for_store`)."""
        settings = settings or load_settings(**overrides)
        limit_blas_threads(settings.store.blas_threads)
        require_installed_model(settings, create=create)
        store = open_store(settings.store.url, settings.store, create=create)
        try:
            from footnote.models.chat import make_chat_models
            from footnote.models.rerankers import make_reranker

            settings = settings_for_store(settings, store)
            embedder = make_embedder(settings.embedder, settings.models.dir_path, store_binding=store.embedder_info())
            reranker = make_reranker(settings.retrieve)
            chat_models = make_chat_models(settings.models)
            engine = cls(settings, store, embedder, reranker, chat_models)
        except BaseException:
            store.close()
            raise
        note = engine.gate_note()
        if note:
            log.warning("%s", note)
        return engine

    # -- ingest --------------------------------------------------------------------------------
    def ingest(
        self,
        paths: Sequence[str | Path],
        *,
        kind: str | None = None,
        lang: str | None = None,
        prune: bool = False,
        progress: Callable[[int, int, str], None] | None = None,
        collection: str | None = None,
        audio: str | Path | None = None,
        events: IngestProgressSink | None = None,
        wait: bool = True,
        workers: int | None = None,
        transcribe: bool | None = None,
        warm_sentences: bool = True,
        recognise_later: bool = False,
    ) -> IngestReport:
        """Index ``paths`` (searchable lexically at once); with ``wait`` embed the backlog before returning, then
        (``warm_sentences``) the sentence vectors searches compare with (:meth:`warm_sentences`).
        ``transcribe`` (None: ``settings.asr.enabled``) recognises the speech of audio without a transcript;
        ``recognise_later`` leaves that and OCR to ``footnote worker`` (``footnote.corpus.recognition``)."""
        from footnote.corpus.ingest import Ingestor

        report = Ingestor(self.settings, self.store, self.embedder).run(
            paths, kind=kind, lang=lang, prune=prune, progress=progress, collection=collection, audio=audio,
            events=events, wait=wait, workers=workers, transcribe=transcribe, recognise_later=recognise_later
        )
        if warm_sentences and wait and not report.interrupted:
            report = self.warm_sentences(report)
        return report

    def warm_sentences(self, report: IngestReport, announce: Callable[[], None] | None = None) -> IngestReport:
        """Once every fragment has its vector: the sentence vectors the gate and the extractive answer compare a
        question with, made now rather than by the first searches that touch each passage
        (``backlog.warm_sentences_max_fragments``). ``announce`` is called just before they are made (not when the
        store is over the cap or still embedding). Ctrl-C stops it: what is made is kept, the rest is made on use."""
        cap = self.settings.backlog.warm_sentences_max_fragments
        if self.embedder is None or cap <= 0:
            return report
        stats = self.store.stats()
        if stats.fragments > cap:
            return dc_replace(report, sentences_skipped=f"{stats.fragments:,} fragments > "
                                                        f"backlog.warm_sentences_max_fragments ({cap:,})")
        if self.store.backlog().pending:
            return dc_replace(report, sentences_skipped="fragments still wait for vectors")
        if not stats.fragments:
            return report
        if announce is not None and report.fragments:  # an unchanged re-ingest has nothing new to announce
            announce()
        t0 = time.perf_counter()
        skipped = ""
        made = 0
        try:
            made = self.answerer.warm_sentences(self.retriever.corpus(), cap)
        except KeyboardInterrupt:
            skipped = "interrupted (the rest are made when first used)"
        except FootnoteError as e:  # the corpus is in and embedded: a failed head start never fails the ingest
            log.warning("sentence vectors were not made ahead: %s", e.message)
            skipped = f"failed ({e.message}); they are made when first used"
        return dc_replace(report, sentences_warmed=made, sentences_seconds=time.perf_counter() - t0,
                          sentences_skipped=skipped)

    def embed_backlog(
        self, *, progress: EmbedProgressSink | None = None, workers: int | None = None,
        stop: Any = None, background: bool = False,
    ) -> EmbedReport:
        """Embed every fragment still without a vector (resumable; see ``footnote.corpus.embedding``)."""
        from footnote.corpus.embedding import BacklogEmbedder, EmbedReport

        if self.embedder is None:
            return EmbedReport(0, 0, self.store.backlog().pending, 0.0, 0, "none")
        return BacklogEmbedder(self.settings, self.store, self.embedder, background=background).run(
            progress=progress, workers=workers, stop=stop
        )

    # -- retrieval -----------------------------------------------------------------------------
    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            from footnote.retrieve.pipeline import Retriever
            from footnote.retrieve.runners import lane_runner

            # one lane runner for this store's kind: batched round trips (PostgreSQL) or calls one by one (SQLite)
            self._retriever = Retriever(self.settings, self.store, self.embedder, self.reranker, self._router(),
                                        lane_runner(self.store, self.settings))
        return self._retriever

    def question(self, question: str) -> Question:
        """``question`` checked and normalised (see :func:`check_question`), once: a :class:`Question` is already."""
        if isinstance(question, Question):
            return question
        return check_question(question, self.settings.answer.max_question_chars)

    def _router(self) -> ChatModel | None:
        """The router (a turn passes its budget, deadline and stop flag, to the search that calls it)."""
        return self.chat_models.get("router")

    def search(self, question: str, *, lang: str | None = None) -> SearchResult:
        result: SearchResult = self.retriever.search(self.question(question), lang=lang)
        return result

    # -- answering -----------------------------------------------------------------------------
    @property
    def answerer(self) -> Answerer:
        if self._answerer is None:
            from footnote.answer.pipeline import Answerer
            from footnote.answer.prose import MentionIndex

            a = self.settings.answer
            mentions = MentionIndex(min_title_chars=a.prose_min_title_chars, min_variant_words=a.prose_min_variant_words)
            self._answerer = Answerer(self.settings, self.embedder, self.chat_models, mentions=mentions)
        return self._answerer

    def ask(
        self, question: str, *, fallback: bool | None = None, conversation_id: str | None = None, remember: bool = False,
        owner: str | None = None,
    ) -> Answer:
        """The answer to ``question``. With ``conversation_id`` the question is a follow-up in that
        conversation (NotFound if there is none) and the turn is saved there; with ``remember`` and no
        id, the turn starts a new conversation (``Answer.conversation_id`` names it). ``owner``: the
        reader the conversation belongs to (``owner_of`` their token; another reader's id is NotFound);
        None: any conversation (the CLI)."""
        from footnote.answer.turn import final_answer

        q = self.question(question)
        history = self.history(conversation_id, owner) if conversation_id is not None else ()
        answer: Answer = final_answer(self._turn(q, fallback, None, history))
        if conversation_id is not None or remember:
            answer = self._save(q, conversation_id, answer, owner)
        return answer

    def answer_result(self, question: str, result: SearchResult, *, fallback: bool | None = None,
                      model_check: bool = True) -> Answer:
        """Answer from a search already run for ``question`` (the evaluation scores both from one retrieval).
        ``model_check=False``: without ``models.answer_check``."""
        from footnote.answer.turn import final_answer

        answerer = self.answerer
        turn = answerer.open(self.question(question), fallback=fallback, model_check=model_check)
        answer: Answer = final_answer(answerer.answer(turn, result))
        return answer

    def ask_stream(
        self, question: str, *, fallback: bool | None = None, stop: threading.Event | None = None,
        conversation_id: str | None = None, remember: bool = False, owner: str | None = None,
    ) -> Iterator[Event]:
        """The turn as typed events (Understood for a rewritten follow-up, Stage, Token, CitationEvent,
        VerdictEvent, then Done with the Answer, or Error). The question and the conversation are checked
        here, before the stream starts: a bad one raises. Setting ``stop`` (the client went away) ends
        the turn within one model read. ``conversation_id``/``remember``/``owner``: as for :meth:`ask`."""
        q = self.question(question)
        history = self.history(conversation_id, owner) if conversation_id is not None else ()
        _ = self.answerer, self.retriever  # built here: a failure to build the stages raises before the stream
        events: Iterator[Event] = self._streamed(q, fallback, stop, history)
        if conversation_id is not None or remember:
            return self._saving(events, q, conversation_id, owner)
        return events

    def _turn(self, question: str, fallback: bool | None, stop: threading.Event | None,
              history: Sequence[PriorTurn]) -> Iterator[Event]:
        """One turn, composed here and nowhere else: the reader of the corpus opened once (the turn sees the corpus
        as of this moment), a follow-up understood through it, the search given it, the answer from the search's
        result (which hands the reader on)."""
        answerer, retriever = self.answerer, self.retriever
        turn = answerer.open(question, fallback=fallback, stop=stop)
        reads = retriever.corpus()
        if history:
            yield from answerer.understand(turn, reads, history)
        result = retriever.search(turn.question, lang=turn.search_lang, not_pinned=turn.not_pinned(history),
                                  budget=turn.budget, corpus=reads)
        yield from answerer.answer(turn, result)

    def _streamed(self, question: str, fallback: bool | None, stop: threading.Event | None,
                  history: Sequence[PriorTurn]) -> Iterator[Event]:
        """:meth:`_turn` as a stream: an error ends it with an ``Error`` event instead of raising."""
        from footnote.answer.types import Error

        try:
            yield from self._turn(question, fallback, stop, history)
        except FootnoteError as e:
            yield Error(e)

    # -- conversations -------------------------------------------------------------------------
    def history(self, conversation_id: str, owner: str | None = None) -> tuple[PriorTurn, ...]:
        """The earlier turns of a conversation (NotFound when there is none, or it is not ``owner``'s)."""
        from footnote.answer.followup import PriorTurn

        conv = self.store.get_conversation(check_conversation_id(conversation_id), owner)
        if conv is None:
            raise NotFound(f"no conversation {conversation_id!r}")
        return tuple(PriorTurn.from_record(t.question, t.rewritten_question, t.answer) for t in conv.turns)

    def _saving(self, events: Iterator[Event], question: str, conversation_id: str | None,
                owner: str | None) -> Iterator[Event]:
        from footnote.answer.types import Done

        for ev in events:
            yield Done(self._save(question, conversation_id, ev.answer, owner)) if isinstance(ev, Done) else ev

    def _save(self, question: str, conversation_id: str | None, answer: Answer, owner: str | None = None) -> Answer:
        """Append the turn to its conversation; the answer names it. A store that cannot save (or a
        conversation deleted meanwhile) costs the memory, not the answer: the trace says so."""
        rec = TurnRecord(question, stored_answer(answer.to_dict()),
                         answer.trace.rewritten_question if answer.trace is not None else None)
        try:
            cid, n = self.store.append_turn(conversation_id, rec, owner)
        except (StoreError, NotFound) as e:
            log.warning("the turn was not saved: %s", e.message)
            if answer.trace is None:
                return answer
            return dc_replace(answer, trace=answer.trace.with_degraded(f"conversation: the turn was not saved ({e.message})"))
        return dc_replace(answer, conversation_id=cid, turn=n)

    # -- curated memory ------------------------------------------------------------------------
    def memory_importer(self) -> MemoryImporter:
        from footnote.corpus.memory_import import MemoryImporter

        return MemoryImporter(self.settings, self.store, self.embedder)

    def import_memory(self, paths: Sequence[str | Path]) -> MemoryImportReport:
        """Import note files and folders (idempotent; a failing note fails alone)."""
        return self.memory_importer().run(paths)

    def memory_notes(self) -> list[MemoryNote]:
        return self.store.list_memory_notes()

    def memory_summaries(self) -> list[dict[str, Any]]:
        """Every note's list row, with ``missing_sources``: the sources it names that the store no longer
        holds (a pinned note none of whose sources remains does not answer)."""
        from footnote.retrieve.books import BookIndex, address_aliases
        from footnote.retrieve.memory import resolve_refs

        notes = self.store.list_memory_notes()
        aliases = address_aliases(self.settings, BookIndex.from_rows(self.store.list_addresses())) if notes else {}
        return [{**n.summary(), "missing_sources": list(resolve_refs(self.store, n.sources, aliases).missing)}
                for n in notes]

    def put_memory_note(self, note: MemoryNote) -> tuple[MemoryNote, bool]:
        """Check (sources in the store), embed and write one note; (stored, whether it changed)."""
        return self.memory_importer().put(note, path=note.origin or f"note {note.id}")

    def remove_memory_note(self, note_id: str) -> None:
        """Remove a note (NotFound when there is none)."""
        if not self.store.delete_memory_note(note_id):
            raise NotFound(f"no memory note {note_id!r}")

    def close_stages(self) -> None:
        """Stop the stages' worker threads, leaving the store open (an engine sharing another's store)."""
        if self._retriever is not None:
            self._retriever.close()

    def close(self) -> None:
        self.close_stages()
        self.store.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Engine", "Question", "check_question", "embedder_for", "missing_model_message", "require_installed_model",
           "settings_for_store", "store_embedder"]
