"""HTTP Range (RFC 9110 §14) for serving stored originals: one byte range, 206 / 416."""

from __future__ import annotations

import re
from dataclasses import dataclass

_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)


_MAX_DIGITS = 18  # 10^18 bytes: beyond any stored original


class RangeNotSatisfiable(Exception):
    """The requested range lies outside the representation (answered with 416)."""


@dataclass(frozen=True)
class ByteRange:
    start: int
    end: int  # inclusive

    @property
    def length(self) -> int:
        return self.end - self.start + 1

    def content_range(self, size: int) -> str:
        return f"bytes {self.start}-{self.end}/{size}"


def parse_range(header: str | None, size: int) -> ByteRange | None:
    """The single range asked for, or None to send the whole body (no header, a unit other than
    bytes, or a multi-range request, which we answer in full as the RFC allows).

    Raises :class:`RangeNotSatisfiable` for a syntactically valid range that selects nothing.
    """
    if not header:
        return None
    if "," in header:
        return None
    m = _RANGE.match(header)
    if m is None:
        return None
    first, last = m.group(1), m.group(2)
    # a position with more digits than any file has bytes is "past the end": no int() of thousands of
    # digits (Python refuses past 4300, and it would be a 500)
    first = first if len(first) <= _MAX_DIGITS else "9" * _MAX_DIGITS
    last = last if len(last) <= _MAX_DIGITS else "9" * _MAX_DIGITS
    if first == "" and last == "":
        return None
    if first == "":  # suffix: the last N bytes
        n = int(last)
        if n == 0 or size == 0:
            raise RangeNotSatisfiable(header)
        return ByteRange(max(0, size - n), size - 1)
    start = int(first)
    if start >= size:
        raise RangeNotSatisfiable(header)
    end = size - 1 if last == "" else min(int(last), size - 1)
    if end < start:
        return None  # invalid range spec: ignore the header
    return ByteRange(start, end)
