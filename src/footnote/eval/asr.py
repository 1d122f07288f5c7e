"""Figures for machine transcripts: word error rate against a reference text, and how close the chip of
each reference line starts to the line's hand-made sync-map time (``bench/asr.py``, the slow tests).

- :func:`words` normalises text for scoring (lower case, ’ → ', punctuation dropped, hyphens split).
- :func:`wer`: word-level Levenshtein distance over the reference's length.
- :func:`chip_starts`: the reference words are aligned to the recognised words (difflib); a line's chip
  is the first cue holding one of the line's aligned words — what the chat plays for a quote of that
  line — and its start is compared with the line's ``begin`` in the sync map.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from footnote.records.fragments import Cue
from footnote.text import edit_distance

_SPAN = re.compile(r"<span[^>]*>(.*?)</span>", re.S)
_TAG = re.compile(r"<[^>]+>")
_WORD = re.compile(r"[a-z0-9']+|[^\W\d_]+")


def words(text: str) -> list[str]:
    t = html.unescape(text).lower().replace("’", "'").replace("‘", "'").replace("-", " ")
    return [w.strip("'") for w in _WORD.findall(t) if w.strip("'")]


def xhtml_lines(markup: str) -> list[str]:
    """The text of each ``<span>`` of a LibriVox/EPUB page (the title's numeral first, then the lines)."""
    return [" ".join(html.unescape(_TAG.sub("", m)).split()) for m in _SPAN.findall(markup)]


def wer(ref: Sequence[str], hyp: Sequence[str]) -> float:
    """(substitutions + deletions + insertions) / len(ref)."""
    return edit_distance(ref, hyp) / max(1, len(ref))


@dataclass(frozen=True)
class LineTiming:
    line: str
    ref_ms: int
    chip_ms: int | None  # None: no word of the line was recognised

    @property
    def error_ms(self) -> int | None:
        return None if self.chip_ms is None else abs(self.chip_ms - self.ref_ms)


def sync_lines(sync: dict[str, Any]) -> list[tuple[int, str]]:
    """(begin ms, text) of each line of an aeneas sync map (``{"fragments": [{"begin", "lines"}]}``)."""
    return [(int(Decimal(str(f["begin"])) * 1000), " ".join(f["lines"])) for f in sync["fragments"]]


def chip_starts(lines: Sequence[tuple[int, str]], cues: Sequence[Cue]) -> list[LineTiming]:
    """Per reference line: the start of the first cue holding a recognised word aligned to the line."""
    ref: list[tuple[str, int]] = [(w, i) for i, (_, text) in enumerate(lines) for w in words(text)]
    hyp: list[tuple[str, int]] = [(w, k) for k, c in enumerate(cues) for w in words(c.text)]
    sm = difflib.SequenceMatcher(a=[w for w, _ in ref], b=[w for w, _ in hyp], autojunk=False)
    first: dict[int, int] = {}  # line → cue of its first aligned word
    for block in sm.get_matching_blocks():
        for n in range(block.size):
            line = ref[block.a + n][1]
            first.setdefault(line, hyp[block.b + n][1])
    return [LineTiming(text, ms, cues[first[i]].start_ms if i in first else None)
            for i, (ms, text) in enumerate(lines)]


_NORM = re.compile(r"[^\w]+|_+")


def _norm(text: str) -> str:
    return _NORM.sub(" ", text.lower()).strip()


def quoted_span(cues: Sequence[Cue], start_ms: int, end_ms: int, claim: str) -> tuple[int, int] | None:
    """What the chat's chip plays for ``claim`` quoted from a window ``[start_ms, end_ms]`` — the cues
    holding the quoted words (the same rule as ``quotedSpan`` in ``server/static/app.js``), or None
    (the whole window) when the claim is not found verbatim or has fewer than 3 words."""
    want = _norm(claim)
    if len(want.split(" ")) < 3:
        return None
    text, at = "", []
    for c in cues:
        if not (c.end_ms > start_ms and c.start_ms < end_ms):
            continue
        t = _norm(c.text)
        if not t:
            continue
        if text:
            text += " "
        at.append((len(text), c))
        text += t
    i = text.find(want)
    if i < 0:
        return None
    j = i + len(want)
    hit = [c for k, (o, c) in enumerate(at) if o < j and (at[k + 1][0] if k + 1 < len(at) else len(text) + 1) > i]
    if not hit:
        return None
    span = (max(start_ms, hit[0].start_ms), min(end_ms, hit[-1].end_ms))
    return span if span[1] > span[0] else None
