"""EPUB books (2 and 3): book → chapter (spine item) → paragraph.

The container is read with the standard library's zipfile and the package document (OPF) with lxml:
the spine gives the chapters in reading order; each chapter's XHTML is read by
:func:`footnote.corpus.loaders.markup.html_paras`. A chapter's title is its table-of-contents entry
(EPUB 3 navigation document, else EPUB 2 NCX), else its first heading, else its position ("Chapter 3").
A fragment's ``section`` is ``"<chapter> › <heading path inside it>"`` and its ``para`` the paragraph's
number inside the chapter. The book's title, author (``dc:creator``) and language (``dc:language``)
come from its metadata.

(EbookLib, the usual Python EPUB library, is AGPL-licensed; the parts it would do here are a zip file
and three XML documents.)

Errors name the file: not a zip, no ``META-INF/container.xml`` or package document, a DRM-protected
book (``META-INF/encryption.xml`` naming anything but the font obfuscation EPUB allows), no text.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag

import lxml.etree

from footnote.corpus.loaders.base import (
    LoadContext,
    block_lang_of,
    declared_lang,
    make_source,
    open_zip,
    read_bytes,
)
from footnote.corpus.loaders.html import parse_html
from footnote.corpus.loaders.markup import blocks_of, clean, html_paras
from footnote.errors import InputError
from footnote.records.fragments import Block, Document

EPUB_SUFFIXES = (".epub",)
EPUB_MEDIA = "application/epub+zip"

_NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    "enc": "http://www.w3.org/2001/04/xmlenc#",
    "xhtml": "http://www.w3.org/1999/xhtml",
    "epub": "http://www.idpf.org/2007/ops",
}
#: Font obfuscation (IDPF and Adobe): allowed by the format, not DRM.
_FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")
_XHTML_TYPES = ("application/xhtml+xml", "text/html")
#: Reads one member of the book by name, saying which part it is: refused when missing or larger than
#: ``corpus.max_html_bytes`` (defined per book in :func:`load_epub`).
Member = Callable[[str, str], bytes]


def _xml(path: Path, member: Member, name: str, what: str) -> Any:
    raw = member(name, what)
    try:
        return lxml.etree.fromstring(raw, parser=lxml.etree.XMLParser(resolve_entities=False, no_network=True,
                                                                      recover=True))
    except (lxml.etree.XMLSyntaxError, zipfile.BadZipFile, ValueError) as e:
        raise InputError(path, f"not a valid EPUB: {what} {name!r} cannot be read ({e})") from e


def _check_drm(path: Path, z: zipfile.ZipFile, member: Member) -> None:
    if "META-INF/encryption.xml" not in z.namelist():
        return
    enc = _xml(path, member, "META-INF/encryption.xml", "encryption list")
    methods = [m.get("Algorithm", "") for m in enc.iter("{{{}}}EncryptionMethod".format(_NS["enc"]))]
    if any(m not in _FONT_OBFUSCATION for m in methods) or "META-INF/rights.xml" in z.namelist():
        raise InputError(path, "DRM-protected EPUB (its content is encrypted): only DRM-free books can be read")


def _toc_titles(path: Path, z: zipfile.ZipFile, opf: Any, base: str, member: Member) -> dict[str, str]:
    """Chapter file (zip name) → its title in the book's own table of contents."""
    titles: dict[str, str] = {}
    manifest = opf.find("opf:manifest", _NS)
    items = list(manifest) if manifest is not None else []
    nav = next((i for i in items if "nav" in (i.get("properties") or "").split()), None)
    if nav is not None and nav.get("href"):
        name = posixpath.normpath(posixpath.join(base, unquote(nav.get("href"))))
        raw = member(name, "navigation document") if name in z.namelist() else b""
        try:
            doc = parse_html(path, raw) if raw else None
        except InputError:  # an empty navigation document: the NCX, or the chapters' own headings
            doc = None
        if doc is not None:
            where = posixpath.dirname(name)
            for a in doc.iter("a"):
                href, text = a.get("href"), clean(a.text_content())
                if href and text:
                    target = posixpath.normpath(posixpath.join(where, unquote(urldefrag(href).url)))
                    titles.setdefault(target, text)
    if titles:
        return titles
    spine = opf.find("opf:spine", _NS)
    toc_id = spine.get("toc") if spine is not None else None
    ncx = next((i for i in items if i.get("id") == toc_id or i.get("media-type") == "application/x-dtbncx+xml"), None)
    if ncx is not None and ncx.get("href"):
        name = posixpath.normpath(posixpath.join(base, unquote(ncx.get("href"))))
        if name in z.namelist():
            doc = _xml(path, member, name, "table of contents")
            where = posixpath.dirname(name)
            for point in doc.iter("{{{}}}navPoint".format(_NS["ncx"])):
                label = clean("".join(point.find("ncx:navLabel", _NS).itertext())) if point.find("ncx:navLabel", _NS) is not None else ""
                content = point.find("ncx:content", _NS)
                if label and content is not None and content.get("src"):
                    target = posixpath.normpath(posixpath.join(where, unquote(urldefrag(content.get("src")).url)))
                    titles.setdefault(target, label)
    return titles


def load_epub(path: Path, ctx: LoadContext) -> Iterator[Document]:
    data = read_bytes(path)
    if not data:
        raise InputError(path, "empty file")
    c = ctx.settings.corpus
    z = open_zip(path, data, "EPUB", c.max_unpacked_bytes)
    names = set(z.namelist())

    def member(name: str, what: str) -> bytes:
        try:
            info = z.getinfo(name)
        except KeyError as e:
            raise InputError(path, f"not a valid EPUB: {what} {name!r} is missing") from e
        if info.file_size > c.max_html_bytes:
            raise InputError(path, f"EPUB {what} {name!r} is {info.file_size:,} bytes, more than corpus.max_html_bytes "
                             f"({c.max_html_bytes:,})")
        return z.read(name)

    with z:
        _check_drm(path, z, member)
        container = _xml(path, member, "META-INF/container.xml", "container")
        rootfile = container.find(".//c:rootfile", _NS)
        if rootfile is None or not rootfile.get("full-path"):
            raise InputError(path, "not a valid EPUB: its container names no package document")
        opf_name = unquote(rootfile.get("full-path"))
        opf = _xml(path, member, opf_name, "package document")
        base = posixpath.dirname(opf_name)
        md = opf.find("opf:metadata", _NS)

        def dc(name: str) -> str:
            el = md.find(f"dc:{name}", _NS) if md is not None else None
            return clean("".join(el.itertext())) if el is not None else ""

        manifest = {i.get("id"): i for i in opf.iterfind("opf:manifest/opf:item", _NS)}
        spine = [manifest.get(r.get("idref")) for r in opf.iterfind("opf:spine/opf:itemref", _NS)
                 if r.get("linear", "yes") != "no"]
        toc = _toc_titles(path, z, opf, base, member)
        kind = ctx.check_kind(ctx.kind or ctx.settings.corpus.default_text_kind, path)
        chapters: list[tuple[str, list[Any]]] = []
        read: set[str] = set()
        for n, item in enumerate(spine, start=1):
            if item is None or item.get("media-type") not in _XHTML_TYPES or not item.get("href"):
                continue
            name = posixpath.normpath(posixpath.join(base, unquote(item.get("href"))))
            if name in read:
                continue  # a spine naming one chapter twice (or ten thousand times): read once
            read.add(name)
            if name not in names:
                raise InputError(path, f"not a valid EPUB: chapter {name!r} named in the spine is missing")
            raw = member(name, "chapter")
            try:
                doc = parse_html(path, raw)
            except InputError:
                continue  # an empty chapter file (a cover page with no text)
            body = doc.find(".//body")
            paras = list(html_paras(body if body is not None else doc))
            if not any(p.level == 0 for p in paras):
                continue  # a cover, an image page
            first_heading = next((p.text for p in paras if p.level), "")
            chapters.append((toc.get(name) or first_heading or f"Chapter {n}", paras))
    if not chapters:
        raise InputError(path, "no text in this EPUB (images only, or every chapter is empty)")
    text = "\n".join(p.text for _, ps in chapters[:5] for p in ps if not p.level)
    lang = ctx.choose_lang(declared_lang(dc("language")), text)
    blocks: list[Block] = []
    lang_of = block_lang_of(ctx, lang)
    book_meta = {clean(v).casefold() for v in (dc("title"), dc("creator"), dc("date"), dc("publisher")) if v}
    kept = 0
    for title, paras in chapters:
        if all(p.text.casefold() in book_meta for p in paras):
            continue  # a title page: the book's title and author, which are its metadata
        kept += 1
        # the chapter's own heading repeating its title is not a level of the path
        blocks.extend(blocks_of(paras, kind=kind, lang=lang_of, prefix=(title,), title=title))
    if not blocks:
        raise InputError(path, "no text in this EPUB (only a title page)")
    meta = {k: v for k, v in (("author", dc("creator")), ("date", dc("date")[:10]), ("publisher", dc("publisher"))) if v}
    meta["chapters"] = str(kept)
    source = make_source(
        id=ctx.source_id(path), kind=kind, title=dc("title") or path.stem, lang=lang,
        content_hash=ctx.fingerprint(data), original=data, original_name=path.name, media=EPUB_MEDIA,
        origin=ctx.origin(path), collection=ctx.collection, meta=meta,
    )
    yield Document(source=source, original=data, blocks=tuple(blocks), path=path)

