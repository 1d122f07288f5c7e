"""The demo's PDF: ``handbook.txt`` → a paged PDF with a text layer, an outline and page numbers.

Markup of ``handbook.txt``: lines starting with ``#`` and a space before the first ``===`` are comments;
``=== Title`` starts a new page (and names it in the outline); ``# `` a page heading, ``## `` a
subheading, ``- `` a list item, ``| a | b |`` a two-column table row; blank lines separate paragraphs.
The output is byte-for-byte reproducible (reportlab's invariant mode) and embeds DejaVu Sans subsets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from reportlab import rl_config
from reportlab.lib import colors
from reportlab.lib.pagesizes import A5
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.flowables import Flowable

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
TITLE = "The Keeper's Handbook — Marrowick Light"


def _fonts() -> None:
    for name, file in (("DejaVuSans", "DejaVuSans.ttf"), ("DejaVuSans-Bold", "DejaVuSans-Bold.ttf")):
        path = FONT_DIR / file
        if not path.exists():
            raise SystemExit(f"{path} is missing (apt-get install fonts-dejavu-core)")
        pdfmetrics.registerFont(TTFont(name, str(path)))


def _styles() -> dict[str, ParagraphStyle]:
    body = ParagraphStyle("body", fontName="DejaVuSans", fontSize=9.5, leading=13.5, spaceAfter=5)
    return {
        "body": body,
        "h1": ParagraphStyle("h1", parent=body, fontName="DejaVuSans-Bold", fontSize=15, leading=19, spaceAfter=8),
        "h2": ParagraphStyle("h2", parent=body, fontName="DejaVuSans-Bold", fontSize=11, leading=15, spaceBefore=6, spaceAfter=4),
        "li": ParagraphStyle("li", parent=body, leftIndent=10, bulletIndent=0, spaceAfter=2, bulletFontName="DejaVuSans"),
    }


class _Doc(SimpleDocTemplate):
    """Adds an outline entry for every heading (level 0 for ``#``, 1 for ``##``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._seq = 0
        self._have_top = False

    def afterFlowable(self, flowable: Flowable) -> None:
        if not isinstance(flowable, Paragraph) or flowable.style.name not in {"h1", "h2"}:
            return
        level = 0 if flowable.style.name == "h1" or not self._have_top else 1
        self._have_top = True
        self._seq += 1
        key = f"h{self._seq}"
        self.canv.bookmarkPage(key)
        self.canv.addOutlineEntry(flowable.getPlainText(), key, level=level)


class _Canvas(Canvas):
    """Draws the running footer when a page ends, so a page's text layer reads body first, footer last.
    Starts every page in DejaVu Sans, so no unembedded base-14 font (Helvetica) is referenced."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["initialFontName"] = kwargs.get("initialFontName") or "DejaVuSans"
        super().__init__(*args, **kwargs)

    def showPage(self) -> None:
        self.saveState()
        self.setFont("DejaVuSans", 8)
        self.setFillColor(colors.grey)
        w, _ = A5
        self.drawString(15 * mm, 10 * mm, TITLE)
        self.drawRightString(w - 15 * mm, 10 * mm, f"Page {self.getPageNumber()}")
        self.restoreState()
        super().showPage()


def _table(rows: list[list[str]], body: ParagraphStyle) -> Table:
    cells = [[Paragraph(escape(c), body) for c in row] for row in rows]
    t = Table(cells, colWidths=[50 * mm, 62 * mm])
    t.setStyle(TableStyle([
        ("GRID", (0, 0), (-1, -1), 0.3, colors.grey),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("FONTNAME", (0, 0), (-1, -1), "DejaVuSans"),  # else the table selects Helvetica (not embedded)
    ]))
    return t


def _flowables(src: Path) -> list[Flowable]:
    st = _styles()
    story: list[Flowable] = []
    para: list[str] = []
    rows: list[list[str]] = []
    started = False

    def flush() -> None:
        if para:
            story.append(Paragraph(escape(" ".join(para)), st["body"]))
            para.clear()
        if rows:
            story.append(_table(list(rows), st["body"]))
            story.append(Spacer(1, 4))
            rows.clear()

    for raw in src.read_text(encoding="utf-8").splitlines():
        line = raw.rstrip()
        if line.startswith("=== "):
            flush()
            if started:
                story.append(PageBreak())
            started = True
            continue
        if not started:
            continue  # comments before the first page
        if not line:
            flush()
        elif line.startswith("## "):
            flush()
            story.append(Paragraph(escape(line[3:]), st["h2"]))
        elif line.startswith("# "):
            flush()
            story.append(Paragraph(escape(line[2:]), st["h1"]))
        elif line.startswith("- "):
            flush()
            story.append(Paragraph(escape(line[2:]), st["li"], bulletText="•"))
        elif line.startswith("|"):
            if para:
                flush()
            rows.append([c.strip() for c in line.strip("|").split("|")])
        else:
            if rows:
                flush()
            para.append(line)
    flush()
    return story


def build_handbook(src: Path, out: Path) -> int:
    """Write the handbook PDF; returns its page count."""
    rl_config.invariant = 1
    _fonts()
    doc = _Doc(
        str(out),
        pagesize=A5,
        leftMargin=15 * mm,
        rightMargin=15 * mm,
        topMargin=15 * mm,
        bottomMargin=18 * mm,
        title=TITLE,
        author="Marrowick Harbour Board (fictional; Footnote demo corpus)",
        subject="Duties of the keepers of the Marrowick Light",
        creator="scripts/make_demo.py",
        invariant=1,
        pageCompression=1,
    )
    story = _flowables(src)
    doc.build(story, canvasmaker=_Canvas)
    sections = sum(1 for line in src.read_text(encoding="utf-8").splitlines() if line.startswith("=== "))
    if doc.page != sections:
        raise SystemExit(f"{src}: {sections} sections but {doc.page} pages; a section overflowed its page")
    return int(doc.page)
