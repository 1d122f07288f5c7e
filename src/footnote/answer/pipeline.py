"""``Answerer``: the turn from the gate to the reader ("The flow: Ask", steps 8–12).

search → (bail-out: "not in the corpus", no model call) → outline (model planner, or the extractive
planner) → compact → synthesize (streams; model, or the chosen sentences) → citations resolved on the
server + prose check → (``corpus_insufficient``: fallback, or "not in the corpus" saying what was
searched). ``ask`` consumes ``ask_stream``. Every stage reports counts and milliseconds into the trace.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from typing import Any, Protocol

from footnote.answer import disclaimers
from footnote.answer.abstain import near_miss_titles, outline_abstention
from footnote.answer.citations import (
    CITE,
    Carried,
    KnownNames,
    MentionIndex,
    ProseChecker,
    StreamCleaner,
    clean_citations,
    resolve,
)
from footnote.answer.compact import Compacted, compact
from footnote.answer.extractive import (
    Pick,
    SentenceRanker,
    TermScorer,
    cue_texts,
    extractive_pieces,
    outline_from_picks,
    split_sentences,
)
from footnote.answer.fallback import ask_fallback, attach_citations, probes
from footnote.answer.followup import PriorTurn, Rewrite, TermShare, rewrite
from footnote.answer.memory import (
    background_block,
    background_numbers,
    pinned_fragment,
    pinned_text,
    source_fragments,
)
from footnote.answer.planner import MalformedOutline, plan_outline
from footnote.answer.prose import names_pattern, skel
from footnote.answer.support import SupportScorer, trace_support
from footnote.answer.synthesizer import synth_messages
from footnote.answer.types import (
    Abstention,
    AbstentionReason,
    AbstentionStage,
    Answer,
    AnswerMode,
    CitationEvent,
    Done,
    Error,
    Event,
    Note,
    Outline,
    Stage,
    Token,
    Understood,
    VerdictEvent,
    abstention_dict,
)
from footnote.errors import Cancelled, FootnoteError, ModelError, TurnDeadline, UsageError
from footnote.models.chat import CountingChatModel
from footnote.models.protocols import Budget, ChatModel, Embedder
from footnote.records.fragments import AddressLocator, NoteLocator, TranscriptLocator
from footnote.records.lang import question_lang
from footnote.records.memory import MemoryNote, NoteKind
from footnote.redact import redact, settings_secrets
from footnote.retrieve.books import BookCache, address_aliases
from footnote.retrieve.format import plan_dict, signal_dict, trace_dict
from footnote.retrieve.types import Candidate, MemoryMatch, SearchResult, Verdict
from footnote.settings import Settings
from footnote.store import Store, sources_by_id
from footnote.store.protocol import SentenceVectorStore

log = logging.getLogger(__name__)


class RetrieverLike(Protocol):
    """What the answer stage uses of the retriever: its searches, the corpus's books (follow-ups and
    addresses name them) and its embedder (whose thresholds apply)."""

    books: BookCache
    embedder: Embedder | None

    def search(self, question: str, *, lang: str | None = None, not_pinned: Collection[str] = (),
               budget: Budget | None = None) -> SearchResult: ...

    def probe(self, queries: Sequence[str], *, min_score: float, k: int = 8) -> list[Candidate]: ...


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000.0, 3)


@dataclass
class _Turn:
    """Per-turn state (the Answerer itself is shared by concurrent turns)."""

    question: str
    lang: str
    fallback_on: bool
    models: dict[str, CountingChatModel]
    counters: dict[str, list[int]]
    budget: Budget
    secrets: tuple[str, ...] = ()
    t0: float = field(default_factory=time.perf_counter)
    cpu_mark: float = field(default_factory=time.thread_time)  # this thread's CPU time when the last stage ended
    stages: list[dict[str, Any]] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)
    result: SearchResult | None = None
    asked: str = ""  # the question as asked (``question`` is what the turn searched for)
    rewrite: Rewrite | None = None
    background: tuple[MemoryNote, ...] = ()  # matched memory notes (framing for the models, never cited)
    background_shown: bool = False  # a model was given them
    memory_dropped: int = 0  # citations of a background note dropped
    memory_removed: int = 0  # mentions of a background note's title removed
    near_miss: list[str] = field(default_factory=list)  # titles a near miss's not-found message names

    def degrade(self, why: str) -> None:
        """Say in the trace what failed and what was used instead (secrets masked)."""
        self.degraded.append(redact(why, self.secrets))

    def calls(self) -> int:
        return sum(c[0] for c in self.counters.values())

    def stage(self, name: str, t0: float, counts: dict[str, int] | None = None, **info: Any) -> Event:
        """Record a stage: wall ``ms`` since ``t0`` and ``cpu_ms``, this thread's CPU time since the
        previous stage (or the search) ended — what the stage cost, unlike wall time, whatever the load."""
        ms, n = _ms(t0), dict(counts or {})
        cpu = time.thread_time()
        self.stages.append({"name": name, "ms": ms, "cpu_ms": round((cpu - self.cpu_mark) * 1000.0, 3),
                            "counts": n, "info": info})
        self.cpu_mark = cpu
        return Stage(name, ms, n)


class Answerer:
    """Builds answers from a retriever's notes; the no-model mode is first-class."""

    def __init__(
        self, settings: Settings, retriever: RetrieverLike, store: Store, chat_models: dict[str, ChatModel] | None = None
    ) -> None:
        self.settings = settings
        self.retriever = retriever
        self.store = store
        self.chat_models = dict(chat_models or {})
        a = settings.answer
        self.mentions = MentionIndex(store, min_title_chars=a.prose_min_title_chars, ttl_s=a.mention_cache_s)
        self.scorer = TermScorer()
        self.secrets = settings_secrets(settings)
        kept = store if isinstance(store, SentenceVectorStore) else None
        self.ranker = SentenceRanker(settings, getattr(retriever, "embedder", None), self.scorer, kept)
        embedder = self.ranker.embedder  # citation support reads the vectors the ranker computed this turn
        self.support = SupportScorer(settings.support, embedder, vectors=self.ranker.passage_vectors if embedder else None)

    # -- public --------------------------------------------------------------------------------
    def warm_sentences(self, max_fragments: int, stop: threading.Event | None = None) -> int:
        """Embed (and keep) the sentence vectors of every fragment when the store holds at most
        ``max_fragments`` (``server.warm_sentences_max_fragments``), source by source, until ``stop``
        is set; returns how many sentences were embedded. The first asks then find them ready."""
        if self.ranker.embedder is None or max_fragments <= 0:
            return 0
        if self.store.stats().fragments > max_fragments:
            return 0
        stopped = stop.is_set if stop is not None else None
        made = 0
        for source in self.store.list_sources():
            if stop is not None and stop.is_set():
                break
            notes = [Note(i, f, 0.0) for i, f in enumerate(self.store.fragments_of(source.id), 1)]
            made += self.ranker.warm(notes, self._cue_texts(notes), stopped)
        return made

    def ask(self, question: str, *, fallback: bool | None = None, history: Sequence[PriorTurn] = ()) -> Answer:
        """The turn's answer (the ``Done`` event of :meth:`ask_stream`; errors raise)."""
        return _final(self._run(self._turn(question, fallback), history=history))

    def answer_result(self, question: str, result: SearchResult, *, fallback: bool | None = None) -> Answer:
        """Answer from a search already run for ``question`` (evaluation scores search and answer
        from one retrieval)."""
        return _final(self._run(self._turn(question, fallback), result))

    def ask_stream(
        self, question: str, *, fallback: bool | None = None, stop: threading.Event | None = None,
        history: Sequence[PriorTurn] = (),
    ) -> Iterator[Event]:
        """[Understood], Stage…, Token…, CitationEvent…, VerdictEvent, Done(answer); Error(exc) on failure.
        ``history``: the conversation's earlier turns (a follow-up is rewritten from them first)."""
        try:
            turn = self._turn(question, fallback, stop)
            yield from self._run(turn, history=history)
        except FootnoteError as e:
            yield Error(e)

    # -- turn ----------------------------------------------------------------------------------
    def _turn(self, question: str, fallback: bool | None, stop: threading.Event | None = None) -> _Turn:
        """``question`` was checked by the engine (``Engine.question``, the one place)."""
        q = question
        counters = {role: [0] for role in self.chat_models}
        limit = self.settings.answer.turn_timeout_s
        budget = Budget(time.monotonic() + limit, stop, limit)
        models = {role: CountingChatModel(m, counters[role], budget) for role, m in self.chat_models.items()}
        if fallback and "fallback" not in self.chat_models:
            raise UsageError(
                "the general-knowledge fallback was asked for, but no fallback model is configured: set "
                "models.fallback.base_url and models.fallback.model (or FOOTNOTE_LLM_BASE_URL and FOOTNOTE_LLM_MODEL)"
            )
        fallback_on = self.settings.answer.enable_corpus_fallback if fallback is None else fallback
        return _Turn(q, question_lang(q, self.settings.corpus.default_lang,
                                                  min_confidence=self.settings.corpus.question_lang_min_confidence), fallback_on, models, counters, budget,
                     self.secrets, asked=q)

    def _understand(self, turn: _Turn, history: Sequence[PriorTurn]) -> Iterator[Event]:
        """Rewrite a follow-up into the standalone question the rest of the turn uses."""
        t0 = time.perf_counter()
        books = self.retriever.books  # the corpus's own book names
        aliases = address_aliases(self.settings, books.get())
        r = rewrite(turn.asked, history, self.settings.conversation, dict(turn.models),
                    aliases, self.settings.answer.max_question_chars, self._term_share())
        turn.rewrite = r
        if r.note:
            turn.degrade(r.note)
        if r.how != "unchanged":
            turn.question = r.question
            yield Understood(r.question, turn.asked, r.how)
        yield turn.stage("understand", t0, {"history_turns": len(history), "carried": len(r.carried)}, how=r.how)

    def _term_share(self) -> TermShare:
        """The share of the corpus's fragments that match a term lexically (stemmed, in its language):
        the follow-up rule's test of whether a new term retrieves on its own."""
        sizes: list[int] = []  # the corpus size, read once, only when the rule asks

        def share(term: str, lang: str) -> float:
            if not sizes:
                sizes.append(max(1, self.store.stats().fragments))
            total = sizes[0]
            cap = int(total * self.settings.conversation.new_subject_max_share) + 1  # past this, the count is moot
            return len(self.store.search_lexical(term, cap, stemmed=True, lang=lang)) / total

        return share

    def _run(self, turn: _Turn, result: SearchResult | None = None, history: Sequence[PriorTurn] = ()) -> Iterator[Event]:
        a = self.settings.answer
        if history and result is None:
            yield from self._understand(turn, history)
        if result is None:
            # a follow-up carries its subject's words: the note that answered that turn does not answer it again
            rewritten = turn.rewrite is not None and turn.rewrite.how != "unchanged"
            # the question's language was found once for the turn; a rewritten follow-up is detected anew;
            # the router's calls (a second round) end by the turn's deadline too
            result = self.retriever.search(turn.question, lang=turn.lang if turn.question == turn.asked else None,
                                           not_pinned=history[-1].pinned_notes if rewritten else (), budget=turn.budget)
        if turn.budget.stopped():
            raise Cancelled("the client went away; the turn was stopped after the search")
        turn.result = result
        turn.cpu_mark = time.thread_time()  # the answer stages' CPU time starts here
        for st in result.trace:
            yield Stage(f"search.{st.name}", round(st.ms, 3), dict(st.counts))
        if result.pinned is not None:
            yield from self._pinned(turn, result.pinned.note, result.pinned.score)
            return
        turn.background = tuple(
            m.note for m in result.memory if m.note.kind is NoteKind.MEMORY
        )[: self.settings.memory.max_memory_notes]
        can_fallback = turn.fallback_on and "fallback" in turn.models
        notes = tuple(
            Note(i, c.fragment, c.score, c.rerank) for i, c in enumerate(result.candidates[: a.max_notes_for_planner], 1)
        )
        if result.verdict is Verdict.BAIL_OUT:
            # (an exact address hit never bails out: the gate counts it as good enough)
            gate = Abstention(AbstentionReason.NO_RELEVANT_CONTENT, AbstentionStage.GATE)
            if can_fallback and a.fallback_on_bail_out:
                yield from self._fallback(turn, "bail_out", gate)
            else:
                yield from self._not_found(turn, "bail_out", gate)
            return
        outline, picks = yield from self._plan(turn, notes)
        if outline.empty:
            why = outline_abstention(turn.stages)
            related = notes[: a.extractive.candidate_notes] if picks is not None else notes
            if can_fallback:
                yield from self._fallback(turn, "empty_outline", why, related)
            else:
                yield from self._not_found(turn, "empty_outline", why, related=related)
            return
        t0 = time.perf_counter()
        ctx = compact(notes, outline)
        yield turn.stage("compact", t0, {"notes_in": len(notes), "notes_out": len(ctx.notes)})
        yield from self._synthesize(turn, ctx, picks)

    # -- plan ----------------------------------------------------------------------------------
    def _plan(
        self, turn: _Turn, notes: tuple[Note, ...]
    ) -> Generator[Event, None, tuple[Outline, list[Pick] | None]]:
        a = self.settings.answer
        t0 = time.perf_counter()
        planner = turn.models.get("planner")
        if planner is not None and notes:
            try:
                res = plan_outline(
                    planner, turn.question, notes, turn.lang, passage_chars=a.passage_chars,
                    attempts=a.planner_attempts, max_theses=a.max_theses, max_notes_per_thesis=a.max_notes_per_thesis,
                    background=self._background(turn, notes),
                )
            except MalformedOutline as e:
                turn.degrade(f"planner: malformed JSON after {a.planner_attempts} attempts; extractive planner used")
                log.warning("%s", e.message)
            except ModelError as e:
                if a.on_model_failure == "error" and not isinstance(e, TurnDeadline):
                    raise
                turn.degrade(f"planner: {e.message}; extractive planner used")
            else:
                yield turn.stage(
                    "outline", t0, {"theses": len(res.outline.theses), "bad_refs": res.bad_refs, "attempts": res.attempts},
                    planner="model",
                )
                return res.outline, None
        assert turn.result is not None
        xl = turn.result.verdict.value in a.extractive.crosslingual_verdicts
        addressed = _addressed(turn.result, notes)
        picks: list[Pick] = []
        info: dict[str, Any] = {}
        cues = self._cues(notes)
        if turn.rewrite is not None and turn.rewrite.how == "rule":
            # the notes were found for the carried subject; the sentences are chosen for what the follow-up asks
            picks, info = self.ranker.select(
                turn.asked, turn.lang, notes, crosslingual=xl, addressed=addressed, cues=cues,
                stopped=turn.budget.stopped,
            )
        if not picks:
            picks, info = self.ranker.select(
                turn.question, turn.lang, notes, crosslingual=xl, addressed=addressed, cues=cues,
                stopped=turn.budget.stopped,
            )
        outline = outline_from_picks(picks)
        yield turn.stage("outline", t0, {"theses": len(outline.theses), "sentences": len(picks)}, planner="extractive", **info)
        return outline, picks

    # -- synthesize ----------------------------------------------------------------------------
    def _synthesize(self, turn: _Turn, ctx: Compacted, picks: list[Pick] | None) -> Iterator[Event]:
        t0 = time.perf_counter()
        synth = turn.models.get("synthesizer")
        # a background note's title is a name no note of this turn carries: the prose check removes it
        checker = self._checker(ctx.notes, [n.label for n in turn.background] if synth is not None else ())
        cleaner: StreamCleaner | None = None
        how = "extractive"
        tokens: list[int] = [0]
        if synth is not None:
            cleaner = yield from self._model_answer(turn, synth, ctx, checker, tokens)
            how = "model" if cleaner is not None else "extractive"
        if cleaner is None:
            cleaner = self._cleaner(ctx, checker)
            if picks is None:
                picks, _ = self.ranker.select(turn.question, turn.lang, ctx.notes, cues=self._cues(ctx.notes),
                                              stopped=turn.budget.stopped)
                picks = picks or _leading(ctx)
                renumber = {n.n: n.n for n in ctx.notes}
            else:
                renumber = ctx.renumber
            for piece in extractive_pieces(picks, renumber):
                for clean in cleaner.feed(piece):
                    tokens[0] += 1
                    yield Token(clean)
            for piece in cleaner.finish():
                tokens[0] += 1
                yield Token(piece)
        yield turn.stage(
            "synthesize", t0, {"pieces": tokens[0], "dropped_citations": cleaner.dropped, "removed_mentions": cleaner.removed,
                               "removed_sentences": cleaner.removed_sentences},
            synthesizer=how,
        )
        text = cleaner.text
        if not text.strip() or not CITE.search(text):
            # nothing grounded survived the checks: say so rather than show an uncited answer
            turn.degrade("synthesizer: no cited sentence survived; not found")
            weak = Abstention(AbstentionReason.WEAKLY_GROUNDED, AbstentionStage.SUPPORT)
            yield from self._not_found(turn, "no_grounded_text", weak, dropped=cleaner.dropped, removed=cleaner.removed,
                                       removed_names=cleaner.removed_mentions, removed_sentences=cleaner.removed_sentences)
            return
        quoted = [ctx.by_n[int(x)].fragment.lang for x in CITE.findall(text) if x.isdigit() and int(x) in ctx.by_n]
        yield from self._finish(
            turn, text, ctx.by_n, AnswerMode.CORPUS, corpus_insufficient=False,
            disclaimer=disclaimers.quotes_language_note(turn.lang, quoted) if how == "extractive" else None,
            dropped=cleaner.dropped, removed=cleaner.removed, removed_names=cleaner.removed_mentions, notes=ctx.notes,
            removed_sentences=cleaner.removed_sentences,
        )

    def _model_answer(
        self, turn: _Turn, synth: CountingChatModel, ctx: Compacted, checker: ProseChecker, tokens: list[int]
    ) -> Generator[Event, None, StreamCleaner | None]:
        """Stream the model's answer through the cleaner. Pieces are held back until the first valid
        citation arrives, so an answer that cites nothing is never shown: the extractive answer replaces
        it (None is returned), as it does a failure before anything was shown."""
        a = self.settings.answer
        background = self._background(turn, ctx.notes)
        cleaner = self._cleaner(ctx, checker, turn)
        held: list[str] = []
        shown = False

        def release(pieces: list[str]) -> Iterator[Event]:
            nonlocal shown
            for piece in pieces:
                if shown:
                    tokens[0] += 1
                    yield Token(piece)
                    continue
                held.append(piece)
                if CITE.search(piece):
                    shown = True
                    for h in held:
                        tokens[0] += 1
                        yield Token(h)
                    held.clear()

        try:
            for delta in synth.stream(synth_messages(turn.question, ctx, turn.lang, a.passage_chars, background)):
                yield from release(cleaner.feed(delta))
            yield from release(cleaner.finish())
        except ModelError as e:
            if a.on_model_failure == "error" and not isinstance(e, TurnDeadline):
                raise
            if shown:
                turn.degrade(f"synthesizer: {e.message}; answer cut short")
                yield from release(cleaner.finish())
                return cleaner
            turn.degrade(f"synthesizer: {e.message}; extractive answer used")
            return None
        finally:
            turn.memory_dropped += cleaner.dropped_not_citable
            turn.memory_removed += cleaner.removed_not_citable
        if not shown:
            turn.degrade("synthesizer: the model's answer cited no note; extractive answer used")
            return None
        return cleaner

    def _cleaner(self, ctx: Compacted, checker: ProseChecker, turn: _Turn | None = None) -> StreamCleaner:
        """The cleaner of a corpus answer: every sentence shown must carry a valid citation; a background
        note's number or title (curated memory) is dropped and counted."""
        a = self.settings.answer
        bg = turn.background if turn is not None and turn.background_shown else ()
        return StreamCleaner(
            set(ctx.by_n), checker, a.stream_flush_chars, require_cited=True, max_sentence_chars=a.max_sentence_chars,
            not_citable=background_numbers(ctx.notes, bg), not_citable_names={n.label for n in bg},
        )

    def _background(self, turn: _Turn, notes: Sequence[Note]) -> str:
        """The matched memory notes as a model sees them (after ``notes``, not citable)."""
        if not turn.background:
            return ""
        turn.background_shown = True
        first = max((n.n for n in notes), default=0) + 1
        return background_block(turn.background, first, self.settings.answer.passage_chars)

    def _pinned(self, turn: _Turn, note: MemoryNote, score: float) -> Iterator[Event]:
        """A pinned note matched: the editors' answer, citing the note first and its sources beside it
        (lean policy: no planner, no synthesizer, no model call at all)."""
        t0 = time.perf_counter()
        result = turn.result
        assert result is not None
        books = self.retriever.books
        aliases = address_aliases(self.settings, books.get())
        frags = source_fragments(self.store, result, note, aliases, self.settings.memory.pinned_source_notes)
        scores = {c.fragment.id: c.score for c in result.candidates}
        notes = (Note(1, pinned_fragment(note), score),
                 *(Note(i, f, scores.get(f.id, 0.0)) for i, f in enumerate(frags, 2)))
        text = pinned_text(note, [n.n for n in notes[1:]])
        yield turn.stage("pinned", t0, {"sources": len(frags)}, note=note.id)
        for i, s in enumerate(split_sentences(text)):
            yield Token(("" if i == 0 else " ") + s)
        yield from self._finish(
            turn, text, {n.n: n for n in notes}, AnswerMode.CORPUS, corpus_insufficient=False,
            disclaimer=disclaimers.quotes_language_note(turn.lang, [n.fragment.lang for n in notes]), notes=notes,
        )

    def _cues(self, notes: Sequence[Note]) -> dict[str, list[str]]:
        """Cue texts of the transcript notes among the first ``extractive.candidate_notes`` of ``notes``
        (the ones the extractive answer reads; it cuts them at cues)."""
        return self._cue_texts(notes[: self.settings.answer.extractive.candidate_notes])

    def _cue_texts(self, notes: Sequence[Note]) -> dict[str, list[str]]:
        """Cue texts of the transcript notes among ``notes``, by fragment id."""
        tracks = [n for n in notes if isinstance(n.fragment.locator, TranscriptLocator)]
        if not tracks:
            return {}
        out: dict[str, list[str]] = {}
        for n in tracks:
            loc = n.fragment.locator
            assert isinstance(loc, TranscriptLocator)
            cues = cue_texts(n, self.store.get_cues(n.fragment.source_id, loc.start_ms, loc.end_ms))
            if cues:
                out[n.fragment.id] = cues
        return out

    def _checker(self, notes: Sequence[Note], extra_titles: Sequence[str] = ()) -> ProseChecker:
        titles, files = self._source_names(notes)
        known = self.mentions.get()
        extra = [skel(t) for t in extra_titles if len(t.strip()) >= self.settings.answer.prose_min_title_chars]
        if extra:
            all_titles = tuple(sorted({*known.titles, *extra}, key=lambda t: (-len(t), t)))
            known = dc_replace(known, titles=all_titles, title_re=names_pattern(all_titles))
        return ProseChecker(known, Carried.of(notes, titles, files))

    def _source_names(self, notes: Sequence[Note]) -> tuple[dict[str, str], dict[str, str]]:
        sources = sources_by_id(self.store, (n.fragment.source_id for n in notes))
        return {k: s.title for k, s in sources.items()}, {k: s.original_name for k, s in sources.items()}

    # -- endings -------------------------------------------------------------------------------
    def _finish(
        self, turn: _Turn, text: str, by_n: dict[int, Note], mode: AnswerMode, *, corpus_insufficient: bool,
        disclaimer: str | None, dropped: int = 0, removed: int = 0, removed_names: Sequence[str] = (),
        notes: Sequence[Note] = (), reason: str | None = None, removed_sentences: int = 0,
        abstention: Abstention | None = None,
    ) -> Iterator[Event]:
        """The turn's end: citations resolved, verdict and mode agreed, the answer contract. ``abstention``:
        why this is not a corpus answer (None exactly for ``mode`` corpus)."""
        assert (abstention is None) == (mode is AnswerMode.CORPUS), (mode, abstention)
        t0 = time.perf_counter()
        used = [int(x) for x in CITE.findall(text) if x.isdigit()]
        cited = sources_by_id(self.store, (by_n[n].fragment.source_id for n in used if n in by_n))
        titles = {k: s.title for k, s in cited.items()}
        for n in by_n.values():
            loc = n.fragment.locator
            if isinstance(loc, NoteLocator):  # a pinned note: titled by itself
                titles[n.fragment.source_id] = loc.title
        keys = (*self.settings.answer.citation_meta_keys, "transcript_by")  # a machine transcript always says so
        citations = resolve(used, by_n, titles,
                            {k: {m: str(s.meta[m]) for m in keys if s.meta.get(m)} for k, s in cited.items()})
        for c in citations:
            yield CitationEvent(c)
        yield turn.stage("citations", t0, {"citations": len(citations), "dropped": dropped, "removed_mentions": removed,
                                           "removed_sentences": removed_sentences})
        result = turn.result
        assert result is not None
        verdict = result.verdict
        if corpus_insufficient and verdict in (Verdict.SUFFICIENT, Verdict.GOOD_ENOUGH):
            verdict = Verdict.INSUFFICIENT  # a later stage found the notes wanting: verdict and mode agree
        if result.pinned is not None and not corpus_insufficient and verdict not in (Verdict.SUFFICIENT, Verdict.GOOD_ENOUGH):
            verdict = Verdict.GOOD_ENOUGH  # the editors' pinned answer is evidence (trace.search.verdict keeps the gate's)
        trace = self._trace(turn, notes, removed_names, reason)
        trace["removed_sentences"] = removed_sentences
        trace["abstention"] = abstention_dict(abstention)
        answer = Answer(
            answer=text, citations=citations, verdict=verdict, corpus_insufficient=corpus_insufficient, mode=mode,
            disclaimer=disclaimer, dropped_citations=dropped, removed_mentions=removed, removed_sentences=removed_sentences,
            model_calls=result.model_calls + turn.calls(), lang=turn.lang, trace=trace, abstention=abstention,
        )
        if abstention is not None:
            log.debug("turn abstained: %s (%s)", abstention.reason.value, abstention.stage.value)
        if self.settings.support.in_trace and (support := trace_support(self.support, answer)) is not None:
            trace["support"] = support
        yield VerdictEvent(verdict, mode, corpus_insufficient, disclaimer, abstention)
        yield Done(answer)

    def _not_found(
        self, turn: _Turn, reason: str, abstention: Abstention, *, dropped: int = 0, removed: int = 0,
        removed_names: Sequence[str] = (), removed_sentences: int = 0, related: Sequence[Note] = (),
    ) -> Iterator[Event]:
        """The not-found answer, saying what was searched — or, on a near miss (``answer_not_in_passages``),
        what the corpus does talk about: the titles of the top ``related`` notes' sources."""
        result = turn.result
        assert result is not None
        queries = [q for sq in result.plan.subquestions for q in (sq.text, *sq.paraphrases)] or [turn.question]
        known: KnownNames = self.mentions.get()
        cap = self.settings.answer.near_miss_titles
        near = abstention.reason is AbstentionReason.ANSWER_NOT_IN_PASSAGES
        titles = near_miss_titles(self.store, related, cap) if near else []
        said = (disclaimers.near_miss_text(turn.lang, titles, queries, known.kinds) if titles
                else disclaimers.not_found_text(turn.lang, queries, known.kinds))
        text = " ".join([*(f"{n}." for n in result.plan.address_notes), said])
        if titles:
            turn.near_miss = titles
        yield Token(text)
        yield from self._finish(
            turn, text, {}, AnswerMode.NOT_FOUND, corpus_insufficient=True, disclaimer=None, dropped=dropped,
            removed=removed, removed_names=removed_names, reason=reason, removed_sentences=removed_sentences,
            abstention=abstention,
        )

    def _fallback(
        self, turn: _Turn, reason: str, abstention: Abstention, related: Sequence[Note] = ()
    ) -> Iterator[Event]:
        """``abstention``: why the corpus gave no answer (the fallback answer carries it; a decline is
        ``out_of_scope``; a failed fallback model ends as "not found" for that reason)."""
        a = self.settings.answer
        model = turn.models["fallback"]
        t0 = time.perf_counter()
        try:
            reply = ask_fallback(
                model, turn.question, turn.lang, corpus_description=a.corpus_description,
                pmin=a.fallback_probes_min, pmax=a.fallback_probes_max, attempts=a.planner_attempts,
                out_of_scope=a.fallback_out_of_scope,
            )
        except ModelError as e:
            if a.on_model_failure == "error" and not isinstance(e, TurnDeadline):
                raise
            turn.degrade(f"fallback: {e.message}; not found")
            yield turn.stage("fallback", t0, {"in_scope": 0}, failed=True)
            yield from self._not_found(turn, reason, abstention, related=related)
            return
        if not reply.in_scope:
            yield turn.stage("fallback", t0, {"in_scope": 0, "probes": 0}, model_disclaimer=bool(reply.disclaimer))
            text = disclaimers.decline_text(turn.lang)
            yield Token(text)
            yield from self._finish(turn, text, {}, AnswerMode.DECLINED, corpus_insufficient=True, disclaimer=None,
                                    reason=reason,
                                    abstention=Abstention(AbstentionReason.OUT_OF_SCOPE, AbstentionStage.FALLBACK))
            return
        qs = probes(turn.question, reply, a.fallback_probes_min, a.fallback_probes_max)
        min_score = self._fallback_min_score(turn)
        cands = self.retriever.probe(qs, min_score=min_score, k=a.fallback_probe_k)
        notes = tuple(Note(i, c.fragment, c.score, c.rerank) for i, c in enumerate(cands, 1))
        # the model saw no notes: every [n] it wrote is forged
        answer_text, _, forged = clean_citations(reply.answer, set())
        checker = self._checker(notes)
        checked = checker.check(answer_text)
        answer_text, removed, names = checked.text, checked.mentions, checked.names
        cited, _ = attach_citations(answer_text, turn.lang, notes, self.scorer, a.fallback_cite_min_overlap)
        yield turn.stage(
            "fallback", t0, {"in_scope": 1, "probes": len(qs), "probe_hits": len(notes)},
            min_score=min_score, model_disclaimer=bool(reply.disclaimer), probe_queries=qs,
        )
        pieces = split_sentences(cited) if cited else []
        for i, s in enumerate(pieces):
            yield Token(("" if i == 0 else " ") + s)
        text = " ".join(pieces)
        yield from self._finish(
            turn, text, {n.n: n for n in notes}, AnswerMode.FALLBACK, corpus_insufficient=True,
            disclaimer=disclaimers.fallback_disclaimer(turn.lang), dropped=forged, removed=removed,
            removed_names=names, notes=notes, reason=reason, abstention=abstention,
        )

    def _fallback_min_score(self, turn: _Turn) -> float:
        result = turn.result
        if result is not None and result.signal.applied is not None:
            return result.signal.applied.fallback_min_score
        embedder = self.retriever.embedder
        name = embedder.name if embedder is not None else self.settings.embedder.name
        langs = self.mentions.get()
        return self.settings.gate.thresholds(name, turn.lang, langs.corpus_lang).fallback_min_score

    # -- trace ---------------------------------------------------------------------------------
    @staticmethod
    def _memory_entry(turn: _Turn, m: MemoryMatch) -> dict[str, Any]:
        return {**m.to_dict(), "did": _memory_entry_did(turn, m)}

    def _trace(self, turn: _Turn, notes: Sequence[Note], removed_names: Sequence[str], reason: str | None) -> dict[str, Any]:
        r = turn.result
        assert r is not None
        out: dict[str, Any] = {
            "question_lang": turn.lang,
            "rewritten_question": turn.question if turn.question != turn.asked else None,
            "followup": None if turn.rewrite is None else {"how": turn.rewrite.how, "carried": list(turn.rewrite.carried)},
            "search": {
                "verdict": r.verdict.value,
                "rounds": r.rounds,
                "lexical_only": r.lexical_only,
                "model_calls": r.model_calls,
                "plan": plan_dict(r),
                "signal": signal_dict(r.signal),
                "candidates": len(r.candidates),
                "stages": [trace_dict(t) for t in r.trace],
            },
            "stages": turn.stages,
            "notes": [{"n": n.n, "fragment_id": n.fragment.id, "score": round(float(n.score), 6)} for n in notes],
            "model_calls": r.model_calls + turn.calls(),
            "model_calls_by_role": {role: c[0] for role, c in turn.counters.items()},
            "fallback_enabled": turn.fallback_on,
            "degraded": list(turn.degraded),
            "turn_timeout_s": turn.budget.turn_timeout_s,
            "deadline_reached": turn.budget.expired(),
            "removed_mentions": list(removed_names),
            "policy": r.policy,
            "memory": [self._memory_entry(turn, m) for m in r.memory],
            "memory_dropped_citations": turn.memory_dropped,
            "memory_removed_mentions": turn.memory_removed,
            "total_ms": _ms(turn.t0),
        }
        if reason:
            out["insufficient_reason"] = reason
            out["insufficient_stage"] = _insufficient_stage(turn, reason)
        if turn.near_miss:
            out["near_miss_titles"] = list(turn.near_miss)
        return out


def _memory_entry_did(turn: _Turn, m: MemoryMatch) -> str:
    if m.note.kind is NoteKind.MEMORY:
        if turn.result is not None and turn.result.pinned is not None:
            return "not used: a pinned note answered"
        if m.note not in turn.background:
            return "not used: more background notes matched than answer.memory.max_memory_notes"
        return "framed" if turn.background_shown else "not used: extractive answer (no model saw it)"
    return m.did


def _final(events: Iterator[Event]) -> Answer:
    """The answer of a turn's event stream: its ``Done`` event."""
    for ev in events:
        if isinstance(ev, Done):
            return ev.answer
        if isinstance(ev, Error):
            raise ev.exc
    raise AssertionError("a turn ended without an answer")  # pragma: no cover


def _insufficient_stage(turn: _Turn, reason: str) -> str:
    """Which stage decided corpus_insufficient: the gate, the outline planner (model or extractive)
    or the synthesizer (nothing grounded survived)."""
    if reason == "bail_out":
        return "gate"
    if reason == "empty_outline":
        planner = next((st["info"].get("planner") for st in reversed(turn.stages) if st["name"] == "outline"), None)
        return f"outline.{planner}" if planner else "outline"
    if reason == "no_grounded_text":
        return "synthesize"
    return reason


def _addressed(result: SearchResult, notes: Sequence[Note]) -> set[int]:
    """Notes whose address the question names exactly."""
    wanted = {(ad.book, ad.loc) for sq in result.plan.subquestions for ad in sq.addresses}
    if not wanted:
        return set()
    return {
        n.n for n in notes
        if isinstance(n.fragment.locator, AddressLocator) and (n.fragment.locator.book, n.fragment.locator.loc) in wanted
    }


def _leading(ctx: Compacted) -> list[Pick]:
    """No sentence shares the question's terms: the first sentence of each cited note."""
    out: list[Pick] = []
    for n in ctx.notes:
        sents = split_sentences(n.fragment.text)
        if sents:
            out.append(Pick(n.n, sents[0], n.score, 0.0, 0))
    return out


__all__ = ["Answerer", "Outline"]
