"""The no-model path: an extractive planner that ranks the sentences of the top notes and quotes the
best ones, each followed by its ``[n]`` (candidate filters and text evidence: ``answer/sentences.py``).

**Candidates.** The sentences (:func:`footnote.text.split_sentences`) of the top
``extractive.candidate_notes`` notes. A transcript window whose text has no sentence ends (sonnet
readings, raw captions) is split at its cue boundaries instead (:func:`transcript_units`), so a
quote is a whole number of cues and its chip plays just that span. Dropped as never an answer
(:func:`is_noise`): questions, page headers/footers ("The Keeper's Handbook — Marrowick Light
Page 3"), headings and other fragments of fewer than three words, text that is mostly not letters,
and exact repeats.

**Score** of a candidate = ``extractive.similarity_weight`` (by embedder:
``extractive.similarity_weight_by_embedder``) × the embedder's question–sentence cosine
(E5 query vs passage; multilingual, so a Russian question scores English sentences) + the weighted
share of the question's content terms it carries (:func:`footnote.text.content_terms` — the gate's
definition — each weighted by its rarity among this turn's notes) + ``extractive.number_weight`` ×
the share of the question's numbers it carries + ``extractive.score_weight`` × its note's cosine −
``extractive.rank_decay`` × its note's rank. Candidate sentences are embedded in one batch per turn
through a bounded cache.

**Choice.** The best candidate is taken when the candidates hold evidence enough: one's term share
reaches ``extractive.min_overlap`` (with ``extractive.min_terms`` shared terms), or one's cosine reaches
the embedder's ``extractive.min_similarity`` (a sentence in another language than the question:
``extractive.crosslingual_min_similarity``), or (notes in another language) one carries
``extractive.min_name_share`` of the question's names at ``extractive.name_min_similarity``. Otherwise nothing is chosen and the answer is
``corpus_insufficient`` (said in the trace as decided by the extractive planner). Further sentences
follow by maximal marginal relevance: within ``extractive.margin`` of the best score, never a near
duplicate of one already chosen (cosine ≥ ``extractive.duplicate_similarity``, or the same terms),
at most ``extractive.max_per_note`` per note and ``extractive.max_sentences`` in all.

**Addresses.** When the question names an address ("What does BG 2.47 say?") the addressed notes
answer first: a verse before its commentary, and in a note the sentences that read as prose in the
note's language (a translation) before a transliteration or a word-by-word gloss.

Without an embedder (lexical-only stores) the cosine terms are absent; a question in another language
than its notes then answers from the top notes' sentences sharing the most numbers and Latin names.
Every sentence is verbatim from a note (cleaned of invisible and control characters): faithful by
construction; the notes are data, never instructions. Deterministic: ties break by note and position.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from footnote.answer.sentences import (
    ANAPHOR,
    LEADING_LOC,
    answer_type,
    carries_answer_type,
    continues,
    cross_script_names,
    cue_texts,
    focus_word,
    is_noise,
    names_shared,
    note_sentences,
    prose_likeness,
    transcript_units,
)
from footnote.answer.types import Note, Outline, Thesis
from footnote.errors import Cancelled, StoreError
from footnote.lru import LruCache
from footnote.models.protocols import Embedder
from footnote.records.fragments import KindGroup
from footnote.settings import AnswerSettings, Settings
from footnote.store.protocol import SentenceVectorStore
from footnote.text import (
    Analyzer,
    content_terms,
    numbers,
    split_sentences,
    tokenize,
)

log = logging.getLogger(__name__)

__all__ = [
    "Pick", "SentenceRanker", "TermScorer", "cite_quote", "cite_sentence", "cue_texts", "extractive_pieces", "is_noise",
    "outline_from_picks", "select_sentences", "sentence_key", "split_sentences", "transcript_units",
]


@dataclass(frozen=True)
class Pick:
    """A sentence chosen from note ``note`` (its number in this turn)."""

    note: int
    sentence: str
    score: float
    overlap: float
    position: int
    similarity: float | None = None


class TermScorer:
    """Content terms by language: the gate's definition (:func:`footnote.text.content_terms`) plus numbers."""

    def __init__(self, analyzer: Analyzer | None = None) -> None:
        self.analyzer = analyzer or Analyzer()

    def terms(self, text: str, lang: str) -> list[str]:
        """The content terms of ``text`` (stemmed in ``lang``) plus its numbers, sorted."""
        return sorted(content_terms(text, lang, self.analyzer) | numbers(text))

    @staticmethod
    def neutral(text: str) -> set[str]:
        """Language-neutral tokens: numbers and Latin-script words of 3+ letters."""
        return {t for t in tokenize(text) if t.isdigit() or (len(t) > 2 and t.isascii() and t.isalpha())}


def focus_in(focus: str, c: _Cand, scorer: TermScorer) -> bool:
    """Whether the candidate carries the question's focus word (stemmed in the candidate's language)."""
    return bool(set(scorer.terms(focus, c.lang)) & c.terms)


# --- embeddings ----------------------------------------------------------------------------------


def sentence_key(text: str) -> str:
    """The key a sentence's vector is kept under (SHA-1 of its text)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class _VectorCache:
    """Passage vectors of candidate sentences by text: a bounded LRU in memory (shared by concurrent
    turns) over the store's kept sentence vectors (:class:`SentenceVectorStore`), so a sentence is
    embedded once per store and embedder, not once per process. A store that cannot keep them (locked by
    a writer, read-only) costs only the re-embedding next time."""

    def __init__(self, size: int, kept: SentenceVectorStore | None = None, stop_every: int = 16) -> None:
        self.size = size
        self.kept = kept
        self.stop_every = max(1, stop_every)
        self._d: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        # texts one turn is embedding now: a concurrent turn that needs them waits for that turn's vectors
        # instead of embedding them again (34 first asks on a cold store embedded the same notes 34 times)
        self._inflight: dict[str, threading.Event] = {}
        self.embedded = 0  # sentences this process embedded (tests, the bench)

    def vectors(self, embedder: Embedder, texts: Sequence[str], *, keep: bool = True,
                stopped: Callable[[], bool] | None = None) -> np.ndarray:
        """Passage vectors of ``texts``: from memory, else the store's kept sentence vectors, else embedded
        (and kept in the store when ``keep``: corpus sentences only, never a model's text). A text another
        turn is fetching or embedding at the moment is waited for, not embedded twice. ``stopped`` is
        checked every ``stop_every`` embedded texts: once it is true the vectors made so far are kept and
        :class:`~footnote.errors.Cancelled` is raised (a turn whose client hung up stops embedding)."""
        if not texts:
            return np.zeros((0, embedder.dim), np.float32)
        found: dict[str, np.ndarray] = {}
        mine: list[str] = []
        theirs: list[tuple[str, threading.Event]] = []
        with self._lock:
            for t in dict.fromkeys(texts):
                v = self._d.get(t)
                if v is not None:
                    self._d.move_to_end(t)
                    found[t] = v
                elif (ev := self._inflight.get(t)) is not None:
                    theirs.append((t, ev))
                else:
                    self._inflight[t] = threading.Event()
                    mine.append(t)
        if mine:
            try:
                found.update(self._fetch(embedder, mine, keep, stopped))
            finally:
                with self._lock:
                    done = [self._inflight.pop(t) for t in mine]
                for ev in done:
                    ev.set()
        late: list[str] = []
        for t, ev in theirs:
            ev.wait()
            with self._lock:
                v = self._d.get(t)
            if v is None:  # that turn failed, or its vector was evicted already: embed it here
                late.append(t)
            else:
                found[t] = v
        if late:
            found.update(self._fetch(embedder, late, keep, stopped))
        return np.stack([np.asarray(found[t], dtype=np.float32) for t in texts])

    def _fetch(self, embedder: Embedder, texts: list[str], keep: bool,
               stopped: Callable[[], bool] | None = None) -> dict[str, np.ndarray]:
        """The store's kept vectors of ``texts``, the rest embedded; all remembered."""
        got = self._kept(embedder, texts)
        todo = [t for t in texts if t not in got]
        try:
            step = self.stop_every if stopped is not None else max(1, len(todo))
            for i in range(0, len(todo), step):
                if stopped is not None and stopped():
                    raise Cancelled("the client went away; the turn was stopped while embedding its sentences")
                piece = todo[i : i + step]
                vecs = np.asarray(embedder.embed_passages(piece), dtype=np.float32)
                fresh = dict(zip(piece, vecs, strict=True))
                self.embedded += len(piece)
                got.update(fresh)
                if keep:
                    self._keep(embedder, fresh)
        finally:
            with self._lock:
                for t, v in got.items():
                    self._d[t] = v
                    self._d.move_to_end(t)
                while len(self._d) > self.size:
                    self._d.popitem(last=False)
        return got

    def _kept(self, embedder: Embedder, texts: list[str]) -> dict[str, np.ndarray]:
        if self.kept is None:
            return {}
        keys = {sentence_key(t): t for t in texts}
        try:
            stored = self.kept.get_sentence_vectors(embedder.name, list(keys))
        except StoreError as e:
            log.warning("sentence vectors could not be read from the store (embedding them instead): %s", e)
            return {}
        return {keys[k]: v for k, v in stored.items() if k in keys and v.shape == (embedder.dim,)}

    def _keep(self, embedder: Embedder, fresh: dict[str, np.ndarray]) -> None:
        if self.kept is None or not fresh:
            return
        try:
            self.kept.put_sentence_vectors(embedder.name, {sentence_key(t): v for t, v in fresh.items()})
        except StoreError as e:
            log.warning("sentence vectors could not be kept in the store (they are embedded again next time): %s", e)


# --- the ranker ----------------------------------------------------------------------------------


# a note's sentence: (text, content terms, numbers, is noise, dedupe key)
_Prepared = tuple[str, frozenset[str], frozenset[str], bool, str]


@dataclass
class _Cand:
    note: Note
    rank: int
    position: int
    text: str
    terms: frozenset[str]
    nums: frozenset[str]
    lang: str
    context: frozenset[str] = frozenset()  # terms of the sentence (or heading) before it in its note
    before: _Cand | None = None  # the candidate just before it in its note (an antecedent for "He…")
    after: _Cand | None = None  # the candidate just after it in its note (a continuation)
    sim: float | None = None
    row: int = -1  # the candidate's row among this turn's sentence vectors
    overlap: float = 0.0
    shared: int = 0
    names: float = 0.0  # share of the question's names (cross-script skeletons) the sentence carries
    score: float = 0.0


class SentenceRanker:
    """Ranks the sentences of a turn's notes (see the module docstring). Shared by concurrent turns."""

    def __init__(
        self, settings: Settings, embedder: Embedder | None = None, scorer: TermScorer | None = None,
        kept: SentenceVectorStore | None = None,
    ) -> None:
        self.settings = settings.answer
        self.corpus = settings.corpus
        self.embedder = embedder
        self.scorer = scorer or TermScorer()
        self._cache = _VectorCache(self.settings.extractive.embed_cache, kept, self.settings.extractive.stop_check_sentences)
        self._prep: LruCache[tuple[str, str, str, tuple[str, ...] | None], tuple[_Prepared, ...]] = LruCache(
            self.settings.extractive.note_cache)

    @property
    def embedded_sentences(self) -> int:
        """Candidate sentences this ranker had to embed (neither in memory nor kept by the store)."""
        return self._cache.embedded

    def warm(self, notes: Sequence[Note], cues: Mapping[str, Sequence[str]],
             stopped: Callable[[], bool] | None = None) -> int:
        """Make (and keep in the store) the vectors of every sentence the ranker could score in
        ``notes``: their non-noise sentences, split as :meth:`select` splits them. Returns how many
        were embedded now (not found in memory or the store)."""
        if self.embedder is None or not notes:
            return 0
        texts: dict[str, None] = {}
        for note in notes:
            lang = note.fragment.lang or self.corpus.default_lang  # (the split does not depend on it)
            for sent, _, _, noise, key in self._prepared(note, lang, cues.get(note.fragment.id)):
                if not noise and key:
                    texts.setdefault(sent, None)
        before = self._cache.embedded
        if texts:
            self._cache.vectors(self.embedder, list(texts), stopped=stopped)
        return self._cache.embedded - before

    def passage_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors of ``texts`` through the ranker's cache (the turn's sentences are there already).
        Nothing new is kept in the store: these texts include a model's answer sentences, not the corpus's."""
        assert self.embedder is not None
        return self._cache.vectors(self.embedder, texts, keep=False)

    def similarity_weight(self) -> float:
        """The weight of the question–sentence cosine in a sentence's score: the embedder's own
        (``extractive.similarity_weight_by_embedder``), else ``extractive.similarity_weight``."""
        a = self.settings
        if self.embedder is None:
            return a.extractive.similarity_weight
        return a.extractive.similarity_weight_by_embedder.get(self.embedder.name, a.extractive.similarity_weight)

    def min_similarity(self) -> float | None:
        if self.embedder is None:
            return None
        return self.settings.extractive.min_similarity.get(self.embedder.name)

    def crosslingual_min_similarity(self) -> float | None:
        """The cosine floor for a sentence in another language than the question: the embedder's
        ``extractive.crosslingual_min_similarity``, else its ``extractive.min_similarity`` (None: neither
        is fitted, and the cosine decides nothing for such a sentence)."""
        if self.embedder is None:
            return None
        return self.settings.extractive.crosslingual_min_similarity.get(self.embedder.name, self.min_similarity())

    def select(
        self, question: str, qlang: str, notes: Sequence[Note], *, crosslingual: bool = True,
        addressed: Collection[int] = (), cues: Mapping[str, Sequence[str]] | None = None,
        stopped: Callable[[], bool] | None = None,
    ) -> tuple[list[Pick], dict[str, object]]:
        """The sentences an extractive answer is made of, best first, and what the choice looked at
        (for the trace). ``addressed``: notes whose address the question names. ``cues``: cue texts
        of transcript notes by fragment id. ``stopped``: the turn's stop flag (a client that hung up),
        checked while its sentences are embedded (:class:`~footnote.errors.Cancelled`)."""
        a = self.settings
        info: dict[str, object] = {"notes": len(notes)}
        if not notes:
            return [], info
        cues = cues or {}
        if addressed:
            chosen = self._by_address(notes, addressed, cues)
            if chosen:
                info.update(addressed=len(addressed), chosen=len(chosen))
                return chosen, info
        cands = self._candidates(question, qlang, notes, cues)
        info["candidates"] = len(cands)
        if not cands:
            info["chosen"] = 0
            return [], info
        t0 = time.perf_counter()
        sims = self._similarities(question, cands, stopped)
        info["embedded"] = sims is not None
        info["embed_ms"] = round((time.perf_counter() - t0) * 1000.0, 3)
        self._score(question, qlang, cands)
        cands.sort(key=lambda c: (-c.score, c.rank, c.position))
        best = cands[0]
        min_sim = self.min_similarity()
        # evidence enough somewhere among the candidates (not only in the best-scored one)
        n_qterms = {lang: len([t for t in self._qterms(question, lang) if not t.isdigit()]) for lang in {c.lang for c in cands}}
        lex_ok = any(
            c.overlap >= a.extractive.min_overlap and c.shared >= min(a.extractive.min_terms, n_qterms[c.lang]) for c in cands
        )
        xl_sim = self.crosslingual_min_similarity()
        floors = [min_sim if c.lang == qlang else xl_sim for c in cands]  # None: no fitted floor for that pair
        min_ov = a.extractive.similarity_min_overlap.get(self.embedder.name, 0.0) if self.embedder is not None else 0.0
        sim_ok = any(c.sim is not None and f is not None and c.sim >= f and (c.lang != qlang or c.overlap >= min_ov)
                     for c, f in zip(cands, floors, strict=True))
        name_sim = a.extractive.name_min_similarity.get(self.embedder.name) if self.embedder is not None else None
        name_ok = name_sim is not None and any(
            c.names >= a.extractive.min_name_share and c.sim is not None and c.sim >= name_sim for c in cands
        )
        info["best"] = {"score": round(best.score, 4), "overlap": round(best.overlap, 4),
                        "similarity": None if best.sim is None else round(best.sim, 4),
                        "names": round(best.names, 3)}
        info["evidence"] = [k for k, ok in (("terms", lex_ok), ("similarity", sim_ok), ("names", name_ok)) if ok]
        if not (lex_ok or sim_ok or name_ok):
            # without a fitted sentence-cosine floor for this embedder (and the candidates' language pair) its
            # cosines decide nothing: a question in another language than its notes then takes the gate-verdict
            # rule, as without an embedder
            no_floor = sims is None or all(f is None for f in floors)
            if no_floor and crosslingual:
                chosen = _crosslingual(question, qlang, notes, a, self.scorer, cues)
                info["crosslingual"] = bool(chosen)
                info["chosen"] = len(chosen)
                return chosen, info
            info["declined"] = "no sentence is evidence enough"
            if no_floor:  # no cosine floor to judge by: the gate's verdict (not one of extractive.crosslingual_verdicts) decided
                info["declined_by"] = "gate"
            info["chosen"] = 0
            return [], info
        ranked = _with_antecedents(self._mmr(cands, sims), a.extractive.max_sentences)
        if a.extractive.continuation:
            ranked, why = _with_continuation(ranked, best, question, self._qterms(question, best.lang),
                                             a.extractive.max_sentences)
            if why:
                info["continuation"] = why
        info["chosen"] = len(ranked)
        return [Pick(c.note.n, c.text, round(c.score, 6), round(c.overlap, 6), c.position,
                     None if c.sim is None else round(c.sim, 6)) for c in ranked], info

    # -- steps --------------------------------------------------------------------------------
    def _qterms(self, question: str, lang: str) -> list[str]:
        return self.scorer.terms(question, lang)

    def _candidates(
        self, question: str, qlang: str, notes: Sequence[Note], cues: Mapping[str, Sequence[str]]
    ) -> list[_Cand]:
        a = self.settings
        out: list[_Cand] = []
        seen: set[str] = set()
        for rank, note in enumerate(notes[: a.extractive.candidate_notes]):
            lang = note.fragment.lang or qlang
            prev: frozenset[str] = frozenset()
            prev_heading = False
            prev_cand: _Cand | None = None
            for pos, (sent, terms, nums, noise, key) in enumerate(self._prepared(note, lang, cues.get(note.fragment.id))):
                question_like = sent.rstrip().endswith("?")
                context, prev = prev, (frozenset() if question_like else terms)
                heading, prev_heading = prev_heading, noise and not question_like
                if noise or not key or key in seen:
                    prev_cand = None
                    continue
                seen.add(key)
                if not ANAPHOR.match(sent) and not heading:
                    context = frozenset()  # the sentence before lends its terms only to "It…", "This…"
                cand = _Cand(note, rank, pos, sent, terms, nums, lang, context - terms, prev_cand)
                if prev_cand is not None:
                    prev_cand.after = cand
                out.append(cand)
                prev_cand = cand
        return out

    def _prepared(self, note: Note, lang: str, cues: Sequence[str] | None) -> tuple[_Prepared, ...]:
        """A note's sentences with their terms, numbers, noise flag and dedupe key — the same for every
        turn that shows this fragment, so kept in a bounded LRU (by fragment id and content hash)."""
        f = note.fragment
        key = (f.id, f.content_hash, lang, tuple(cues) if cues else None)
        hit = self._prep.get(key)
        if hit is not None:
            return hit
        out = tuple(
            (sent, frozenset(self.scorer.terms(sent, lang)), frozenset(numbers(sent)), is_noise(sent),
             " ".join(tokenize(sent)))
            for sent in note_sentences(note, cues, self.settings.extractive.max_sentence_words)
        )
        self._prep.put(key, out)
        return out

    def _similarities(self, question: str, cands: list[_Cand], stopped: Callable[[], bool] | None = None
                      ) -> np.ndarray | None:
        if self.embedder is None:
            return None
        q = np.asarray(self.embedder.embed_queries([question]), dtype=np.float32)[0]
        vecs = self._cache.vectors(self.embedder, [c.text for c in cands], stopped=stopped)
        sims = vecs @ q
        for i, (c, s) in enumerate(zip(cands, sims, strict=True)):
            c.sim, c.row = float(s), i
        return vecs

    def _score(self, question: str, qlang: str, cands: list[_Cand]) -> None:
        a = self.settings
        qnums = numbers(question)
        qnames = cross_script_names(question)
        cand_names = [cross_script_names(c.text) for c in cands] if qnames else []  # each sentence's, once
        qnames = self._telling_names(qnames, cands, cand_names)
        focus = focus_word(question)
        kind = answer_type(question) if a.extractive.type_weight else None
        df: dict[str, int] = {}
        by_note: dict[int, set[str]] = {}
        for c in cands:
            by_note.setdefault(c.note.n, set()).update(c.terms)
        for terms in by_note.values():
            for t in terms:
                df[t] = df.get(t, 0) + 1
        n_notes = len(by_note)
        qterms_by_lang: dict[str, list[str]] = {}
        sim_weight = self.similarity_weight()
        for i, c in enumerate(cands):
            qterms = qterms_by_lang.get(c.lang)
            if qterms is None:
                qterms = qterms_by_lang[c.lang] = [t for t in self._qterms(question, c.lang) if not t.isdigit()]
            weights = {t: math.log(1.0 + (n_notes + 1) / (df.get(t, 0) + 0.5)) for t in qterms}
            total = sum(weights.values())
            shared = [t for t in qterms if t in c.terms]
            by_context = [t for t in qterms if t in c.context]  # "It must be wound…" after "The clockwork"
            c.shared = len(shared) + len(by_context)
            got = sum(weights[t] for t in shared) + a.extractive.context_weight * sum(weights[t] for t in by_context)
            c.overlap = got / total if total > 0 else 0.0
            num = len(qnums & c.nums) / len(qnums) if qnums else 0.0
            if qnames and c.lang != qlang:
                c.names = names_shared(qnames, cand_names[i]) / len(qnames)
            c.score = (
                c.overlap + a.extractive.number_weight * num + a.extractive.score_weight * c.note.score
                - a.extractive.rank_decay * c.rank
                + (sim_weight * c.sim if c.sim is not None else 0.0)
                + a.extractive.name_weight * c.names
                + (a.extractive.focus_weight if focus and focus_in(focus, c, self.scorer) else 0.0)
                + (a.extractive.type_weight if kind is not None and carries_answer_type(c.text, question, kind) else 0.0)
            )

    def _telling_names(self, qnames: set[str], cands: list[_Cand], cand_names: list[set[str]]) -> set[str]:
        """The question's names less those most of the turn's notes carry: the collection's own subject
        ("Marrowick" in a corpus about its lighthouse) tells no sentence from another, and counted as evidence
        it chose whichever sentence spelled it out (``answer.extractive.common_name_share``)."""
        a = self.settings
        if not qnames:
            return qnames
        by_note: dict[int, set[str]] = {}
        for c, names in zip(cands, cand_names, strict=True):
            by_note.setdefault(c.note.n, set()).update(names)
        if len(by_note) < a.extractive.common_name_min_notes:
            return qnames
        need = a.extractive.common_name_share * len(by_note)
        return {q for q in qnames if sum(names_shared({q}, names) > 0 for names in by_note.values()) < need}

    def _mmr(self, cands: list[_Cand], vecs: np.ndarray | None) -> list[_Cand]:
        a = self.settings
        best = cands[0]  # cands are sorted best first
        chosen: list[_Cand] = [best]
        per_note = {best.note.n: 1}
        margin = a.extractive.margin if vecs is not None else a.extractive.lexical_margin
        pool = [c for c in cands[1:] if c.score >= best.score - margin]
        while pool and len(chosen) < a.extractive.max_sentences:
            scored: list[tuple[float, int, _Cand]] = []
            for c in pool:
                if per_note.get(c.note.n, 0) >= a.extractive.max_per_note:
                    continue
                reds = [_redundancy(c, s, vecs) for s in chosen]
                if any((cos is not None and cos >= a.extractive.duplicate_similarity) or jac >= a.extractive.duplicate_terms
                       for cos, jac in reds):
                    continue  # a near duplicate of a chosen sentence
                red = max(cos if cos is not None else jac for cos, jac in reds)
                scored.append((a.extractive.mmr_lambda * c.score - (1 - a.extractive.mmr_lambda) * red, -c.rank, c))
            if not scored:
                break
            scored.sort(key=lambda x: (-x[0], -x[1], x[2].position))
            pick = scored[0][2]
            chosen.append(pick)
            per_note[pick.note.n] = per_note.get(pick.note.n, 0) + 1
            pool = [c for c in pool if c is not pick]
        return chosen

    def _by_address(
        self, notes: Sequence[Note], addressed: Collection[int], cues: Mapping[str, Sequence[str]]
    ) -> list[Pick]:
        """Addressed notes answer with their prose sentences: a verse before its commentary, a
        translation before a transliteration or a gloss, then reading order."""
        a = self.settings
        scored: list[tuple[float, int, int, str]] = []
        for note in notes:
            if note.n not in addressed:
                continue
            lang = note.fragment.lang or "en"
            verse = 1.0 if self.corpus.group_of(note.fragment.kind) is KindGroup.VERSES else 0.0
            sents = note_sentences(note, cues.get(note.fragment.id), a.extractive.max_sentence_words)
            for pos, sent in enumerate(sents):
                text = LEADING_LOC.sub("", sent)
                if len(text.split()) < 3:
                    continue
                prose = prose_likeness(text, lang)
                if prose < a.extractive.address_min_prose:
                    continue
                scored.append((verse + prose - 0.02 * pos, note.n, pos, text))
        scored.sort(key=lambda x: (-x[0], x[1], x[2]))
        out: list[Pick] = []
        per_note: dict[int, int] = {}
        for score, n, pos, text in scored:
            if per_note.get(n, 0) >= a.extractive.max_per_note:
                continue
            per_note[n] = per_note.get(n, 0) + 1
            out.append(Pick(n, text, round(score, 6), 1.0, pos))
            if len(out) >= a.extractive.address_sentences:
                break
        return out


_PRONOUN = re.compile(r"(?i)^(?:he|she|it|they|his|her|its|their|this|these|он|она|оно|они|его|её|ее|их|это|эти)\b")


def _with_antecedents(chosen: list[_Cand], cap: int) -> list[_Cand]:
    """A chosen sentence that opens with a pronoun ("He is also the oldest quarterback…") is preceded
    by the sentence before it in its note (its antecedent), unless that one is chosen already; the
    total stays within ``cap`` (the lowest-ranked picks give way, never leaving an antecedent alone)."""
    out: list[_Cand] = []
    ids = {id(c) for c in chosen}
    added: set[int] = set()
    for c in chosen:
        if c.before is not None and id(c.before) not in ids and _PRONOUN.match(c.text):
            out.append(c.before)
            ids.add(id(c.before))
            added.add(id(c.before))
        out.append(c)
    keep = out[:cap]
    while keep and id(keep[-1]) in added:
        keep.pop()
    return keep


def _with_continuation(
    chosen: list[_Cand], best: _Cand, question: str, qterms: Sequence[str], cap: int
) -> tuple[list[_Cand], str | None]:
    """The best sentence quoted with the one after it in its note when the answer is likely there: the
    best lacks what the question asks for (a name, a new number) and the next one has it, or the next one
    continues the best ("As such, it…", "Usually, …") and shares a question term. The continuation
    goes right after the best; the total stays within ``cap`` (the lowest-ranked picks give way)."""
    nxt = best.after
    if nxt is None or any(c is nxt for c in chosen) or not any(c is best for c in chosen):
        return chosen, None
    kind = answer_type(question)
    why: str | None = None
    if not carries_answer_type(best.text, question, kind) and carries_answer_type(nxt.text, question, kind):
        why = f"the best sentence lacks the asked-for {kind}; the next one has it"
    elif continues(nxt.text) and set(qterms) & nxt.terms:
        why = "the next sentence continues the best one"
    if why is None:
        return chosen, None
    at = next(i for i, c in enumerate(chosen) if c is best) + 1
    out = [*chosen[:at], nxt, *chosen[at:]][:cap]
    kept = {id(c) for c in out}
    while out and out[-1] is not nxt and out[-1] is not best:
        follower = out[-1].after  # an antecedent added for a sentence that no longer fits
        if follower is None or id(follower) in kept or not any(c is follower for c in chosen):
            break
        kept.discard(id(out.pop()))
    return out, why


def _redundancy(c: _Cand, s: _Cand, vecs: np.ndarray | None) -> tuple[float | None, float]:
    """How much ``c`` repeats ``s``: their cosine (None without vectors) and the Jaccard of their terms
    (the same fact in other words: "the range of a spring tide is 5.2 metres" / "5.2 metres at springs")."""
    cos = float(vecs[c.row] @ vecs[s.row]) if vecs is not None and c.row >= 0 and s.row >= 0 else None
    jac = len(c.terms & s.terms) / len(c.terms | s.terms) if c.terms and s.terms else 0.0
    return cos, jac


def select_sentences(
    question: str, qlang: str, notes: Sequence[Note], settings: Settings, scorer: TermScorer,
    *, crosslingual: bool = True, addressed: Collection[int] = (), embedder: Embedder | None = None,
) -> tuple[list[Pick], dict[str, object]]:
    """One-off :meth:`SentenceRanker.select` (no shared cache)."""
    return SentenceRanker(settings, embedder, scorer).select(
        question, qlang, notes, crosslingual=crosslingual, addressed=addressed
    )


def _crosslingual(
    question: str, qlang: str, notes: Sequence[Note], settings: AnswerSettings, scorer: TermScorer,
    cues: Mapping[str, Sequence[str]],
) -> list[Pick]:
    """No embedder (or none with a fitted sentence-cosine floor): a question in another language than the
    top note answers from that note's
    sentences sharing the most numbers and Latin names with it, else its first ones."""
    others = [n for n in notes if n.fragment.lang and n.fragment.lang != qlang]
    if not others or others[0] is not notes[0]:
        return []  # the top note speaks the question's language and shares nothing with it
    qneutral = scorer.neutral(question)
    out: list[Pick] = []
    for note in others[: settings.extractive.crosslingual_notes]:
        sents = [s for s in note_sentences(note, cues.get(note.fragment.id), settings.extractive.max_sentence_words)
                 if not is_noise(s)]
        ranked = sorted(
            enumerate(sents), key=lambda ps: (-len(qneutral & scorer.neutral(ps[1])), ps[0])
        )[: settings.extractive.crosslingual_sentences]
        for pos, sent in sorted(ranked):
            out.append(Pick(note.n, sent, note.score, 0.0, pos))
    return out[: settings.extractive.max_sentences]


def outline_from_picks(picks: Sequence[Pick]) -> Outline:
    """The extractive planner's outline: one thesis per chosen sentence."""
    return Outline(tuple(Thesis(p.sentence, (p.note,)) for p in picks))


def extractive_pieces(picks: Sequence[Pick], renumber: dict[int, int]) -> list[str]:
    """The answer as stream pieces: each chosen sentence followed by its (renumbered) ``[n]``. A unit with
    no closing punctuation of its own (a heading-like line, a transcript span cut at a cue) is closed with a
    full stop after its marker, so two quoted units never run together into one sentence."""
    pieces: list[str] = []
    for i, p in enumerate(picks):
        sep = "" if i == 0 else " "
        cited = cite_quote(p.sentence, renumber[p.note])
        if cited.endswith("]"):
            cited += "."
        pieces.append(sep + cited)
    return pieces


_TRAIL = re.compile(r"([.!?…;:,]+[\"'»”)]*)$")


def cite_sentence(sentence: str, n: int) -> str:
    """``sentence`` with ``[n]`` before its closing punctuation: ``It is so [2].``"""
    return _cited(sentence, n, cut=False)


def cite_quote(sentence: str, n: int) -> str:
    """:func:`cite_sentence` for a sentence quoted from a longer source: one that stops at a comma, colon or
    semicolon (a verse's line, a transcript's cue: the sentence goes on in the source) ends in an ellipsis,
    so it does not read as cut short: ``might bear his memory [1]…``. (A curated note's own text keeps its
    punctuation: :func:`cite_sentence`.)"""
    return _cited(sentence, n, cut=True)


def _cited(sentence: str, n: int, *, cut: bool) -> str:
    m = _TRAIL.search(sentence)
    if m is None:
        return f"{sentence} [{n}]"
    trail = m.group(1)
    if cut and trail[0] in ",:;":
        trail = trail.lstrip(",:;") + "…"
    return f"{sentence[: m.start()].rstrip()} [{n}]{trail}"
