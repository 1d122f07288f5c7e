"""Matching a question against curated memory, and what a match does to retrieval (docs/memory.md).

- Each note's triggers and body chunks were embedded together at import; a note's score is the best
  cosine of the question to any of them (so a question echoing the body, not only the trigger wording,
  finds it). It matches at or above the threshold of the embedder and language pair
  (``settings.memory.by_embedder``, fitted by ``footnote calibrate --memory``). With no embedder: the
  share of the question's content terms one trigger carries (``memory.lexical_match``).
- A matched **pinned** note sets the lean policy (one round, a small slate, no regeneration call).
- A matched **boost** nudges fragments' *rank* score (the reranker's value), by at most
  ``memory.boost_max``: fragments of its named sources get the whole amount, others by their cosine to
  the boost's body above ``boost_similarity_floor``. A fragment's cosine (``score``) is never touched,
  and the gate is judged on the slate without boosts, so a boost never lifts a question over the gate.
- A matched **memory** note is background for the planner and synthesizer (``footnote.answer``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from footnote.lru import LruCache
from footnote.records.memory import MemoryNote, NoteKind
from footnote.retrieve.types import Candidate, MemoryMatch
from footnote.settings import Settings
from footnote.store.memory import MemoryStore
from footnote.store.protocol import LaneStore, SourceStore
from footnote.text import Analyzer, content_terms, named_sources

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NoteScores:
    """Every note's score for one question (matched or not): what calibration reads."""

    scores: tuple[MemoryMatch, ...]
    method: str  # "dense" | "lexical" | "none"

    @property
    def matched(self) -> tuple[MemoryMatch, ...]:
        return tuple(m for m in self.scores if m.matched)


class MemoryMatcher:
    """Scores the store's notes for a question (notes are few: all of them, every turn)."""

    def __init__(self, settings: Settings, store: MemoryStore, embedder_name: str | None, analyzer: Analyzer | None = None) -> None:
        self.settings = settings
        self.store = store
        self.embedder_name = embedder_name
        self.analyzer = analyzer or Analyzer()
        self._langs: LruCache[str, str] = LruCache(4096)

    def lang_of(self, trigger: str) -> str:
        """A trigger's language, detected once (≈ 5 ms each: a pinned note's triggers were read on every turn)."""
        hit = self._langs.get(trigger)
        if hit is None:
            hit = self.settings.corpus.question_lang(trigger)
            self._langs.put(trigger, hit)
        return hit

    def score(self, question: str, qvec: np.ndarray | None, qlang: str) -> NoteScores:
        m = self.settings.memory
        if not m.enabled:
            return NoteScores((), "none")
        notes = {n.id: n for n in self.store.list_memory_notes()}
        if not notes:
            return NoteScores((), "none")
        if qvec is not None and self.embedder_name is not None:
            vecs = self.store.memory_vectors(self.embedder_name)
            if vecs.note_ids:
                cos = vecs.vectors @ qvec.astype(np.float32)
                best: dict[str, tuple[float, str]] = {}
                for nid, text, c in zip(vecs.note_ids, vecs.texts, cos.tolist(), strict=True):
                    if nid not in best or c > best[nid][0]:
                        best[nid] = (float(c), text)
                out = [
                    MemoryMatch(notes[nid], sc, m.threshold(self.embedder_name, qlang, notes[nid].lang).match, via)
                    for nid, (sc, via) in best.items() if nid in notes
                ]
                return NoteScores(tuple(sorted(out, key=lambda x: (-x.score, x.note.id))), "dense")
        q = content_terms(question, qlang, self.analyzer)
        out = []
        for n in notes.values():
            sc, via = 0.0, ""
            for t in n.triggers:
                terms = content_terms(t, n.lang, self.analyzer)
                share = len(q & terms) / len(q) if q else 0.0
                if share > sc:
                    sc, via = share, t
            out.append(MemoryMatch(n, sc, m.lexical_match, via))
        return NoteScores(tuple(sorted(out, key=lambda x: (-x.score, x.note.id))), "lexical")


def pinned_of(matched: Sequence[MemoryMatch]) -> MemoryMatch | None:
    """The pinned note the turn answers with: the best-scoring matched note, when it is a pinned one (a
    question another note matches better is about that note's topic, not the pinned question)."""
    best = max((m for m in matched if m.matched), key=lambda m: (m.score, m.note.id), default=None)
    return best if best is not None and best.note.kind is NoteKind.PINNED else None


def pin_veto(question: str, qlang: str, note: MemoryNote, refs: Resolved | None, final: Sequence[Candidate],
             titles: Mapping[str, str], settings: Settings, analyzer: Analyzer,
             lang_of: Callable[[str], str] | None = None) -> str | None:
    """Why a matched pinned note must not pin this question (None: it pins). The note serves, it does not
    override: a passage in the reader's language that ranks first, a source the question names by its title
    (``titles``: source id → title, of the ranked candidates' sources), or a question whose words the note does
    not carry (a near miss to its subject) each win over it (docs/memory.md). ``lang_of``: a trigger's language
    (:meth:`MemoryMatcher.lang_of` keeps them; default: detected each time)."""
    m = settings.memory
    own = refs.source_ids if refs is not None else frozenset()
    if m.pin_yields_to_named_source:
        named = named_sources(question, titles) - own
        first = next((sid for sid in titles if sid in named), None)  # the best-ranked source named
        if first is not None:
            return f"the question names another source ({titles[first]})"
    if m.pin_yields_to_reader_language and note.lang != qlang and final and final[0].fragment.lang == qlang:
        return "a passage in the reader's language ranks first"
    if note.lang == qlang:
        words = " ".join([note.title, *note.triggers, note.body])
    elif m.pin_across_languages_by_triggers:
        # in another language the note's own words cannot be compared: its triggers in the reader's language can
        # (the editors wrote them for those readers); a note with none does not pin (the search answers instead)
        detect = lang_of or settings.corpus.question_lang
        words = " ".join(t for t in note.triggers if detect(t) == qlang)
        if not words:
            return "the note has no trigger in the reader's language to tell a near miss by"
    else:
        return None
    qterms = content_terms(question, qlang, analyzer)
    carried = content_terms(words, qlang, analyzer)
    if qterms and len(qterms & carried) / len(qterms) <= m.pin_min_term_share:
        return "the question's words are not the note's (a near miss to its subject)"
    return None


def apply_boosts(
    cands: Sequence[Candidate], boosts: Sequence[MemoryMatch], body_cos: dict[str, np.ndarray], settings: Settings,
    named: Mapping[str, Resolved],
) -> tuple[list[Candidate], dict[str, dict[str, float]]]:
    """Candidates re-ordered by rank score + boost (bounded by ``memory.boost_max`` in all), and per
    candidate the boost each note gave (for the trace). ``body_cos[note id]``: each candidate's cosine
    to the boost's texts (aligned with ``cands``); ``named[note id]``: what its sources resolve to."""
    m = settings.memory
    if not boosts or not cands:
        return list(cands), {}
    given: dict[str, dict[str, float]] = {}
    out: list[Candidate] = []
    span = max(1e-9, 1.0 - m.boost_similarity_floor)
    for i, c in enumerate(cands):
        total = 0.0
        for b in boosts:
            nid = b.note.id
            res = named.get(nid)
            if res is not None and (c.fragment.source_id in res.source_ids or c.fragment.id in res.fragment_ids):
                amount = m.boost_max
            else:
                sims = body_cos.get(nid)
                sim = float(sims[i]) if sims is not None and len(sims) > i else 0.0
                amount = m.boost_max * max(0.0, min(1.0, (sim - m.boost_similarity_floor) / span))
            if amount > 0:
                given.setdefault(c.fragment.id, {})[nid] = round(amount, 6)
                total += amount
        total = min(total, m.boost_max)
        base = c.rerank if c.rerank is not None else c.score
        out.append(replace(c, rerank=base + total) if total > 0 else c)
    def rank_score(c: Candidate) -> float:
        return c.rerank if c.rerank is not None else c.score

    order = sorted(range(len(out)), key=lambda j: (-rank_score(out[j]), j))
    return [out[j] for j in order], given


_ADDRESS_REF = re.compile(r"^(.+?)\s+(\d+(?:[.:]\d+)*)$")


@dataclass(frozen=True)
class Resolved:
    """What a note's source references point at: whole sources, and fragments (addresses)."""

    source_ids: frozenset[str]
    fragment_ids: frozenset[str]
    missing: tuple[str, ...]


class RefStore(SourceStore, LaneStore, Protocol):
    """What resolving a note's references reads: the sources and the address lane."""


def resolve_refs(store: RefStore, refs: Sequence[str], aliases: Mapping[str, str], k: int = 20) -> Resolved:
    """Resolve each reference: a source id; else the unique suffix of one (``lectures/02.vtt`` for
    ``demo/lectures/02.vtt``, on a path-segment boundary); else an address ``BOOK LOC`` (book names as
    ``corpus.book_aliases`` reads them). What resolves to nothing is ``missing``."""
    sources: set[str] = set()
    frags: set[str] = set()
    missing: list[str] = []
    ids: list[str] | None = None
    for ref in refs:
        r = ref.strip()
        if not r:
            continue
        if store.get_source(r) is not None:
            sources.add(r)
            continue
        if ids is None:
            ids = [s.id for s in store.list_sources()]
        tail = "/" + r.lstrip("/")
        hits = [i for i in ids if i.endswith(tail)]
        if len(hits) == 1:
            sources.add(hits[0])
            continue
        m = _ADDRESS_REF.match(r)
        if m is not None:
            book = aliases.get(m.group(1).lower(), m.group(1))
            got = store.search_address(book, m.group(2).replace(":", "."), k)
            if got:
                frags.update(h.fragment_id for h in got)
                continue
        missing.append(r)
    return Resolved(frozenset(sources), frozenset(frags), tuple(missing))


@dataclass(frozen=True)
class TurnMemory:
    """The curated notes matched for this search: the pinned one (lean policy), the boosts with what
    their sources resolve to and their vectors."""

    matched: tuple[MemoryMatch, ...] = ()
    pinned: MemoryMatch | None = None
    boosts: tuple[MemoryMatch, ...] = ()
    named: dict[str, Resolved] = field(default_factory=dict)
    texts: dict[str, np.ndarray] = field(default_factory=dict)
    unbacked: str | None = None  # a pinned note that matched best but none of whose sources is in the store
    repeated: str | None = None  # a pinned note that matched best but already answered the turn this follows up
    pinned_refs: Resolved | None = None  # what the pinned note's references resolved to
    vetoed: tuple[str, str] | None = None  # a pinned note that matched best, and why it did not pin (pin_veto)

    def described(self, given: dict[str, dict[str, float]]) -> tuple[MemoryMatch, ...]:
        used = {nid for per in given.values() for nid in per}
        out = []
        for m in self.matched:
            k = m.note.kind
            if k is NoteKind.PINNED:
                did = "pinned" if self.pinned is not None and m.note.id == self.pinned.note.id else \
                    "not used: none of its sources is in the store" if m.note.id == self.unbacked else \
                    "not used: it answered the turn this question follows up" if m.note.id == self.repeated else \
                    f"not used: {self.vetoed[1]}" if self.vetoed is not None and m.note.id == self.vetoed[0] else \
                    "not used: another note matched better"
            elif k is NoteKind.BOOST:
                did = "boosted" if m.note.id in used else "boosted nothing: no candidate of its sources or topic"
            else:
                did = "framed"
            out.append(replace(m, did=did))
        return tuple(out)
