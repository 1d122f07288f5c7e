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
