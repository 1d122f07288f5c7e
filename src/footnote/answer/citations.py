"""Citations resolved on the server, and the prose check.

- ``[n]`` → note → fragment → locator. A number that is not a note of this turn (a forged ``[99]``, or
  a note the compacted context did not have) is removed from the displayed answer and counted
  (``dropped_citations``).
- **Prose check**: a source title, an address label (``HB 2.4``, ``BG 2.13``) or a file name
  (``handbook.pdf``) named in the answer that no note of this turn carries — as its source's title,
  its locator, its file name, or in its own text — is removed from the displayed answer and counted
  (``removed_mentions``). Known titles and file names come from the store (cached); any address- or
  file-name-shaped token is checked too, known or not.
- Streaming: :class:`StreamCleaner` buffers model text to sentence boundaries (or
  ``stream_flush_chars``) and cleans each piece before it is shown, so neither reaches the reader.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from footnote.answer.types import Citation, Note
from footnote.corpus.records import AddressLocator, FileLocator
from footnote.store.protocol import Store
from footnote.store.text import fold

CITE = re.compile(r"\[\s*(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\s*\]")
ADDRESS = re.compile(r"(?<![\w.])([A-ZА-ЯЁ]{1,5})\.?\s?(\d{1,4}(?:[.:]\d{1,4})+)(?![\w]|\.\d)")
FILE_EXTS = "pdf|docx?|txt|md|markdown|epub|html?|srt|vtt|json|jsonl|mp3|ogg|opus|m4a|wav|csv|rtf|odt|xhtml"
FILENAME = re.compile(rf"(?<![\w/\\.-])[\w][\w\-.]{{0,120}}?\.(?:{FILE_EXTS})(?![\w])", re.IGNORECASE)
_LEAD_IN = re.compile(
    r"(?:\b(?:according to|as (?:stated|described|noted|explained|written) in|see|per|in|from|"
    r"согласно|как сказано в|как указано в|см\.|в|из|по)\s+(?:the\s+)?[\"'«“]?\s*)$",
    re.IGNORECASE,
)


def norm_label(text: str) -> str:
    """An address label compared loosely: folded, no spaces or dots between book and number."""
    return re.sub(r"[\s.]+", "", fold(text)).replace(":", ".")


def _addr_key(book: str, loc: str) -> str:
    return fold(book) + "|" + loc.replace(":", ".")


@dataclass(frozen=True)
class KnownNames:
    """Every source title and file name in the store (lower-cased/folded), for the prose check."""

    titles: tuple[str, ...]
    files: frozenset[str]
    kinds: tuple[str, ...]
    title_re: re.Pattern[str] | None
    corpus_lang: str | None = None
    file_re: re.Pattern[str] | None = None  # known file names that the generic pattern misses (spaces)


class MentionIndex:
    """Known titles and file names of the store, cached for ``ttl_s`` seconds."""

    def __init__(self, store: Store, *, min_title_chars: int, ttl_s: float) -> None:
        self.store = store
        self.min_title_chars = min_title_chars
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._cached: tuple[float, KnownNames] | None = None

    def get(self) -> KnownNames:
        now = time.monotonic()
        with self._lock:
            if self._cached is not None and now - self._cached[0] < self.ttl_s:
                return self._cached[1]
        sources = self.store.list_sources()
        titles = sorted(
            {fold(s.title).strip() for s in sources if len(s.title.strip()) >= self.min_title_chars},
            key=lambda t: (-len(t), t),
        )
        files = frozenset(fold(s.original_name).strip() for s in sources if s.original_name.strip())
        kinds = tuple(sorted({s.kind for s in sources}))
        pattern = None
        if titles:
            pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(t) for t in titles) + r")(?!\w)")
        langs: dict[str, int] = {}
        for s in sources:
            langs[s.lang] = langs.get(s.lang, 0) + 1
        corpus_lang = max(sorted(langs), key=lambda lg: langs[lg]) if langs else None
        spaced = sorted((f for f in files if " " in f), key=lambda f: (-len(f), f))
        file_re = re.compile("(?<!\\w)(?:" + "|".join(re.escape(f) for f in spaced) + ")(?!\\w)") if spaced else None
        names = KnownNames(tuple(titles), files, kinds, pattern, corpus_lang, file_re)
        with self._lock:
            self._cached = (now, names)
        return names


@dataclass
class Carried:
    """What the notes of this turn carry: titles, file names, address keys and their texts."""

    titles: set[str]
    files: set[str]
    addresses: set[str]
    texts: list[str]

    @classmethod
    def of(cls, notes: Iterable[Note], titles_by_source: dict[str, str], files_by_source: dict[str, str]) -> Carried:
        c = cls(set(), set(), set(), [])
        for note in notes:
            f = note.fragment
            if f.source_id in titles_by_source:
                c.titles.add(fold(titles_by_source[f.source_id]).strip())
            if f.source_id in files_by_source:
                c.files.add(fold(files_by_source[f.source_id]).strip())
            loc = f.locator
            if isinstance(loc, AddressLocator):
                c.addresses.add(_addr_key(loc.book, loc.loc))
                c.addresses.add(norm_label(loc.label))
            elif isinstance(loc, FileLocator):
                c.files.add(fold(loc.file.rsplit("/", 1)[-1]).strip())
            c.texts.append(fold(f.text))
        return c

    def in_text(self, mention: str) -> bool:
        m = fold(mention).strip()
        return any(m in t for t in self.texts)


class ProseChecker:
    """Removes titles, address labels and file names that no note of this turn carries."""

    def __init__(self, known: KnownNames, carried: Carried) -> None:
        self.known = known
        self.carried = carried

    def check(self, text: str) -> tuple[str, int, list[str]]:
        """(cleaned text, mentions removed, the removed mentions)."""
        spans: list[tuple[int, int, str]] = []
        for m in FILENAME.finditer(text):
            name = m.group(0).strip()
            if not self._file_ok(name):
                spans.append((m.start(), m.end(), name))
        for m in ADDRESS.finditer(text):
            key = _addr_key(m.group(1), m.group(2))
            if key in self.carried.addresses or norm_label(m.group(0)) in self.carried.addresses:
                continue
            if self.carried.in_text(m.group(0)):
                continue
            spans.append((m.start(), m.end(), m.group(0)))
        folded = fold(text)
        same_offsets = len(folded) == len(text)  # folding kept offsets: match on the folded text
        if self.known.file_re is not None and same_offsets:
            for m in self.known.file_re.finditer(folded):
                if not self._file_ok(m.group(0)):
                    spans.append((m.start(), m.end(), text[m.start() : m.end()]))
        if self.known.title_re is not None and same_offsets:
            for m in self.known.title_re.finditer(folded):
                t = m.group(0)
                if t in self.carried.titles or self.carried.in_text(t):
                    continue
                spans.append((m.start(), m.end(), text[m.start() : m.end()]))
        if not spans:
            return text, 0, []
        spans = _merge(spans)
        out = text
        for start, end, _ in sorted(spans, reverse=True):
            head = out[:start]
            lead = _LEAD_IN.search(head)
            if lead is not None:
                head = head[: lead.start()]
            tail = out[end:]
            tail = re.sub(r"^\s*[\"'»”]", "", tail)
            out = head + tail
        return _tidy(out), len(spans), [s[2] for s in spans]

    def _file_ok(self, name: str) -> bool:
        n = fold(name).strip()
        base = n.rsplit("/", 1)[-1]
        if base in self.carried.files or n in self.carried.files:
            return True
        return self.carried.in_text(name)


def _merge(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    spans.sort()
    out: list[tuple[int, int, str]] = []
    for s in spans:
        if out and s[0] < out[-1][1]:
            prev = out[-1]
            out[-1] = (prev[0], max(prev[1], s[1]), prev[2])
        else:
            out.append(s)
    return out


def _tidy(text: str) -> str:
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()) :]
    body = text.strip()
    body = re.sub(r"\(\s*[,;]?\s*\)|«\s*»|\"\s*\"|“\s*”", "", body)
    body = re.sub(r"[ \t]{2,}", " ", body)
    body = re.sub(r"\s+([,.;:!?])", r"\1", body)
    body = re.sub(r"^[,;:]\s*", "", body)
    body = re.sub(r"([,;:])\s*([.!?])", r"\2", body)
    if body[:1].islower() and not lead:
        body = body[:1].upper() + body[1:]
    return lead + body + trail if body else (" " if lead or trail else "")


def clean_citations(text: str, valid: set[int]) -> tuple[str, list[int], int]:
    """Drop numbers that are not notes of this turn. Returns (text, numbers used in order, dropped)."""
    used: list[int] = []
    dropped = 0

    def repl(m: re.Match[str]) -> str:
        nonlocal dropped
        nums = [int(x) for x in re.split(r"[,;]", m.group(1))]
        keep = [n for n in nums if n in valid]
        dropped += len(nums) - len(keep)
        for n in keep:
            if n not in used:
                used.append(n)
        return "".join(f"[{n}]" for n in keep)

    out = CITE.sub(repl, text)
    if dropped:
        out = re.sub(r"[ \t]+([.,;:!?])", r"\1", out)
        out = re.sub(r"[ \t]{2,}", " ", out)
    return out, used, dropped


_BOUNDARY = re.compile(r"[.!?…](?:\s*\[[\d\s,;]+\])*[\"'»”)]*\s+|\n")


class StreamCleaner:
    """Buffers streamed text to sentence boundaries and cleans each piece (citations, prose check)."""

    def __init__(self, valid: set[int], prose: ProseChecker, flush_chars: int) -> None:
        self.valid = valid
        self.prose = prose
        self.flush_chars = flush_chars
        self.buffer = ""
        self.used: list[int] = []
        self.dropped = 0
        self.removed = 0
        self.removed_mentions: list[str] = []
        self.shown: list[str] = []

    def feed(self, delta: str) -> list[str]:
        self.buffer += delta
        cut = 0
        for m in _BOUNDARY.finditer(self.buffer):
            cut = m.end()
        if cut == 0 and len(self.buffer) >= self.flush_chars:
            cut = self._safe_cut()
        if cut <= 0:
            return []
        piece, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return self._clean(piece)

    def finish(self) -> list[str]:
        piece, self.buffer = self.buffer, ""
        return self._clean(piece) if piece else []

    def _safe_cut(self) -> int:
        buf = self.buffer
        open_at = buf.rfind("[")
        limit = open_at if open_at > buf.rfind("]") else len(buf)
        space = buf.rfind(" ", 0, limit)
        return space + 1 if space > 0 else 0

    def _clean(self, piece: str) -> list[str]:
        text, used, dropped = clean_citations(piece, self.valid)
        self.dropped += dropped
        for n in used:
            if n not in self.used:
                self.used.append(n)
        text, removed, names = self.prose.check(text)
        self.removed += removed
        self.removed_mentions += names
        if not text:
            return []
        self.shown.append(text)
        return [text]

    @property
    def text(self) -> str:
        return "".join(self.shown).strip()


def resolve(used: Sequence[int], notes_by_n: dict[int, Note], titles: dict[str, str]) -> tuple[Citation, ...]:
    """Citations for the numbers the displayed answer uses, in number order."""
    return tuple(
        Citation(n, notes_by_n[n].fragment, titles.get(notes_by_n[n].fragment.source_id, ""))
        for n in sorted(set(used))
        if n in notes_by_n
    )
