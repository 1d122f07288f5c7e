"""Small real documents for tests: a one-page PDF with a text layer, written with reportlab (a dev dependency)."""

from __future__ import annotations

from pathlib import Path


def text_pdf(path: Path, lines: list[str], *, page: str = "A4", top: float = 800, left: float = 20) -> Path:
    """Write ``lines`` one under another (16 pt apart) on one ``page`` (a reportlab page size name), starting at
    ``top`` points from the bottom and ``left`` from the edge; deterministic bytes (``invariant``)."""
    from reportlab.lib import pagesizes
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=getattr(pagesizes, page), invariant=1)
    y = top
    for line in lines:
        c.drawString(left, y, line)
        y -= 16
    c.save()
    return path
