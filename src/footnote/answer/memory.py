"""Curated memory in the answer (docs/memory.md).

- A matched **pinned** note is the answer: its body, every sentence citing the note as ``[1]`` (a
  citation of kind ``pinned`` whose locator names the note, its author and when it was updated), with
  fragments of the sources it names cited beside it on its last sentence. Built on the server, with no
  model call, whatever models are configured (the editors' wording is the answer).
- Matched **memory** notes are background for the planner and synthesizer: shown to them numbered after
  the passages, marked not citable. A ``[n]`` pointing at one is dropped like any forged citation and
  counted apart; the note's title in the prose is removed by the prose check. The extractive answer
  never sees them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from footnote.answer.extractive import cite_sentence, split_sentences
from footnote.answer.types import Note
from footnote.records.fragments import Fragment, NoteLocator
from footnote.records.memory import MemoryNote
from footnote.retrieve.corpus_view import TurnCorpus
from footnote.retrieve.types import SearchResult
from footnote.text import content_terms

#: Source id prefix of a pinned note's citation (never a stored source's: ``memory:`` has a colon).
PINNED_PREFIX = "memory:"

BACKGROUND_RULES = (
    "Background notes (marked citable=\"no\") come from the collection's editors: they may shape how you frame "
    "the answer, but they are not passages. Never cite their numbers, never quote them and never name them."
)


def pinned_fragment(note: MemoryNote) -> Fragment:
    """The pinned note as the fragment its citation resolves to."""
    return Fragment(
        id=f"{PINNED_PREFIX}{note.id}", source_id=f"{PINNED_PREFIX}{note.id}", ordinal=0, kind=note.kind.value,
        lang=note.lang, text=note.body, locator=NoteLocator(note.id, note.label, note.author, note.updated),
        content_hash=note.content_hash,
    )


def source_fragments(corpus: TurnCorpus, result: SearchResult, note: MemoryNote, limit: int) -> list[Fragment]:
    """Up to ``limit`` fragments of the sources a pinned note names (as the search resolved them): those
    this search ranked first (in its order), then for a named source not ranked, its fragment sharing most
    terms with the note."""
    if limit <= 0:
        return []
    named = result.pinned_refs if result.pinned_refs is not None else corpus.resolve(note.sources)
    out: list[Fragment] = []
    covered: set[str] = set()
    for c in result.candidates:
        f = c.fragment
        if f.source_id in named.source_ids or f.id in named.fragment_ids:
            if f.source_id in covered and f.id not in named.fragment_ids:
                continue  # one fragment per whole source named
            out.append(f)
            covered.add(f.source_id)
    wanted = content_terms(note.body + " " + " ".join(note.triggers), note.lang)
    for fr in corpus.fragments(sorted(named.fragment_ids - {f.id for f in out})):
        out.append(fr)
        covered.add(fr.source_id)
    for sid in sorted(named.source_ids - covered):
        frags = corpus.fragments_of(sid)
        if frags:
            out.append(max(frags, key=lambda f: (len(wanted & content_terms(f.text, f.lang)), -f.ordinal)))
    return out[:limit]


def body_numbers(corpus: TurnCorpus, note: MemoryNote, frags: Sequence[Fragment], first: int = 2) -> dict[int, int]:
    """For each entry of a pinned note's ``sources`` (``[1]`` the first, as its body cites them), the number of
    the first of ``frags`` (numbered from ``first``) that comes from it; entries with none are left out."""
    out: dict[int, int] = {}
    for k, ref in enumerate(note.sources, 1):
        named = corpus.resolve([ref])
        for i, f in enumerate(frags, first):
            if f.source_id in named.source_ids or f.id in named.fragment_ids:
                out[k] = i
                break
    return out


def pinned_text(note: MemoryNote, source_ns: Sequence[int], body_ns: dict[int, int] | None = None) -> str:
    """The note's body, each sentence citing ``[1]``; the sources' numbers beside it on the last one. A
    ``[k]`` the body writes (its k-th source, checked at import) becomes that source's number here
    (``body_ns``), or goes when no passage of it is cited."""
    body = " ".join(note.body.split())
    if body_ns is not None:
        body = _CITED.sub(lambda m: "".join(f"[{body_ns[k]}]" for k in _nums(m.group(1)) if k in body_ns), body)
        body = re.sub(r"[ \t]+([.,;:!?])", r"\1", body)
    sents = [s for s in split_sentences(body) if s.strip()] or [body.strip()]
    out = [cite_sentence(s, 1) for s in sents]
    if source_ns:
        last = out[-1]
        marks = "".join(f"[{n}]" for n in source_ns)
        out[-1] = re.sub(r"\[1\]", "[1]" + marks, last, count=1)
    return " ".join(s if s.endswith((".", "!", "?", "…", "»", '"', ")")) else s + "." for s in out)


_CITED = re.compile(r"[ \t]?\[\s*(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\s*\]")


def _nums(group: str) -> list[int]:
    return [int(x) for x in re.split(r"[,;]", group) if x.strip().isdigit()]


def background_block(notes: Sequence[MemoryNote], first_n: int, max_chars: int) -> str:
    """The background notes as the models see them (numbered from ``first_n``, marked not citable)."""
    if not notes:
        return ""
    parts = [f'<background n="{first_n + i}" citable="no">\n{n.body[:max_chars]}\n</background>'
             for i, n in enumerate(notes)]
    return BACKGROUND_RULES + "\n\n" + "\n\n".join(parts)


def background_numbers(notes: Sequence[Note], background: Sequence[MemoryNote]) -> set[int]:
    first = max((n.n for n in notes), default=0) + 1
    return set(range(first, first + len(background)))

