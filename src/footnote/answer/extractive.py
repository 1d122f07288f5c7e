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
``extractive.crosslingual.min_similarity``), or (notes in another language) one carries
``extractive.names.min_share`` of the question's names at ``extractive.names.min_similarity``. Otherwise nothing is chosen and the answer is
``corpus_insufficient`` (said in the trace as decided by the extractive planner). Further sentences
follow by maximal marginal relevance: within ``extractive.margin`` of the best score, never a near
duplicate of one already chosen (cosine ≥ ``extractive.duplicates.similarity``, or the same terms),
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

import logging
import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np

from footnote.answer.addressed import per_address
from footnote.answer.answerable import AnswerCheck, subject_of
from footnote.answer.candidates import (
    Cand,
    Prepared,
    TermScorer,
    focus_in,
    redundancy,
    with_antecedents,
    with_continuation,
)
from footnote.answer.model_check import ModelCheck
from footnote.answer.quotes import Pick, cite_quote, cite_sentence, extractive_pieces, outline_from_picks
from footnote.answer.sentences import (
    ANAPHOR,
    LEADING_LOC,
    answer_type,
    carries_answer_type,
    cross_script_names,
    cue_texts,
    focus_word,
    is_noise,
    is_unended,
    names_shared,
    note_sentences,
    prose_likeness,
    transcript_units,
)
from footnote.answer.types import Note
from footnote.lru import LruCache
from footnote.models.protocols import ChoiceModel, Embedder
from footnote.records.fragments import KindGroup
from footnote.retrieve.sentence_vectors import SentenceVectorCache, sentence_key
from footnote.settings import AnswerSettings, Settings
from footnote.text import (
    named_sources,
    numbers,
    split_sentences,
    tokenize,
)

log = logging.getLogger(__name__)

__all__ = [
    "Pick", "SentenceRanker", "TermScorer", "cite_quote", "cite_sentence", "cue_texts", "extractive_pieces", "is_noise",
    "outline_from_picks", "select_sentences", "sentence_key", "split_sentences", "transcript_units",
]


class SentenceRanker:
    """Ranks the sentences of a turn's notes (see the module docstring). Shared by concurrent turns."""

    def __init__(
        self, settings: Settings, embedder: Embedder | None = None, scorer: TermScorer | None = None,
    ) -> None:
        """Sentence vectors come from the cache a call passes (``vectors``: the turn reader's, the one the gate
        shares); a call that passes none (a ranker used on its own: tests, benches) uses one of the ranker's own,
        in memory only."""
        self.settings = settings.answer
        self.corpus = settings.corpus
        self.embedder = embedder
        self.scorer = scorer or TermScorer()
        self._own: SentenceVectorCache | None = None
        self._prep: LruCache[tuple[str, str, str, tuple[str, ...] | None], tuple[Prepared, ...]] = LruCache(
            self.settings.extractive.cache.notes)
        self.check = AnswerCheck(self.settings.extractive.answerable, embedder, self.scorer)
        self.model_check = ModelCheck(self.settings.extractive.answerable)

    def _cache(self, vectors: SentenceVectorCache | None) -> SentenceVectorCache:
        if vectors is not None:
            return vectors
        if self._own is None:
            c = self.settings.extractive.cache
            self._own = SentenceVectorCache(c.vectors, None, c.stop_check_sentences)
        return self._own

    def warm(self, notes: Sequence[Note], cues: Mapping[str, Sequence[str]],
             stopped: Callable[[], bool] | None = None, *, vectors: SentenceVectorCache | None = None) -> int:
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
        cache = self._cache(vectors)
        before = cache.embedded
        if texts:
            cache.vectors(self.embedder, list(texts), stopped=stopped, claim=False)
        return cache.embedded - before

    def warm_texts(self, texts: Sequence[str], stopped: Callable[[], bool] | None = None, *,
                   vectors: SentenceVectorCache | None = None) -> int:
        """Make (and keep in the store) the vectors of ``texts`` — the gate's sentences, split its own way
        (:func:`~footnote.retrieve.signal.gate_sentences`), which share the store's sentence vectors by text.
        Returns how many were embedded now."""
        if self.embedder is None or not texts:
            return 0
        cache = self._cache(vectors)
        before = cache.embedded
        cache.vectors(self.embedder, list(dict.fromkeys(texts)), stopped=stopped, claim=False)
        return cache.embedded - before

    def passage_vectors(self, texts: Sequence[str], vectors: SentenceVectorCache | None = None) -> np.ndarray:
        """Passage vectors of ``texts`` through the ranker's cache (the turn's sentences are there already).
        Nothing new is kept in the store: these texts include a model's answer sentences, not the corpus's."""
        assert self.embedder is not None
        return self._cache(vectors).vectors(self.embedder, texts, keep=False)

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
        ``extractive.crosslingual.min_similarity``, else its ``extractive.min_similarity`` (None: neither
        is fitted, and the cosine decides nothing for such a sentence)."""
        if self.embedder is None:
            return None
        return self.settings.extractive.crosslingual.min_similarity.get(self.embedder.name, self.min_similarity())

    def select(
        self, question: str, qlang: str, notes: Sequence[Note], *, crosslingual: bool = True,
        addressed: Collection[int] = (), cues: Mapping[str, Sequence[str]] | None = None,
        stopped: Callable[[], bool] | None = None, expired: Callable[[], bool] | None = None,
        titles: Mapping[str, str] | None = None, vectors: SentenceVectorCache | None = None,
        checker: ChoiceModel | None = None,
    ) -> tuple[list[Pick], dict[str, object]]:
        """The sentences an extractive answer is made of, best first, and what the choice looked at
        (for the trace). ``addressed``: notes whose address the question names. ``cues``: cue texts
        of transcript notes by fragment id. ``titles``: the notes' sources' titles by source id (the
        answer-level check reads the question's numbers there too: "The Keeper's Report for 1887"). ``stopped``: the turn's stop flag (a client that hung up),
        checked while its sentences are embedded (:class:`~footnote.errors.Cancelled`). ``expired``: the turn's
        deadline passed — sentences not embedded by then are scored by their words alone (``unembedded``).
        ``vectors``: the turn's sentence-vector cache (the reader's). ``checker``: the turn's
        ``models.answer_check``, asked once the answer-level check's rules pass (:mod:`footnote.answer.model_check`)."""
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
        sims = self._similarities(question, cands, stopped, expired, vectors)
        info["embedded"] = sims is not None
        if sims is not None and (short := int(np.count_nonzero(~sims.any(axis=1)))):
            info["unembedded"] = short
        info["embed_ms"] = round((time.perf_counter() - t0) * 1000.0, 3)
        note_terms = _note_terms(cands)
        named = named_sources(question, titles or {})
        if named:
            info["named_sources"] = sorted(named)
        self._score(question, qlang, cands, note_terms, named)
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
        name_sim = a.extractive.names.min_similarity.get(self.embedder.name) if self.embedder is not None else None
        name_ok = name_sim is not None and any(
            c.names >= a.extractive.names.min_share and c.sim is not None and c.sim >= name_sim for c in cands
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
            if no_floor:  # no cosine floor to judge by: the gate's verdict (not one of extractive.crosslingual.verdicts) decided
                info["declined_by"] = "gate"
            info["chosen"] = 0
            return [], info
        ranked = with_antecedents(self._mmr(cands, sims), a.extractive.max_sentences)
        if a.extractive.continuation:
            ranked, why = with_continuation(ranked, best, question, self._qterms(question, best.lang),
                                             a.extractive.max_sentences)
            if why:
                info["continuation"] = why
        if a.extractive.answerable.enabled:
            subject = subject_of(note_terms, cands, self.scorer, a.extractive.names)
            judged = self.check.judge(question, qlang, ranked, subject, sims, passages=notes,
                                      titles=titles or {})
            judged_info = info["answerable"] = judged.to_info()
            if not judged.answers:
                info["declined"] = "no chosen sentence answers the question"
                info["chosen"] = 0
                return [], info
            if checker is not None:
                verdict = self.model_check.ask(checker, question, [c.text for c in ranked], qlang)
                judged_info["model"] = verdict.to_info()
                if verdict.declines:
                    judged_info["answers"] = False
                    info["declined"] = "the answer-check model finds no answer in the chosen sentences"
                    info["chosen"] = 0
                    return [], info
            if a.extractive.answerable.trim_padding:
                trimmed = self.check.padding(question, qlang, ranked, judged, subject, sims)
                if len(trimmed) < len(ranked):
                    judged_info["padding"] = len(ranked) - len(trimmed)
                ranked = trimmed
        info["chosen"] = len(ranked)
        return [Pick(c.note.n, c.text, round(c.score, 6), round(c.overlap, 6), c.position,
                     None if c.sim is None else round(c.sim, 6)) for c in ranked], info

    # -- steps --------------------------------------------------------------------------------
    def _qterms(self, question: str, lang: str) -> list[str]:
        return self.scorer.terms(question, lang)

    def _candidates(
        self, question: str, qlang: str, notes: Sequence[Note], cues: Mapping[str, Sequence[str]]
    ) -> list[Cand]:
        a = self.settings
        out: list[Cand] = []
        seen: set[str] = set()
        for rank, note in enumerate(notes[: a.extractive.candidate_notes]):
            lang = note.fragment.lang or qlang
            prev: frozenset[str] = frozenset()
            prev_heading = False
            prev_cand: Cand | None = None
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
                cand = Cand(note, rank, pos, sent, terms, nums, lang, context - terms, prev_cand)
                if prev_cand is not None:
                    prev_cand.after = cand
                out.append(cand)
                prev_cand = cand
        return out

    def _prepared(self, note: Note, lang: str, cues: Sequence[str] | None) -> tuple[Prepared, ...]:
        """A note's sentences with their terms, numbers, noise flag and dedupe key — the same for every
        turn that shows this fragment, so kept in a bounded LRU (by fragment id and content hash)."""
        f = note.fragment
        key = (f.id, f.content_hash, lang, tuple(cues) if cues else None)
        hit = self._prep.get(key)
        if hit is not None:
            return hit
        x = self.settings.extractive
        unended = f.kind in x.unended_line_kinds  # a letter's dateline, closing, signature: no answer
        out = tuple(
            (sent, frozenset(self.scorer.terms(sent, lang)), frozenset(numbers(sent)),
             is_noise(sent) or (unended and is_unended(sent, x.unended_line_words)), " ".join(tokenize(sent)))
            for sent in note_sentences(note, cues, x.max_sentence_words)
        )
        self._prep.put(key, out)
        return out

    def _similarities(self, question: str, cands: list[Cand], stopped: Callable[[], bool] | None = None,
                      expired: Callable[[], bool] | None = None,
                      vectors: SentenceVectorCache | None = None) -> np.ndarray | None:
        if self.embedder is None:
            return None
        q = np.asarray(self.embedder.embed_queries([question]), dtype=np.float32)[0]
        vecs = self._cache(vectors).vectors(self.embedder, [c.text for c in cands], stopped=stopped, expired=expired)
        sims = vecs @ q
        for i, (c, s) in enumerate(zip(cands, sims, strict=True)):
            c.sim, c.row = float(s), i
        return vecs

    def _score(self, question: str, qlang: str, cands: list[Cand], by_note: Mapping[int, set[str]],
               named: Collection[str] = ()) -> None:
        """Each candidate's score (``named``: the source ids whose title the question names)."""
        a = self.settings
        qnums = numbers(question)
        qnames = cross_script_names(question)
        cand_names = [cross_script_names(c.text) for c in cands] if qnames else []  # each sentence's, once
        qnames = self._telling_names(qnames, cands, cand_names)
        focus = focus_word(question)
        kind = answer_type(question) if a.extractive.type_weight else None
        df: dict[str, int] = {}
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
                + a.extractive.names.weight * c.names
                + (a.extractive.focus_weight if focus and focus_in(focus, c, self.scorer) else 0.0)
                + (a.extractive.type_weight if kind is not None and carries_answer_type(c.text, question, kind) else 0.0)
                + (a.extractive.named_source_weight if c.note.fragment.source_id in named else 0.0)
            )

    def _telling_names(self, qnames: set[str], cands: list[Cand], cand_names: list[set[str]]) -> set[str]:
        """The question's names less those most of the turn's notes carry: the collection's own subject
        ("Marrowick" in a corpus about its lighthouse) tells no sentence from another, and counted as evidence
        it chose whichever sentence spelled it out (``answer.extractive.names.common_share``)."""
        a = self.settings
        if not qnames:
            return qnames
        by_note: dict[int, set[str]] = {}
        for c, names in zip(cands, cand_names, strict=True):
            by_note.setdefault(c.note.n, set()).update(names)
        if len(by_note) < a.extractive.names.common_min_notes:
            return qnames
        need = a.extractive.names.common_share * len(by_note)
        return {q for q in qnames if sum(names_shared({q}, names) > 0 for names in by_note.values()) < need}

    def _mmr(self, cands: list[Cand], vecs: np.ndarray | None) -> list[Cand]:
        a = self.settings
        best = cands[0]  # cands are sorted best first
        chosen: list[Cand] = [best]
        per_note = {best.note.n: 1}
        margin = a.extractive.margin if vecs is not None else a.extractive.lexical_margin
        pool = [c for c in cands[1:] if c.score >= best.score - margin]
        while pool and len(chosen) < a.extractive.max_sentences:
            scored: list[tuple[float, int, Cand]] = []
            for c in pool:
                if per_note.get(c.note.n, 0) >= a.extractive.max_per_note:
                    continue
                reds = [redundancy(c, s, vecs) for s in chosen]
                if any((cos is not None and cos >= a.extractive.duplicates.similarity) or jac >= a.extractive.duplicates.terms
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
                if prose < a.extractive.address.min_prose:
                    continue
                scored.append((verse + prose - 0.02 * pos, note.n, pos, text))
        scored.sort(key=lambda x: (-x[0], x[1], x[2]))
        if ranged := per_address(scored, notes, a.extractive.address.range_verses, a.extractive.address.range_sentences):
            return ranged  # several addresses ("BG 2.11-13"): each of them, in order
        out: list[Pick] = []
        per_note: dict[int, int] = {}
        for score, n, pos, text in scored:
            if per_note.get(n, 0) >= a.extractive.max_per_note:
                continue
            per_note[n] = per_note.get(n, 0) + 1
            out.append(Pick(n, text, round(score, 6), 1.0, pos))
            if len(out) >= a.extractive.address.sentences:
                break
        return out


def _note_terms(cands: Sequence[Cand]) -> dict[int, set[str]]:
    """The terms of a turn's candidate sentences, by note: the notes' term counts for the scores and the
    collection's subject for the answer-level check."""
    by_note: dict[int, set[str]] = {}
    for c in cands:
        by_note.setdefault(c.note.n, set()).update(c.terms)
    return by_note


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
    for note in others[: settings.extractive.crosslingual.notes]:
        sents = [s for s in note_sentences(note, cues.get(note.fragment.id), settings.extractive.max_sentence_words)
                 if not is_noise(s)]
        ranked = sorted(
            enumerate(sents), key=lambda ps: (-len(qneutral & scorer.neutral(ps[1])), ps[0])
        )[: settings.extractive.crosslingual.sentences]
        for pos, sent in sorted(ranked):
            out.append(Pick(note.n, sent, note.score, 0.0, pos))
    return out[: settings.extractive.max_sentences]
