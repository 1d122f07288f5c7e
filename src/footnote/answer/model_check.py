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
from collections.abc import Sequence
from dataclasses import dataclass

from footnote.errors import ModelError
from footnote.lru import LruCache
from footnote.models.protocols import ChatMessage, ChoiceModel
from footnote.settings.extractive import AnswerableSettings

log = logging.getLogger(__name__)

#: What the model is told and asked (measured with these words: docs/answering.md; a change needs a new fit).
SYSTEM = "You check whether a text answers a question. Reply with one word: yes or no."
QUESTION = "Does the text state the answer to this exact question? Reply yes or no."
OPTIONS = ("yes", "no")
_MARK = re.compile(r"\s*\[\d+\]")


def messages(question: str, sentences: Sequence[str]) -> list[ChatMessage]:
    """The check's two messages: the question, then the sentences as quoted data (their ``[n]`` marks dropped)."""
    text = _MARK.sub("", " ".join(s.strip() for s in sentences)).replace('"""', '"')
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


class ModelCheck:
    """Asks ``models.answer_check`` (see the module docstring). Shared by concurrent turns; verdicts are kept
    (``answerable.model_cache``) so a turn that selects twice (before a model writes, then the extractive
    fallback) asks once."""

    def __init__(self, settings: AnswerableSettings) -> None:
        self.settings = settings
        self._cache: LruCache[tuple[str, str, tuple[str, ...]], float] = LruCache(settings.model_cache)

    def floor(self, model: str) -> float:
        """``model_min_yes`` for ``model``: by its name, else by its name at any endpoint (``name@url``), else
        ``model_min_yes_default``."""
        s = self.settings
        if model in s.model_min_yes:
            return s.model_min_yes[model]
        return s.model_min_yes.get(model.split("@", 1)[0], s.model_min_yes_default)

    def ask(self, model: ChoiceModel, question: str, sentences: Sequence[str]) -> ModelVerdict:
        floor = self.floor(model.name)
        key = (model.name, question, tuple(sentences))
        hit = self._cache.get(key)
        if hit is not None:
            return ModelVerdict(model.name, hit, floor)
        try:
            shares = model.choose(messages(question, sentences), OPTIONS)
        except ModelError as e:  # the rules' verdict stands
            log.warning("answer check: %s", e)
            return ModelVerdict(model.name, None, floor, error=str(e)[:200])
        p_yes = shares.get("yes")
        if p_yes is not None:
            self._cache.put(key, p_yes)
        return ModelVerdict(model.name, p_yes, floor, error=None if shares else "the reply was neither yes nor no")
