"""Language detection.

- :func:`detect_lang` — the cheap script test used on *questions* (Cyrillic → ``ru``, Latin → ``en``,
  else the default). Questions are short and the gate's thresholds are fitted per language pair, so
  they keep this rule.
- :func:`detect_text_lang` — used at *ingest* on a source's text: py3langid's naive Bayes model
  (shipped inside its wheel, loaded once per process, never downloaded) over ~140 languages. A
  guess below ``settings.corpus.lang_detect_min_confidence`` (IAST Sanskrit, a page of formulas)
  falls back to the script test, so an unsure guess never picks a foreign stemmer.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from typing import Any

log = logging.getLogger(__name__)

_CYR = re.compile(r"[\u0400-\u04FF]")
_LAT = re.compile(r"[A-Za-z\u00C0-\u024F\u1E00-\u1EFF]")


def detect_lang(text: str, default: str = "en") -> str:
    """'ru' when Cyrillic letters dominate, 'en' when Latin ones do, else ``default``."""
    cyr = len(_CYR.findall(text))
    lat = len(_LAT.findall(text))
    if cyr == 0 and lat == 0:
        return default
    return "ru" if cyr >= lat else "en"


_lock = threading.Lock()
_identifiers: dict[tuple[str, ...], Any] = {}


def _identifier(candidates: Sequence[str]) -> Any:
    """py3langid's identifier restricted to ``candidates`` (all its languages when empty), cached."""
    key = tuple(sorted(set(candidates)))
    with _lock:
        ident = _identifiers.get(key)
        if ident is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            if key:
                known = set(ident.nb_classes)
                usable = [c for c in key if c in known]
                if unknown := sorted(set(key) - known):
                    log.warning("language detection: unknown language codes ignored: %s", ", ".join(unknown))
                if usable:
                    ident.set_languages(usable)
            _identifiers[key] = ident
        return ident


def detect_text_lang(
    text: str,
    default: str = "en",
    *,
    min_confidence: float = 0.8,
    candidates: Sequence[str] = (),
    sample_chars: int = 10_000,
) -> str:
    """The language of a source's text: the detector's guess when at least ``min_confidence`` sure,
    else :func:`detect_lang`'s script rule."""
    sample = " ".join(text[:sample_chars].split())
    if not sample:
        return default
    lang, conf = _identifier(candidates).classify(sample)
    if conf >= min_confidence and lang not in ("und", "zxx"):
        return str(lang)
    return detect_lang(sample, default)


def lang_guess(text: str, candidates: Sequence[str] = ()) -> tuple[str, float]:
    """(language, confidence) as the detector sees it — for diagnostics and tests."""
    lang, conf = _identifier(candidates).classify(" ".join(text.split()))
    return str(lang), float(conf)


# Scripts that name their language outright (a question in Greek letters is Greek); Arabic, Devanagari,
# Han and Cyrillic scripts serve several languages, so the detector chooses among the script's own languages.
_SCRIPTS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("ru", _CYR, ("ru", "uk", "bg", "sr", "mk", "be", "kk")),
    ("el", re.compile(r"[\u0370-\u03FF\u1F00-\u1FFF]"), ()),
    ("ar", re.compile(r"[\u0600-\u06FF\u0750-\u077F\uFB50-\uFDFF\uFE70-\uFEFF]"), ("ar", "fa", "ur", "ps")),
    ("he", re.compile(r"[\u0590-\u05FF]"), ()),
    ("hi", re.compile(r"[\u0900-\u097F]"), ("hi", "mr", "ne")),
    ("bn", re.compile(r"[\u0980-\u09FF]"), ()),
    ("ta", re.compile(r"[\u0B80-\u0BFF]"), ()),
    ("te", re.compile(r"[\u0C00-\u0C7F]"), ()),
    ("th", re.compile(r"[\u0E00-\u0E7F]"), ()),
    ("ka", re.compile(r"[\u10A0-\u10FF]"), ()),
    ("hy", re.compile(r"[\u0530-\u058F]"), ()),
    ("ko", re.compile(r"[\uAC00-\uD7AF\u1100-\u11FF]"), ()),
    ("ja", re.compile(r"[\u3040-\u30FF]"), ()),
    ("zh", re.compile(r"[\u4E00-\u9FFF\u3400-\u4DBF]"), ()),
)
#: Languages written in Latin letters that the detector may name for a question.
LATIN_LANGS: tuple[str, ...] = (
    "en", "de", "fr", "es", "it", "pt", "nl", "ro", "vi", "tr", "pl", "cs", "sv", "da", "no", "fi", "hu", "id",
    "ms", "hr", "sk", "sl", "lt", "lv", "et", "ca", "sq", "tl", "sw", "az", "uz",
)


#: A question's first word that only some Latin-script languages use to ask (German *wie*, French *pourquoi*,
#: Portuguese *quem*): when the detector's first guess is one of them, that guess is taken however sure it is —
#: a name in a short question ("Wer war Ada Penhallow?") leaves the detector unsure (0.64), never wrong about
#: the language the asking word is in. A word several of them use names them all ("que": French, Spanish,
#: Portuguese); words they share with English ("was", "die", "as", "a") are not cues.
_ASKING: dict[str, frozenset[str]] = {
    w: frozenset(langs.split()) for langs, words in (
        ("de nl", "wie"),
        ("de", "wer wen wem wessen wann warum wieso weshalb wo woher wohin welche welcher welches welchen womit "
               "wofür worüber wovon woraus wodurch wozu inwiefern"),
        ("nl", "wat wanneer waarom waar welke hoeveel hoe"),
        ("fr", "qui quel quelle quels quelles pourquoi comment où combien quand qu'est-ce lequel laquelle"),
        ("es", "quién quiénes cuál cuáles cuándo dónde cómo cuánto cuánta cuántos cuántas qué"),
        ("pt", "quem qual quais onde quantos quantas porque o os em após"),
        ("es pt", "para por como"),
        ("pt ca", "com"),
        ("fr es pt", "que"),
        ("it pt", "quando quanto quanta"),
        ("it", "chi quale quali dove perché perchè cosa come"),
        ("ro", "cine care când unde cum câte câți ce"),
    ) for w in words.split()
}


def _asking_langs(text: str) -> frozenset[str]:
    """The languages the question's first word asks in (:data:`_ASKING`); empty when it is no cue."""
    first = text.strip().split(maxsplit=1)[:1]
    word = first[0].strip("¿¡\"'«»„“(").lower().replace("’", "'") if first else ""
    return _ASKING.get(word, frozenset())


def question_lang(text: str, default: str = "en", *, min_confidence: float = 0.9, cue_min_words: int = 4,
                  cue_min_confidence: float = 0.3) -> str:
    """The language of a *question* (short text): the dominant script first — a script used by one language
    names it (Greek, Thai, Hangul, kana …), a shared one (Cyrillic, Arabic, Devanagari, Latin) is narrowed by the
    detector among that script's languages — and the script's first language (``ru`` for Cyrillic, ``default``
    for Latin) unless the detector is at least ``min_confidence`` sure of another. Short questions are hard to
    tell apart, so the bar for leaving the script's first language is high: a wrong guess only moves the question
    to a pair whose thresholds are derived, not fitted (docs/retrieval.md, "Any language pair"). A Latin-script
    question of at least ``cue_min_words`` words whose first word asks in the detector's guess (:data:`_ASKING`)
    takes that guess from ``cue_min_confidence`` up: a name leaves a real sentence unsure, while a two-word
    search ("como lake?", "chi square?") is no sentence to judge by."""
    counts = [(len(rx.findall(text)), first, cands) for first, rx, cands in _SCRIPTS]
    latin = len(_LAT.findall(text))
    best = max(counts, key=lambda c: c[0])
    if best[0] == 0 and latin == 0:
        return default
    if best[0] > latin:
        _, first, cands = best
        if first == "ja" or (first == "zh" and counts[-2][0]):  # kana anywhere: Japanese
            return "ja"
        if not cands:
            return first
        lang, conf = _identifier(cands).classify(" ".join(text.split()))
        return str(lang) if conf >= min_confidence else first
    lang, conf = _identifier(LATIN_LANGS).classify(" ".join(text.split()))
    if (lang != default and conf >= cue_min_confidence and len(text.split()) >= cue_min_words
            and lang in _asking_langs(text)):  # "Wer war Ada Penhallow?": de at 0.64; never "como lake?"
        return str(lang)
    return str(lang) if conf >= min_confidence and lang != default else default
