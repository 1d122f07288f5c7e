"""Chunkers: documents → fragments. Two deliberately different strategies (sizes in ``settings.chunk``).

- Transcripts: consecutive cues are packed into windows of about ``transcript_window_ms`` (45 s);
  the next window starts at the first cue beginning within ``transcript_overlap_ms`` of the previous
  window's end (a small overlap, always moving forward); a window never exceeds
  ``transcript_max_chars`` (8000). Each window keeps the exact ``start_ms`` of its first cue and
  ``end_ms`` of its last.
- Library text: each block (a page, a verse, a commentary, a section) is chunked on its own — never
  across blocks — by packing paragraphs up to ``text_target_chars`` (900); a paragraph longer than that
  is split into sentences (the one sentence rule of :mod:`footnote.text`) and packed; a sentence longer than ``text_max_chars`` is split on words.

Fragment ids are ``f"{source_id}#{ordinal}"`` (0-based, in document order).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from footnote.records.fragments import (
    Block,
    Cue,
    Document,
    FileLocator,
    Fragment,
    Locator,
    TranscriptLocator,
    sha256_text,
)
from footnote.settings import ChunkSettings, Settings
from footnote.text import sentence_breaks

_PARA = re.compile(r"\n\s*\n")


def split_sentences(paragraph: str) -> list[str]:
    """The paragraph cut into sentences by the one sentence rule (:func:`footnote.text.sentence_breaks`:
    no cut after ``Dr.``, ``U.S.``, ``e.g.`` or before a lower-case word; a line starting a list item is a
    cut, a hard-wrapped line is not), the whitespace between them dropped, the text itself untouched."""
    out: list[str] = []
    pos = 0
    for end, nxt in sentence_breaks(paragraph, lines=False):
        out.append(paragraph[pos:end])
        pos = nxt
    out.append(paragraph[pos:])
    return out


def _split_long(text: str, limit: int) -> list[str]:
    """Split on whitespace into pieces of at most ``limit`` chars (a single huge word is cut).

    Linear in ``len(text)``: a huge word is cut by index, never by re-slicing its remainder (a 50 MB
    word without spaces used to be copied once per piece — quadratic)."""
    limit = max(1, limit)
    out: list[str] = []
    cur: list[str] = []
    size = 0
    for word in text.split():
        n = len(word)
        if n > limit:
            if cur:
                out.append(" ".join(cur))
                cur, size = [], 0
            full = n - n % limit
            out.extend(word[i : i + limit] for i in range(0, full, limit))
            if full == n:
                continue
            word, n = word[full:], n - full
        if cur and size + 1 + n > limit:
            out.append(" ".join(cur))
            cur, size = [], 0
        cur.append(word)
        size += n + (1 if size else 0)
    if cur:
        out.append(" ".join(cur))
    return out


def _sentences(paragraph: str, max_chars: int) -> list[str]:
    parts: list[str] = []
    for s in split_sentences(paragraph):
        s = s.strip() if s else ""
        if not s:
            continue
        parts.extend([s] if len(s) <= max_chars else _split_long(s, max_chars))
    return parts


def pack_text(text: str, cfg: ChunkSettings, *, paragraphs: bool = True) -> list[str]:
    """Pack paragraphs (then sentences, then words) into chunks of about ``text_target_chars``. Without
    ``paragraphs`` the text is one paragraph: a PDF page, whose blank lines only set its headings apart
    for the sentence splitter (``corpus/loaders/pdf_text.py``), is packed by its sentences as it always was."""
    target, cap = cfg.text_target_chars, max(cfg.text_max_chars, cfg.text_target_chars)
    chunks: list[str] = []
    cur: list[str] = []
    size = 0
    sep = "\n\n"

    def flush() -> None:
        nonlocal cur, size
        if cur:
            chunks.append(sep.join(cur))
        cur, size = [], 0

    for para in _PARA.split(text) if paragraphs else [text]:
        para = para.strip()
        if not para:
            continue
        if len(para) <= target:
            if cur and size + len(sep) + len(para) > target:
                flush()
            cur.append(para)
            size += len(para) + (len(sep) if size else 0)
            continue
        # a long paragraph: pack its sentences into their own chunks
        flush()
        run: list[str] = []
        run_size = 0
        for s in _sentences(para, cap):
            if run and run_size + 1 + len(s) > target:
                chunks.append(" ".join(run))
                run, run_size = [], 0
            run.append(s)
            run_size += len(s) + (1 if run_size else 0)
        if run:
            chunks.append(" ".join(run))
    flush()
    return chunks


def _windows(cues: Sequence[Cue], cfg: ChunkSettings) -> list[tuple[int, int]]:
    """Index ranges [i, j) of cues making the windows."""
    out: list[tuple[int, int]] = []
    n = len(cues)
    i = 0
    while i < n:
        j = i + 1
        chars = len(cues[i].text)
        while j < n:
            nxt = cues[j]
            if nxt.end_ms - cues[i].start_ms > cfg.transcript_window_ms:
                break
            if chars + 1 + len(nxt.text) > cfg.transcript_max_chars:
                break
            chars += 1 + len(nxt.text)
            j += 1
        out.append((i, j))
        if j >= n:
            break
        overlap_from = cues[j - 1].end_ms - cfg.transcript_overlap_ms
        k = j
        while k - 1 > i and cues[k - 1].start_ms >= overlap_from:
            k -= 1
        i = k if k > i else j
    return out


def chunk_transcript(cues: Sequence[Cue], cfg: ChunkSettings) -> list[tuple[str, int, int]]:
    """(text, start_ms, end_ms) per window."""
    out: list[tuple[str, int, int]] = []
    for i, j in _windows(cues, cfg):
        text = " ".join(c.text for c in cues[i:j])
        start, end = cues[i].start_ms, cues[j - 1].end_ms
        if len(text) <= cfg.transcript_max_chars:
            out.append((text, start, end))
        else:  # one cue alone is longer than the cap: same span, several pieces
            out.extend((piece, start, end) for piece in _split_long(text, cfg.transcript_max_chars))
    return out


def _block_locator(block: Block, file: str) -> Locator:
    if block.address is not None:
        return block.address
    return FileLocator(file=file, page=block.page, section=block.section, para=block.para)


def _piece_paras(block: Block, pieces: Sequence[str]) -> list[int | None]:
    """The number of the paragraph each packed piece starts in (``block.para`` numbers the block's first):
    a piece opens with the start of one of the block's paragraphs or of a sentence inside one, found by
    its first words, searched forward from the previous piece's paragraph."""
    if block.para is None:
        return [None] * len(pieces)
    paras = [" ".join(p.split()) for p in _PARA.split(block.text) if p.strip()]
    out: list[int | None] = []
    at = 0
    for piece in pieces:
        # the piece's first paragraph (packing joins whole paragraphs with a blank line), its first 60 characters:
        # never across a paragraph break, which would match no paragraph (a poem's short lines, a table's rows)
        first = next((p for p in _PARA.split(piece) if p.strip()), piece)
        head = " ".join(first.split())[:60]
        found = next((i for i in range(at, len(paras)) if paras[i].startswith(head) or head in paras[i]), None)
        if found is None:  # never expected: the piece came from these paragraphs; keep the last place
            found = at
        at = found
        out.append(block.para + found)
    return out


def chunk_document(doc: Document, settings: Settings) -> list[Fragment]:
    """Fragments of one document: cue windows for a track, packed text per block otherwise."""
    src = doc.source
    cfg = settings.chunk
    frags: list[Fragment] = []

    def add(text: str, kind: str, lang: str, locator: Locator) -> None:
        n = len(frags)
        frags.append(Fragment(id=f"{src.id}#{n}", source_id=src.id, ordinal=n, kind=kind, lang=lang,
                              text=text, locator=locator, content_hash=sha256_text(text)))

    if doc.cues:
        for text, start, end in chunk_transcript(doc.cues, cfg):
            add(text, src.kind, src.lang, TranscriptLocator(src.id, start, end))
    for block in doc.blocks:
        loc = _block_locator(block, src.id)
        pieces = pack_text(block.text, cfg, paragraphs=src.media_type != "application/pdf")
        sections = _piece_sections(block, pieces) if block.section_marks else [block.section] * len(pieces)
        paras = _piece_paras(block, pieces)
        for text, section, para in zip(pieces, sections, paras, strict=True):
            if isinstance(loc, FileLocator) and (section != loc.section or para != loc.para):
                add(text, block.kind, block.lang, FileLocator(file=loc.file, page=loc.page, section=section, para=para))
            else:
                add(text, block.kind, block.lang, loc)
    return frags


def _heading(title: str) -> re.Pattern[str]:
    """A section title as a heading: it ends a line and starts one — or follows a sentence's end, where
    packing joined the lines (it may wrap; any case and spacing)."""
    words = [re.escape(w) for w in title.split()]
    return re.compile(r"(?m)(?:^|(?<=[.!?…:])[ \t]+)" + r"\s+".join(words) + r"[ \t]*$", re.IGNORECASE)


def _piece_sections(block: Block, pieces: Sequence[str]) -> list[str | None]:
    """The section of each packed piece of a block whose ``section_marks`` start inside it: the one whose
    heading opens the piece (a chapter heading names the chapter, which holds the parts after it); else
    the section that holds most of the piece's text — the one in force where the piece starts (carried
    from the pieces before; ``block.section`` at the block's start) up to the first heading found in it,
    then each heading's section up to the next. A heading is a title on lines of its own (a title's words inside a
    sentence are not its heading); one that never appears names nothing."""
    current = block.section
    patterns = [(title, _heading(title)) for title in block.section_marks if title.split()]
    out: list[str | None] = []
    for piece in pieces:
        found = sorted((m.start(), title) for title, pat in patterns if (m := pat.search(piece)))
        spans: dict[str | None, int] = {}
        cuts = [(0, current), *found, (len(piece), None)]
        for (at, title), (nxt, _) in itertools.pairwise(cuts):
            spans[title] = spans.get(title, 0) + max(0, nxt - at)
        if found and not piece[: found[0][0]].strip():
            out.append(found[0][1])  # the piece opens with a heading: that section (a chapter holds its parts)
        else:
            out.append(max(spans, key=lambda k: spans[k]) if found else current)  # the first wins a tie
        if found:
            current = found[-1][1]  # in force for the pieces after this one
    return out
