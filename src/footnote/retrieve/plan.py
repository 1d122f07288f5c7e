"""Plan: turn a question into a typed :class:`QueryPlan` (docs/architecture.md "The flow", step 1).

- :func:`parse_addresses` finds structural addresses in the forms people type ("BG 2.13", "Bg. 2.13",
  "Bhagavad-gita 2.13", "БГ 2.13", "SB 1.2.6") using ``settings.corpus.book_aliases``. It never
  invents, rounds or clamps a location: "BG 19.5" parses as ``BG/19.5`` and the store's exact
  lookup then finds nothing — never a neighbour.
- :func:`first_round_plan` is deterministic and costs no model call: the question itself, its
  addresses, and (for a short transliterated phrase such as "karmaṇy evādhikāras te") the
  sandhi-joined spelling as a paraphrase, so the verbatim lexical lane can match
  "karmaṇyevādhikāraste".
- :func:`second_round_plan` is the query regeneration of the second fan-out round: with a router
  :class:`ChatModel` it asks for ``{"subquestions":[{"text", "paraphrases"}]}`` (capped and
  validated; malformed output falls back to the deterministic variant and is logged); without one
  it builds a deterministic variant (keywords without stop words; multi-part questions split).
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from footnote.errors import ModelError
from footnote.models.protocols import Budget, ChatMessage, ChatModel
from footnote.records.fragments import AddressLocator
from footnote.retrieve.books import BookIndex, Expanded, address_aliases, expand_addresses
from footnote.retrieve.phrased import parse_phrased_addresses
from footnote.retrieve.types import QueryPlan, SearchResult, SubQuestion
from footnote.settings import Settings
from footnote.text import is_stop, keywords

log = logging.getLogger(__name__)

# --- addresses -------------------------------------------------------------------------------

_SEP = re.compile(r"[\s\-‐‑–—_.]+")
# A location: numbers joined by '.' or ':' ("2.13", "1.2.6", "2:13"), optionally a range "1.16-18",
# "1.1-1.3", "2.11–2.13".
_LOC = r"(?P<loc>\d{1,4}(?:\s?[.:]\s?\d{1,4}){0,3}(?:\s?[-–—‒]\s?\d{1,4}(?:[.:]\d{1,4}){0,3})?)"


def _alias_key(alias: str) -> str:
    """Lower-cased alias without separators: "Bhagavad-gita" and "bhagavad gita" share a key."""
    return _SEP.sub("", alias.lower())


def _alias_pattern(alias: str) -> str:
    parts = [re.escape(p) for p in _SEP.split(alias.lower().strip()) if p]
    return r"[\s\-‐‑–—_.]*".join(parts)


@lru_cache(maxsize=16)
def _compile(items: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    keys: dict[str, str] = {}
    for alias, code in items:
        keys.setdefault(_alias_key(alias), code)
        keys.setdefault(_alias_key(code), code)  # the canonical code is always typeable
    alts = sorted({_alias_pattern(a) for a, _ in items} | {_alias_pattern(c) for _, c in items}, key=len, reverse=True)
    alts = [a for a in alts if a]
    pattern = re.compile(
        r"(?<![^\W\d_])(?P<book>" + "|".join(alts) + r")\.?\s*" + _LOC + r"(?![\d])",
        re.IGNORECASE | re.UNICODE,
    )
    return pattern, keys


def _normalise_loc(raw: str) -> str:
    loc = re.sub(r"\s+", "", raw).replace(":", ".")
    return re.sub(r"[–—‒]", "-", loc)


def parse_addresses(text: str, aliases: Mapping[str, str]) -> list[AddressLocator]:
    """Addresses typed in ``text``, in order of appearance, without duplicates.

    ``aliases`` maps how people type a book name (any case, any separators) to its canonical code.
    The location is kept exactly as typed (":" read as "."); nothing is rounded or clamped.
    """
    if not aliases or not text:
        return []
    text = unicodedata.normalize("NFKC", text)  # full-width "ＨＢ ３.２" is "HB 3.2"
    pattern, keys = _compile(tuple(sorted(aliases.items())))
    out: list[AddressLocator] = []
    seen: set[tuple[str, str]] = set()
    for m in pattern.finditer(text):
        code = keys.get(_alias_key(m.group("book")))
        if code is None:  # pragma: no cover - every alternative comes from keys
            continue
        loc = _normalise_loc(m.group("loc"))
        if "." not in loc and "-" not in loc and len(_alias_key(m.group("book"))) <= 2 and not m.group("book").isupper():
            # "sb 3" / "hb 12" typed in lower case without a verse: too likely an ordinary word
            continue
        if (code, loc) in seen:
            continue
        seen.add((code, loc))
        out.append(AddressLocator(code, loc, f"{code} {loc}"))
    return out


# --- stop words and deterministic variants ----------------------------------------------------

_IAST = re.compile(r"[āīūṛṝḷḹṃṁḥṅñṭḍṇśṣĀĪŪṚṜḶṂḤṄÑṬḌṆŚṢ]")
_LATIN_WORD = re.compile(r"^[A-Za-z\u00C0-\u024F\u1E00-\u1EFF'-]+$")


def _strip_addresses(text: str, aliases: Mapping[str, str]) -> str:
    if not aliases:
        return text
    pattern, _ = _compile(tuple(sorted(aliases.items())))
    return pattern.sub(" ", text)


def sandhi_joined(text: str, aliases: Mapping[str, str] | None = None) -> str | None:
    """The phrase with its spaces removed when ``text`` looks like a transliterated (Sanskrit) phrase:
    2–8 Latin words, none a stop word, and either IAST diacritics or no vowel-final English shape.
    "karmaṇy evādhikāras te" → "karmaṇyevādhikāraste". None for ordinary questions."""
    body = _strip_addresses(text, aliases or {}).strip().strip("?!.,;:\"'«»“”")
    words = body.split()
    if not 2 <= len(words) <= 8:
        return None
    if not all(_LATIN_WORD.match(w) for w in words):
        return None
    if any(is_stop(w.strip("'-"), "en") for w in words):
        return None
    if not _IAST.search(body) and any(w[:1].isupper() for w in words):
        return None  # "Warsaw Uprising"-like names: not a transliterated verse
    return "".join(words)


_SPLIT = re.compile(r"(?<=[?;])\s+|\s+(?:and also|and then|а также|и ещё|и еще)\s+", re.IGNORECASE)


def split_parts(question: str) -> list[str]:
    """Split a multi-part question ("Who…? When…?", "…; …") into its parts; one part otherwise."""
    parts = [p.strip() for p in _SPLIT.split(question) if p and p.strip()]
    parts = [p for p in parts if len(keywords(p)) >= 1]
    return parts or [question.strip()]


# --- plans -------------------------------------------------------------------------------------


def _lang(question: str, settings: Settings, lang: str | None) -> str:
    c = settings.corpus
    return lang or c.question_lang(question)


def question_addresses(
    question: str, settings: Settings, books: BookIndex | None = None, lang: str = "en"
) -> Expanded:
    """The addresses a question asks for, as readers write them: "HB 1.1-1.3", "BG 2", "Гита 2.47",
    "verse 2.1 of the Harbour Book", "second chapter, verse 47" — book names from settings plus the
    corpus's own books (:func:`address_aliases`); ranges and chapters expanded against the books, with
    notes for what is capped or missing."""
    aliases = address_aliases(settings, books)
    addrs = parse_addresses(question, aliases)
    if not addrs:
        only = books.only_book() if books is not None else None
        c = settings.corpus
        addrs = parse_phrased_addresses(question, aliases, c.chapter_words, c.verse_words, only.code if only else None)
    rs = settings.retrieve
    return expand_addresses(addrs, books, rs.chapter_max_verses, rs.max_addresses, lang)


def first_round_plan(
    question: str, settings: Settings, *, lang: str | None = None, books: BookIndex | None = None
) -> QueryPlan:
    """Round one: the question itself plus its detected addresses; no model call, deterministic.
    ``books``: the corpus's books (ranges, chapters, names and "not in the corpus" notes)."""
    q = question.strip()
    aliases = address_aliases(settings, books)
    qlang = _lang(q, settings, lang)
    found = question_addresses(q, settings, books, qlang)
    paraphrases: tuple[str, ...] = ()
    joined = sandhi_joined(q, aliases)
    if joined and joined != q and settings.retrieve.max_paraphrases > 0:
        paraphrases = (joined,)
    sub = SubQuestion(text=q, paraphrases=paraphrases, addresses=found.addresses)
    return QueryPlan(question=q, lang=qlang, subquestions=(sub,), source="deterministic", address_notes=found.notes)


def deterministic_second_round(question: str, settings: Settings, *, lang: str | None = None) -> QueryPlan:
    """Round two without a model: each part of a multi-part question becomes a sub-question; each
    sub-question gets its keywords (stop words dropped) as a paraphrase."""
    q = question.strip()
    aliases = settings.corpus.book_aliases
    rs = settings.retrieve
    parts = split_parts(q)[: max(1, rs.max_subquestions)]
    subs: list[SubQuestion] = []
    for i, part in enumerate(parts):
        text = part if len(parts) > 1 else q
        kw = " ".join(keywords(_strip_addresses(text, aliases)))
        paras: list[str] = []
        if kw and kw.lower() != text.lower():
            paras.append(kw)
        joined = sandhi_joined(text, aliases)
        if joined and joined not in paras and joined != text:
            paras.append(joined)
        addrs = parse_addresses(text, aliases)
        if i == 0 and not addrs and len(parts) > 1:
            addrs = parse_addresses(q, aliases)
        subs.append(SubQuestion(text=text, paraphrases=tuple(paras[: rs.max_paraphrases]), addresses=tuple(addrs)))
    return QueryPlan(question=q, lang=_lang(q, settings, lang), subquestions=tuple(subs), source="deterministic")


class _ModelSub(BaseModel):
    model_config = ConfigDict(extra="ignore")
    text: str = Field(min_length=1)
    paraphrases: list[str] = Field(default_factory=list)


class _ModelPlan(BaseModel):
    model_config = ConfigDict(extra="ignore")
    subquestions: list[_ModelSub] = Field(min_length=1)


PLAN_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "subquestions": {
            "type": "array",
            "minItems": 1,
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "paraphrases": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                },
                "required": ["text", "paraphrases"],
            },
        }
    },
    "required": ["subquestions"],
}

_SYSTEM = (
    "You rewrite a user's question into search queries for a document corpus. Reply with JSON only: "
    '{{"subquestions": [{{"text": "...", "paraphrases": ["...", "..."]}}]}}. Give 1 to {max_sub} '
    "sub-questions (split only a question that asks several things), each with at most {max_para} "
    "paraphrases that use different words for the same thing. Keep names, numbers and addresses such as "
    '"BG 2.13" exactly as written. Write in the language of the question.'
)


def _extract_json(text: str) -> object:
    s = text.strip()
    if s.startswith("```"):
        s = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", s)
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        a, b = s.find("{"), s.rfind("}")
        if a >= 0 and b > a:
            return json.loads(s[a : b + 1])
        raise


def parse_model_plan(raw: str, question: str, settings: Settings, *, lang: str | None = None) -> QueryPlan:
    """Validate and cap a router reply into a plan. Raises ``ValueError`` on malformed output."""
    try:
        data = _extract_json(raw)
        parsed = _ModelPlan.model_validate(data)
    except (json.JSONDecodeError, ValidationError) as e:
        raise ValueError(f"router reply is not a valid plan: {e}") from e
    rs = settings.retrieve
    aliases = settings.corpus.book_aliases
    q = question.strip()
    q_addrs = parse_addresses(q, aliases)
    subs: list[SubQuestion] = []
    seen: set[str] = set()
    for s in parsed.subquestions:
        text = " ".join(s.text.split())
        if not text or text.lower() in seen:
            continue
        seen.add(text.lower())
        paras: list[str] = []
        for p in s.paraphrases:
            p = " ".join(str(p).split())
            if p and p.lower() != text.lower() and p.lower() not in {x.lower() for x in paras}:
                paras.append(p)
        addrs = parse_addresses(text, aliases)
        subs.append(SubQuestion(text=text, paraphrases=tuple(paras[: rs.max_paraphrases]), addresses=tuple(addrs)))
        if len(subs) >= rs.max_subquestions:
            break
    if not subs:
        raise ValueError("router reply holds no usable sub-question")
    found = {(a.book, a.loc) for s in subs for a in s.addresses}
    missing = tuple(a for a in q_addrs if (a.book, a.loc) not in found)
    if missing:  # the question's own addresses are never lost to a rewrite
        first = subs[0]
        subs[0] = SubQuestion(first.text, first.paraphrases, first.addresses + missing)
    return QueryPlan(question=q, lang=_lang(q, settings, lang), subquestions=tuple(subs), source="model")


def _previous_hint(previous: SearchResult | None, limit: int = 3) -> str:
    if previous is None or not previous.candidates:
        return ""
    bits = [" ".join(c.fragment.text.split())[:160] for c in previous.candidates[:limit]]
    return "\nThe first search found only weak matches, e.g.:\n" + "\n".join(f"- {b}" for b in bits)


def second_round_plan(
    question: str,
    settings: Settings,
    router: ChatModel | None,
    *,
    lang: str | None = None,
    previous: SearchResult | None = None,
    budget: Budget | None = None,
) -> tuple[QueryPlan, int]:
    """Round two's plan and the number of model calls it made (0 without a router, else 1). ``budget``: the
    turn's deadline and stop flag, which the router's call ends by (None outside a turn, e.g. ``footnote
    search``: the call is bounded by its own timeout)."""
    if router is None:
        return deterministic_second_round(question, settings, lang=lang), 0
    rs = settings.retrieve
    messages: Sequence[ChatMessage] = (
        ChatMessage("system", _SYSTEM.format(max_sub=rs.max_subquestions, max_para=rs.max_paraphrases)),
        ChatMessage("user", f"Question: {question.strip()}{_previous_hint(previous)}"),
    )
    try:
        raw = (router.complete(messages, json_schema=PLAN_SCHEMA) if budget is None
               else router.complete(messages, json_schema=PLAN_SCHEMA, budget=budget))
    except ModelError as e:
        log.warning("router %s failed (%s); using the deterministic second-round plan", router.name, e.message)
        return deterministic_second_round(question, settings, lang=lang), 1
    try:
        return parse_model_plan(raw, question, settings, lang=lang), 1
    except ValueError as e:
        log.warning("router %s: %s; using the deterministic second-round plan", router.name, e)
        return deterministic_second_round(question, settings, lang=lang), 1
