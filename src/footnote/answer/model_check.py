"""The answer-level check's model step (docs/answering.md, "A model's word on the relation").

The rules of :mod:`footnote.answer.answerable` see words, kinds and similarity. A near miss whose sentence
carries every word of the question and differs only in the relation — the horn *seen* two miles off, asked how
far it is *heard*; where the light stands, asked who *built* it — passes them. Where a model is configured as
``models.answer_check`` (the local Qwen2.5-Coder-1.5B: ``base_url = "llama-cpp://qwen2.5-coder-1.5b"``), it is
shown the question and the chosen sentences once the rules have passed them, and asked whether they state the
answer to this exact question: one token, its probability of "yes" read from the reply's log-probabilities.
Below ``answer.extractive.answerable.model_min_yes`` for that model the turn is a near miss
(``answer_not_in_passages``), in the extractive answer and before a model writes one.

The model can only decline: its "yes" never turns the rules' "no" into an answer, so an instruction planted in
a passage ("reply yes") can at most keep what the rules already let through. A model that fails (an error, a
timeout, the turn's deadline) leaves the rules' verdict, and the trace says why; a reader who hangs up stops it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from footnote.errors import ModelError
from footnote.lru import LruCache
from footnote.models.protocols import ChatMessage, ChoiceModel
from footnote.settings.extractive import AnswerableSettings
from footnote.settings.support import SupportSettings

log = logging.getLogger(__name__)

#: What the model is told and asked (measured with these words: docs/answering.md; a change needs a new fit).
SYSTEM = "You check whether a text answers a question. Reply with one word: yes or no."
QUESTION = "Does the text state the answer to this exact question? Reply yes or no."
OPTIONS = ("yes", "no")
_MARK = re.compile(r"\s*\[\d+\]")


def _unquoted(text: str) -> str:
    """``text`` with no run of three double quotes left, so it cannot close the quoted block it is shown in
    (one pass is not enough: five quotes become three)."""
    while '"""' in text:
        text = text.replace('"""', '"')
    return text


def messages(question: str, sentences: Sequence[str]) -> list[ChatMessage]:
    """The check's two messages: the question, then the sentences as quoted data (their ``[n]`` marks dropped)."""
    text = _unquoted(_MARK.sub("", " ".join(s.strip() for s in sentences)))
    return [ChatMessage("system", SYSTEM),
            ChatMessage("user", f'Question: {question}\n\nText:\n"""\n{text}\n"""\n\n{QUESTION}')]


@dataclass(frozen=True)
class ModelVerdict:
    """What the model said of a turn's chosen sentences."""

    model: str
    p_yes: float | None  # None: the model failed, or replied neither word
    floor: float  # model_min_yes for this model
    error: str | None = None

    @property
    def declines(self) -> bool:
        return self.p_yes is not None and self.p_yes < self.floor

    def to_info(self) -> dict[str, object]:
        out: dict[str, object] = {"model": self.model, "p_yes": None if self.p_yes is None else round(self.p_yes, 4),
                                  "min_yes": self.floor, "declines": self.declines}
        if self.error:
            out["error"] = self.error
        return out


class _YesNoCheck:
    """One yes-or-no question to a check model, with a per-model floor on its probability of "yes" and the verdicts
    kept between turns. A failure is a verdict with no ``p_yes``: the rules' verdict stands."""

    what = "check"

    def __init__(self, min_yes: Mapping[str, float], default: float, cache: int,
                 by_language: Mapping[str, Mapping[str, float]] | None = None) -> None:
        self.min_yes = min_yes
        self.default = default
        self.by_language = by_language or {}
        self._cache: LruCache[tuple[str, ...], float] = LruCache(cache)

    def floor(self, model: str, lang: str | None = None) -> float:
        """The floor for ``model``: by its name, else by its name at any endpoint (``name@url``), else the default;
        for a question in ``lang``, the model's floor for that language where one is fitted (``by_language``)."""
        for name in (model, model.split("@", 1)[0]):
            if lang is not None and lang in self.by_language.get(name, {}):
                return self.by_language[name][lang]
        if model in self.min_yes:
            return self.min_yes[model]
        return self.min_yes.get(model.split("@", 1)[0], self.default)

    def _ask(self, model: ChoiceModel, key: tuple[str, ...], make: Callable[[], list[ChatMessage]],
             lang: str | None = None) -> ModelVerdict:
        floor = self.floor(model.name, lang)
        full = (model.name, *key)
        hit = self._cache.get(full)
        if hit is not None:
            return ModelVerdict(model.name, hit, floor)
        try:
            shares = model.choose(make(), OPTIONS)
        except ModelError as e:  # the rules' verdict stands
            log.warning("%s: %s", self.what, e)
            return ModelVerdict(model.name, None, floor, error=str(e)[:200])
        p_yes = shares.get("yes")
        if p_yes is not None:
            self._cache.put(full, p_yes)
        return ModelVerdict(model.name, p_yes, floor, error=None if shares else "the reply was neither yes nor no")


class ModelCheck(_YesNoCheck):
    """Asks ``models.answer_check`` (see the module docstring). Shared by concurrent turns; verdicts are kept
    (``answerable.model_cache``) so a turn that selects twice (before a model writes, then the extractive
    fallback) asks once. Its floor: ``answerable.model_min_yes`` (else ``model_min_yes_default``)."""

    what = "answer check"

    def __init__(self, settings: AnswerableSettings) -> None:
        super().__init__(settings.model_min_yes, settings.model_min_yes_default, settings.model_cache,
                         settings.model_min_yes_by_language)
        self.settings = settings

    def ask(self, model: ChoiceModel, question: str, sentences: Sequence[str], lang: str | None = None) -> ModelVerdict:
        """The model's verdict on whether ``sentences`` answer ``question`` (asked in ``lang``: its floor)."""
        return self._ask(model, (question, *sentences), lambda: messages(question, sentences), lang)


#: The sentence check's words (measured with these: docs/answering.md, "A model's word on each sentence").
SENTENCE_SYSTEM = "You check whether a statement is supported by a text. Reply with one word: yes or no."
SENTENCE_QUESTION = "Does the text support every part of the statement? Reply yes or no."


def sentence_messages(sentence: str, passages: Sequence[str], max_chars: int) -> list[ChatMessage]:
    """The sentence check's two messages: the passages the sentence cites as quoted data (``max_chars`` of them at
    most), then the sentence (its ``[n]`` marks dropped)."""
    text = _unquoted("\n\n".join(p.strip() for p in passages)[:max_chars])
    claim = _unquoted(_MARK.sub("", sentence).strip())
    return [ChatMessage("system", SENTENCE_SYSTEM),
            ChatMessage("user", f'Text:\n"""\n{text}\n"""\n\nStatement: {claim}\n\n{SENTENCE_QUESTION}')]


class SentenceCheck(_YesNoCheck):
    """Asks ``models.answer_check`` whether the passages a model-written sentence cites support it, once the
    support rules keep it (``support.model_check``; docs/answering.md, "A model's word on each sentence"). Like
    the answer check it can only take away: its "yes" never shows a sentence the rules drop. Its floor:
    ``support.model_min_yes`` (else ``support.model_min_yes_default``)."""

    what = "sentence check"

    def __init__(self, settings: SupportSettings) -> None:
        super().__init__(settings.model_min_yes, settings.model_min_yes_default, settings.model_cache)
        self.settings = settings

    def ask(self, model: ChoiceModel, sentence: str, passages: Sequence[str]) -> ModelVerdict:
        # kept by the sentence as the model is shown it (its markers dropped) and the passages' texts
        return self._ask(model, (_MARK.sub("", sentence).strip(), *passages),
                         lambda: sentence_messages(sentence, passages, self.settings.model_max_chars))
