"""Does a sentence of the passages answer this question? The answer-level check (docs/answering.md,
"The answer-level check").

The gate decides *off-topic* (nothing close). A *near miss* — the topic is in the corpus, the fact is not
("What was Ada Penhallow's yearly salary?" over letters that name her but never her pay) — passes the gate and
the extractive evidence floors, because true sentences about the topic share the question's names and score
well. What tells it apart is what the answer would say. A chosen sentence *answers* when

- it carries the question's **focus**: every content word of the question (less the words that only say what
  kind of thing is asked — "name", "year", "colour" — and the collection's own subject, a word most of the
  turn's notes carry) is in the sentence, in the heading or sentence it continues, elsewhere in its passage or its section heading,
  or — across languages and paraphrase — carried by meaning: the question without the word is less like the
  sentence (``answer.extractive.answerable.ablation_drop``, fitted per embedder — ``ablation_drop_short`` for a
  question of at most ``short_focus_words`` focus words, where every word is its point; an embedder without
  one is judged by the next rule only); ``missing_share`` may let a long question leave some uncovered;
- and it holds **what the question asks for** when the question says (:mod:`footnote.answer.asked`): a number
  for how many, money for how much … cost or a salary, an age, a weight, a length or distance, a year, a colour,
  a name — one the question does not already say;
- a number the question writes in digits ("the allowance in *1895*") is in it or in its passage
  (``numbers_in_focus``: digits are never carried by meaning);
- and, when it is in the question's own language, it is at least ``min_similarity`` like the question (fitted per
  embedder): a sentence that shares the question's words but is this unlike it speaks of the topic, not the fact.
- and, when the question asks for a number or a colour, the few words around the sentence's number or colour are at
  least ``kind_window_min`` like the question (``kind_window_min_other_language`` for a sentence in another
  language): the number is the number *of* what is asked, not of the tide beside it.

When no chosen sentence answers, the extractive answer declines as ``answer_not_in_passages`` (a near miss),
naming where the closest passages come from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from footnote.answer.asked import KIND_WORDS, AskedKind, asked_kind, carries_kind, kind_windows
from footnote.answer.candidates import Cand, TermScorer
from footnote.answer.numbers import short_years, written_numbers
from footnote.answer.sentences import (
    ANAPHOR,
    CAPITALISED,
    close_spelling,
    cross_script_names,
    inflected_spelling,
    name_skeleton,
    name_spelling,
    names_shared,
)
from footnote.answer.types import Note
from footnote.lru import LruCache
from footnote.models.protocols import Embedder
from footnote.settings.extractive import AnswerableSettings, NamesSettings
from footnote.text import fold, is_stop, keywords, numbers

__all__ = ["AnswerCheck", "AskedKind", "Judged", "asked_kind", "carries_kind", "focus_words", "subject_of", "without"]


def _folded(words: str) -> frozenset[str]:
    return frozenset(fold(w) for w in words.split())


#: Function words of languages the shared stop-word lists do not cover (German, Portuguese, French, Spanish):
#: without them "wie", "der", "em", "que" would count as the question's focus.
_MORE_STOP = _folded("""
der die das den dem des ein eine einer eines einem einen und oder ist sind war waren wird werden wurde wurden
hat haben hatte hatten wie wo wer wen wem wessen was welche welcher welches welchen wann warum im in am an auf
aus bei mit von vom zu zum zur für über unter nach vor durch gegen ohne um es sie er man nicht auch noch
o a os as um uma uns umas de do da dos das em no na nos nas por pelo pela pelos pelas para com sem que qual quais
quem onde quando como porque é foi foram era eram ser são está estava estão e ou se seu sua seus suas este esta
isso isto esse essa aquele aquela ao aos à às mais muito
le la les un une des du de et ou est sont était qui que quoi où quand comment pourquoi quel quelle quels quelles
dans sur pour par avec sans ce cette ces son sa ses il elle ils elles en au aux
el los las unos unas del y es son fue fueron era qué quién dónde cuándo cómo cuál por para con sin este esta
""")


def focus_words(question: str) -> list[str]:
    """The question's content words that an answering sentence must carry: its keywords less those that only
    say what kind of thing is asked (:data:`~footnote.answer.asked.KIND_WORDS`) and function words of further languages."""
    return [w for w in keywords(question) if fold(w) not in KIND_WORDS and fold(w) not in _MORE_STOP]


@dataclass(frozen=True)
class Judged:
    """The check's finding for a turn: whether a chosen sentence answers, and what it looked at."""

    answers: bool
    asks: AskedKind | None
    focus: tuple[str, ...]  # the question's focus words
    missing: tuple[str, ...]  # focus words the best-covered chosen sentence lacks
    carries: bool  # that sentence holds what the question asks for
    coverage: float  # share of the focus words it carries
    position: int  # which chosen sentence (0-based) answered, or was judged best; -1: none judged
    close: bool = True  # that sentence is as like the question as min_similarity asks (or is not held to it)
    near: float | None = None  # the best cosine of the question to a stretch around that sentence's number or colour
    bound: bool = True  # that stretch is as like the question as kind_window_min asks (or it is not held to it)

    def to_info(self) -> dict[str, object]:
        return {
            "answers": self.answers, "asks": self.asks.value if self.asks else None, "focus": list(self.focus),
            "missing": list(self.missing), "carries": self.carries, "coverage": round(self.coverage, 3),
            "position": self.position, "close": self.close,
            **({} if self.near is None else {"near": round(self.near, 4), "bound": self.bound}),
        }


def _name_in(word: str, sentence: str) -> bool:
    """A name of the question that the sentence writes in another script or spelling (Бронкос — Broncos,
    Клипперс — Clippers): the same consonant skeleton (:func:`~footnote.answer.sentences.name_skeleton`). The
    ablation misread these: a question without "Бронкос" could be *more* like an English sentence about the Broncos."""
    if not word[:1].isupper():
        return False
    sk = name_skeleton(word)
    return len(sk) >= 3 and names_shared({sk}, cross_script_names(sentence)) > 0


def _window(c: Cand, n: int) -> str:
    """The sentences within ``n`` before and after ``c`` in its passage (as far as the chain of candidates runs)."""
    out: list[str] = []
    b, a = c.before, c.after
    for _ in range(n):
        if b is not None:
            out.append(b.text)
            b = b.before
        if a is not None:
            out.append(a.text)
            a = a.after
    return "\n".join(out)


def _spelled(word: str, spellings: set[str]) -> bool:
    """Whether a capitalised ``word`` is one of a passage's names (``spellings``: their
    :func:`~footnote.answer.sentences.name_spelling`) in another case: in either script, the two share their first
    five letters or more and differ after them by at most two letters each («Карпов» — «Карпова», «Карповым»;
    "Karpov's" — «Карпова»; "Marrowick" — «Марровике»). Never a letter changed: «Карлов» is not «Карпов», nor
    "Harrowick" "Marrowick" (the skeleton of :func:`_name_in` would take «Морвик» for "Marrowick")."""
    if not word[:1].isupper():
        return False
    sp = name_spelling(word)
    return any(inflected_spelling(sp, x) for x in spellings)


class AnswerCheck:
    """Judges a turn's chosen sentences (see the module docstring). Shared by concurrent turns."""

    def __init__(self, settings: AnswerableSettings, embedder: Embedder | None, scorer: TermScorer) -> None:
        self.settings = settings
        self.embedder = embedder
        self.scorer = scorer
        self._queries_cache: LruCache[str, np.ndarray] = LruCache(settings.query_cache)
        self._windows_cache: LruCache[str, np.ndarray] = LruCache(settings.query_cache)

    def drop_floor(self) -> float | None:
        """The embedder's fitted ``ablation_drop`` (None: the focus words are not judged, only the kind asked)."""
        return None if self.embedder is None else self.settings.ablation_drop.get(self.embedder.name)

    def judge(self, question: str, qlang: str, chosen: Sequence[Cand], subject: Callable[[str, str], bool],
              vecs: np.ndarray | None = None, passages: Sequence[Note] = (),
              titles: Mapping[str, str] | None = None) -> Judged:
        """Whether one of ``chosen`` answers ``question`` (in ``qlang``). ``subject(word, lang)``: the word is the
        collection's own subject in this turn (most notes carry it), so no sentence has to repeat it. ``vecs``: the
        turn's sentence vectors (a candidate's row is ``Cand.row``). ``passages``: every note of the turn, where the
        question's own numbers are looked for besides the judged sentences' passages (a report's year in its summary,
        the allowance in a later section), and in their sources' ``titles`` (by source id)."""
        s = self.settings
        kind = asked_kind(question)
        floor = self.drop_floor()
        focus = tuple(focus_words(question)) if floor is not None and vecs is not None else ()
        if floor is not None and self.embedder is not None and len(focus) <= s.short_focus_words:
            floor = s.ablation_drop_short.get(self.embedder.name, floor)
        allowed = int(s.missing_share * len(focus))
        name = self.embedder.name if self.embedder is not None else ""
        min_sim = s.min_similarity.get(name)
        # cross-lingual cosines run lower: a sentence in another language has its own floor
        min_near = {True: s.kind_window_min.get(name), False: s.kind_window_min_other_language.get(name)}
        # the collection's own subject among the question's names: out of the question and the stretches compared
        names = [w for w in focus_words(question) if w[:1].isupper() and subject(w, qlang)] if s.kind_window_mask_subject else []
        qnums = question_numbers(question) if s.numbers_in_focus else ()  # "… in 1895?": the year is the point
        focus += qnums
        best: Judged | None = None
        note_terms: dict[str, set[str]] = {}  # a passage's terms, read once however many of its sentences are judged
        note_names: dict[str, set[str]] = {}  # … and the spellings of its capitalised words
        # the question's own numbers that none of the judged passages writes (digits: never carried by meaning); a
        # year the question gives as context may sit in a passage beside the answering one, so all are read
        written: set[str] = set()
        for c in chosen[: s.sentences]:
            written |= c.nums
        for f in {n.fragment.id: n.fragment for n in [*(c.note for c in chosen[: s.sentences]), *passages]}.values():
            title = (titles or {}).get(f.source_id, "")
            written |= written_numbers(f"{title}\n{getattr(f.locator, 'section', None) or ''}\n{f.text}")
        lost = tuple(n for n in qnums if n not in written)
        numbers_ok = len(lost) <= len(qnums) // 3  # the same for every sentence of the turn
        for i, c in enumerate(chosen[: s.sentences]):
            f = c.note.fragment
            missing = tuple(w for w in focus if w not in qnums and not self._lexical(w, c) and not subject(w, c.lang))
            if missing and floor is not None and vecs is not None:
                missing = self._by_ablation(question, missing, c, vecs, floor)
            if missing:  # a word the sentence's own passage carries elsewhere (its heading, a sentence before)
                key = f.id if s.passage_window is None else f"{f.id}#{c.position}"
                if key not in note_terms:  # the passage with its section heading (a letter's "Karpov to
                    # Penhallow"); its names as spelled, inflected as a reader inflects them («Карпов» — «Ильи
                    # Карпова»: a stemmer reads the two as different words). Not its source's title: a letter's title
                    # names its addressee too («Что Пенхеллоу писала про лёд…?» is no question about Karpov's letter)
                    section = getattr(f.locator, "section", None) or ""
                    whole = f"{section}\n" + (f.text if s.passage_window is None else _window(c, s.passage_window))
                    note_terms[key] = set(self.scorer.terms(whole, c.lang))
                    note_names[key] = {name_spelling(w) for w in CAPITALISED.findall(whole) if not is_stop(w)}
                note, spelled = note_terms[key], note_names[key]
                missing = tuple(w for w in missing if not set(self.scorer.terms(w, c.lang)) <= note
                                and not _spelled(w, spelled))
            carries = carries_kind(c.text, question, kind)
            # a same-language sentence this unlike the question is about the topic, not the fact (cross-lingual
            # cosines run lower, so a sentence in another language is not held to it)
            close = min_sim is None or c.sim is None or c.lang != qlang or c.sim >= min_sim
            ok = len(missing) <= allowed and numbers_ok and carries and close
            floor_near = min_near[c.lang == qlang]
            near = self._near(question, c.text, kind, names) if ok and floor_near is not None else None
            bound = near is None or floor_near is None or near >= floor_near
            ok = ok and bound
            missing += lost
            cov = 1.0 - len(missing) / len(focus) if focus else 1.0
            judged = Judged(ok, kind, focus, missing, carries, cov, i, close, near, bound)
            if judged.answers:
                return judged
            if best is None or (cov, carries, close, bound) > (best.coverage, best.carries, best.close, best.bound):
                best = judged
        return best if best is not None else Judged(True, kind, focus, (), True, 1.0, -1)

    def padding(self, question: str, qlang: str, chosen: Sequence[Cand], judged: Judged,
                subject: Callable[[str, str], bool], vecs: np.ndarray | None = None) -> list[Cand]:
        """``chosen`` less its padding, in its order: once a sentence answers (``judged``), a chosen sentence in
        the question's language that writes none of its focus words — less the collection's subject, which every
        passage names — verbatim or by meaning, nor the kind of thing asked, says nothing of this question ("This
        is the first rule every keeper of the Marrowick Light learns" for "How tall is the Marrowick Light?"). The
        sentences next to the answering one in its passage stay, and so does the sentence before any kept one
        that opens with "It…", "This…" (its antecedent); a sentence in another language stays (its words cannot
        be compared). Only when the check judged the focus words (an embedder with a fitted ``ablation_drop``):
        without them the "answering" sentence is any sentence of the right kind, and words alone miss a
        paraphrase. Nothing is trimmed when every focus word is the subject — unless the question asks for a kind
        of thing (``trim_padding_by_kind``): then a same-language sentence that holds none pads the answer, whatever
        words it shares (the knots lecture's opening for «Какой высоты башня маяка Марровик?»)."""
        p = judged.position
        floor = self.drop_floor()
        if not judged.answers or not 0 <= p < len(chosen) or floor is None or vecs is None or not judged.focus:
            return list(chosen)
        kind = judged.asks
        answer = chosen[p]
        keep = {id(answer), id(answer.before), id(answer.after)}
        by_kind = kind is not None and self.settings.trim_padding_by_kind
        focus = focus_words(question)
        for c in chosen:
            if c.lang != qlang or (kind is not None and carries_kind(c.text, question, kind)):
                keep.add(id(c))
                continue
            if by_kind:
                continue  # the kind is the answer: a sentence without one only pads it
            telling = tuple(w for w in focus if not subject(w, c.lang))
            if (not telling or any(self._lexical(w, c) for w in telling)
                    or len(self._by_ablation(question, telling, c, vecs, floor)) < len(telling)):
                keep.add(id(c))
        grew = True
        while grew:  # a kept "It…" keeps the sentence it reads on from, and that one its own
            grew = False
            for c in chosen:
                if (id(c) in keep and c.before is not None and id(c.before) not in keep
                        and any(x is c.before for x in chosen) and ANAPHOR.match(c.text)):
                    keep.add(id(c.before))
                    grew = True
        return [c for c in chosen if id(c) in keep]

    def _near(self, question: str, sentence: str, kind: AskedKind | None, names: Sequence[str] = ()) -> float | None:
        """The best cosine of ``question`` to a stretch of ``sentence`` around a thing of the kind asked
        (:func:`~footnote.answer.asked.kind_windows`; None: no such kind, or no embedder). An answer's number stands
        among the words it is the number of. ``names``: the collection's own subject among the question's words
        ("Marrowick"), taken out of the question and the stretches (in any case or script) before they are compared —
        every passage names it, so it makes "the range of the tide at Marrowick is 5.2 metres" look like "How many
        men make up the Marrowick lifeboat crew?" (0.46; without it 0.09)."""
        if self.embedder is None:
            return None
        windows = kind_windows(sentence, question, kind, self.settings.kind_window_words)[: self.settings.kind_window_max]
        if not windows:
            return None
        if names:
            spellings = [name_spelling(n) for n in names]
            for n in names:
                question = without(question, n)
            windows = [" ".join(t for t in w.split() if not (t[:1].isupper() and any(
                close_spelling(name_spelling(t.strip(_PUNCT)), sp) for sp in spellings))) for w in windows]
        qv = self._queries([question])[0]
        return max(float(qv @ v) for v in self._passages(windows))

    def _lexical(self, word: str, c: Cand) -> bool:
        stems = set(self.scorer.terms(word, c.lang))
        return (bool(stems) and stems <= (c.terms | c.context)) or _name_in(word, c.text)

    def _by_ablation(self, question: str, missing: tuple[str, ...], c: Cand, vecs: np.ndarray,
                     floor: float) -> tuple[str, ...]:
        """The words of ``missing`` whose removal from the question does not lower its cosine to the sentence by
        ``floor``: a sentence that carries a word's meaning, in any language or wording, is less like the
        question without that word; one that lacks it is as like it, or more."""
        if c.row < 0 or c.sim is None:
            return missing
        judged, beyond = missing[: self.settings.max_ablated_words], missing[self.settings.max_ablated_words:]
        qv = self._queries([without(question, w) for w in judged])
        sv = vecs[c.row]
        return tuple(w for w, v in zip(judged, qv, strict=True) if c.sim - float(v @ sv) < floor) + beyond

    def _queries(self, texts: list[str]) -> list[np.ndarray]:
        """Query vectors of ``texts`` through a bounded cache shared by turns."""
        assert self.embedder is not None
        return _cached(texts, self._queries_cache, self.embedder.embed_queries)

    def _passages(self, texts: list[str]) -> list[np.ndarray]:
        """Passage vectors of ``texts`` (the stretches around a number) through a bounded cache shared by turns."""
        assert self.embedder is not None
        return _cached(texts, self._windows_cache, self.embedder.embed_passages)


def _cached(texts: list[str], cache: LruCache[str, np.ndarray],
            embed: Callable[[Sequence[str]], np.ndarray]) -> list[np.ndarray]:
    out: dict[str, np.ndarray] = {}
    todo = []
    for t in dict.fromkeys(texts):
        hit = cache.get(t)
        if hit is None:
            todo.append(t)
        else:
            out[t] = hit
    if todo:
        for t, v in zip(todo, np.asarray(embed(todo), dtype=np.float32), strict=True):
            cache.put(t, v)
            out[t] = v
    return [out[t] for t in texts]

def subject_of(by_note: Mapping[int, set[str]], cands: Sequence[Cand], scorer: TermScorer,
               names: NamesSettings) -> Callable[[str, str], bool]:
    """``subject(word, lang)``: whether a word is the collection's own subject in this turn — at least
    ``names.common_share`` of the turn's notes (once there are ``names.common_min_notes``) carry it, so no sentence
    need repeat it. ``by_note``: the candidates' terms by note; ``cands``: the turn's sentences.

    A name is also the subject when the notes of *each* script carry it at that share, those of the other script
    spelled as they write it («Марровик» where the English notes write "Marrowick" and the Russian ones
    «Марровик»: :func:`~footnote.answer.sentences.close_spelling`). Each script on its own: a name only the Russian
    letters write («Сторожевом») is their subject, not the collection's, though the question naming it brought
    those letters to half the turn's notes."""
    enough = len(by_note) >= names.common_min_notes
    scripts: dict[int, bool] = {}  # note → written in Cyrillic
    spelled: dict[int, set[tuple[bool, str]]] = {}  # note → its capitalised words (script, spelling)

    def read() -> None:
        letters: dict[int, list[int]] = {}
        for c in cands:
            n = letters.setdefault(c.note.n, [0, 0])
            n[0] += len(_CYRILLIC.findall(c.text))
            n[1] += len(_LETTER.findall(c.text))
            spelled.setdefault(c.note.n, set()).update(
                (bool(_CYRILLIC.search(w)), name_spelling(w)) for w in CAPITALISED.findall(c.text))
        scripts.update({n: 2 * cyr > total for n, (cyr, total) in letters.items()})

    def subject(word: str, lang: str) -> bool:
        stems = set(scorer.terms(word, lang))
        if not enough or not stems:
            return False
        if sum(stems <= terms for terms in by_note.values()) >= names.common_share * len(by_note):
            return True
        if not word[:1].isupper():
            return False
        if not scripts:
            read()
        cyr, spelling = bool(_CYRILLIC.search(word)), name_spelling(word)
        groups: dict[bool, list[bool]] = {}
        for n, terms in by_note.items():
            script = scripts.get(n, cyr)
            carries = stems <= terms if script == cyr else any(
                s != cyr and close_spelling(spelling, sp) for s, sp in spelled.get(n, ()))
            groups.setdefault(script, []).append(carries)
        return any(s != cyr for s in groups) and all(sum(g) >= names.common_share * len(g) for g in groups.values())
    return subject


_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_PUNCT = "«»„“”‚‘’\"'()[]{}.,;:!?—–-"
_LETTER = re.compile(r"[^\W\d_]")


#: A number that is part of a name ("Super Bowl 50", "Apollo 11", "AS-278", "LC-34"): the name is the focus,
#: and a passage may write it otherwise ("Super Bowl L", "the fiftieth Super Bowl").
_NAMED_NUMBER = re.compile(r"(?:\b([^\W\d_][\w.]*)\s+|\w-)(\d+)\b")
#: Capitalised words before a number that do not make it a name: months ("May 1891", "Mai 1891").
_MONTHS = re.compile(r"(?i)^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|янв|фев|мар|апр|ма[йя]|июн|июл|авг|сен|окт|"
                     r"ноя|дек|mär|mai|okt|dez|fev|abr|ago|set|out|dez)")


def _names(word: str) -> bool:
    """Whether a number after ``word`` is part of a name: a capitalised word that is not a function word or a month
    ("Bowl 50", not "In 1932" or "May 1891"), or any word of a script without capitals ("سوبر بول 50": there the
    name cannot be told from "in the year 2015", so the number is left to the words)."""
    if word.lower() == word.upper():
        return True
    return word[:1].isupper() and not (is_stop(word) or _MONTHS.match(word))


def question_numbers(question: str) -> tuple[str, ...]:
    """The numbers ``question`` writes in digits that are its own point (a year, a count, an amount), not part of
    a name; an answering sentence or its passage must write them (``answerable.numbers_in_focus``). Of three or
    more, a third may be missing ("from 2000 to 2005 against 1995 to 2000")."""
    named = {m.group(2) for m in _NAMED_NUMBER.finditer(question) if m.group(1) is None or _names(m.group(1))}
    short = short_years(question)
    return tuple(sorted(short.get(n, n) for n in numbers(question) if n not in named))


def without(question: str, word: str) -> str:
    """``question`` with ``word`` (every occurrence, as a whole word) taken out."""
    out = re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", " ", question)
    return " ".join(out.split())
