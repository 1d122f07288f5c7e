"""Saved web pages and exported sites (``.html``, ``.htm``): the main content only, cited by heading path
and paragraph.

trafilatura (Apache-2.0) finds the page's main content — the article, not its menus, banners, related
links, cookie notices or scripts — and hands it back as headings, paragraphs, list items and table rows
(:func:`footnote.corpus.loaders.markup.blocks_of` numbers them). A page trafilatura finds no main
content in (a short index page, say) is read whole, less its scripts, forms, navigation, footers and
asides. The title is the page's own (``<title>``, its metadata), the language its ``<html lang>`` when
it declares one, else detected.

The original is stored and served as uploaded, sandboxed (no script of the page ever runs on the
server's origin); a citation opens the server's own rendering of the passages (``/view``), the cited
one lit.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lxml.etree
import lxml.html

from footnote.corpus.loaders.base import LoadContext, block_lang_of, declared_lang, make_source, read_bytes
from footnote.corpus.loaders.markup import (
    SKIP_TAGS,
    Para,
    blocks_of,
    clean,
    html_paras,
    is_backlink,
    note_number,
    noteref_mark,
)
from footnote.errors import InputError
from footnote.records.fragments import Document

log = logging.getLogger(__name__)

HTML_SUFFIXES = (".html", ".htm", ".xhtml")
HTML_MEDIA = "text/html"


_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")


def decode_html(path: Path, data: bytes) -> str:
    """The page's text: its byte-order mark, else the charset its ``<meta>`` declares, else UTF-8, else the
    encoding charset_normalizer finds (an old page saved in windows-1251, say)."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom):].decode(codec, "replace")
    if b"\x00" in data[:4096]:
        raise InputError(path, "binary data, not an HTML page")
    m = _CHARSET.search(data[:4096])
    if m:
        try:
            return data.decode(m.group(1).decode("ascii").lower(), "replace")
        except (LookupError, UnicodeError, ValueError):
            pass  # an unknown (or unusable: "undefined") charset name: guessed below
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        best = from_bytes(data).best()
        if best is None:
            raise InputError(path, "not text: no character encoding fits this page") from None
        return str(best)


def parse_html(path: Path, data: bytes) -> Any:
    """The lxml tree of an HTML document, or InputError."""
    if not data.strip():
        raise InputError(path, "empty file")
    text = _XML_DECL.sub("", decode_html(path, data), count=1)
    if not text.strip():
        raise InputError(path, "empty file")
    try:
        return lxml.html.document_fromstring(text)
    except (lxml.etree.LxmlError, ValueError) as e:
        raise InputError(path, f"not a readable HTML page ({type(e).__name__}: {e})") from e


#: Class or id words of a page's furniture in the common site engines (MediaWiki's table of contents, "edit"
#: links, tagline and category bar; cookie banners, share bars, breadcrumbs, sidebars, newsletters, comments).
_FURNITURE = re.compile(
    r"(?:^|[-_])(?:toc|editsection|navbox|navigation|navbar|sitesub|contentsub|catlinks|printfooter|jump-to-nav|"
    r"breadcrumbs?|cookies?|consent|gdpr|share|sharing|social|sidebar|related|advert|ads|promo|newsletter|subscribe|"
    r"comments?|skip-?link|menu|masthead|banner)(?:$|[-_])", re.IGNORECASE)


def _furniture(el: Any) -> bool:
    words = f"{el.get('class') or ''} {el.get('id') or ''}".split()
    return any(_FURNITURE.search(w) for w in words) or el.get("role") in ("navigation", "banner", "contentinfo",
                                                                            "complementary", "search")


def _drop_furniture(tree: Any) -> Any:
    """A copy of the page without what is never content: scripts, styles, forms, navigation, footers, asides, and
    the elements whose class or id names them furniture (:data:`_FURNITURE`; never ``<body>`` or ``<main>``)."""
    page = copy.deepcopy(tree)
    for el in list(page.iter()):
        tag = el.tag.rsplit("}", 1)[-1].lower() if isinstance(el.tag, str) else ""
        if el.getparent() is None or tag in ("html", "body", "main", "article", "head", "title", "meta"):
            continue
        if tag in SKIP_TAGS or _furniture(el) or (tag == "a" and is_backlink(el)):
            el.drop_tree()
            continue
        mark = noteref_mark(el)  # "[1]" and "1." would read as citations: the mark as superscript digits
        if mark is not None:
            _replace_with_text(el, mark)
            continue
        number = note_number(el)  # a note's own text starts with its number, as the reference wrote it
        if number is not None:
            el.text = f"{number} {el.text or ''}"
    return page


def _replace_with_text(el: Any, text: str) -> None:
    """``el`` (and what it holds) replaced by ``text``, its tail kept."""
    parent, prev = el.getparent(), el.getprevious()
    joined = text + (el.tail or "")
    if prev is not None:
        prev.tail = (prev.tail or "") + joined
    else:
        parent.text = (parent.text or "") + joined
    parent.remove(el)


def _main_content(tree: Any) -> tuple[list[Para], dict[str, str]]:
    """trafilatura's main content (of the page without its furniture) as paragraphs, and the title/author it
    found; empty when it found none."""
    import trafilatura  # imported on first use: its date and language helpers cost a second at import

    logging.getLogger("trafilatura").setLevel(logging.ERROR)  # "discarding data: None" is not the reader's business

    try:
        xml = trafilatura.extract(tree, output_format="xml", include_tables=True, include_comments=False,
                                  include_images=False, favor_recall=True, with_metadata=True, deduplicate=False)
    except Exception as e:  # trafilatura's own failure on an odd page: the whole page is read instead
        log.debug("trafilatura failed: %s", e)
        return [], {}
    if not xml:
        return [], {}
    doc = lxml.etree.fromstring(xml.encode("utf-8"))
    meta = {k: clean(doc.get(k) or "") for k in ("title", "author")}
    paras: list[Para] = []
    for el in doc.iter():
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag == "head":
            rend = (el.get("rend") or "h2").lower()
            level = int(rend[1]) if len(rend) == 2 and rend[0] == "h" and rend[1].isdigit() else 2
            text = clean("".join(el.itertext()))
            if text:
                paras.append(Para(text, max(1, min(6, level))))
        elif tag == "row":
            row = " | ".join(t for c in el if (t := clean("".join(c.itertext()))))
            if row:
                paras.append(Para(row))
        elif tag in ("p", "item", "quote", "code") and not any(c.tag in ("p", "item", "list") for c in el):
            text = clean("".join(el.itertext()))
            if text:
                paras.append(Para(text))
    return paras, {k: v for k, v in meta.items() if v}


def load_html(path: Path, ctx: LoadContext) -> Iterator[Document]:
    data = read_bytes(path)
    limit = ctx.settings.corpus.max_html_bytes
    if len(data) > limit:
        raise InputError(path, f"{len(data):,} bytes: a web page larger than corpus.max_html_bytes ({limit:,})")
    tree = parse_html(path, data)
    cleaned = _drop_furniture(tree)
    paras, found = _main_content(cleaned)
    if not any(p.level == 0 for p in paras):
        paras = list(html_paras(cleaned.find("body") if cleaned.find("body") is not None else cleaned))
    if not any(p.level == 0 for p in paras):
        raise InputError(path, "no text in this page (only markup, scripts or images — or text nested deeper than "
                         "the 255 elements an HTML parser reads)")
    page_title = clean(tree.findtext(".//title") or "")
    declared = declared_lang(tree.get("lang") or tree.get("{http://www.w3.org/XML/1998/namespace}lang"))
    kind = ctx.check_kind(ctx.kind or ctx.settings.corpus.default_text_kind, path)
    text = "\n".join(p.text for p in paras if not p.level)
    lang = ctx.choose_lang(declared or None, text)
    title = found.get("title") or page_title or next((p.text for p in paras if p.level == 1), "") or path.stem
    blocks = blocks_of(paras, kind=kind, lang=block_lang_of(ctx, lang), title=title)
    meta = {"author": found["author"]} if found.get("author") else {}
    source = make_source(
        id=ctx.source_id(path), kind=kind, title=title, lang=lang, content_hash=ctx.fingerprint(data),
        original=data, original_name=path.name, media=HTML_MEDIA, origin=ctx.origin(path),
        collection=ctx.collection, meta=meta,
    )
    yield Document(source=source, original=data, blocks=tuple(blocks), path=path)
