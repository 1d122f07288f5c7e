"""Follow-up questions understood in context: the stage before the search of a conversation's turn.

A follow-up such as "What about at night?" says nothing on its own. Before the turn searches:

- with a model (``conversation.rewrite_role``: the router, else the planner) the follow-up is rewritten
  into one standalone question from the conversation so far (the previous questions and the start of
  their answers). A failed or empty rewrite falls back to the rule below and says so in the trace.
- without one, a deterministic rule: a follow-up with no address of its own and at most
  ``conversation.followup_max_terms`` content terms (or one that opens with a continuation such as
  "and", "what about", "а как") depends on the previous turn, and takes its subject: the previous
  standalone question's content terms, its addresses (else the addresses of the verses it cited), and
  the title of the first source it cited — appended after a dash, so both the lexical and the dense
  lanes see them.

The reader is shown the standalone question ("Searching for: …"); the gate judges it; the trace keeps
it as ``rewritten_question``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from footnote.errors import Cancelled, FootnoteError
from footnote.models.protocols import ChatMessage, ChatModel
from footnote.retrieve.plan import keywords, parse_addresses
from footnote.settings import ConversationSettings

log = logging.getLogger(__name__)

#: Openings that continue the previous turn ("And in Russian?", "What about…", "А ночью?").
_CONTINUATION = re.compile(
    r"^\s*(and|but|also|what about|how about|what of|then|so|и|а|но|ещё|еще|а как|а что|а если|тогда)\b",
    re.IGNORECASE,
)
#: Words that point back at the previous turn's subject.
_BACK = frozenset(
    ["it", "its", "it's", "they", "them", "their", "this", "that", "these", "those", "he", "she", "him", "her", "his", "there", "such", "same", "он", "она", "оно", "они", "его", "её", "ее", "их", "этот", "эта", "это", "эти", "тот", "та", "те", "там", "такой", "такая", "такие", "тоже"]
)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
#: How the rule joins the carried subject and the follow-up ("<subject> — <follow-up>").
_JOIN = " — "


@dataclass(frozen=True)
class PriorTurn:
    """What the rewrite needs of an earlier turn."""

    question: str  # as asked
    standalone: str  # the question the turn searched for (its rewrite, or the question itself)
    answer: str
    cited_titles: tuple[str, ...] = ()
    cited_addresses: tuple[str, ...] = ()

    @classmethod
    def from_record(cls, question: str, rewritten: str | None, answer: Mapping[str, Any]) -> PriorTurn:
        titles: dict[str, None] = {}
        addresses: dict[str, None] = {}
        for c in answer.get("citations") or []:
            if not isinstance(c, Mapping):
                continue
            if c.get("title"):
                titles.setdefault(str(c["title"]), None)
            loc = c.get("locator") or {}
            if isinstance(loc, Mapping) and loc.get("label") and loc.get("book"):
                addresses.setdefault(str(loc["label"]), None)
        return cls(question, rewritten or question, str(answer.get("answer") or ""), tuple(titles), tuple(addresses))


@dataclass(frozen=True)
class Rewrite:
    question: str  # the standalone question the turn searches for
    how: str  # "unchanged" | "rule" | "model"
    carried: tuple[str, ...] = ()
    note: str | None = None  # what failed, for the trace's degraded list


def depends_on_previous(question: str, aliases: Mapping[str, str], max_terms: int) -> bool:
    """The deterministic rule's test: does ``question`` lean on the turn before it?"""
    if parse_addresses(question, aliases):
        return False
    words = [w.lower() for w in _WORD.findall(question)]
    if _CONTINUATION.match(question):
        return True
    terms = keywords(question)
    if len(terms) <= max_terms:
        return True
    return any(w in _BACK for w in words) and len(terms) <= max_terms + 2


def subject_of(turn: PriorTurn) -> str:
    """The subject a turn searched for: its standalone question without the follow-up the rule
    appended to it (so a chain of follow-ups carries the first question's subject, not a growing string)."""
    tail = f"{_JOIN}{turn.question}"
    if turn.standalone != turn.question and turn.standalone.endswith(tail):
        return turn.standalone[: -len(tail)]
    return turn.standalone


def rule_rewrite(question: str, history: Sequence[PriorTurn], cfg: ConversationSettings,
                 aliases: Mapping[str, str]) -> Rewrite:
    """The previous turn's subject, then the follow-up, when the follow-up depends on it."""
    if not history or not depends_on_previous(question, aliases, cfg.followup_max_terms):
        return Rewrite(question, "unchanged")
    prev = history[-1]
    subject = subject_of(prev)
    carried: list[str] = [subject]
    if not parse_addresses(subject, aliases):
        carried += list(prev.cited_addresses[: cfg.carry_addresses])
    carried += [t for t in prev.cited_titles if t.lower() not in question.lower()][: cfg.carry_titles]
    base = " ".join(dict.fromkeys(c.strip() for c in carried if c.strip()))
    if not base:
        return Rewrite(question, "unchanged")
    return Rewrite(f"{base}{_JOIN}{question.strip()}", "rule", tuple(keywords(base)))


_SYSTEM = (
    "You rewrite the reader's last message into one standalone question for a search engine, in the "
    "language of that message. Resolve what it refers to ('it', 'there', 'what about …') from the "
    "conversation. If it already stands alone, return it unchanged. Reply with the question only: no "
    "quotes, no explanation."
)


def model_rewrite(model: ChatModel, question: str, history: Sequence[PriorTurn], cfg: ConversationSettings,
                  max_chars: int) -> str:
    """The model's standalone question (ModelError/timeouts raise; an empty reply raises ValueError)."""
    lines: list[str] = []
    for t in history[-cfg.history_turns:]:
        lines.append(f"Reader: {t.question}")
        ans = " ".join(t.answer.split())
        if len(ans) > cfg.history_answer_chars:
            ans = ans[: cfg.history_answer_chars].rstrip() + " …"
        if ans:
            lines.append(f"Answer: {ans}")
    prompt = "Conversation so far:\n" + "\n".join(lines) + f"\n\nReader's last message: {question}\n\nStandalone question:"
    raw = model.complete([ChatMessage("system", _SYSTEM), ChatMessage("user", prompt)])
    text = next((ln.strip() for ln in raw.strip().splitlines() if ln.strip()), "")
    text = re.sub(r"^(standalone question|question)\s*:\s*", "", text, flags=re.IGNORECASE)
    text = " ".join(text.strip().strip("\"'«»“”").split())
    if not text:
        raise ValueError("the model's rewrite was empty")
    return text[:max_chars]


def rewrite(question: str, history: Sequence[PriorTurn], cfg: ConversationSettings, models: Mapping[str, ChatModel],
            aliases: Mapping[str, str], max_chars: int) -> Rewrite:
    """The standalone question for a conversation's turn (see the module docstring)."""
    if not history:
        return Rewrite(question, "unchanged")
    model = None
    if cfg.rewrite_role != "none":
        model = models.get(cfg.rewrite_role) or models.get("router") or models.get("planner")
    if model is None:
        return rule_rewrite(question, history, cfg, aliases)
    try:
        text = model_rewrite(model, question, history, cfg, max_chars)
    except Cancelled:
        raise
    except (FootnoteError, ValueError) as e:
        log.warning("follow-up rewrite failed (%s); the deterministic rule is used", e)
        r = rule_rewrite(question, history, cfg, aliases)
        why = e.message if isinstance(e, FootnoteError) else str(e)
        return Rewrite(r.question, r.how, r.carried, f"follow-up rewrite: {why}; the deterministic rule was used")
    if text == question:
        return Rewrite(question, "unchanged")
    return Rewrite(text, "model")
