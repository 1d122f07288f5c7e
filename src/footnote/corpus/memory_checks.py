"""What a pinned note's body may say (issue 39 §4): it is shown to readers as the editors' answer, so it is
checked when it is imported or edited, not trusted when it is shown.

- ``[n]`` (and the other marker shapes models and people write, :func:`footnote.answer.citations.normalise_markers`)
  must point at one of the note's own sources: ``[1]`` is the first entry of its ``sources``;
- a file name or a source path (``secret-manual.pdf``, ``demo/letters/x.md``) must name a source of the store;
- an address (``HB 2.1``) must be one the corpus has, written in plain letters (not ``НВ 2.1`` in Cyrillic, not
  with a zero-width space inside);
- a link (Markdown ``[t](url)``, ``<url>``, a bare ``https://…``) must appear in a passage of the note's own
  sources.

The first problem is returned with the line of the body it is on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from footnote.answer.citations import normalise_markers
from footnote.answer.prose import (
    _LINK,
    _PATH,
    _URL_SCHEME,
    ADDRESS,
    FILENAME,
    _trim_url,
    skel,
    skeleton,
    stem_keys,
)
from footnote.records.memory import MemoryNote
from footnote.retrieve.memory import RefStore, resolve_refs

_MARKER = re.compile(r"\[\s*(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\s*\]")
_OTHER = re.compile(r"\[[^\[\]\n]{0,24}?\d[^\[\]\n]{0,24}?\](?!\()")


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def body_problem(store: RefStore, note: MemoryNote, aliases: Mapping[str, str]) -> tuple[int, str] | None:
    """(line of the body, what is wrong) for the first thing ``note``'s body says that the corpus does not
    back (see the module docstring), or None."""
    body = note.body
    n_sources = len(note.sources)
    # links first: their addresses hold file-shaped and path-shaped pieces of their own
    links = list(_LINK.finditer(body))
    if links:
        own = resolve_refs(store, note.sources, aliases)
        texts = [f.text.casefold() for f in store.get_fragments(sorted(own.fragment_ids))]
        for sid in sorted(own.source_ids):
            texts += [f.text.casefold() for f in store.fragments_of(sid)]
        for m in links:
            url = m.group("md_url") or m.group("auto") or _trim_url(m.group("bare"))
            key = _URL_SCHEME.sub("", url.casefold()).rstrip("/")
            if len(key) < 4 or not any(key in t for t in texts):
                return _line(body, m.start()), (f"the link {url!r} appears in no passage of the note's sources "
                                                "(a pinned note may link only to what its sources carry)")
    spans = [(m.start(), m.end()) for m in links]

    def in_link(at: int) -> bool:
        return any(a <= at < b for a, b in spans)

    marked = normalise_markers(body)
    for m in _MARKER.finditer(marked):
        if in_link(m.start()):
            continue
        for x in re.split(r"[,;]", m.group(1)):
            n = int(x)
            if not 1 <= n <= n_sources:
                return _line(marked, m.start()), (
                    f"[{n}] points at none of the note's sources (it names {n_sources}: "
                    + ", ".join(f"[{i}] {s}" for i, s in enumerate(note.sources, 1)) + ")")
    for m in _OTHER.finditer(marked):
        if not in_link(m.start()) and not _MARKER.fullmatch(m.group(0)):
            return _line(marked, m.start()), f"{m.group(0)!r} is not a citation of one of the note's sources ([1]…[{n_sources}])"
    cased, idx = skeleton(body, lower=False)
    ids = [s.id for s in store.list_sources()]
    names = {skel(s.original_name) for s in store.list_sources() if s.original_name.strip()}
    names |= {skel(i.rsplit("/", 1)[-1]) for i in ids}
    stems = {k for i in ids for k in stem_keys(i)} | {k for n in names for k in stem_keys(n)}
    for m in [*FILENAME.finditer(cased), *_PATH.finditer(cased)]:
        at = idx[m.start()]
        if in_link(at):
            continue
        raw = body[at:idx[m.end() - 1] + 1]
        token = skel(m.group(0)).replace("\\", "/")
        base = token.rsplit("/", 1)[-1]
        if "/" in token and not (FILENAME.fullmatch(base) or stem_keys(base) & stems):
            continue  # "and/or", "km/h": not a file
        if _disguised(raw):
            return _line(body, at), f"the file name {raw!r} is written with look-alike or invisible characters"
        known = base in names or ("/" in token and any(i.lower() == token or i.lower().endswith("/" + token) for i in ids))
        if not known:
            return _line(body, at), f"the file name {raw!r} is no source of the store"
    for m in ADDRESS.finditer(cased):
        at = idx[m.start()]
        if in_link(at):
            continue
        raw = body[at:idx[m.end() - 1] + 1]
        if _disguised(raw):
            return _line(body, at), f"the address {raw!r} is written with look-alike or invisible characters"
        if resolve_refs(store, [f"{m.group(1)} {m.group(2)}"], aliases).missing:
            return _line(body, at), f"the address {raw!r} is not in the corpus"
    return None


def _disguised(raw: str) -> bool:
    """Whether ``raw`` differs from its own skeleton (look-alike letters, invisible or decomposed characters)."""
    return skeleton(raw, lower=False)[0] != raw.replace("\u00a0", " ")


def file_line(path: Path, body: str, body_line: int) -> int | None:
    """The line of file ``path`` that is line ``body_line`` of a note's ``body`` (the body is the file's text
    after its front matter, stripped); None when the file cannot be read."""
    try:
        lines = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    first = body.split("\n", 1)[0].strip()
    closing = [i for i, ln in enumerate(lines) if ln.strip() == "---"]
    start = closing[1] + 1 if len(closing) >= 2 else 0
    for i in range(start, len(lines)):
        if lines[i].strip() and (not first or first[:40] in lines[i] or lines[i].strip()[:40] in first):
            return i + body_line
    return start + body_line
