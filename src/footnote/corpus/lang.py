"""Cheap language detection for the languages Footnote serves (Russian, English; Latin-script default).

Good enough to pick a stemmer and the interface language; not a general detector.
"""

from __future__ import annotations

import re

_CYR = re.compile(r"[\u0400-\u04FF]")
_LAT = re.compile(r"[A-Za-z\u00C0-\u024F\u1E00-\u1EFF]")


def detect_lang(text: str, default: str = "en") -> str:
    """'ru' when Cyrillic letters dominate, 'en' when Latin ones do, else ``default``."""
    cyr = len(_CYR.findall(text))
    lat = len(_LAT.findall(text))
    if cyr == 0 and lat == 0:
        return default
    return "ru" if cyr >= lat else "en"
