"""Curated memory notes: the note-file loader (docs/memory.md); the records are ``footnote.records.memory``.

A curator writes one note per Markdown file with front matter::

    ---
    kind: pinned            # pinned | boost | memory
    id: fog-horn-rule       # optional: the file's stem otherwise
    title: The fog horn rule # optional: the id otherwise
    triggers: ["When do the keepers start the fog horn?", "fog horn rule"]
    sources: ["lectures/02-fog-and-tides.vtt", "HB 2.1"]
    author: Editorial board
    lang: en                 # optional: detected otherwise
    ---
    The keepers start the fog horn as soon as …

Lists are written as JSON arrays (``["a", "b"]``) or as one value (``fog horn rule``). A note's
``content_hash`` covers every field that shapes it, so importing an unchanged file writes nothing.
Whether the sources exist is checked against the store by the importer (``footnote.corpus.memory_import``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from footnote.corpus.loaders.frontmatter import split_front_matter
from footnote.errors import InputError
from footnote.records.memory import LANG_TAG_RE, NOTE_ID_RE, MemoryNote, NoteKind, note_hash
from footnote.text import clean_text

NOTE_SUFFIXES = (".md", ".markdown")
KNOWN_FIELDS = frozenset({"kind", "id", "title", "triggers", "sources", "author", "lang"})


def make_note(
    path: str | Path, *, note_id: str, kind: str, body: str, triggers: Sequence[str] = (), sources: Sequence[str] = (),
    author: str = "", title: str = "", lang: str | None = None, default_lang: str = "en", max_chars: int = 20_000,
) -> MemoryNote:
    """A checked note (InputError naming ``path`` and the problem otherwise). Sources are checked
    against the store later, by the importer."""
    fields = [("id", note_id), ("kind", kind), ("body", body), ("title", title), ("author", author),
              ("lang", lang or ""), *(("triggers", t) for t in triggers), *(("sources", s) for s in sources)]
    for name, value in fields:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:  # "\ud800" in a JSON body: no hash, no store can take it
            raise InputError(path, f"{name} is not valid text: a lone surrogate (U+{ord(value[e.start]):04X}) "
                             f"at character {e.start}") from None
    nid = note_id.strip()
    if not NOTE_ID_RE.match(nid):
        raise InputError(path, f"note id {nid!r} is not valid (letters, digits, '-', '_', '.'; at most 80)")
    try:
        k = NoteKind(kind.strip().lower())
    except ValueError:
        raise InputError(path, f"unknown kind {kind!r} (pinned, boost or memory)") from None
    text = clean_text(body).strip()
    if not text:
        raise InputError(path, "the note has no body")
    if len(text) > max_chars:
        raise InputError(path, f"the body is {len(text):,} characters long; the limit is {max_chars:,} "
                         "(memory.max_body_chars): a note is an answer or a topic, not a document")
    trig = tuple(dict.fromkeys(" ".join(clean_text(t).split()) for t in triggers if t and t.strip()))
    srcs = tuple(dict.fromkeys(s.strip() for s in sources if s and s.strip()))
    if k is NoteKind.PINNED and not srcs:
        raise InputError(path, "a pinned note must name the sources it rests on (sources: [...])")
    if k is NoteKind.PINNED and not trig:
        raise InputError(path, "a pinned note needs triggers: the questions it answers")
    from footnote.text import detect_lang

    lg = (lang or "").strip() or detect_lang(" ".join([*trig, text]), default_lang)
    if not LANG_TAG_RE.match(lg):
        raise InputError(path, f"lang {lg[:40]!r} is not a language tag (like en, ru, pt-BR)")
    auth, ttl = " ".join(author.split()), " ".join(title.split())
    return MemoryNote(id=nid, kind=k, body=text, triggers=trig, sources=srcs, author=auth, title=ttl, lang=lg,
                      content_hash=note_hash(k, text, trig, srcs, auth, ttl, lg), origin=str(path))


def _list(path: Path, key: str, raw: str | None) -> list[str]:
    if raw is None or not raw.strip():
        return []
    s = raw.strip()
    if s.startswith("["):
        try:
            got = json.loads(s)
        except json.JSONDecodeError as e:
            raise InputError(path, f"front matter {key}: not a valid list ({e.msg}); write [\"a\", \"b\"]") from None
        if not isinstance(got, list) or not all(isinstance(x, str) for x in got):
            raise InputError(path, f"front matter {key}: expected a list of strings")
        return got
    return [s]


def load_note(path: Path, text: str | None = None, *, default_lang: str = "en", max_chars: int = 20_000) -> MemoryNote:
    """The note in file ``path`` (or ``text`` as if read from it)."""
    if text is None:
        try:
            data = path.read_bytes()
        except OSError as e:
            raise InputError(path, f"cannot read: {e.strerror or e}") from None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise InputError(path, f"not UTF-8 text (byte {e.start})") from None
    text = text.replace("\r\n", "\n")
    fm = split_front_matter(path, text)
    if not fm.fields:
        raise InputError(path, "no front matter: a note starts with '---', kind: pinned|boost|memory, '---'")
    unknown = sorted(set(fm.fields) - KNOWN_FIELDS)
    if unknown:
        raise InputError(path, f"unknown front matter field(s): {', '.join(unknown)} (known: {', '.join(sorted(KNOWN_FIELDS))})")
    kind = fm.get("kind")
    if kind is None:
        raise InputError(path, "front matter has no kind (pinned, boost or memory)")
    stem = path.name.split(".")[0]
    return make_note(
        path, note_id=fm.get("id") or stem, kind=kind, body=fm.body, triggers=_list(path, "triggers", fm.get("triggers")),
        sources=_list(path, "sources", fm.get("sources")), author=fm.get("author") or "", title=fm.get("title") or "",
        lang=fm.get("lang"), default_lang=default_lang, max_chars=max_chars,
    )


def note_files(paths: Sequence[str | Path], refused: list[tuple[Path, str]] | None = None) -> Iterator[Path]:
    """Note files under ``paths`` (files as given; folders walked in name order for ``.md`` files,
    README skipped, symlinks leaving the folder not followed: added to ``refused`` with why). A missing
    path raises InputError."""
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            yield p
        elif p.is_dir():
            root = p.resolve()
            for f in sorted(p.rglob("*")):
                if not f.is_file() or f.suffix.lower() not in NOTE_SUFFIXES or f.stem.lower() == "readme":
                    continue
                try:
                    f.resolve().relative_to(root)
                except ValueError:  # a symlink out of the folder
                    if refused is not None:
                        refused.append((f, f"symlink to {f.resolve()}, outside {p}: not followed"))
                    continue
                yield f
        else:
            raise InputError(p, "no such file or folder")


def note_texts(note: MemoryNote, chunk_chars: int) -> list[str]:
    """What is embedded for a note: each trigger, then its body in chunks of about ``chunk_chars``
    (by paragraph, then sentence), so a question that echoes the body still finds the note."""
    out = list(note.triggers)
    if note.title and note.title not in out:
        out.append(note.title)
    buf = ""
    for para in re.split(r"\n\s*\n", note.body):
        p = " ".join(para.split())
        if not p:
            continue
        pieces = [p] if len(p) <= chunk_chars else re.split(r"(?<=[.!?…])\s+", p)
        for piece in pieces:
            if buf and len(buf) + 1 + len(piece) > chunk_chars:
                out.append(buf)
                buf = ""
            buf = f"{buf} {piece}".strip()
            while len(buf) > chunk_chars * 2:
                out.append(buf[:chunk_chars])
                buf = buf[chunk_chars:]
    if buf:
        out.append(buf)
    return list(dict.fromkeys(out))
