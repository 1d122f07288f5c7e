"""Citation support without a model: does each answer sentence say what the notes it cites say?

For every sentence of an answer and every citation ``[n]`` it carries, two cheap measures of how well
note ``n`` supports it:

* ``similarity`` — the embedder's cosine between the sentence and the best-matching sentence of the
  note (headings, page footers, questions — what :func:`~footnote.answer.sentences.is_noise` calls
  never an answer — are not evidence; one batched ``embed_passages`` call for the whole answer);
* ``containment`` — the share of the sentence's content terms (stemmed, stop words dropped) and numbers
  that the note carries. Across languages only numbers and language-neutral tokens can match, so a
  sentence in another language than its note is scored on ``similarity`` alone (a number it states that
  the note lacks still counts against it).

``score = w·similarity + (1−w)·containment`` (same language) or ``similarity`` (cross-lingual, less a
penalty per missing number); a citation supports its sentence when the score reaches the embedder's
threshold (``settings.support``, fitted by :mod:`footnote.eval.support_fit`).

ALCE-style figures per answer: citation **recall** = share of sentences supported by at least one of
their citations (a sentence without a citation is unsupported); citation **precision** = share of
citations that support their sentence on their own (ALCE also keeps a citation that is needed jointly;
one note at a time is stricter).

The answerer puts an answer's support into its trace (``settings.support.in_trace``), reading the
vectors the extractive ranker already computed this turn (``vectors``); ``footnote eval --answers``
keeps it per question (:mod:`footnote.eval.support`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from footnote.answer.instructions import is_instruction
from footnote.answer.particulars import (
    PassageParticulars,
    claim_particulars,
    content_words,
    missing_particulars,
    passage_particulars,
)
from footnote.answer.sentences import is_noise
from footnote.answer.types import Answer, AnswerMode
from footnote.answer.units import is_answer_label
from footnote.errors import FootnoteError
from footnote.lru import LruCache
from footnote.models.protocols import Embedder
from footnote.records.fragments import AddressLocator, Fragment
from footnote.settings import SupportSettings
from footnote.text import (
    Analyzer,
    content_terms,
    detect_lang,
    mixed_script_words,
    numbers,
    split_sentences,
    tokenize,
)

log = logging.getLogger(__name__)

_MARK = re.compile(r"\[(\d{1,3})\]")
_MARK_END = re.compile(r"\s*\[\d{1,3}\](?=\s*(?:\[\d{1,3}\]\s*)*[.!?…;:,)»”\"']|\s*$)")  # before punctuation / at the end
_MARK_WS = re.compile(r"\s*\[\d{1,3}\]\s*")
_LEAD = re.compile(r"^(?:\s*\[\d{1,3}\])+")
#: a sentence that asks: ends with a question mark (Latin, full-width, Arabic, Greek), closing quotes aside
_QUESTION = re.compile(r"[?？؟\u037e]\s*[\"'»”)]*\s*$")
_AFTER_MARK = re.compile(r"(?<=\])\s+(?=[\"'«“(]?[A-ZА-ЯЁ])")  # "… [1] Next unit": a marker ends a sentence


@dataclass(frozen=True)
class CitedSentence:
    text: str  # without its [n] markers
    cites: tuple[int, ...]


@dataclass(frozen=True)
class CitationSupport:
    n: int
    similarity: float
    containment: float | None  # None across languages
    score: float
    supported: bool

    def to_dict(self) -> dict[str, Any]:
        c = None if self.containment is None else round(self.containment, 4)
        return {"n": self.n, "similarity": round(self.similarity, 4), "containment": c,
                "score": round(self.score, 4), "supported": self.supported}


@dataclass(frozen=True)
class SentenceSupport:
    sentence: str
    citations: tuple[CitationSupport, ...]
    #: what the sentence states that no passage it cites carries (``number``, ``date``, ``name``) or repeats from a
    #: passage's planted instruction (``instruction``), or ``question`` (a model's sentence that asks rather than
    #: states), ``garbled`` (a word mixing scripts) or ``model`` (the check model says no: ``support.model_check``):
    #: each makes it unsupported, whatever its score
    missing: tuple[str, ...] = ()

    @property
    def supported(self) -> bool:
        return any(c.supported for c in self.citations) and not self.missing

    @property
    def why(self) -> tuple[str, ...]:
        """Why the sentence is unsupported: ``score`` (no citation reaches the threshold) and/or what is missing."""
        return tuple(dict.fromkeys((() if any(c.supported for c in self.citations) else ("score",)) + self.missing))

    def to_dict(self) -> dict[str, Any]:
        out = {"sentence": self.sentence, "supported": self.supported,
               "citations": [c.to_dict() for c in self.citations]}
        if self.missing:
            out["missing"] = list(self.missing)
        return out


@dataclass(frozen=True)
class AnswerSupport:
    sentences: tuple[SentenceSupport, ...]
    threshold: float

    @property
    def recall(self) -> float | None:
        """ALCE citation recall: share of sentences supported by a citation they carry."""
        if not self.sentences:
            return None
        return sum(1 for s in self.sentences if s.supported) / len(self.sentences)

    @property
    def precision(self) -> float | None:
        """ALCE-style citation precision: share of citations that support their sentence alone."""
        cs = [c for s in self.sentences for c in s.citations]
        return sum(1 for c in cs if c.supported) / len(cs) if cs else None

    @property
    def unsupported(self) -> list[str]:
        return [s.sentence for s in self.sentences if not s.supported]

    def to_dict(self, *, detail: bool = False) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        out: dict[str, Any] = {"n_sentences": len(self.sentences), "supported_share": r(self.recall),
                               "citation_recall": r(self.recall), "citation_precision": r(self.precision),
                               "unsupported": self.unsupported, "threshold": self.threshold}
        if detail:
            out["sentences"] = [s.to_dict() for s in self.sentences]
        return out


def cited_sentences(text: str) -> list[CitedSentence]:
    """Sentences of an answer with the citation numbers each carries; a fragment that is nothing but
    markers (``"… end. [2]"``) belongs to the sentence before it, and a marker followed by a capital
    letter ends a sentence even without a full stop (``"… Сторожевом [1] Маяк на мысе …"``)."""
    out: list[CitedSentence] = []
    units = [u for sent in split_sentences(text) for u in _AFTER_MARK.split(sent)]
    # an answer label with a marker ("Ответ: [1] The most useful instrument …") states nothing: its markers go to
    # the sentence it introduces. Only a label: any other lead-in is a claim, judged on its own.
    for i in range(len(units) - 1, 0, -1):
        if is_answer_label(units[i - 1]):
            marks = " ".join(m.group(0) for m in _MARK.finditer(units[i - 1]))
            units[i - 1:i + 1] = [f"{units[i].rstrip()} {marks}"]
    for raw in units:
        lead = _LEAD.match(raw)
        if lead and out:  # "… end. [2] Next sentence": the markers close the sentence before
            prev = out[-1]
            more = tuple(int(m) for m in _MARK.findall(lead.group(0)))
            out[-1] = CitedSentence(prev.text, tuple(dict.fromkeys((*prev.cites, *more))))
            raw = raw[lead.end():]
        cites = tuple(dict.fromkeys(int(m) for m in _MARK.findall(raw)))
        bare = " ".join(_MARK_WS.sub(" ", _MARK_END.sub("", raw)).split())  # "horn [1]." → "horn." (as quoted)
        if not re.search(r"\w", bare):
            if out and cites:
                prev = out[-1]
                out[-1] = CitedSentence(prev.text, tuple(dict.fromkeys((*prev.cites, *cites))))
            continue
        out.append(CitedSentence(bare, cites))
    return out


@dataclass(frozen=True)
class _NoteFacts:
    sentences: tuple[str, ...]  # the note's sentences compared with a claim (noise dropped)
    lang: str
    tokens: frozenset[str]
    terms: frozenset[str]  # content terms and numbers, plus every token (a claim's term found verbatim counts)


Vectors = Callable[[Sequence[str]], np.ndarray]
"""Passage vectors of texts, one row each (the embedder's ``embed_passages``, or a cache in front of it)."""


class SupportScorer:
    """Scores claims against notes; ``embedder`` None scores on containment alone. ``vectors``: where
    passage vectors come from (default: one ``embed_passages`` call per answer)."""

    def __init__(self, settings: SupportSettings, embedder: Embedder | None, analyzer: Analyzer | None = None,
                 vectors: Vectors | None = None) -> None:
        self.settings = settings
        self.embedder = embedder
        self.analyzer = analyzer or Analyzer()
        self._vectors = vectors
        name = embedder.name if embedder is not None else "none"
        self.thresholds = settings.thresholds(name)
        self._notes: LruCache[str, _NoteFacts] = LruCache(settings.note_cache)
        self._particulars: LruCache[tuple[str, tuple[str, ...]], PassageParticulars] = LruCache(settings.note_cache)

    def _terms(self, text: str, lang: str) -> set[str]:
        return content_terms(text, lang, self.analyzer) | numbers(text)

    def _note(self, text: str) -> _NoteFacts:
        """A cited note's sentences, language, tokens and terms: the same for every claim and every turn
        citing it, so worked out once and kept in a bounded LRU (``support.note_cache``)."""
        hit = self._notes.get(text)
        if hit is not None:
            return hit
        all_sents = split_sentences(text)
        kept = [s for s in all_sents if not is_noise(s)][: self.settings.max_note_sentences]
        planted = any(is_instruction(x) for x in (*all_sents, text))
        # a note that is nothing but an instruction to a model is quoted data with no evidence (issue 39 §2)
        sents = tuple(kept) if kept or planted else (text,)
        evidence = text if not planted else " ".join(
            x for x in all_sents if not is_instruction(x))  # a planted instruction's words are no evidence either
        lang = detect_lang(text)
        tokens = frozenset(tokenize(evidence))
        facts = _NoteFacts(sents, lang, tokens, frozenset(self._terms(evidence, lang) | tokens))
        self._notes.put(text, facts)
        return facts

    def threshold(self, containment: float | None) -> float:
        """The bar for a score: same-language (containment known) or cross-lingual."""
        return self.thresholds.cross_lang if containment is None else self.thresholds.same_lang

    def score_pairs(self, pairs: Sequence[tuple[str, str]],
                    vectors: Vectors | None = None) -> list[tuple[float, float | None, float]]:
        """(similarity, containment, score) of each (claim, note text) pair, one embedding call in all. ``vectors``:
        where this call's passage vectors come from (the turn's cache), else the scorer's own source."""
        st = self.settings
        facts = [self._note(note) for _, note in pairs]
        sims: list[float] = [0.0] * len(pairs)
        if self.embedder is not None and pairs:
            texts = list(dict.fromkeys([c for c, _ in pairs] + [x for f in facts for x in f.sentences]))
            row = {t: i for i, t in enumerate(texts)}  # each distinct text embedded once
            source = vectors if vectors is not None else self._vectors
            raw = source(texts) if source is not None else self.embedder.embed_passages(texts)
            vecs = np.asarray(raw, dtype=np.float32)
            for i, ((claim, _), f) in enumerate(zip(pairs, facts, strict=True)):
                if f.sentences:  # (a note that is all instruction has no evidence: similarity 0)
                    block = vecs[[row[x] for x in f.sentences]]
                    sims[i] = float(np.max(block @ vecs[row[claim]]))
        out: list[tuple[float, float | None, float]] = []
        for (claim, _), f, sim in zip(pairs, facts, sims, strict=True):
            clang = detect_lang(claim)
            nums = numbers(claim)
            missing_nums = len(nums - f.tokens)
            if clang == f.lang:
                ct = self._terms(claim, clang)
                cont: float | None = len(ct & f.terms) / len(ct) if ct else 0.0
                assert cont is not None
                if self.embedder is None:
                    score = cont
                else:
                    score = st.similarity_weight * sim + (1.0 - st.similarity_weight) * cont
            else:
                cont = None
                score = sim - st.missing_number_penalty * missing_nums
            out.append((sim, cont, score))
        return out

    def passage(self, text: str, extra: Sequence[str] = ()) -> PassageParticulars:
        """What a cited passage carries (numbers, months, names; its planted instructions' words), with ``extra``
        (its source's title, its address label) carried too; kept in a bounded LRU like the note facts."""
        key = (text, tuple(extra))
        hit = self._particulars.get(key)
        if hit is None:
            hit = passage_particulars(text, extra)
            self._particulars.put(key, hit)
        return hit

    def missing(self, claim: str, cited: Sequence[PassageParticulars], turn: TurnWords | None = None) -> tuple[str, ...]:
        """What ``claim`` states that none of ``cited`` carries (``number``, ``date``, ``name``, ``instruction``,
        ``background``: :func:`~footnote.answer.particulars.missing_particulars`); empty with ``support.particulars``
        off."""
        if not self.settings.particulars:
            return ()
        t = turn or TurnWords()
        return tuple(missing_particulars(claim_particulars(claim), cited, planted=t.planted, background=t.background,
                                         cross_script_names=self.settings.cross_script_names))

    def turn_words(self, passages: Sequence[CitedPassage], background: Sequence[str] = ()) -> TurnWords:
        """The words a model's claim may not take from the turn: those only the instructions planted in the turn's
        passages carry, and those only its background notes (curated memory) carry — no passage of the turn."""
        facts = [self.passage(p.text, p.extra) for p in passages]
        said = frozenset().union(*(f.words for f in facts)) if facts else frozenset()
        planted = frozenset().union(*(f.planted for f in facts)) - said if facts else frozenset()
        bg = frozenset().union(*(content_words(b) for b in background)) - said if background else frozenset()
        return TurnWords(planted, bg)

    def score_sentences(self, sents: Sequence[CitedSentence], by_n: Mapping[int, CitedPassage],
                        turn: TurnWords | None = None, vectors: Vectors | None = None) -> list[SentenceSupport]:
        """Each sentence's support by the passages it cites (``by_n``: note number → passage); a number that
        resolves to nothing supports nothing. ``turn``: words the turn's instructions and background notes alone
        carry (:meth:`turn_words`)."""
        pairs = [(s.text, by_n[n].text) for s in sents for n in s.cites if n in by_n]
        scores = iter(self.score_pairs(pairs, vectors))
        out: list[SentenceSupport] = []
        for s in sents:
            cs = []
            for n in s.cites:
                if n not in by_n:  # a number that resolves to nothing supports nothing
                    cs.append(CitationSupport(n, 0.0, 0.0, 0.0, False))
                    continue
                sim, cont, score = next(scores)
                cs.append(CitationSupport(n, sim, cont, score, score >= self.threshold(cont)))
            cited = [self.passage(by_n[n].text, by_n[n].extra) for n in dict.fromkeys(s.cites) if n in by_n]
            out.append(SentenceSupport(s.text, tuple(cs), self.missing(s.text, cited, turn)))
        return out

    def score_answer(self, answer: Answer, vectors: Vectors | None = None) -> AnswerSupport | None:
        """Support of a corpus answer's sentences by their citations; None for an answer that cites
        nothing by design (not found, declined, general knowledge)."""
        if answer.mode != AnswerMode.CORPUS:
            return None
        by_n = {c.n: CitedPassage.of(c.fragment, c.title) for c in answer.citations}
        return AnswerSupport(tuple(self.score_sentences(cited_sentences(answer.answer), by_n, vectors=vectors)),
                             self.thresholds.same_lang)

    def judge(self, unit: str, by_n: Mapping[int, CitedPassage], turn: TurnWords | None = None,
              vectors: Vectors | None = None) -> SentenceSupport:
        """The verdict on one sentence of a model's answer as it streams (a unit with its ``[n]`` markers, already
        cleaned: every number a note of the turn): supported when every part of it is. The server shows it only
        then (``support.on_unsupported``). A question states nothing a passage could support (a small model
        often echoes the reader's question with a citation): it is unsupported, ``question``."""
        parts = self.score_sentences(cited_sentences(unit), by_n, turn, vectors) or [SentenceSupport(unit, ())]
        if len(parts) == 1 or not (bad := [p for p in parts if not p.supported]):
            verdict = parts[0]
        else:
            verdict = SentenceSupport(" ".join(p.sentence for p in parts), tuple(c for p in parts for c in p.citations),
                                      tuple(dict.fromkeys(m for p in bad for m in p.why)))
        if _QUESTION.search(_MARK.sub("", unit)):
            verdict = SentenceSupport(verdict.sentence, verdict.citations, (*verdict.missing, "question"))
        if self.settings.garbled_words and (words := mixed_script_words(_MARK.sub("", unit))):
            cited = [by_n[n].text for n in dict.fromkeys(int(x) for x in _MARK.findall(unit)) if n in by_n]
            if any(not any(w in text for text in cited) for w in words):
                verdict = SentenceSupport(verdict.sentence, verdict.citations, (*verdict.missing, "garbled"))
        return verdict


@dataclass(frozen=True)
class TurnWords:
    """Words a model's claim may not take from its turn: ``planted`` (only the passages' planted instructions carry
    them) and ``background`` (only the background notes do)."""

    planted: frozenset[str] = frozenset()
    background: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CitedPassage:
    """A passage a sentence cites, as the support check reads it: its text, and its source's title and its
    address label (a name or a verse number the sentence may take from them)."""

    text: str
    extra: tuple[str, ...] = ()

    @classmethod
    def of(cls, fragment: Fragment, title: str = "") -> CitedPassage:
        loc = fragment.locator
        label = loc.label if isinstance(loc, AddressLocator) else ""
        return cls(fragment.text, tuple(x for x in (title, label) if x))


def trace_support(scorer: SupportScorer, answer: Answer, vectors: Vectors | None = None) -> dict[str, Any] | None:
    """The answer's support for its trace (per sentence and citation, share supported, unsupported
    listed, milliseconds it took); None for an answer that cites nothing by design. An embedder failure
    leaves the answer alone and says so here."""
    t0, c0 = time.perf_counter(), time.thread_time()
    try:
        sup = scorer.score_answer(answer, vectors)
    except FootnoteError as e:
        log.warning("citation support not computed: %s", e.message)
        return {"error": e.message, "ms": round((time.perf_counter() - t0) * 1000.0, 3)}
    if sup is None:
        return None
    return {**sup.to_dict(detail=True), "ms": round((time.perf_counter() - t0) * 1000.0, 3),
            "cpu_ms": round((time.thread_time() - c0) * 1000.0, 3)}
