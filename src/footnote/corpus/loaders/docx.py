"""Word documents (``.docx``): heading path + paragraph number.

python-docx (MIT) opens the package and names each paragraph's style; the body is read in order from
its XML so that nothing python-docx's objects leave out is lost:

- **headings**: a paragraph styled "Heading 1…6" (Word's built-in names are English in the file
  whatever the interface language) or carrying an outline level; "Title" titles the source;
- **tables** as rows: the cells of a row joined by `` | ``, one paragraph per row;
- **footnotes and endnotes** kept with their paragraph: the reference is written as a superscript
  number before the punctuation it follows (``1887¹.``: never ``[1]``, nor ``1887.¹``, which is how answers
  cite) and the note's text follows the paragraph after the same number;
- **tracked changes** resolved to the accepted text: insertions read, deletions and moved-away text not;
- content controls and smart tags read through; field codes (``instrText``) not read.

Paragraph numbers count every non-empty paragraph, heading and table row from the top of the document.
The source's title, author and language come from the document's properties when set.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from footnote.corpus.loaders.base import (
    LoadContext,
    block_lang_of,
    declared_lang,
    make_source,
    open_zip,
    read_bytes,
)
from footnote.corpus.loaders.markup import SUPERSCRIPT, Para, blocks_of, clean
from footnote.errors import InputError
from footnote.records.fragments import Document

DOCX_SUFFIXES = (".docx",)
DOCX_MEDIA = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
#: Elements whose text is not the document's accepted text.
_NOT_ACCEPTED = {f"{W}del", f"{W}moveFrom", f"{W}instrText", f"{W}delText", f"{W}delInstrText"}


def _open(path: Path, data: bytes, limit: int) -> Any:
    import docx  # python-docx
    from docx.opc.exceptions import PackageNotFoundError

    if not data:
        raise InputError(path, "empty file")
    if not data.startswith(b"PK"):
        raise InputError(path, "not a Word document (.docx is a zip archive; an old .doc must be saved as .docx)")
    open_zip(path, data, "Word document", limit).close()  # python-docx reads every part whole: sizes first
    try:
        return docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        raise InputError(path, f"corrupt or unreadable Word document ({type(e).__name__}: {e})") from e
    except Exception as e:  # lxml's XMLSyntaxError inside a damaged part, and python-docx's own
        raise InputError(path, f"corrupt or unreadable Word document ({type(e).__name__}: {e})") from e


def _run_text(p: Any, notes: dict[str, int], order: list[str]) -> str:
    """A paragraph's accepted text; a footnote/endnote reference as its superscript number (``notes``:
    note key → number, ``order`` collects the keys referenced here)."""
    out: list[str] = []

    def walk(el: Any) -> None:
        for c in el:
            tag = c.tag
            if tag in _NOT_ACCEPTED:
                continue
            if tag == f"{W}t":
                out.append(c.text or "")
            elif tag in (f"{W}tab", f"{W}br", f"{W}cr"):
                out.append(" ")
            elif tag == f"{W}noBreakHyphen":
                out.append("-")
            elif tag in (f"{W}footnoteReference", f"{W}endnoteReference"):
                key = f"{'f' if 'foot' in tag else 'e'}{c.get(f'{W}id')}"
                if key in notes:
                    out.append(str(notes[key]).translate(SUPERSCRIPT))
                    order.append(key)
            elif tag == f"{W}p":  # a text box's paragraph inside a run
                out.append(" ")
                walk(c)
            else:
                walk(c)

    walk(p)
    return clean("".join(out))


def _notes(doc: Any) -> dict[str, str]:
    """Footnotes (``f<id>``) and endnotes (``e<id>``) → text, from the document part's relationships."""
    from lxml import etree

    found: dict[str, str] = {}
    for rel in doc.part.rels.values():
        kind = rel.reltype.rsplit("/", 1)[-1]
        if kind not in ("footnotes", "endnotes") or rel.is_external:
            continue
        try:
            root = etree.fromstring(rel.target_part.blob)
        except etree.XMLSyntaxError:
            continue
        tag = f"{W}{kind[:-1]}"
        for note in root.iter(tag):
            if note.get(f"{W}type") in ("separator", "continuationSeparator", "continuationNotice"):
                continue
            text = clean(" ".join(_run_text(p, {}, []) for p in note.iter(f"{W}p")))
            if text:
                found[f"{kind[0]}{note.get(f'{W}id')}"] = text
    return found


def _level(p: Any, styles: dict[str, tuple[str, int | None]]) -> tuple[int, bool]:
    """(heading level or 0, whether the paragraph is the document's Title)."""
    ppr = p.find(f"{W}pPr")
    style_id = None
    if ppr is not None:
        st = ppr.find(f"{W}pStyle")
        style_id = st.get(f"{W}val") if st is not None else None
        ol = ppr.find(f"{W}outlineLvl")
        if ol is not None and (ol.get(f"{W}val") or "").isdigit() and int(ol.get(f"{W}val")) < 6:
            return int(ol.get(f"{W}val")) + 1, False
    if style_id is None or style_id not in styles:
        return 0, False
    name, outline = styles[style_id]
    if name.lower() == "title":
        return 0, True
    m = _HEADING_STYLE.match(name)
    if m:
        return min(6, int(m.group(1))), False
    if outline is not None and outline < 6:
        return outline + 1, False
    return 0, False


#: Paragraph styles that hold the document's metadata (pandoc writes the author and date under the title so).
_METADATA_STYLES = {"author", "date"}


def _style_name(p: Any, styles: dict[str, tuple[str, int | None]]) -> str:
    st = p.find(f"{W}pPr/{W}pStyle")
    sid = st.get(f"{W}val") if st is not None else None
    return styles.get(sid, ("", None))[0] if sid else ""


def _styles(doc: Any) -> dict[str, tuple[str, int | None]]:
    """Paragraph style id → (name, outline level of the style or the styles it is based on)."""
    out: dict[str, tuple[str, int | None]] = {}
    try:
        styles = list(doc.styles)
    except Exception:  # a document without a styles part
        return out
    for s in styles:
        try:
            el = s.element
            outline = None
            cur: Any = s
            for _ in range(8):  # the based-on chain, bounded
                ol = cur.element.find(f"{W}pPr/{W}outlineLvl") if cur is not None else None
                if ol is not None and (ol.get(f"{W}val") or "").isdigit():
                    outline = int(ol.get(f"{W}val"))
                    break
                cur = getattr(cur, "base_style", None)
                if cur is None:
                    break
            out[el.get(f"{W}styleId") or s.name] = (s.name or "", outline)
        except Exception:
            continue
    return out


def _body_paras(doc: Any) -> tuple[list[Para], str]:
    """The body's paragraphs in order (footnotes after the paragraph citing them) and the Title's text."""
    notes = _notes(doc)
    numbers = {key: n for n, key in enumerate(notes, start=1)}
    styles = _styles(doc)
    paras: list[Para] = []
    title = ""

    def para(p: Any) -> None:
        nonlocal title
        order: list[str] = []
        text = _run_text(p, numbers, order)
        if not text:
            return
        level, is_title = _level(p, styles)
        if is_title and not title:
            title = text
            return
        if _style_name(p, styles).lower() in _METADATA_STYLES:
            return  # the author's name or the date under the title: the source's metadata, not its text
        after = " ".join(f"{str(numbers[k]).translate(SUPERSCRIPT)} {notes[k]}" for k in dict.fromkeys(order))
        paras.append(Para(f"{text}\n{after}" if after and not level else text, level))

    def table(tbl: Any) -> None:
        for tr in tbl.iter(f"{W}tr"):
            cells = []
            for tc in tr.iterfind(f"{W}tc"):
                order: list[str] = []
                cell = " ".join(t for p in tc.iter(f"{W}p") if (t := _run_text(p, numbers, order)))
                if cell:
                    cells.append(cell)
            if cells:
                paras.append(Para(" | ".join(cells)))

    def walk(container: Any) -> None:
        for child in container:
            tag = child.tag
            if tag == f"{W}p":
                para(child)
            elif tag == f"{W}tbl":
                table(child)
            elif tag in (f"{W}sdt", f"{W}sdtContent", f"{W}customXml", f"{W}ins", f"{W}smartTag"):
                walk(child)  # content controls, inserted blocks: read through

    walk(doc.element.body)
    return paras, title


def load_docx(path: Path, ctx: LoadContext) -> Iterator[Document]:
    data = read_bytes(path)
    doc = _open(path, data, ctx.settings.corpus.max_unpacked_bytes)
    try:
        paras, title_para = _body_paras(doc)
    except InputError:
        raise
    except Exception as e:  # a damaged part python-docx opened but cannot walk
        raise InputError(path, f"corrupt Word document ({type(e).__name__}: {e})") from e
    if not any(p.level == 0 for p in paras):
        raise InputError(path, "no text in this Word document (only headings, images or empty paragraphs)")
    props = doc.core_properties
    kind = ctx.check_kind(ctx.kind or ctx.settings.corpus.default_text_kind, path)
    declared = declared_lang(props.language)
    lang = ctx.choose_lang(declared, "\n".join(p.text for p in paras if not p.level))
    title = clean(props.title or "") or title_para or next((p.text for p in paras if p.level == 1), "") or path.stem
    blocks = blocks_of(paras, kind=kind, lang=block_lang_of(ctx, lang), title=title)
    meta = {k: v for k, v in (("author", clean(props.author or "")),) if v}
    if props.created is not None:
        meta["date"] = props.created.date().isoformat()
    source = make_source(
        id=ctx.source_id(path), kind=kind, title=title, lang=lang, content_hash=ctx.fingerprint(data),
        original=data, original_name=path.name, media=DOCX_MEDIA, origin=ctx.origin(path),
        collection=ctx.collection, meta=meta,
    )
    yield Document(source=source, original=data, blocks=tuple(blocks), path=path)
