"""Licence and notice files met in a walked folder (``LICENSE-MIT``, ``COPYING.txt``, ``cc-licence.txt``, a
``LibriVox.txt`` that says the recordings are in the public domain): they describe the corpus, they are not
corpus. Skipped by default (``corpus.skip_notices``) with a word in the ingest report; named explicitly on
the command line, such a file is ingested."""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

from footnote.settings import CorpusSettings

#: Suffixes whose text is read to tell a short notice (a name alone tells the others).
_TEXT = {".txt", ".md", ".markdown"}


def notice_reason(path: Path, cfg: CorpusSettings) -> str | None:
    """Why ``path`` is a licence or notice file (``corpus.notice_globs`` by name; a text file of at most
    ``corpus.notice_max_chars`` characters naming one of ``corpus.notice_markers``), or None."""
    if not cfg.skip_notices:
        return None
    name = path.name.lower()
    if any(fnmatch(name, g.lower()) for g in cfg.notice_globs):
        return "a licence or notice file by its name"
    if path.suffix.lower() not in _TEXT:
        return None
    try:
        if path.stat().st_size > 4 * cfg.notice_max_chars:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if len(text) > cfg.notice_max_chars:
        return None
    low = " ".join(text.lower().split())
    hit = next((m for m in cfg.notice_markers if m.lower() in low), None)
    return f"a short licence or notice text (it says {hit!r})" if hit else None


SKIP_HINT = "settings.corpus.skip_notices = false, or name the file, ingests it"
