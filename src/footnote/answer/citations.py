"""Citations resolved on the server; the streaming cleaner that enforces the citation rule.

- ``[n]`` → note → fragment → locator. A number that is not a note of this turn (a forged ``[99]``, or
  a note the compacted context did not have) is removed from the displayed answer and counted
  (``dropped_citations``).
- Other marker shapes models produce are normalised to ``[n]`` first (:func:`normalise_markers`):
  ``【n】``, ``[^n]``, ``⁽ⁿ⁾`` (and superscript digits right after sentence punctuation), ``[[n]]``,
  ``[note n]``/``[source n]``/``[passage n]``, and ``(n)`` (one to three digits) right before the end of a
  sentence or right after its punctuation. Any other bracket holding a number (``[1-3]``, ``[n99]``)
  is dropped and counted.
- The prose check is :mod:`footnote.answer.prose`.
- Streaming: :class:`StreamCleaner` buffers model text to complete units (:mod:`footnote.answer.units`:
  never inside an open bracket, never inside a known title that contains ". ") and cleans each piece
  before it is shown. With ``require_cited`` (``mode = corpus``) a sentence without a valid citation is
  never shown: it is removed and counted (``removed_sentences``); headings and lead-ins are held until a
  cited sentence follows them. With a ``judge`` (a model's answer: :meth:`StreamCleaner.judge_with`) a cited
  sentence is shown only when the passages it cites support it (citation support and its particulars,
  :meth:`footnote.answer.support.SupportScorer.judge`); an unsupported one is removed like an uncited one
  (reason ``unsupported``), or, flagging only, shown and listed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from footnote.answer.prose import (
    ADDRESS,
    FILENAME,
    Carried,
    KnownNames,
    MentionIndex,
    ProseChecker,
    ProseResult,
    norm_label,
    skeleton,
)
from footnote.answer.types import Citation, Note
from footnote.answer.units import CITE, is_answer_label, is_heading, is_introducer, last_stop, split_units
from footnote.retrieve.format import format_locator

if TYPE_CHECKING:
    from footnote.answer.support import SentenceSupport

_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_NUMS = r"\d{1,4}(?:\s*[,;，、]\s*\d{1,4})*"
_SHAPES: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"【\s*(" + _NUMS + r")\s*】"), 1),
    (re.compile(r"［\s*(" + _NUMS + r")\s*］"), 1),
    (re.compile(r"\[\^\s*(" + _NUMS + r")\s*\]"), 1),
    (re.compile(r"\[\[\s*(" + _NUMS + r")\s*\]\]"), 1),
    (re.compile(r"\[\s*(?:note|source|passage|ref|примечание|источник|отрывок)\.?\s*(" + _NUMS + r")\s*\]",
                re.IGNORECASE), 1),
    (re.compile(r"⁽([⁰¹²³⁴⁵⁶⁷⁸⁹]+(?:[,;]\s*[⁰¹²³⁴⁵⁶⁷⁸⁹]+)*)⁾"), 1),
    (re.compile(r"(?<=[.!?;:,])([⁰¹²³⁴⁵⁶⁷⁸⁹]+)(?=\s|$)"), 1),
    (re.compile(r"(?<=[^\W_])(?P<ws>[ \t]?)\((\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\)(?=[ \t]*[.!?;](?:\s|$)|[ \t]*$|[ \t]*\n)"), 2),
    (re.compile(r"(?<=[.!?])(?P<ws>[ \t]?)\((\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\)(?=\s|$)"), 2),
)
_OTHER = re.compile(r"(?<!\0)\[[^\[\]\n]{0,24}?\d[^\[\]\n]{0,24}?\]|【[^】\n]{0,24}】|⁽[^⁾\n]{0,12}⁾")


def normalise_markers(text: str) -> str:
    """Rewrite the citation shapes models are known to produce as ``[n]`` (see the module docstring)."""
    for pat, g in _SHAPES:
        if pat.search(text):
            text = pat.sub(lambda m, g=g: _as_cite(m, g), text)  # type: ignore[misc]
    return text


def _as_cite(m: re.Match[str], group: int) -> str:
    nums = re.sub(r"[，、;]", ",", m.group(group).translate(_SUP))
    return (m.groupdict().get("ws") or "") + "[" + nums + "]"


def clean_citations(text: str, valid: set[int]) -> tuple[str, list[int], int]:
    """Normalise marker shapes, then drop numbers that are not notes of this turn and any other
    bracketed number. Returns (text, numbers used in order, dropped)."""
    used: list[int] = []
    dropped = 0

    def repl(m: re.Match[str]) -> str:
        nonlocal dropped
        nums = [int(x) for x in re.split(r"[,;]", m.group(1))]
        keep = [n for n in nums if n in valid]
        dropped += len(nums) - len(keep)
        for n in keep:
            if n not in used:
                used.append(n)
        return "".join(f"\0[{n}]" for n in keep)  # \0 shields kept markers from the sweep below

    def other(m: re.Match[str]) -> str:
        nonlocal dropped
        dropped += 1
        return ""

    out = CITE.sub(repl, normalise_markers(text))
    out = _OTHER.sub(other, out)
    out = out.replace("\0", "")
    if dropped:
        out = re.sub(r"[ \t]+([.,;:!?])", r"\1", out)
        out = re.sub(r"[ \t]{2,}", " ", out)
    return out, used, dropped


_OPEN = {"[": "]", "【": "】", "⁽": "⁾", "［": "］"}


def _open_bracket(text: str) -> bool:
    """An opening bracket of a citation shape without its closing one (never cut there)."""
    for o, c in _OPEN.items():
        if text.rfind(o) > text.rfind(c):
            return True
    tail = text[-8:]
    return bool(re.search(r"\(\s*\d{0,3}(?:\s*[,;]\s*\d{0,3})*$", tail))


class StreamCleaner:
    """Buffers streamed text to complete units and cleans each piece (markers, citations, prose check,
    and with ``require_cited`` the citation rule). Counters: ``dropped`` (citations), ``removed``
    (mentions), ``removed_mentions`` (their text), ``removed_sentences``."""

    def __init__(
        self, valid: set[int], prose: ProseChecker, flush_chars: int, *, require_cited: bool = False,
        max_sentence_chars: int = 2_000, not_citable: set[int] | None = None, not_citable_names: set[str] | None = None,
    ) -> None:
        self.valid = valid
        self.not_citable = set(not_citable or ()) - set(valid)  # background notes' numbers (curated memory)
        self.not_citable_names = {n.casefold() for n in (not_citable_names or ())}
        self.dropped_not_citable = 0  # of ``dropped``: citations of a background note
        self.removed_not_citable = 0  # of ``removed``: mentions of a background note's title
        self.prose = prose
        self.flush_chars = flush_chars
        self.require_cited = require_cited
        self.max_sentence_chars = max_sentence_chars
        self.buffer = ""
        self.used: list[int] = []
        self.dropped = 0
        self.removed = 0
        self.removed_mentions: list[str] = []
        self.removed_sentences = 0
        #: ``removed_sentences`` by why: ``uncited`` (no valid citation), ``unsupported`` (the passages it cites do
        #: not support it), ``prose`` (too little left once the prose check took a name out)
        self.removed_by_reason: dict[str, int] = {}
        #: each sentence the judge found unsupported: its citations, why, its best score and what was done
        #: (``removed`` or ``flagged``) — never its text, which the reader was not shown
        self.unsupported: list[dict[str, Any]] = []
        self.shown: list[str] = []
        self._pending: list[str] = []  # introducers waiting for a cited sentence
        self._judge: Callable[[str], SentenceSupport] | None = None
        self._flag_only = False

    def judge_with(self, judge: Callable[[str], SentenceSupport], *, flag_only: bool = False) -> None:
        """Judge every cited sentence before it is shown (``judge``: a complete unit, its ``[n]`` valid, → its
        support); an unsupported one is removed, or with ``flag_only`` shown and listed in ``unsupported``."""
        self._judge = judge
        self._flag_only = flag_only

    def _removed(self, why: str, n: int = 1) -> None:
        if n:
            self.removed_sentences += n
            self.removed_by_reason[why] = self.removed_by_reason.get(why, 0) + n

    def feed(self, delta: str) -> list[str]:
        self.buffer = normalise_markers(self.buffer + delta)
        cut = last_stop(self.buffer)
        while cut > 0 and (_open_bracket(self.buffer[:cut]) or not self.prose.cut_ok(self.buffer[:cut])):
            cut = last_stop(self.buffer[: cut - 1] + "\0")
        limit = self.max_sentence_chars if self.require_cited else self.flush_chars
        if cut == 0 and len(self.buffer) >= limit:
            cut = self._safe_cut()
        if cut <= 0:
            return []
        piece, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return self._clean(piece)

    def finish(self) -> list[str]:
        piece, self.buffer = self.buffer, ""
        out = self._clean(piece) if piece else []
        self._pending.clear()  # an introducer with nothing cited after it is not shown
        return out

    def _safe_cut(self) -> int:
        buf = self.buffer
        limit = len(buf)
        for o, c in _OPEN.items():
            at = buf.rfind(o)
            if at > buf.rfind(c):
                limit = min(limit, at)
        space = buf.rfind(" ", 0, limit)
        return space + 1 if space > 0 else 0

    def _clean(self, piece: str) -> list[str]:
        if self.not_citable:
            self.dropped_not_citable += sum(
                1 for m in CITE.finditer(normalise_markers(piece)) for x in re.split(r"[,;]", m.group(1))
                if x.strip().isdigit() and int(x) in self.not_citable
            )
        text, used, dropped = clean_citations(piece, self.valid)
        self.dropped += dropped
        for n in used:
            if n not in self.used:
                self.used.append(n)
        checked = self.prose.check(text)
        self.removed += checked.mentions
        self.removed_mentions += checked.names
        self.removed_not_citable += sum(1 for n in checked.names if " ".join(n.split()).casefold() in self.not_citable_names)
        self._removed("prose", checked.sentences)
        text = checked.text
        if self.require_cited:
            text = self._cited_only(text)
        if not text:
            return []
        self.shown.append(text)
        return [text]

    def _cited_only(self, text: str) -> str:
        kept: list[str] = []
        for unit in split_units(text):
            if not unit.strip():  # a blank line: kept with what it separates
                if kept:
                    kept.append(unit)
                elif self._pending:
                    self._pending.append(unit)
                continue
            if CITE.search(unit) and not (is_introducer(unit) and not _HAS_TEXT.search(CITE.sub("", unit))):
                if self._judge is not None and not self._supported(unit):
                    continue
                if self._judge is not None:
                    self._pending = [p for p in self._pending if self._intro_supported(p, unit)]
                kept += self._pending
                self._pending.clear()
                kept.append(unit)
            elif is_introducer(unit):
                if is_heading(unit):
                    self._pending.clear()
                self._pending.append(unit)
            else:
                self._removed("uncited")
        return "".join(kept)

    def _intro_supported(self, intro: str, unit: str) -> bool:
        """An introducer shown before a cited sentence is a claim too ("The lens came from Atlantis:" on a line of
        its own, a heading, a bold line): it is judged with the citations of the sentence it introduces. A blank
        line, a rule without letters and an answer's label ("Ответ:") state nothing."""
        if not _HAS_TEXT.search(CITE.sub("", intro)) or is_answer_label(intro):
            return True
        marks = " ".join(m.group(0) for m in CITE.finditer(unit))
        return self._supported(f"{intro.strip()} {marks}")

    def _supported(self, unit: str) -> bool:
        """The judge's verdict on a cited sentence, recorded when it is unsupported; False means: do not show it."""
        assert self._judge is not None
        v = self._judge(unit.strip())
        if v.supported:
            return True
        best = max((c.score for c in v.citations), default=0.0)
        self.unsupported.append({"cites": [c.n for c in v.citations], "why": list(v.why), "score": round(best, 4),
                                 "action": "flagged" if self._flag_only else "removed"})
        if self._flag_only:
            return True
        self._removed("unsupported")
        return False

    @property
    def text(self) -> str:
        return "".join(self.shown).strip()


_HAS_TEXT = re.compile(r"[^\W_]", re.UNICODE)


def resolve(used: Sequence[int], notes_by_n: dict[int, Note], titles: dict[str, str],
            metas: Mapping[str, Mapping[str, str]] | None = None) -> tuple[Citation, ...]:
    """Citations for the numbers the displayed answer uses, in number order; ``metas``: each source's
    front matter a citation carries (by source id)."""
    metas = metas or {}
    return tuple(
        Citation(n, notes_by_n[n].fragment, titles.get(notes_by_n[n].fragment.source_id, ""),
                 dict(metas.get(notes_by_n[n].fragment.source_id, {})))
        for n in sorted(set(used))
        if n in notes_by_n
    )


def citation_label(c: Citation) -> str:
    """Where a citation lands, in words: ``HB 2.2``, ``HB 2.2 — commentary, Ada Penhallow``,
    ``Lecture 2 01:12–01:40``, ``handbook.pdf p. 4`` (the commentator from the source's front matter)."""
    where = format_locator(c.fragment.locator, c.title or None)
    if c.fragment.kind == "commentary":
        who = c.source_meta.get("commentator") or c.source_meta.get("author")
        where += " — commentary" + (f", {who}" if who else "")
    if c.transcript == "machine":
        where += " (machine transcript)"
    return where


__all__ = [
    "ADDRESS", "CITE", "FILENAME", "Carried", "KnownNames", "MentionIndex", "ProseChecker", "ProseResult",
    "StreamCleaner", "citation_label", "clean_citations", "norm_label", "normalise_markers", "resolve", "skeleton",
]
