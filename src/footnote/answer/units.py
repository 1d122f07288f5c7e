"""What counts as a sentence of a displayed answer (the unit the citation rule applies to).

The answer text is split into *units*, each with its trailing whitespace:

- a unit ends at a line break, or after sentence punctuation (``. ! ? …``, then any closing quotes or
  brackets and any citation markers ``[n]``) followed by whitespace and a character that can start a
  sentence (not a lower-case letter, not ``[``);
- no unit ends after a known abbreviation (``Mr.``, ``e.g.``, ``p.``, ``т.е.``…), an initial (``J.``),
  a dotted run of single letters (``U.S.``), or a list number at the start of a line (``2. ``) — the
  same rule as the notes' sentences (:func:`footnote.text.no_break_after` and
  :func:`footnote.text.starts_sentence`), so a quoted note sentence is one unit;
- a unit is a **sentence** unless it is an *introducer*: a Markdown heading (``# …``), a line that is
  only bold text (``**Fog rules**``), a line ending in ``:`` (a lead-in to a list), or a unit with no
  letters or digits (a bare list marker, a rule). Introducers need no citation of their own: they are
  shown only together with the next cited sentence, and dropped if none follows.

In ``mode = corpus`` every sentence shown carries at least one valid ``[n]``; a sentence without one
is removed and counted in ``removed_sentences``.
"""

from __future__ import annotations

import re

from footnote.text import no_break_after, starts_sentence

CITE = re.compile(r"\[\s*(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\s*\]")
_STOP = re.compile(
    r"[.!?…]+[\"'»”’)\]]*(?:\s*\[\s*\d{1,4}(?:\s*[,;]\s*\d{1,4})*\s*\])*[\"'»”’)]*(?P<ws>[ \t]+|\n+[ \t]*)"
    r"|(?P<nl>\n+[ \t]*)"
)
_INTRO = re.compile(r"^\s*(?:#{1,6}\s.*|\*\*[^*]+\*\*:?|__[^_]+__:?|.*:)\s*$", re.DOTALL)
_HAS_WORD = re.compile(r"[^\W_]", re.UNICODE)


def _is_stop(text: str, m: re.Match[str]) -> bool:
    end = m.end()
    if m.group("nl") is not None:
        return True
    if end >= len(text):
        return True  # the end of the text: a boundary once nothing more can follow
    if not starts_sentence(text[end : end + 4]):
        return False
    return not no_break_after(text[: m.start() + 1])


def unit_bounds(text: str) -> list[tuple[int, int]]:
    """(start, end) of each unit of ``text`` (end includes its trailing whitespace)."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in _STOP.finditer(text):
        if _is_stop(text, m):
            out.append((start, m.end()))
            start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return out or [(0, len(text))]


def split_units(text: str) -> list[str]:
    return [text[a:b] for a, b in unit_bounds(text)]


def last_stop(text: str) -> int:
    """The end of the last unit of ``text`` that is complete, or 0. A boundary with nothing after it
    yet is complete only when its unit already carries a citation (a sentence without one waits: its
    citation may still come after the full stop); otherwise more text must follow it."""
    cut = start = 0
    for m in _STOP.finditer(text):
        if m.end() < len(text):
            if _is_stop(text, m):
                cut = start = m.end()
        elif m.group("nl") is not None or CITE.search(text, start, m.start() + 1) or CITE.search(m.group(0)):
            cut = m.end()
    return cut


def is_introducer(unit: str) -> bool:
    """A heading, a bold-only line, a lead-in ending in ":", or a unit without letters or digits."""
    body = CITE.sub("", unit).strip()
    if not _HAS_WORD.search(body):
        return True
    return "\n" not in body and bool(_INTRO.match(body))


#: a unit that is only an answer's label ("Ответ: [1]", "**Answer:**"), in the languages a reader asks in
_ANSWER_LABEL = re.compile(
    r"^\s*[*_]*(?:short answer|answer|in short|summary|ответ|краткий ответ|коротко|итог|antwort|kurz gesagt|"
    r"respuesta|réponse|resposta|risposta|răspuns|cevap|odpowiedź|απάντηση|trả lời|คำตอบ|उत्तर|جواب|回答|答案|答え|답변)"
    r"\s*[*_]*\s*[:：]\s*[*_]*\s*$", re.IGNORECASE)


def is_answer_label(unit: str) -> bool:
    """A label that states nothing ("Ответ:", "**Answer:**"), its ``[n]`` markers aside."""
    return bool(_ANSWER_LABEL.match(CITE.sub(" ", unit)))


def is_heading(unit: str) -> bool:
    return unit.lstrip().startswith("#")
