"""Plain-text tables for the terminal: every column as wide as its widest cell (header included), two
spaces between columns — a long column name never runs into its neighbour."""

from __future__ import annotations

from collections.abc import Sequence


def aligned(header: Sequence[str], rows: Sequence[Sequence[str]], *, first_left: bool = True) -> list[str]:
    """The header line and one line per row; the first column left-aligned (``first_left``), the rest
    right-aligned."""
    widths = [max([len(h), *(len(r[i]) for r in rows if i < len(r))]) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        out = [c.ljust(w) if i == 0 and first_left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=False))]
        return "  ".join(out).rstrip()

    return [line(header), *(line(r) for r in rows)]
