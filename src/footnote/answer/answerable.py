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
- and it holds **what the question asks for** when the question says (:func:`asked_kind`): a number for how
  many/how much/what year, a colour for what colour, a name for who/whose/where — one the question does not
  already say.

When no chosen sentence answers, the extractive answer declines as ``answer_not_in_passages`` (a near miss),
naming where the closest passages come from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from footnote.answer.candidates import Cand, TermScorer
from footnote.answer.sentences import carries_answer_type, cross_script_names, name_skeleton, names_shared
from footnote.lru import LruCache
from footnote.models.protocols import Embedder
from footnote.settings.extractive import AnswerableSettings
from footnote.text import clean_text, fold, keywords

__all__ = ["AnswerCheck", "AskedKind", "Judged", "asked_kind", "carries_kind", "focus_words", "without"]


class AskedKind(Enum):
    """The kind of thing a question asks for (None: it does not say)."""

    NUMBER = "number"
    COLOUR = "colour"
    NAME = "name"


def _folded(words: str) -> frozenset[str]:
    return frozenset(fold(w) for w in words.split())


#: Question openings that ask for a number (a count, an amount, a year), by language.
_ASKS_NUMBER = re.compile(
    r"(?i)\b(?:how\s+(?:many|much|long|old|far|large|big|tall|high|heavy|wide|deep)|"
    r"what\s+(?:year|percentage|percent|number|amount|age|date|sum|price)|in\s+(?:what|which)\s+year|"
    r"сколько|в\s+как\w*\s+году|какого\s+(?:числа|года)|"
    r"wie\s+(?:viele?|lange|alt|hoch|schwer|weit|groß|breit|tief)|in\s+welchem\s+jahr|"
    r"quant[oa]s?|em\s+que\s+ano|qual\s+(?:o\s+)?(?:ano|número|valor)|"
    r"combien|en\s+quelle\s+année|cu[aá]nt[oa]s?|en\s+qu[eé]\s+año)\b"
)
_ASKS_COLOUR = re.compile(
    r"(?i)\b(?:what\s+colou?r|which\s+colou?r|какого\s+цвета|как\w*\s+цвет\w*|welche\s+farbe|was\s+für\s+eine\s+farbe|"
    r"(?:de\s+)?que\s+cor|qual\s+(?:[ée]\s+)?a\s+cor|quelle\s+couleur|de\s+qu[eé]\s+color|qu[eé]\s+color)\b"
)
_ASKS_NAME = re.compile(
    r"(?i)(?:\b(?:who|whom|whose|wer|wen|wem|wessen|quem|qui)\b|(?<![\w-])(?:кто|кого|кому|кем|чей|чья|чьё|чьи)(?![\w-])|"
    r"\b(?:what|which)\s+(?:was|is)\s+the\s+name|как\s+(?:звали|зовут|называ\w+)|wie\s+(?:hie(?:ß|ss)|hei(?:ß|ss)t)|"
    r"como\s+se\s+chama\w*|qual\s+(?:era\s+|é\s+)?o\s+nome)"
)

#: Words that say what kind of thing is asked ("the *name* of", "what *year*", "какого *цвета*"): the answer
#: carries the thing, not the word, so they are not part of the question's focus.
_KIND_WORDS = _folded("""
name names named called call year years date number numbers amount colour color colours colors kind type sort
percentage percent age price sum total much many long often old far oft часто
имя имени зовут звали называется называлась назывался называли год году года годы число числа цвет цвета
количество сколько какого какой какая какие
name namen hieß hiess heißt heisst jahr jahre jahres farbe anzahl zahl viel viele lange alt
nome nomes chama chamava chamado chamada ano anos data número números cor cores quantidade quantos quantas
quanto quanta
""")

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

#: Colour words by language (folded; a stem is enough: "красн" matches красный, красная…).
_COLOURS = tuple(_folded("""
red green blue white black yellow grey gray brown orange purple pink violet golden silver crimson scarlet
красн зелен зелён син голуб бел черн чёрн желт жёлт сер коричнев оранжев фиолетов розов золот серебр
rot grün blau weiß weiss schwarz gelb grau braun orange lila rosa golden silbern
vermelh verde azul branc pret amarel cinz marrom laranja roxo rosa dourad prateado
rouge vert bleu blanc noir jaune gris brun
rojo roja blanco blanca negro negra amarillo
"""))


def asked_kind(question: str) -> AskedKind | None:
    """What kind of thing ``question`` asks for: a number, a colour, a name — or None (it does not say)."""
    q = clean_text(question)
    if _ASKS_COLOUR.search(q):
        return AskedKind.COLOUR
    if _ASKS_NUMBER.search(q):
        return AskedKind.NUMBER
    if _ASKS_NAME.search(q):
        return AskedKind.NAME
    return None


def focus_words(question: str) -> list[str]:
    """The question's content words that an answering sentence must carry: its keywords less those that only
    say what kind of thing is asked (:data:`_KIND_WORDS`) and function words of further languages."""
    return [w for w in keywords(question) if fold(w) not in _KIND_WORDS and fold(w) not in _MORE_STOP]


def carries_kind(sentence: str, question: str, kind: AskedKind | None) -> bool:
    """Whether ``sentence`` holds a thing of ``kind`` that the question does not already say."""
    if kind is None:
        return True
    if kind is AskedKind.COLOUR:
        qwords = {fold(w) for w in keywords(question)}
        # a capitalised colour word past the sentence's first is a name ("the Black Skerry beacon"), not a colour
        words = [fold(w) for i, w in enumerate(re.findall(r"[^\W\d_]+", clean_text(sentence)))
                 if i == 0 or not w[:1].isupper()]
        return any(w.startswith(c) and w not in qwords for w in words for c in _COLOURS)
    if kind is AskedKind.NUMBER:
        return carries_answer_type(sentence, question, "number") or _number_word(sentence, question)
    return carries_answer_type(sentence, question, "name")


_NUMBER_STEMS = tuple(_folded("""
один одна одно два две три четыр пят шест сем восем девят десят двадцат тридцат сорок сто двест трист тысяч
миллион полтор половин
eins zwei drei vier fünf sechs sieben acht neun zehn zwölf zwanzig dreißig hundert tausend
dois duas três quatro cinco seis sete oito nove dez vinte trinta cem cento mil
"""))


def _number_word(sentence: str, question: str) -> bool:
    qwords = {fold(w) for w in keywords(question)}
    return any(fold(w).startswith(s) and fold(w) not in qwords for w in keywords(sentence) for s in _NUMBER_STEMS)


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

    def to_info(self) -> dict[str, object]:
        return {
            "answers": self.answers, "asks": self.asks.value if self.asks else None, "focus": list(self.focus),
            "missing": list(self.missing), "carries": self.carries, "coverage": round(self.coverage, 3),
            "position": self.position,
        }


def _name_in(word: str, sentence: str) -> bool:
    """A name of the question that the sentence writes in another script or spelling (Бронкос — Broncos,
    Клипперс — Clippers): the same consonant skeleton (:func:`~footnote.answer.sentences.name_skeleton`). The
    ablation misread these: a question without "Бронкос" could be *more* like an English sentence about the Broncos."""
    if not word[:1].isupper():
        return False
    sk = name_skeleton(word)
    return len(sk) >= 3 and names_shared({sk}, cross_script_names(sentence)) > 0


class AnswerCheck:
    """Judges a turn's chosen sentences (see the module docstring). Shared by concurrent turns."""

    def __init__(self, settings: AnswerableSettings, embedder: Embedder | None, scorer: TermScorer) -> None:
        self.settings = settings
        self.embedder = embedder
        self.scorer = scorer
        self._queries_cache: LruCache[str, np.ndarray] = LruCache(settings.query_cache)

    def drop_floor(self) -> float | None:
        """The embedder's fitted ``ablation_drop`` (None: the focus words are not judged, only the kind asked)."""
        return None if self.embedder is None else self.settings.ablation_drop.get(self.embedder.name)

    def judge(self, question: str, qlang: str, chosen: Sequence[Cand], subject: Callable[[str, str], bool],
              vecs: np.ndarray | None = None) -> Judged:
        """Whether one of ``chosen`` answers ``question`` (in ``qlang``). ``subject(word, lang)``: the word is the
        collection's own subject in this turn (most notes carry it), so no sentence has to repeat it. ``vecs``: the
        turn's sentence vectors (a candidate's row is ``Cand.row``)."""
        s = self.settings
        kind = asked_kind(question)
        floor = self.drop_floor()
        focus = tuple(focus_words(question)) if floor is not None and vecs is not None else ()
        if floor is not None and self.embedder is not None and len(focus) <= s.short_focus_words:
            floor = s.ablation_drop_short.get(self.embedder.name, floor)
        allowed = int(s.missing_share * len(focus))
        best: Judged | None = None
        note_terms: dict[str, set[str]] = {}  # a passage's terms, read once however many of its sentences are judged
        for i, c in enumerate(chosen[: s.sentences]):
            missing = tuple(w for w in focus if not self._lexical(w, c) and not subject(w, c.lang))
            if missing and floor is not None and vecs is not None:
                missing = self._by_ablation(question, missing, c, vecs, floor)
            if missing:  # a word the sentence's own passage carries elsewhere (its heading, a sentence before)
                f = c.note.fragment
                if f.id not in note_terms:  # the passage with its section heading (a letter's "Karpov to Penhallow")
                    section = getattr(f.locator, "section", None) or ""
                    note_terms[f.id] = set(self.scorer.terms(f"{section}\n{f.text}", c.lang))
                note = note_terms[f.id]
                missing = tuple(w for w in missing if not set(self.scorer.terms(w, c.lang)) <= note)
            carries = carries_kind(c.text, question, kind)
            cov = 1.0 - len(missing) / len(focus) if focus else 1.0
            judged = Judged(len(missing) <= allowed and carries, kind, focus, missing, carries, cov, i)
            if judged.answers:
                return judged
            if best is None or (cov, carries) > (best.coverage, best.carries):
                best = judged
        return best if best is not None else Judged(True, kind, focus, (), True, 1.0, -1)

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
        out: dict[str, np.ndarray] = {}
        todo = []
        for t in dict.fromkeys(texts):
            hit = self._queries_cache.get(t)
            if hit is None:
                todo.append(t)
            else:
                out[t] = hit
        if todo:
            for t, v in zip(todo, np.asarray(self.embedder.embed_queries(todo), dtype=np.float32), strict=True):
                self._queries_cache.put(t, v)
                out[t] = v
        return [out[t] for t in texts]


def without(question: str, word: str) -> str:
    """``question`` with ``word`` (every occurrence, as a whole word) taken out."""
    out = re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", " ", question)
    return " ".join(out.split())
