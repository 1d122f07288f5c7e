"""How a turn ends: the citations resolved and the answer contract made (:meth:`Endings._finish`), or,
when the corpus has no answer, "not in the corpus" saying what was searched (or, on a near miss, what
the corpus does talk about), or the general-knowledge fallback. A mixin of
:class:`~footnote.answer.pipeline.Answerer`."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from footnote.answer import disclaimers
from footnote.answer.abstain import near_miss_titles
from footnote.answer.citations import CITE, KnownNames, MentionIndex, ProseChecker, clean_citations, resolve
from footnote.answer.extractive import TermScorer, split_sentences
from footnote.answer.fallback import ask_fallback, attach_citations, probes
from footnote.answer.support import SupportScorer, Vectors, trace_support
from footnote.answer.turn import TurnState, turn_trace
from footnote.answer.types import (
    Abstention,
    AbstentionReason,
    AbstentionStage,
    Answer,
    AnswerMode,
    CitationEvent,
    Done,
    Event,
    Note,
    Token,
    VerdictEvent,
)
from footnote.errors import ModelError, TurnDeadline
from footnote.records.fragments import NoteLocator, Source
from footnote.retrieve.types import Verdict

if TYPE_CHECKING:
    from footnote.models.protocols import Embedder
    from footnote.settings import Settings

log = logging.getLogger(__name__)


class Endings:
    """The answer contract at a turn's end, and the ways a turn ends without a corpus answer."""

    def _sources(self, turn: TurnState, source_ids: Iterable[str]) -> dict[str, Source]:
        """The sources among ``source_ids`` the corpus holds, by id, in first-seen order; each read once per
        turn by the turn's reader (the prose check, the citations and a near miss's titles ask for the same ones)."""
        return turn.reads.sources(source_ids)

    if TYPE_CHECKING:  # provided by Answerer
        settings: Settings
        embedder: Embedder | None
        mentions: MentionIndex
        scorer: TermScorer
        support: SupportScorer

        def _checker(self, turn: TurnState, notes: Sequence[Note], extra_titles: Sequence[str] = ()) -> ProseChecker: ...

        def _passage_vectors(self, turn: TurnState) -> Vectors | None: ...

    # -- endings -------------------------------------------------------------------------------
    def _finish(
        self, turn: TurnState, text: str, by_n: dict[int, Note], mode: AnswerMode, *, corpus_insufficient: bool,
        disclaimer: str | None, dropped: int = 0, removed: int = 0, removed_names: Sequence[str] = (),
        notes: Sequence[Note] = (), removed_sentences: int = 0,
        abstention: Abstention | None = None,
    ) -> Iterator[Event]:
        """The turn's end: citations resolved, verdict and mode agreed, the answer contract. ``abstention``:
        why this is not a corpus answer (None exactly for ``mode`` corpus)."""
        assert (abstention is None) == (mode is AnswerMode.CORPUS), (mode, abstention)
        t0 = time.perf_counter()
        used = [int(x) for x in CITE.findall(text) if x.isdigit()]
        cited = self._sources(turn, (by_n[n].fragment.source_id for n in used if n in by_n))
        titles = {k: s.title for k, s in cited.items()}
        for n in by_n.values():
            loc = n.fragment.locator
            if isinstance(loc, NoteLocator):  # a pinned note: titled by itself
                titles[n.fragment.source_id] = loc.title
        # a machine transcript and a page read by OCR always say so
        keys = (*self.settings.answer.citation_meta_keys, "transcript_by", "ocr_confidence")
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
        trace = turn_trace(turn, notes, removed_names, removed_sentences=removed_sentences,
                           abstention=abstention)
        answer = Answer(
            answer=text, citations=citations, verdict=verdict, corpus_insufficient=corpus_insufficient, mode=mode,
            disclaimer=disclaimer, dropped_citations=dropped, removed_mentions=removed, removed_sentences=removed_sentences,
            model_calls=result.model_calls + turn.calls(), lang=turn.lang, trace=trace, abstention=abstention,
        )
        if abstention is not None:
            log.debug("turn abstained: %s (%s)", abstention.reason.value, abstention.stage.value)
        if self.settings.support.in_trace and (support := trace_support(self.support, answer, self._passage_vectors(turn))) is not None:
            answer = replace(answer, trace=replace(trace, support=support))
        yield VerdictEvent(verdict, mode, corpus_insufficient, disclaimer, abstention)
        yield Done(answer)

    def _not_found(
        self, turn: TurnState, abstention: Abstention, *, dropped: int = 0, removed: int = 0,
        removed_names: Sequence[str] = (), removed_sentences: int = 0, related: Sequence[Note] = (),
    ) -> Iterator[Event]:
        """The not-found answer, saying what was searched — or, on a near miss (``answer_not_in_passages``),
        what the corpus does talk about: the titles of the top ``related`` notes' sources."""
        result = turn.result
        assert result is not None
        queries = [q for sq in result.plan.subquestions for q in (sq.text, *sq.paraphrases)] or [turn.question]
        known: KnownNames = self.mentions.get(turn.reads)
        cap = self.settings.answer.near_miss_titles
        near = abstention.reason is AbstentionReason.ANSWER_NOT_IN_PASSAGES
        titles = near_miss_titles(lambda ids: self._sources(turn, ids), related, cap) if near else []
        said = (disclaimers.near_miss_text(turn.lang, titles, queries, known.kinds) if titles
                else disclaimers.not_found_text(turn.lang, queries, known.kinds))
        text = " ".join([*(f"{n}." for n in result.plan.address_notes), said])
        if titles:
            turn.near_miss = titles
        yield Token(text)
        yield from self._finish(
            turn, text, {}, AnswerMode.NOT_FOUND, corpus_insufficient=True, disclaimer=None, dropped=dropped,
            removed=removed, removed_names=removed_names, removed_sentences=removed_sentences,
            abstention=abstention,
        )

    def _fallback(
        self, turn: TurnState, abstention: Abstention, related: Sequence[Note] = ()
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
            yield from self._not_found(turn, abstention, related=related)
            return
        if not reply.in_scope:
            yield turn.stage("fallback", t0, {"in_scope": 0, "probes": 0}, model_disclaimer=bool(reply.disclaimer))
            text = disclaimers.decline_text(turn.lang)
            yield Token(text)
            yield from self._finish(turn, text, {}, AnswerMode.DECLINED, corpus_insufficient=True, disclaimer=None,
                                    abstention=Abstention(AbstentionReason.OUT_OF_SCOPE, AbstentionStage.FALLBACK))
            return
        qs = probes(turn.question, reply, a.fallback_probes_min, a.fallback_probes_max)
        min_score = self._fallback_min_score(turn)
        cands = turn.reads.probe(qs, min_score=min_score, k=a.fallback_probe_k)
        notes = tuple(Note(i, c.fragment, c.score, c.rerank) for i, c in enumerate(cands, 1))
        # the model saw no notes: every [n] it wrote is forged
        answer_text, _, forged = clean_citations(reply.answer, set())
        checker = self._checker(turn, notes)
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
            removed_names=names, notes=notes, abstention=abstention,
        )

    def _fallback_min_score(self, turn: TurnState) -> float:
        result = turn.result
        if result is not None and result.signal.applied is not None:
            return result.signal.applied.fallback_min_score
        embedder = self.embedder
        name = embedder.name if embedder is not None else self.settings.embedder.name
        langs = self.mentions.get(turn.reads)
        return self.settings.gate.thresholds(name, turn.lang, langs.corpus_lang).fallback_min_score
