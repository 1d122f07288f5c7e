"""Compact the context to the notes the outline cites, renumbered ``[1]…[k]``, and render passages for
a model: bare integers and passage text only — never an id, a track name, a title or a file name.
Passages are quoted data between clear delimiters; any delimiter-like text inside them is neutralised."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from footnote.answer.types import Note, Outline, Thesis


@dataclass(frozen=True)
class Compacted:
    """The notes the outline cites, renumbered 1..k, and the outline in the new numbers."""

    notes: tuple[Note, ...]
    outline: Outline
    renumber: dict[int, int]  # old note number → new

    @property
    def by_n(self) -> dict[int, Note]:
        return {n.n: n for n in self.notes}


def compact(notes: Sequence[Note], outline: Outline) -> Compacted:
    by_n = {n.n: n for n in notes}
    order: list[int] = []
    for t in outline.theses:
        for k in t.notes:
            if k in by_n and k not in order:
                order.append(k)
    renumber = {old: i + 1 for i, old in enumerate(order)}
    new_notes = tuple(
        Note(renumber[old], by_n[old].fragment, by_n[old].score, by_n[old].rerank) for old in order
    )
    theses = tuple(
        Thesis(t.text, tuple(renumber[k] for k in t.notes if k in renumber))
        for t in outline.theses
        if any(k in renumber for k in t.notes)
    )
    return Compacted(new_notes, Outline(theses), renumber)


_DELIM = re.compile(r"</?\s*passage[^>]*>", re.IGNORECASE)


def passage_text(text: str, max_chars: int) -> str:
    t = _DELIM.sub(" ", text).strip()
    if len(t) > max_chars:
        cut = t.rfind(" ", 0, max_chars)
        t = t[: cut if cut > max_chars // 2 else max_chars].rstrip() + " …"
    return t


def render_passages(notes: Sequence[Note], max_chars: int) -> str:
    """``<passage n="1">…</passage>`` blocks: the number and the text, nothing else."""
    return "\n\n".join(f'<passage n="{n.n}">\n{passage_text(n.fragment.text, max_chars)}\n</passage>' for n in notes)
