"""Follow-up questions understood in context: the stage before the search of a conversation's turn.

A follow-up such as "What about at night?" says nothing on its own. Before the turn searches:

- with a model (``conversation.rewrite_role``: the router, else the planner) the follow-up is rewritten
  into one standalone question from the conversation so far (the previous questions and the start of
  their answers). A failed or empty rewrite falls back to the rule below and says so in the trace.
- without one, a deterministic rule (:func:`classify`) tells a follow-up from a new subject:

  1. an address of its own ("What does HB 1.4 say?"): a new subject;
  2. a continuation opening ("and", "what about", "а как"): a follow-up;
  3. a word pointing back ("it", "he", "there", "then", "which one", "anyone"): a follow-up;
  4. more than ``conversation.followup_max_terms`` content terms: stands alone (a run of a script without spaces
     between words counts one term per ``conversation.unspaced_chars_per_term`` characters);
  5. no content term the previous subject does not already have ("How often?", "Why?"): ellipsis, a
     follow-up;
  6. a new content term that retrieves on its own — the corpus has it (lexically) in at least one
     passage and in at most ``conversation.new_subject_max_share`` of them — or at least
     ``conversation.new_subject_min_terms`` new content terms ("Who wrote about ice?": a verb and its
     object, even when the corpus lacks them): a new subject;
  7. otherwise (one new word the corpus does not have: "Why so early?"): a follow-up.

  A follow-up takes the previous turn's subject: the previous standalone question (its addresses,
  else by setting the addresses of the verses it cited, and titles) — appended before a dash, so both
  the lexical and the dense lanes see them.

Before either, a follow-up asking for "the next verse" / "the previous verse" ("а следующий стих?") after a
turn about an address is resolved against the book's own locations (:func:`relative_address`): "And what does
the next verse say?" after BG 2.47 searches "And what does BG 2.48 say?" (``conversation.next_words``,
``conversation.previous_words``, the nouns of ``corpus.verse_words``). Past the book's end the address is
still asked for, and the plan says plainly that the corpus lacks it.

The reader is shown the standalone question ("Searching for: …"); the gate judges it; the trace keeps
it as ``rewritten_question``.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from footnote.errors import Cancelled, FootnoteError
from footnote.models.protocols import ChatMessage, ChatModel
from footnote.records.fragments import AddressLocator
from footnote.retrieve.books import BookIndex
from footnote.retrieve.plan import keywords, parse_addresses
from footnote.settings import ConversationSettings
from footnote.text import content_terms, detect_lang

log = logging.getLogger(__name__)

#: Openings that continue the previous turn ("And in Russian?", "What about…", "А ночью?").
_CONTINUATION = re.compile(
    r"^\s*(and|but|also|what about|how about|what of|then|so|и|а|но|ещё|еще|а как|а что|а если|тогда)\b",
    re.IGNORECASE,
)
#: Words that point back at the previous turn's subject (or lean on it: "which one", "anyone", "then").
_BACK = frozenset(
    ["it", "its", "it's", "they", "them", "their", "this", "that", "these", "those", "he", "she", "him", "her", "his",
     "there", "such", "same", "then", "one", "ones", "anyone", "anybody", "anything", "someone", "somebody",
     "else", "other", "others", "too", "either",
     "он", "она", "оно", "они", "его", "её", "ее", "их", "ему", "ей", "им", "нём", "нем", "ней", "них", "этот", "эта",
     "это", "эти", "тот", "та", "те", "там", "тоже", "тогда", "кто-нибудь", "кто-то"]
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
    pinned_notes: tuple[str, ...] = ()  # the curated notes that answered it (a follow-up is not answered by them again)

    @classmethod
    def from_record(cls, question: str, rewritten: str | None, answer: Mapping[str, Any]) -> PriorTurn:
        titles: dict[str, None] = {}
        addresses: dict[str, None] = {}
        pinned: dict[str, None] = {}
        for c in answer.get("citations") or []:
            if not isinstance(c, Mapping):
                continue
            if c.get("kind") == "pinned" and isinstance(c.get("locator"), Mapping) and c["locator"].get("note"):
                pinned.setdefault(str(c["locator"]["note"]), None)
            if c.get("title"):
                titles.setdefault(str(c["title"]), None)
            loc = c.get("locator") or {}
            if isinstance(loc, Mapping) and loc.get("label") and loc.get("book"):
                addresses.setdefault(str(loc["label"]), None)
        return cls(question, rewritten or question, str(answer.get("answer") or ""), tuple(titles), tuple(addresses),
                   tuple(pinned))


@dataclass(frozen=True)
class Rewrite:
    question: str  # the standalone question the turn searches for
    how: str  # "unchanged" | "rule" | "model"
    carried: tuple[str, ...] = ()
    note: str | None = None  # what failed, for the trace's degraded list


#: How often a term occurs in the corpus: the share of fragments that match it lexically (0.0: none).
TermShare = Callable[[str, str], float]


def classify(question: str, previous: str, cfg: ConversationSettings, aliases: Mapping[str, str],
             share: TermShare | None = None) -> tuple[bool, str]:
    """The deterministic rule's test (see the module docstring): (does ``question`` lean on the turn
    whose subject was ``previous``?, which step decided). ``share(term, lang)``: how much of the corpus
    matches a term (None: nothing is known of the corpus, and only the question's form decides)."""
    if parse_addresses(question, aliases):
        return False, "own address"
    if _CONTINUATION.match(question):
        return True, "continuation"
    words = [w.lower() for w in _WORD.findall(question)]
    terms = keywords(question)
    count = sum(_term_count(t, cfg.unspaced_chars_per_term) for t in terms)
    if any(w in _BACK for w in words) and count <= cfg.followup_max_terms + 2:
        return True, "points back"
    if count > cfg.followup_max_terms:
        return False, "stands alone"
    lang = detect_lang(question, "en")
    seen = content_terms(previous, detect_lang(previous, lang)) | content_terms(previous, lang)
    new = [t for t in terms if not (content_terms(t, lang) <= seen)]
    if not new:
        return True, "ellipsis"
    if share is not None:
        for term in new:
            s = share(term, lang)
            if 0.0 < s <= cfg.new_subject_max_share:
                return False, "new term in the corpus"
    if len(new) >= cfg.new_subject_min_terms:
        return False, "new terms"
    return True, "ellipsis"


#: scripts written without spaces between words: a token of theirs is a clause, not a word
_UNSPACED = ("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR")


def _term_count(term: str, chars_per_term: int) -> int:
    """How many content terms ``term`` stands for: one, or, for a run of a script without spaces between words
    (``_UNSPACED``), one per ``chars_per_term`` of its characters."""
    unspaced = sum(1 for ch in term if unicodedata.name(ch, "").startswith(_UNSPACED)
                   and not unicodedata.category(ch).startswith("M"))  # a Thai vowel or tone mark is no letter
    return max(1, unspaced // chars_per_term) if unspaced else 1


def depends_on_previous(question: str, aliases: Mapping[str, str], max_terms: int, previous: str = "",
                        share: TermShare | None = None) -> bool:
    """Whether ``question`` leans on the turn before it (:func:`classify` with default settings)."""
    cfg = ConversationSettings().model_copy(update={"followup_max_terms": max_terms})
    return classify(question, previous, cfg, aliases, share)[0]


def subject_of(turn: PriorTurn) -> str:
    """The subject a turn searched for: its standalone question without the follow-up the rule
    appended to it (so a chain of follow-ups carries the first question's subject, not a growing string)."""
    tail = f"{_JOIN}{turn.question}"
    if turn.standalone != turn.question and turn.standalone.endswith(tail):
        return turn.standalone[: -len(tail)]
    return turn.standalone


def rule_rewrite(question: str, history: Sequence[PriorTurn], cfg: ConversationSettings,
                 aliases: Mapping[str, str], share: TermShare | None = None) -> Rewrite:
    """The previous turn's subject, then the follow-up, when the follow-up depends on it."""
    if not history:
        return Rewrite(question, "unchanged")
    prev = history[-1]
    subject = subject_of(prev)
    if not classify(question, subject, cfg, aliases, share)[0]:
        return Rewrite(question, "unchanged")
    carried: list[str] = [subject]
    if not parse_addresses(subject, aliases):
        carried += list(prev.cited_addresses[: cfg.carry_addresses])
    carried += [t for t in prev.cited_titles if t.lower() not in question.lower()][: cfg.carry_titles]
    base = " ".join(dict.fromkeys(c.strip() for c in carried if c.strip()))
    if not base:
        return Rewrite(question, "unchanged")
    return Rewrite(f"{base}{_JOIN}{question.strip()}", "rule", tuple(keywords(base)))


def _relative(cfg: ConversationSettings, verse_words: Collection[str]) -> re.Pattern[str]:
    def alts(words: Collection[str]) -> str:
        return "|".join(re.escape(w) for w in sorted({w.lower() for w in words if w}, key=len, reverse=True))

    nouns = alts({*verse_words, "one"})
    return re.compile(
        rf"\b(?:(?:the|this|that)\s+)?(?P<dir>{alts((*cfg.next_words, *cfg.previous_words))})\b"
        rf"(?:\s+(?:{nouns})\b|(?=[\s?!.…]*$))",
        re.IGNORECASE,
    )


def _step(loc: str, by: int) -> str:
    """The location ``by`` past ``loc`` by its last number, for a book that has no such location ("18.78" → "18.79")."""
    m = re.search(r"(\d+)(?!.*\d)", loc)
    if m is None:
        return loc
    return f"{loc[: m.start()]}{max(0, int(m.group(1)) + by)}{loc[m.end():]}"


def relative_address(question: str, history: Sequence[PriorTurn], cfg: ConversationSettings,
                     aliases: Mapping[str, str], books: BookIndex | None,
                     verse_words: Collection[str] = ()) -> Rewrite | None:
    """"The next verse" / "the previous verse" after a turn about an address: the question with that phrase
    replaced by the book's next (previous) location ("And what does BG 2.48 say?"); None when the question
    says no such thing, names an address of its own, or the previous turn was about no address of a known book.
    From a range, the next verse follows its last one and the previous precedes its first."""
    if not history or books is None or not books.books or parse_addresses(question, aliases):
        return None
    m = _relative(cfg, verse_words).search(question)
    if m is None:
        return None
    step = 1 if m.group("dir").lower() in {w.lower() for w in cfg.next_words} else -1
    prev = history[-1]
    addrs = parse_addresses(subject_of(prev), aliases) or [
        a for label in prev.cited_addresses for a in parse_addresses(label, aliases)]
    anchor: AddressLocator | None = addrs[-1] if step > 0 and addrs else (addrs[0] if addrs else None)
    book = books.get(anchor.book) if anchor is not None else None
    if anchor is None or book is None:
        return None
    span = [anchor.loc] if anchor.loc in book.locs else BookIndex.within(book, anchor.loc)
    if not span:
        return None
    edge = span[-1] if step > 0 else span[0]
    i = book.locs.index(edge) + step
    loc = book.locs[i] if 0 <= i < len(book.locs) else _step(edge, step)  # past the book: said "not in the corpus"
    label = f"{book.code} {loc}"
    text = " ".join(f"{question[: m.start()]}{label}{question[m.end():]}".split())
    return Rewrite(text, "rule", (label,))


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
            aliases: Mapping[str, str], max_chars: int, share: TermShare | None = None,
            books: BookIndex | None = None, verse_words: Collection[str] = ()) -> Rewrite:
    """The standalone question for a conversation's turn (see the module docstring). ``books``: the corpus's
    books, whose locations "the next verse" steps through (with ``verse_words``, corpus.verse_words)."""
    if not history:
        return Rewrite(question, "unchanged")
    if (relative := relative_address(question, history, cfg, aliases, books, verse_words)) is not None:
        return relative
    model = None
    if cfg.rewrite_role != "none":
        model = models.get(cfg.rewrite_role) or models.get("router") or models.get("planner")
    if model is None:
        return rule_rewrite(question, history, cfg, aliases, share)
    try:
        text = model_rewrite(model, question, history, cfg, max_chars)
    except Cancelled:
        raise
    except (FootnoteError, ValueError) as e:
        log.warning("follow-up rewrite failed (%s); the deterministic rule is used", e)
        r = rule_rewrite(question, history, cfg, aliases, share)
        why = e.message if isinstance(e, FootnoteError) else str(e)
        return Rewrite(r.question, r.how, r.carried, f"follow-up rewrite: {why}; the deterministic rule was used")
    if text == question:
        return Rewrite(question, "unchanged")
    return Rewrite(text, "model")
