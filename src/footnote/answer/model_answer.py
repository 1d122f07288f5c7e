"""A model's answer as the server lets it through (steps 10–11 with a synthesizer): streamed through the cleaner,
held back until its first valid citation, every sentence judged by the passages it cites as it completes
(docs/answering.md, "Every sentence shown is supported"). A mixin of :class:`~footnote.answer.pipeline.Answerer`."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from footnote.answer.citations import CITE, ProseChecker, StreamCleaner
from footnote.answer.compact import Compacted
from footnote.answer.memory import background_numbers
from footnote.answer.model_check import SentenceCheck
from footnote.answer.support import CitedPassage, SentenceSupport, SupportScorer, Vectors
from footnote.answer.synthesizer import synth_messages
from footnote.answer.turn import TurnState
from footnote.answer.types import Event, Note, Token
from footnote.errors import FootnoteError, ModelError, TurnDeadline
from footnote.models.chat import CountingChatModel
from footnote.models.protocols import ChoiceModel
from footnote.redact import redact

if TYPE_CHECKING:
    from footnote.settings import Settings


class ModelAnswers:
    """The synthesizer's stream, checked sentence by sentence."""

    if TYPE_CHECKING:  # provided by Answerer
        settings: Settings
        support: SupportScorer
        sentence_check: SentenceCheck

        def _background(self, turn: TurnState, notes: Sequence[Note]) -> str: ...

        def _passage_vectors(self, turn: TurnState) -> Vectors | None: ...

        def _source_names(self, turn: TurnState, notes: Sequence[Note]) -> tuple[dict[str, str], dict[str, str]]: ...

    def _model_answer(
        self, turn: TurnState, synth: CountingChatModel, ctx: Compacted, checker: ProseChecker, tokens: list[int]
    ) -> Generator[Event, None, StreamCleaner | None]:
        """Stream the model's answer through the cleaner. Pieces are held back until the first valid
        citation arrives, so an answer that cites nothing is never shown: the extractive answer replaces
        it (None is returned), as it does a failure before anything was shown."""
        a = self.settings.answer
        background = self._background(turn, ctx.notes)
        cleaner = self._cleaner(ctx, checker, turn)
        # every sentence shown is supported by a passage it cites: judged as it completes (issue 39 §1)
        cleaner.judge_with(self._support_judge(turn, ctx), flag_only=self.settings.support.on_unsupported == "flag")
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
            turn.unsupported = list(cleaner.unsupported)
        if not shown and cleaner.removed_by_reason.get("unsupported"):
            # the model cited passages that do not say what it wrote: nothing of it is left
            why = "synthesizer: no sentence of the model's answer is supported by the passages it cites"
            if self.settings.support.none_supported == "extractive":
                turn.degrade(f"{why}; extractive answer used")
                return None
            turn.degrade(why)  # the turn is weakly grounded
            return cleaner
        if not shown:
            turn.degrade("synthesizer: the model's answer cited no note; extractive answer used")
            return None
        return cleaner

    def _support_judge(self, turn: TurnState, ctx: Compacted) -> Callable[[str], SentenceSupport]:
        """The support check a model's sentence passes before it is shown: the passages it cites (with their
        sources' titles and address labels) must support it (``SupportScorer.judge``). An embedder failure
        fails the sentence: nothing unjudged is shown."""
        titles, _ = self._source_names(turn, ctx.notes)
        by_n = {n: CitedPassage.of(note.fragment, titles.get(note.fragment.source_id, "")) for n, note in ctx.by_n.items()}
        # what only a planted instruction or a background note (never cited) says is no passage's to vouch for
        vectors = self._passage_vectors(turn)
        words = self.support.turn_words(list(by_n.values()), [n.body for n in turn.background] if turn.background_shown else ())
        failed: list[str] = []
        checker = turn.models.get("answer_check") if self.settings.support.model_check else None

        def judge(unit: str) -> SentenceSupport:
            try:
                verdict = self.support.judge(unit, by_n, words, vectors)
            except FootnoteError as e:
                if not failed:
                    failed.append(e.message)
                    turn.degrade(f"support: {e.message}; the sentences it could not judge were not shown")
                return SentenceSupport(unit, (), ("error",))
            entry: dict[str, Any] = {"cites": [c.n for c in verdict.citations]}
            if checker is not None and verdict.supported:
                verdict = self._model_word(turn, checker, unit, verdict, by_n, entry)
            turn.judged.append({**entry, "supported": verdict.supported, "why": list(verdict.why)})
            return verdict

        return judge

    def _model_word(self, turn: TurnState, checker: ChoiceModel, unit: str, verdict: SentenceSupport,
                    by_n: Mapping[int, CitedPassage], entry: dict[str, Any]) -> SentenceSupport:
        """The check model's word on a sentence the rules keep (``support.model_check``), put in ``entry`` (the
        sentence's line in the trace): under its floor the sentence is unsupported, ``model``; a failed call leaves
        the rules' verdict and is listed as degraded."""
        cited = [by_n[n].text for n in dict.fromkeys(c.n for c in verdict.citations) if n in by_n]
        said = self.sentence_check.ask(checker, unit, cited)
        info = said.to_info()
        if said.error is not None:
            info["error"] = error = redact(said.error, turn.secrets)
            why = f"sentence check ({said.model}): {error}; the rules' verdict stands"
            if why not in turn.degraded:  # once per turn, however many sentences it failed on
                turn.degrade(why)
        entry["check"] = info
        if not said.declines:
            return verdict
        return SentenceSupport(verdict.sentence, verdict.citations, (*verdict.missing, "model"))

    def _cleaner(self, ctx: Compacted, checker: ProseChecker, turn: TurnState | None = None) -> StreamCleaner:
        """The cleaner of a corpus answer: every sentence shown must carry a valid citation; a background
        note's number or title (curated memory) is dropped and counted."""
        a = self.settings.answer
        bg = turn.background if turn is not None and turn.background_shown else ()
        return StreamCleaner(
            set(ctx.by_n), checker, a.stream_flush_chars, require_cited=True, max_sentence_chars=a.max_sentence_chars,
            not_citable=background_numbers(ctx.notes, bg), not_citable_names={n.label for n in bg},
        )


__all__ = ["ModelAnswers"]
