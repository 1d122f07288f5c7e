"""Example questions for the empty chat, made from the corpus's own passages — and checked to be answerable.

Nothing is templated from titles. Deterministically (the same store gives the same examples):

- a book of verses gives an address: "What does HB 2.3 say?" (the middle verse of the book), which the
  address lane answers exactly;
- any other passage gives its most distinctive phrase: in each sentence, the run of two or three
  content words (no stop word, number or one-letter word inside) whose words are rarest across the
  scanned passages (summed inverse document frequency); the best phrase of the source becomes
  "What does the collection say about <phrase>?" ("Что говорится о «<phrase>»?" for Russian).

Each candidate is then asked as a reader would ask it; only a question that gets a corpus answer is
offered (without a model: the extractive answer made from its search; with one — to call no model
here — a search the gate finds sufficient or good enough). Kinds take turns, so the
examples spread over the collection (a lecture, a verse, a letter, …), in the passages' own languages.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from footnote.errors import FootnoteError
from footnote.records.fragments import AddressLocator, Fragment, Source
from footnote.retrieve.corpus_view import TurnCorpus
from footnote.retrieve.types import SearchResult, Verdict
from footnote.text import fold, is_stop, split_sentences

log = logging.getLogger(__name__)

_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*", re.UNICODE)
_ASK = {
    "en": ("What does the collection say about {phrase}?", "What does {address} say?"),
    "ru": ("Что говорится о «{phrase}»?", "О чём говорит {address}?"),
}


@dataclass(frozen=True)
class Example:
    question: str
    lang: str
    source_id: str
    fragment_id: str
    kind: str
    how: str  # "address" | "phrase"

    def to_dict(self) -> dict[str, str]:
        return {"question": self.question, "lang": self.lang, "source_id": self.source_id,
                "fragment_id": self.fragment_id, "kind": self.kind, "how": self.how}


_TOKEN = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*|\d+|[^\w\s]", re.UNICODE)


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


#: Words a topic phrase never holds besides stop words: spelled-out numbers and relative words.
_NOT_TOPIC = frozenset(fold(w) for w in ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "fifteen", "twenty", "thirty", "forty", "fifty", "sixty", "hundred", "thousand", "first", "second", "third", "half", "quarter", "once", "twice", "every", "each", "один", "одна", "два", "две", "три", "четыре", "пять", "шесть", "семь", "восемь", "девять", "десять", "двадцать", "тридцать", "сорок", "пятьдесят", "сто", "тысяча", "первый", "второй", "третий", "половина", "каждый", "каждые", "раз", "которым", "которыми", "которых", "который", "которая", "которое", "которые", "которого", "которой", "котором", "которую"])


def _content(word: str) -> bool:
    return len(word) > 2 and not is_stop(word) and fold(word) not in _NOT_TOPIC


def _runs(sentence: str) -> Iterator[tuple[list[str], bool]]:
    """Runs of 2–3 adjacent content words (punctuation and numbers break a run), each with whether it
    starts the sentence."""
    toks = _TOKEN.findall(sentence)
    for size in (2, 3):
        for i in range(len(toks) - size + 1):
            run = toks[i : i + size]
            if all(_WORD.fullmatch(w) and _content(w) for w in run):
                yield run, i == 0


def _key(run: Sequence[str]) -> str:
    return " ".join(fold(w) for w in run)


def best_phrase(fragments: Sequence[Fragment], df: Counter[str], runs_df: Counter[str],
                n_docs: int, lower_seen: set[str] | frozenset[str] = frozenset(),
                taken: set[str] | frozenset[str] = frozenset()) -> tuple[str, Fragment] | None:
    """The source's topic: a 2–3 content-word run of its passages that the collection comes back to —
    found in the most sources (at least two: a recurring name or term, not a one-off turn of phrase),
    then with the rarest words (mean inverse document frequency over the scanned passages); the first
    one wins a tie. A sentence's first
    word keeps its capital when the collection never writes it in lower case (a name: "Ada Penhallow");
    phrases in ``taken`` (another source's example) are passed over."""
    best: tuple[float, str, Fragment] | None = None
    for f in fragments:
        for sentence in split_sentences(f.text):
            for run, first in _runs(sentence):
                key = _key(run)
                if runs_df[key] < 2 or any(key in k or k in key for k in taken):
                    continue
                # a topic the collection comes back to (in more sources), then the rarer words
                idf = sum(math.log((1 + n_docs) / (1 + df[fold(w)])) for w in run) / len(run)
                score = runs_df[key] + idf / (1 + math.log(1 + n_docs))
                if best is None or score > best[0] + 1e-9:
                    # names keep their capitals (a capital inside a sentence); other words are lower-cased
                    words = [w if (w.isupper() or (w[0].isupper() and not (first and j == 0 and w.lower() in lower_seen)))
                             else w.lower() for j, w in enumerate(run)]
                    best = (score, " ".join(words), f)
    return None if best is None else (best[1], best[2])


def _phrase_question(phrase: str, lang: str) -> str:
    if lang == "en" and phrase.split()[-1].islower():
        phrase = "the " + phrase  # a common noun at its head: "the tide gauge" (a name stays bare)
    return _ASK[lang][0].format(phrase=phrase)


def _candidates(sources: Sequence[Source], frags: dict[str, list[Fragment]], df: Counter[str],
                runs_df: Counter[str], n_docs: int, lower_seen: set[str]) -> Iterator[tuple[Source, list[Example]]]:
    taken: set[str] = set()
    for src in sources:
        fs = frags.get(src.id) or []
        if not fs:
            continue
        lang = src.lang if src.lang in _ASK else "en"
        out: list[Example] = []
        addressed = [f for f in fs if isinstance(f.locator, AddressLocator) and f.kind != "commentary"]
        if addressed:
            f = addressed[len(addressed) // 2]
            loc = f.locator
            assert isinstance(loc, AddressLocator)
            label = loc.label or f"{loc.book} {loc.loc}"
            out.append(Example(_ASK[lang][1].format(address=label), lang, src.id, f.id, f.kind, "address"))
        found = best_phrase([f for f in fs if f not in addressed] or fs, df, runs_df, n_docs, lower_seen, taken)
        if found:
            phrase, f = found
            taken.add(" ".join(fold(w) for w in phrase.split()))
            out.append(Example(_phrase_question(phrase, lang), lang, src.id, f.id, f.kind, "phrase"))
        yield src, out


def example_questions(reads: TurnCorpus, search: Callable[[str], SearchResult],
                      answers: Callable[[str, SearchResult], bool] | None, *, n: int, scan_sources: int,
                      max_searches: int, scan_fragments: int = 200) -> list[Example]:
    """Up to ``n`` answerable example questions drawn from the first ``scan_fragments`` passages of the
    first ``scan_sources`` sources (by id).
    ``answers(question, result)``: whether the answer made from that search is a corpus answer (the
    extractive one, when no model is configured); None (a model would be called): the gate must find
    the search sufficient or good enough."""
    sources = reads.listing()[:scan_sources]  # (by id)
    frags = {s.id: sorted(reads.fragments_of(s.id), key=lambda f: f.ordinal)[:scan_fragments] for s in sources}
    df: Counter[str] = Counter()
    runs_df: Counter[str] = Counter()
    lower_seen: set[str] = set()
    n_docs = 0
    for fs in frags.values():
        in_source: set[str] = set()
        for f in fs:
            n_docs += 1
            words = _words(f.text)
            df.update({fold(w) for w in words})
            lower_seen.update(w for w in words if w.islower())
            in_source.update(_key(run) for s in split_sentences(f.text) for run, _ in _runs(s))
        runs_df.update(in_source)  # sources that hold each run
    by_kind: dict[str, list[Example]] = {}
    for src, examples in _candidates(sources, frags, df, runs_df, n_docs, lower_seen):
        by_kind.setdefault(src.kind, []).extend(examples)
    # kinds take turns (the kind with most candidates first, then by name): a few examples spread wide
    queues = [by_kind[k] for k in sorted(by_kind, key=lambda k: (-len(by_kind[k]), k))]
    picked: list[Example] = []
    searches = 0
    while len(picked) < n and any(queues) and searches < max_searches:
        for q in queues:
            if not q or len(picked) >= n or searches >= max_searches:
                continue
            ex = q.pop(0)
            searches += 1
            if _answerable(ex, search, answers):
                picked.append(ex)
    return picked


def _answerable(ex: Example, search: Callable[[str], SearchResult],
                answers: Callable[[str, SearchResult], bool] | None) -> bool:
    try:
        result = search(ex.question)
        if result.verdict.abstains:
            return False
        if answers is None:
            return result.verdict in (Verdict.SUFFICIENT, Verdict.GOOD_ENOUGH)
        return answers(ex.question, result)
    except FootnoteError as e:
        log.warning("example %r: checking it failed (%s)", ex.question, e.message)
        return False
