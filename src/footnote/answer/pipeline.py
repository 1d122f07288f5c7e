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
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import replace as dc_replace
from typing import Any

from footnote.answer import disclaimers
from footnote.answer.abstain import outline_abstention
from footnote.answer.citations import (
    CITE,
    Carried,
    MentionIndex,
    ProseChecker,
    StreamCleaner,
)
from footnote.answer.compact import Compacted, compact
from footnote.answer.endings import Endings
from footnote.answer.extractive import (
    Pick,
    SentenceRanker,
    TermScorer,
    cue_texts,
    extractive_pieces,
    outline_from_picks,
    split_sentences,
)
from footnote.answer.followup import PriorTurn, rewrite
from footnote.answer.memory import (
    background_block,
    body_numbers,
    pinned_fragment,
    pinned_text,
    source_fragments,
)
from footnote.answer.model_answer import ModelAnswers
from footnote.answer.model_check import SentenceCheck
from footnote.answer.planner import MalformedOutline, plan_outline
from footnote.answer.prose import names_pattern, skel
from footnote.answer.support import SupportScorer, Vectors
from footnote.answer.trace import last_stage
from footnote.answer.turn import TurnState
from footnote.answer.types import (
    Abstention,
    AbstentionReason,
    AbstentionStage,
    AnswerMode,
    Event,
    Note,
    Outline,
    Stage,
    Token,
    Understood,
    Writing,
)
from footnote.errors import Cancelled, ModelError, TurnDeadline, UsageError
from footnote.models.chat import CountingChatModel, shown_name
from footnote.models.protocols import Budget, ChatModel, ChoiceModel, Embedder
from footnote.records.fragments import AddressLocator, Cue, TranscriptLocator
from footnote.records.lang import lang_guess
from footnote.records.memory import MemoryNote, NoteKind
from footnote.redact import redact, settings_secrets
from footnote.retrieve.corpus_view import TurnCorpus
from footnote.retrieve.signal import gate_sentences
from footnote.retrieve.types import SearchResult, Verdict
from footnote.settings import Settings

log = logging.getLogger(__name__)


class Answerer(ModelAnswers, Endings):
    """Builds answers from a search's notes; the no-model mode is first-class.

    It holds no store and no retriever: the engine composes a turn (understand → search → answer) and the
    answer stage reads the corpus only through the turn's reader the search hands on
    (``SearchResult.corpus``, a :class:`~footnote.retrieve.corpus_view.TurnCorpus`). The composition root gives
    it the one cache of its own that outlives a turn, the names index the prose check builds from the reader's
    listing (``mentions``); the sentence vectors come through the reader too (``TurnCorpus.vectors``, the cache the
    gate shares)."""

    def __init__(
        self, settings: Settings, embedder: Embedder | None, chat_models: dict[str, ChatModel] | None = None, *,
        mentions: MentionIndex,
    ) -> None:
        self.settings = settings
        self.embedder = embedder  # the store's embedder: whose thresholds and sentence vectors apply
        self.chat_models = dict(chat_models or {})
        self.mentions = mentions
        self.scorer = TermScorer()
        self.secrets = settings_secrets(settings)
        self.ranker = SentenceRanker(settings, embedder, self.scorer)
        # citation support reads the vectors the ranker computed this turn, through the turn's cache
        self.support = SupportScorer(settings.support, embedder)
        self.sentence_check = SentenceCheck(settings.support)

    # -- public --------------------------------------------------------------------------------
    def warm_sentences(self, reads: TurnCorpus, max_fragments: int, stop: threading.Event | None = None) -> int:
        """Embed (and keep) the sentence vectors of every fragment when the corpus holds at most
        ``max_fragments`` (``backlog.warm_sentences_max_fragments``), source by source, until ``stop``
        is set; returns how many sentences were embedded. The first asks then find them ready."""
        if self.ranker.embedder is None or max_fragments <= 0:
            return 0
        if reads.fragment_count() > max_fragments:
            return 0
        stopped = stop.is_set if stop is not None else None
        made = 0
        for _, fragments in reads.each_source():
            if stop is not None and stop.is_set():
                break
            notes = [Note(i, f, 0.0) for i, f in enumerate(fragments, 1)]
            made += self.ranker.warm(notes, _cue_texts(notes, reads.cues), stopped, vectors=reads.vectors)
            # the gate's sentences too: it splits them its own way, and a search touching a cold passage embeds them
            made += self.ranker.warm_texts([s for f in fragments for s in gate_sentences([f], 1 << 30)], stopped,
                                           vectors=reads.vectors)
        return made

    def open(self, question: str, *, fallback: bool | None = None, stop: threading.Event | None = None,
             model_check: bool = True) -> TurnState:
        """A new turn for ``question`` (checked by the engine, ``Engine.question``, the one place): its language,
        its models counted against its budget (the deadline and the stop flag), whether it may fall back.
        ``model_check=False``: without ``models.answer_check`` (the chat's example questions are checked by
        the rules alone: a model call per candidate example would hold the first page for minutes)."""
        roles = {role: m for role, m in self.chat_models.items() if model_check or role != "answer_check"}
        counters = {role: [0] for role in roles}
        limit = self.settings.answer.turn_timeout_s
        budget = Budget(time.monotonic() + limit, stop, limit)
        models = {role: CountingChatModel(m, counters[role], budget) for role, m in roles.items()}
        if fallback and "fallback" not in self.chat_models:
            raise UsageError(
                "the general-knowledge fallback was asked for, but no fallback model is configured: set "
                "models.fallback.base_url and models.fallback.model (or FOOTNOTE_LLM_BASE_URL and FOOTNOTE_LLM_MODEL)"
            )
        fallback_on = self.settings.answer.enable_corpus_fallback if fallback is None else fallback
        lang = self.settings.corpus.question_lang(question)
        return TurnState(question, lang, fallback_on, models, counters, budget, self.secrets, asked=question)

    def understand(self, turn: TurnState, reads: TurnCorpus, history: Sequence[PriorTurn]) -> Iterator[Event]:
        """Rewrite a follow-up into the standalone question the rest of the turn uses (``turn.question``), reading
        the corpus through the turn's reader (the search is given the same one)."""
        t0 = time.perf_counter()
        turn.corpus = reads
        r = rewrite(turn.asked, history, self.settings.conversation, dict(turn.models),
                    reads.aliases, self.settings.answer.max_question_chars, reads.term_share,
                    books=reads.books, verse_words=self.settings.corpus.verse_words)
        turn.rewrite = r
        if r.note:
            turn.degrade(r.note)
        if r.how != "unchanged":
            turn.question = r.question
            yield Understood(r.question, turn.asked, r.how)
        yield turn.stage("understand", t0, {"history_turns": len(history), "carried": len(r.carried)}, how=r.how)

    def answer(self, turn: TurnState, result: SearchResult) -> Iterator[Event]:
        """The turn from its search to the reader: [Stage…, Token…, CitationEvent…, VerdictEvent, Done(answer)].
        Errors raise (the engine's stream turns them into an ``Error`` event)."""
        a = self.settings.answer
        if turn.budget.stopped():
            raise Cancelled("the client went away; the turn was stopped after the search")
        turn.result = result
        turn.corpus = result.corpus
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
        index = turn.corpus.index() if turn.corpus is not None else None
        incomplete = index is not None and not index.complete
        if result.verdict is Verdict.BAIL_OUT and incomplete:
            yield from self._index_incomplete(turn)  # "nothing close" is not true of vectors not made yet
            return
        if result.verdict is Verdict.BAIL_OUT:
            # (an exact address hit never bails out: the gate counts it as good enough)
            gate = Abstention(AbstentionReason.NO_RELEVANT_CONTENT, AbstentionStage.GATE)
            if can_fallback and a.fallback_on_bail_out:
                yield from self._fallback(turn, gate)
            else:
                yield from self._not_found(turn, gate)
            return
        outline, picks = yield from self._plan(turn, notes)
        if incomplete and (outline.empty or (picks is not None and _by_meaning_only(turn))):
            # a partial index's nearest passages are the nearest among those embedded so far: an answer only
            # their meaning vouches for may cite the wrong verse, and a miss says nothing of the rest
            yield from self._index_incomplete(turn)
            return
        if outline.empty:
            why = outline_abstention(turn.stages)
            related = notes[: a.extractive.candidate_notes] if picks is not None else notes
            if can_fallback:
                yield from self._fallback(turn, why, related)
            else:
                yield from self._not_found(turn, why, related=related)
            return
        t0 = time.perf_counter()
        ctx = compact(notes, outline)
        yield turn.stage("compact", t0, {"notes_in": len(notes), "notes_out": len(ctx.notes)})
        yield from self._synthesize(turn, ctx, picks)

    def _index_incomplete(self, turn: TurnState) -> Iterator[Event]:
        """Fragments still wait for vectors and the lexical lanes alone found no answer: say how much of the
        corpus is searchable by meaning and when to ask again (``index_incomplete``), never "nothing close"."""
        assert turn.corpus is not None
        index = turn.corpus.index()
        text = disclaimers.index_incomplete_text(turn.lang, index.percent, index.eta_s)
        yield turn.stage("index", time.perf_counter(), {"fragments": index.fragments, "embedded": index.embedded},
                         percent=round(index.percent, 1), eta_s=None if index.eta_s is None else round(index.eta_s, 1))
        yield Token(text)
        yield from self._finish(
            turn, text, {}, AnswerMode.NOT_FOUND, corpus_insufficient=True, disclaimer=None,
            abstention=Abstention(AbstentionReason.INDEX_INCOMPLETE, AbstentionStage.INDEX),
        )

    # -- plan ----------------------------------------------------------------------------------
    def _plan(
        self, turn: TurnState, notes: tuple[Note, ...]
    ) -> Generator[Event, None, tuple[Outline, list[Pick] | None]]:
        a = self.settings.answer
        t0 = time.perf_counter()
        planner = turn.models.get("planner")
        if planner is not None and notes and a.extractive.answerable.enabled and (
                declined := self._near_miss_first(turn, notes)) is not None:
            yield turn.stage("outline", t0, {"theses": 0, "sentences": 0}, planner="extractive", **declined)
            return Outline(()), []  # a near miss: no model is asked what the passages do not say
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
        xl = turn.result.verdict.value in a.extractive.crosslingual.verdicts
        addressed = _addressed(turn.result, notes)
        picks: list[Pick] = []
        info: dict[str, Any] = {}
        cues = self._cues(turn, notes)
        titles, _ = self._source_names(turn, notes)
        if turn.rewrite is not None and turn.rewrite.how == "rule":
            # the notes were found for the carried subject; the sentences are chosen for what the follow-up asks
            picks, info = self.ranker.select(
                turn.asked, turn.lang, notes, crosslingual=xl, addressed=addressed, cues=cues,
                stopped=turn.budget.stopped, expired=turn.budget.expired, titles=titles, vectors=turn.reads.vectors,
                checker=_checker_model(turn),
            )
        if not picks:
            picks, info = self.ranker.select(
                turn.question, turn.lang, notes, crosslingual=xl, addressed=addressed, cues=cues,
                stopped=turn.budget.stopped, expired=turn.budget.expired, titles=titles, vectors=turn.reads.vectors,
                checker=_checker_model(turn),
            )
        _model_check_failed(turn, info)
        if info.get("unembedded"):
            turn.degrade(f"extractive: the turn's deadline came with {info['unembedded']} sentences not embedded; "
                         "they were scored by their words alone")
        outline = outline_from_picks(picks)
        yield turn.stage("outline", t0, {"theses": len(outline.theses), "sentences": len(picks)}, planner="extractive", **info)
        return outline, picks

    def _near_miss_first(self, turn: TurnState, notes: tuple[Note, ...]) -> dict[str, Any] | None:
        """Before a model planner is called: the answer-level check over the extractive choice. Its finding
        (the outline stage's info) when it declines the question as a near miss, else None."""
        assert turn.result is not None
        if _addressed(turn.result, notes):
            return None
        picks, info = self.ranker.select(turn.question, turn.lang, notes, cues=self._cues(turn, notes),
                                         stopped=turn.budget.stopped, expired=turn.budget.expired,
                                         titles=self._source_names(turn, notes)[0], vectors=turn.reads.vectors,
                                         checker=_checker_model(turn))
        _model_check_failed(turn, info)
        judged = info.get("answerable")
        return info if not picks and isinstance(judged, dict) and not judged.get("answers", True) else None

    # -- synthesize ----------------------------------------------------------------------------
    def _synthesize(self, turn: TurnState, ctx: Compacted, picks: list[Pick] | None) -> Iterator[Event]:
        t0 = time.perf_counter()
        synth = turn.models.get("synthesizer")
        # a background note's title is a name no note of this turn carries: the prose check removes it
        checker = self._checker(turn, ctx.notes, [n.label for n in turn.background] if synth is not None else ())
        cleaner: StreamCleaner | None = None
        how = "extractive"
        tokens: list[int] = [0]
        if synth is not None:
            yield Writing(shown_name(synth))  # the model, not its endpoint: a reader sees it
            cleaner = yield from self._model_answer(turn, synth, ctx, checker, tokens)
            how = "model" if cleaner is not None else "extractive"
            if cleaner is None:  # the extractive answer replaces the model's: what was judged of it is not shown
                turn.judged.clear()
        if cleaner is None:
            cleaner = self._cleaner(ctx, checker)
            if picks is None:
                picks, _ = self.ranker.select(turn.question, turn.lang, ctx.notes, cues=self._cues(turn, ctx.notes),
                                              stopped=turn.budget.stopped, expired=turn.budget.expired,
                                              titles=self._source_names(turn, ctx.notes)[0], vectors=turn.reads.vectors,
                                              checker=_checker_model(turn))
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
        turn.removed_by_reason = dict(cleaner.removed_by_reason)
        yield turn.stage(
            "synthesize", t0, {"pieces": tokens[0], "dropped_citations": cleaner.dropped, "removed_mentions": cleaner.removed,
                               "removed_sentences": cleaner.removed_sentences,
                               "removed_unsupported": cleaner.removed_by_reason.get("unsupported", 0)},
            synthesizer=how, **({"judged": list(turn.judged)} if turn.judged else {}),
        )
        text = cleaner.text
        if not text.strip() or not CITE.search(text):
            # nothing grounded survived the checks: say so rather than show an uncited answer
            turn.degrade("synthesizer: no cited sentence survived; not found")
            weak = Abstention(AbstentionReason.WEAKLY_GROUNDED, AbstentionStage.SUPPORT)
            yield from self._not_found(turn, weak, dropped=cleaner.dropped, removed=cleaner.removed,
                                       removed_names=cleaner.removed_mentions, removed_sentences=cleaner.removed_sentences)
            return
        quoted = [ctx.by_n[int(x)].fragment.lang for x in CITE.findall(text) if x.isdigit() and int(x) in ctx.by_n]
        yield from self._finish(
            turn, text, ctx.by_n, AnswerMode.CORPUS, corpus_insufficient=False,
            disclaimer=(disclaimers.quotes_language_note(turn.lang, quoted) if how == "extractive"
                        else disclaimers.model_language_note(turn.lang, _written_in(text, turn.lang, quoted))),
            dropped=cleaner.dropped, removed=cleaner.removed, removed_names=cleaner.removed_mentions, notes=ctx.notes,
            removed_sentences=cleaner.removed_sentences,
        )

    def _background(self, turn: TurnState, notes: Sequence[Note]) -> str:
        """The matched memory notes as a model sees them (after ``notes``, not citable)."""
        if not turn.background:
            return ""
        turn.background_shown = True
        first = max((n.n for n in notes), default=0) + 1
        return background_block(turn.background, first, self.settings.answer.passage_chars)

    def _pinned(self, turn: TurnState, note: MemoryNote, score: float) -> Iterator[Event]:
        """A pinned note matched: the editors' answer, citing the note first and its sources beside it
        (lean policy: no planner, no synthesizer, no model call at all)."""
        t0 = time.perf_counter()
        result = turn.result
        assert result is not None
        frags = source_fragments(turn.reads, result, note, self.settings.memory.pinned_source_notes)
        scores = {c.fragment.id: c.score for c in result.candidates}
        notes = (Note(1, pinned_fragment(note), score),
                 *(Note(i, f, scores.get(f.id, 0.0)) for i, f in enumerate(frags, 2)))
        text = pinned_text(note, [n.n for n in notes[1:]], body_numbers(turn.reads, note, frags))
        yield turn.stage("pinned", t0, {"sources": len(frags)}, note=note.id)
        for i, s in enumerate(split_sentences(text)):
            yield Token(("" if i == 0 else " ") + s)
        yield from self._finish(
            turn, text, {n.n: n for n in notes}, AnswerMode.CORPUS, corpus_insufficient=False,
            disclaimer=disclaimers.quotes_language_note(turn.lang, [n.fragment.lang for n in notes]), notes=notes,
        )

    def _passage_vectors(self, turn: TurnState) -> Vectors | None:
        """Passage vectors for the support check, through the turn's cache (the ranker embedded the turn's sentences
        there already); None without an embedder (containment alone)."""
        if self.embedder is None:
            return None
        vectors = turn.reads.vectors
        return lambda texts: self.ranker.passage_vectors(texts, vectors)

    def _cues(self, turn: TurnState, notes: Sequence[Note]) -> dict[str, list[str]]:
        """Cue texts of the transcript notes among the first ``extractive.candidate_notes`` of ``notes``
        (the ones the extractive answer reads; it cuts them at cues), read through the turn's reader."""
        return _cue_texts(notes[: self.settings.answer.extractive.candidate_notes], turn.reads.cues)

    def _checker(self, turn: TurnState, notes: Sequence[Note], extra_titles: Sequence[str] = ()) -> ProseChecker:
        titles, files = self._source_names(turn, notes)
        known = self.mentions.get(turn.reads)
        extra = [skel(t) for t in extra_titles if len(t.strip()) >= self.settings.answer.prose_min_title_chars]
        if extra:
            all_titles = tuple(sorted({*known.titles, *extra}, key=lambda t: (-len(t), t)))
            known = dc_replace(known, titles=all_titles, title_re=names_pattern(all_titles))
        return ProseChecker(known, Carried.of(notes, titles, files))

    def _source_names(self, turn: TurnState, notes: Sequence[Note]) -> tuple[dict[str, str], dict[str, str]]:
        sources = self._sources(turn, (n.fragment.source_id for n in notes))
        return {k: s.title for k, s in sources.items()}, {k: s.original_name for k, s in sources.items()}


def _cue_texts(notes: Sequence[Note], cues_of: Callable[[str, int, int | None], Sequence[Cue]]) -> dict[str, list[str]]:
    """Cue texts of the transcript notes among ``notes``, by fragment id (``cues_of``: a source's cues
    between two times)."""
    out: dict[str, list[str]] = {}
    for n in notes:
        loc = n.fragment.locator
        if isinstance(loc, TranscriptLocator):
            cues = cue_texts(n, cues_of(n.fragment.source_id, loc.start_ms, loc.end_ms))
            if cues:
                out[n.fragment.id] = cues
    return out


def _by_meaning_only(turn: TurnState) -> bool:
    """Whether the extractive answer's only evidence was the sentences' meaning (their cosine to the question),
    with no shared terms or names and no address named."""
    outline = last_stage(turn.stages, "outline")
    info = outline.info if outline is not None else {}
    evidence = info.get("evidence") or ()
    return bool(evidence) and set(evidence) <= {"similarity"} and not info.get("addressed")


def _model_check_failed(turn: TurnState, info: dict[str, Any]) -> None:
    """A failed answer-check model (an error, a timeout, no yes or no) is a degradation the trace lists, with
    secrets masked in the outline's copy too; the rules' verdict stood."""
    judged = info.get("answerable")
    model = judged.get("model") if isinstance(judged, dict) else None
    if isinstance(model, dict) and model.get("error"):
        model["error"] = redact(str(model["error"]), turn.secrets)
        why = f"answer check ({model.get('model')}): {model['error']}; the rules' verdict stands"
        if redact(why, turn.secrets) not in turn.degraded:
            turn.degrade(why)


def _checker_model(turn: TurnState) -> ChoiceModel | None:
    """The turn's ``models.answer_check`` (counted, under the turn's budget), when one is configured."""
    return turn.models.get("answer_check")


def _addressed(result: SearchResult, notes: Sequence[Note]) -> set[int]:
    """Notes whose address the question names exactly."""
    wanted = {(ad.book, ad.loc) for sq in result.plan.subquestions for ad in sq.addresses}
    if not wanted:
        return set()
    return {
        n.n for n in notes
        if isinstance(n.fragment.locator, AddressLocator) and (n.fragment.locator.book, n.fragment.locator.loc) in wanted
    }


def _written_in(text: str, reader: str, quoted: Sequence[str]) -> str | None:
    """The language a model's answer is written in when it is one of its cited passages' and the detector is
    sure of it (a small model copying its sources' language); else None."""
    words = CITE.sub(" ", text)
    if sum(ch.isalpha() for ch in words) < 40:
        return None
    lang, confidence = lang_guess(words, tuple(dict.fromkeys([reader, *quoted])))
    return lang if confidence >= 0.9 and lang in quoted else None


def _leading(ctx: Compacted) -> list[Pick]:
    """No sentence shares the question's terms: the first sentence of each cited note."""
    out: list[Pick] = []
    for n in ctx.notes:
        sents = split_sentences(n.fragment.text)
        if sents:
            out.append(Pick(n.n, sents[0], n.score, 0.0, 0))
    return out


__all__ = ["Answerer", "Outline"]
