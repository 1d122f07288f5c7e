"""A stored source as a page to read, anchored at every citable place (``GET /api/sources/{id}/view``).

"Open the original" of a verse should land on the verse, not on a Markdown file with its front matter.
The page is built from the source's stored fragments, every piece of text escaped (nothing of the
source is ever markup here), with one anchor per citable place:

- a verse book: a section per address (``id="HB-2.2"``: the label with its spaces as ``-``) holding the
  verse and its commentary, the commentator named from the front matter;
- a transcript: a section per window (``id="t-<ordinal>"``) headed by its time span;
- anything else (letters, prose, PDF text): a section per passage (``id="p-<ordinal>"``), section
  headings where they change, the PDF page named.

The browser scrolls to the ``#anchor`` and the stylesheet lights it (``:target``); ``?f=<fragment id>``
also marks the cited passage itself (a verse's commentary, say). The page runs no script.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from footnote.records.fragments import AddressLocator, FileLocator, Fragment, Source, TranscriptLocator
from footnote.retrieve.format import format_ms

#: Front-matter fields shown under the title (when the source has them).
SHOWN_META = ("commentator", "author", "translator", "speaker", "date")


def address_anchor(label: str) -> str:
    """The anchor of an address: its label with runs of whitespace as ``-`` ("HB 2.2" → "HB-2.2")."""
    return "-".join(label.split())


def anchor_of(f: Fragment) -> str:
    loc = f.locator
    if isinstance(loc, AddressLocator):
        return address_anchor(loc.label or f"{loc.book} {loc.loc}")
    if isinstance(loc, TranscriptLocator):
        return f"t-{f.ordinal}"
    return f"p-{f.ordinal}"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _paragraphs(text: str, cls: str) -> str:
    paras = [p.strip() for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return "".join(f'<p class="{cls}" dir="auto">{_e(p)}</p>' for p in paras)


def _piece(f: Fragment, cited: str | None, cls: str, lang: str) -> str:
    mark = " cited" if f.id == cited else ""
    lang_attr = f' lang="{_e(f.lang)}"' if f.lang and f.lang != lang else ""
    return f'<div class="{cls}{mark}" data-fragment="{_e(f.id)}"{lang_attr}>{_paragraphs(f.text, "text")}</div>'


def _window(frags: Sequence[Fragment], cited: str | None, cap: int) -> tuple[Sequence[Fragment], bool]:
    """At most ``cap`` fragments, centred on the cited one."""
    if len(frags) <= cap:
        return frags, False
    at = next((i for i, f in enumerate(frags) if f.id == cited), 0)
    start = max(0, min(at - cap // 2, len(frags) - cap))
    return frags[start : start + cap], True


def render_source(src: Source, fragments: Sequence[Fragment], *, cited: str | None, original_url: str,
                  labels: Mapping[str, str], max_fragments: int) -> str:
    """The page (HTML text). ``labels``: the interface words (``commentary``, ``original``, ``page``,
    ``chat``, ``shown``)."""
    frags, cut = _window(sorted(fragments, key=lambda f: f.ordinal), cited, max_fragments)
    lang = src.lang or "en"
    body: list[str] = []
    meta = [f"{_e(k)}: {_e(str(src.meta[k]))}" for k in SHOWN_META if src.meta.get(k)]
    commentator = src.meta.get("commentator") or src.meta.get("author") or ""
    i = 0
    section = None
    while i < len(frags):
        f = frags[i]
        loc = f.locator
        anchor = anchor_of(f)
        if isinstance(loc, AddressLocator):
            group = [f]
            while i + 1 < len(frags) and anchor_of(frags[i + 1]) == anchor:
                i += 1
                group.append(frags[i])
            label = loc.label or f"{loc.book} {loc.loc}"
            parts = [f'<h2><a class="anchor" href="#{_e(anchor)}">{_e(label)}</a></h2>']
            for g in group:
                if g.kind == "commentary":
                    who = f" — {_e(commentator)}" if commentator else ""
                    parts.append(f'<h3 class="commentary-head">{_e(labels["commentary"])}{who}</h3>')
                    parts.append(_piece(g, cited, "commentary", lang))
                else:
                    parts.append(_piece(g, cited, "verse", lang))
            body.append(f'<section id="{_e(anchor)}" class="place place--address">{"".join(parts)}</section>')
        elif isinstance(loc, TranscriptLocator):
            span = f"{format_ms(loc.start_ms)}–{format_ms(loc.end_ms)}"
            body.append(f'<section id="{_e(anchor)}" class="place place--transcript">'
                        f'<h2><a class="anchor" href="#{_e(anchor)}">{_e(span)}</a></h2>{_piece(f, cited, "passage", lang)}</section>')
        else:
            head = ""
            if isinstance(loc, FileLocator) and loc.section and loc.section != section:
                section = loc.section
                head = f"<h2>{_e(loc.section)}</h2>"
            page = ""
            if isinstance(loc, FileLocator) and loc.page:
                page = f'<p class="page-no">{_e(labels["page"])} {int(loc.page)}</p>'
            elif isinstance(loc, FileLocator) and loc.para is not None:
                page = f'<p class="page-no">¶ {int(loc.para)}</p>'
            body.append(f'{head}<section id="{_e(anchor)}" class="place place--passage">{page}{_piece(f, cited, "passage", lang)}</section>')
        i += 1
    note = f'<p class="note">{_e(labels["shown"])}</p>' if cut else ""
    title = src.title or src.id
    return (
        f'<!doctype html><html lang="{_e(lang)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{_e(title)}</title><link rel="stylesheet" href="/static/view.css">'
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml"></head><body>'
        f'<header><h1 dir="auto">{_e(title)}</h1>'
        + (f'<p class="meta">{" · ".join(meta)}</p>' if meta else "")
        + f'<p class="links"><a href="{_e(original_url)}">{_e(labels["original"])}</a> · <a href="/">{_e(labels["chat"])}</a></p>'
        f"</header><main>{note}{''.join(body)}</main></body></html>"
    )
