"""A PDF page's text layer read with its fonts (PDFium's per-character font name, size and weight).

Two things the plain text layer gets wrong, fixed here:

- **Headings glued to the sentence after them.** A heading line ("1 Topologische Grundbegriffe",
  "1.1 Topologische Räume", "Definition 1") is a line of its own in the text layer, but nothing tells it
  from a line wrapped mid-sentence, so the sentence splitter joined it to the next sentence ("1
  Topologische Grundbegriffe 1.1 Topologische Räume Definition 1 Ein …"). A short line (at most
  ``corpus.pdf_heading_max_words`` words, not ending a sentence) set all in bold, or in letters
  ``corpus.pdf_heading_size_ratio`` times the page's body size, is a heading: it is set apart by blank
  lines, a paragraph of its own.
- **TeX's math extension font.** A PDF made by pdfTeX without a Unicode map stores the big operators and
  delimiters of ``cmex`` under ASCII codes: ⋃ reads as "[", ⋂ as "\\", ∑ as "P", a big brace as a control
  character. Characters of a ``CMEX`` font are mapped back to the symbols they draw — only in a document
  whose cmex text is unmapped (some character of it reads as a control character, a letter or a digit,
  which no mapped cmex glyph does), so a PDF that maps its cmex glyphs itself is left alone.
"""

from __future__ import annotations

import bisect
import ctypes
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pypdfium2.raw as pdfium_c

#: cmex10's code points → the symbols they draw ("" for the middle and extension pieces of a tall
#: delimiter, which add nothing to the text). Plain TeX's encoding (the font's own layout).
_CMEX: dict[int, str] = {}


def _cmex_table() -> dict[int, str]:
    table: dict[int, str] = {}
    delims = {  # big, Big, bigg, Bigg sizes of each delimiter
        "(": (0x00, 0x10, 0x12, 0x20), ")": (0x01, 0x11, 0x13, 0x21), "[": (0x02, 0x68, 0x14, 0x22),
        "]": (0x03, 0x69, 0x15, 0x23), "⌊": (0x04, 0x6A, 0x16, 0x24), "⌋": (0x05, 0x6B, 0x17, 0x25),
        "⌈": (0x06, 0x6C, 0x18, 0x26), "⌉": (0x07, 0x6D, 0x19, 0x27), "{": (0x08, 0x6E, 0x1A, 0x28),
        "}": (0x09, 0x6F, 0x1B, 0x29), "⟨": (0x0A, 0x44, 0x1C, 0x2A), "⟩": (0x0B, 0x45, 0x1D, 0x2B),
        "/": (0x0E, 0x2E, 0x1E, 0x2C), "\\": (0x0F, 0x2F, 0x1F, 0x2D),
    }
    for sym, codes in delims.items():
        for c in codes:
            table[c] = sym
    table.update({0x0C: "|", 0x0D: "‖", 0x70: "√", 0x71: "√", 0x72: "√", 0x73: "√", 0x74: "√"})
    # tall delimiters built of pieces: the opening one at its top, the closing one at its bottom
    table.update({0x30: "(", 0x41: ")", 0x32: "[", 0x35: "]", 0x38: "{", 0x3B: "}"})
    for c in (0x31, 0x40, 0x42, 0x43, 0x33, 0x34, 0x36, 0x37, 0x39, 0x3A, 0x3C, 0x3D, 0x3E, 0x3F,
              0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x7B, 0x7C, 0x7D, 0x7E, 0x7F, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67):
        table[c] = ""
    for k, sym in enumerate("⨆∮⨀⨁⨂"):  # text and display style side by side (0x46 ⨆, 0x47 ⨆ display)
        table[0x46 + 2 * k] = table[0x47 + 2 * k] = sym
    for k, sym in enumerate("∑∏∫⋃⋂⨄⋀⋁"):  # text style from 0x50 ("P" is ∑), display style from 0x58 ("[" is ⋃)
        table[0x50 + k] = table[0x58 + k] = sym
    table[0x60] = table[0x61] = "∐"
    return table


_CMEX.update(_cmex_table())
_CMEX_FONT = re.compile(r"(?:^|\+)cmex\d*$|^cmex", re.IGNORECASE)
_BOLD_FONT = re.compile(r"bold|black|heavy|demi|(?:bx|sx)\d", re.IGNORECASE)
_FORCE_BOLD = 1 << 18  # a PDF font descriptor's ForceBold flag
_LINE = re.compile(r"[^\r\n]+")
_SENTENCE_END = re.compile(r"[.,;:!?…][\"'»”’]*$")
_SAMPLE = 8  # letters of a short line whose fonts are read (evenly spread; a heading is set in one font)


@dataclass
class PageText:
    """One page's text layer: its lines, which of them are headings, and where a cmex glyph stands."""

    lines: list[str]
    #: heading lines → their letters' (median) size: a heading wrapped over two lines keeps one size
    headings: dict[int, float] = field(default_factory=dict)
    #: (line, offset in the line, cmex font name) of each character drawn in a TeX math-extension font
    math: list[tuple[int, int, str]] = field(default_factory=list)


class _Fonts:
    """Per-character font reads on one text page (PDFium's C API)."""

    def __init__(self, textpage: Any) -> None:
        self.raw = textpage.raw
        self.buf = ctypes.create_string_buffer(128)
        self.flags = ctypes.c_int()

    def name(self, i: int) -> str:
        n = pdfium_c.FPDFText_GetFontInfo(self.raw, i, self.buf, len(self.buf), ctypes.byref(self.flags))
        return self.buf.value.decode("latin-1", "replace") if n else ""

    def bold(self, i: int) -> bool:
        name = self.name(i)
        if _BOLD_FONT.search(name.split("+")[-1]) or self.flags.value & _FORCE_BOLD:
            return True
        return bool(pdfium_c.FPDFText_GetFontWeight(self.raw, i) >= 600)

    def size(self, i: int) -> float:
        return float(pdfium_c.FPDFText_GetFontSize(self.raw, i))


#: Characters that may be a cmex glyph read as ASCII: a control character, one of the symbols the big
#: operators are stored under ("[" ⋃, "\\" ⋂, "]" ⨄, "^" ⋀, "_" ⋁, "`" ∐), or a letter standing apart from
#: any word ("P" ∑, "S" ⋃ in text style). Only these have their font read (a cmex glyph is never part of a word).
_MATH_CANDIDATE = re.compile(r"[\x00-\x09\x0b\x0c\x0e-\x1f\[\\\]^_`]|(?<![^\W_])[A-Za-z](?![^\W_])")

#: On a page with cmex glyphs, also a word-initial capital that may be a text-style operator with its limits
#: run on ("Pn+1" is ∑ from n+1, "Sn∈N" ⋃ over n ∈ N).
_OPERATOR_WITH_LIMITS = re.compile(r"(?<![^\W_])[P-Z](?=[^\W_])")


def _sample(letters: list[int], k: int) -> list[int]:
    """At most ``k`` of ``letters``, evenly spread, the last one included."""
    if len(letters) <= k:
        return letters
    step = len(letters) / k
    return [letters[int(j * step)] for j in range(k - 1)] + letters[-1:]


def read_page(textpage: Any, heading_ratio: float, heading_words: int) -> PageText:
    """The page's lines with their headings and cmex glyphs marked."""
    text: str = textpage.get_text_range()
    count = textpage.count_chars()
    if len(text) != count:  # PDFium's text range leaves out a NUL glyph: read the characters one by one
        text = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, i)) for i in range(count))
    fonts = _Fonts(textpage)
    spans = [(m.start(), m.end()) for m in _LINE.finditer(text)]
    page = PageText([text[a:b] for a, b in spans])
    line_of = {a: n for n, (a, _) in enumerate(spans)}
    starts = [a for a, _ in spans]
    found: set[int] = set()
    for pattern in (_MATH_CANDIDATE, _OPERATOR_WITH_LIMITS):
        for m in pattern.finditer(text):
            i = m.start()
            if i not in found and _CMEX_FONT.search(name := fonts.name(i)):
                found.add(i)
                n = line_of.get(i)
                if n is None:
                    n = max(0, bisect.bisect_right(starts, i) - 1)
                page.math.append((n, i - spans[n][0], name.split("+")[-1].upper()))
        if not found:
            break  # no cmex glyph on the page: its capitals need no look
    page.math.sort()
    letters = [[i for i in range(a, b) if text[i].isalpha()] for a, b in spans]
    sizes = [round(fonts.size(i), 1) for ls in letters for i in _sample(ls, 3)]
    body = Counter(sizes).most_common(1)[0][0] if sizes else 0.0
    for n, line in enumerate(page.lines):
        words = line.split()
        if len(letters[n]) < 2 or not words or len(words) > heading_words or _SENTENCE_END.search(line.rstrip()):
            continue
        probe = _sample(letters[n], _SAMPLE)
        size = statistics.median(round(fonts.size(i), 1) for i in probe)
        if (body > 0 and size >= body * heading_ratio) or all(fonts.bold(i) for i in probe):
            page.headings[n] = size
    return page


def unmapped_math_fonts(pages: list[PageText]) -> set[str]:
    """The cmex fonts of a document that store their glyphs under ASCII codes (no Unicode map): some
    character of them reads as a control character, a letter or a digit."""
    out: set[str] = set()
    for page in pages:
        for n, at, font in page.math:
            ch = page.lines[n][at]
            if ord(ch) < 0x20 or ch.isalnum():
                out.add(font)
    return out


def page_text(page: PageText, math_fonts: set[str]) -> str:
    """The page's text: cmex glyphs of ``math_fonts`` as their symbols, each heading a paragraph of its own
    (a heading's lines of one size together)."""
    lines = list(page.lines)
    fixes: dict[int, list[tuple[int, str]]] = {}
    for n, at, font in page.math:
        if font in math_fonts:
            fixes.setdefault(n, []).append((at, _CMEX.get(ord(lines[n][at]), lines[n][at])))
    for n, subs in fixes.items():
        chars = list(lines[n])
        for at, sym in subs:
            chars[at] = sym
        lines[n] = "".join(chars)
    out: list[str] = []
    for n, line in enumerate(lines):
        size = page.headings.get(n)
        if size is None:
            out.append(line)
        elif page.headings.get(n - 1) == size and out and out[-1] == "":
            out[-1:] = [line, ""]  # the heading's second line ("2. The Lamp, the Lens and the" / "Clockwork")
        else:
            out.extend(["", line, ""])
    return "\n".join(out)
