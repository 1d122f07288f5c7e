"""Sources: the list, the original as uploaded (with HTTP Range), and PDF pages with the passage lit.

Everything is looked up by source id in the store and served from the store's bytes; nothing here
touches the filesystem, so ``../``, absolute paths and symlinks name nothing and get 404.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from footnote.corpus.loaders.scans import ocr_languages
from footnote.errors import NotFound, UsageError
from footnote.records.fragments import Source
from footnote.server.access import require_writer
from footnote.server.pages import quoted_in
from footnote.server.ranges import RangeNotSatisfiable, parse_range
from footnote.server.source_view import render_source
from footnote.server.state import JSON, ServerState, error_body
from footnote.store import Original
from footnote.store.protocol import INT_MAX, SourceStore

PDF = "application/pdf"
# Types a browser could execute if opened directly: served as uploaded, but sandboxed.
_PASSIVE_PREFIXES = ("audio/", "video/", "image/png", "image/jpeg", "image/gif", "image/webp", PDF)


#: The rendered source page: no script at all, only our stylesheet.
VIEW_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "private, no-cache",
}
VIEW_WORDS = {
    "en": {"commentary": "Commentary", "original": "The file as uploaded", "page": "Page", "chat": "Back to the chat",
           "shown": "A long source: the part around the cited place is shown."},
    "ru": {"commentary": "Комментарий", "original": "Файл в исходном виде", "page": "Страница", "chat": "Назад к чату",
           "shown": "Источник длинный: показана часть вокруг цитаты."},
}


def source_url(source_id: str) -> str:
    return "/api/sources/" + "/".join(quote(part, safe="") for part in source_id.split("/"))


def source_dict(s: Source) -> dict[str, Any]:
    return {
        "id": s.id,
        "kind": s.kind,
        "title": s.title,
        "lang": s.lang,
        "media_type": s.media_type,
        "original_name": s.original_name,
        "origin": s.origin,
        "collection": s.collection,
        "meta": dict(s.meta),  # a track's cues: GET /api/sources/{id}/cues
    }


def _disposition(name: str) -> str:
    ascii_name = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name) or "original"
    return f"inline; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name)}"


def original_response(request: Request, original: Original) -> Response:
    data = original.data
    size = len(data)
    headers = {
        "Accept-Ranges": "bytes",
        "ETag": f'"{original.sha256}"',
        "Content-Disposition": _disposition(original.name),
        "Cache-Control": "private, max-age=3600",
        "X-Content-Type-Options": "nosniff",
    }
    if not original.media_type.startswith(_PASSIVE_PREFIXES):
        headers["Content-Security-Policy"] = "sandbox; default-src 'none'"
    media_type = original.media_type or "application/octet-stream"
    if_range = request.headers.get("if-range")
    range_header = request.headers.get("range")
    if if_range and if_range.strip() != headers["ETag"]:
        range_header = None  # the client's copy is stale: send it all
    try:
        rng = parse_range(range_header, size)
    except RangeNotSatisfiable:
        headers["Content-Range"] = f"bytes */{size}"
        return JSON(error_body(f"range {range_header!r} is outside the {size} bytes of this source", "RangeNotSatisfiable"),
                    status_code=416, headers=headers)
    if rng is None:
        body = b"" if request.method == "HEAD" else data
        headers["Content-Length"] = str(size)
        return Response(body, status_code=200, media_type=media_type, headers=headers)
    headers["Content-Range"] = rng.content_range(size)
    headers["Content-Length"] = str(rng.length)
    body = b"" if request.method == "HEAD" else data[rng.start : rng.end + 1]
    return Response(body, status_code=206, media_type=media_type, headers=headers)


def make_router(state: ServerState) -> APIRouter:
    router = APIRouter(tags=["sources"])
    max_chars = state.settings.answer.max_question_chars

    def _store(request: Request) -> SourceStore:
        """The store as the request's key sees it: another collection's source is not there (404)."""
        return state.engine_for(request).store

    def _source(store: SourceStore, source_id: str) -> Source:
        src = store.get_source(source_id)
        if src is None:
            raise NotFound(f"no source {source_id!r} in the store")
        return src

    def _original(store: SourceStore, source_id: str) -> Original:
        _source(store, source_id)
        original = store.get_original(source_id)
        if original is None:
            raise NotFound(f"the original of source {source_id!r} is not stored")
        return original

    @router.get("/api/sources")
    async def list_sources(
        request: Request,
        kind: Annotated[str | None, Query(max_length=200, description="Only sources of this kind.")] = None,
        lang: Annotated[str | None, Query(max_length=35, description="Only sources in this language.")] = None,
        collection: Annotated[str | None, Query(max_length=200, description="Only this collection.")] = None,
        limit: Annotated[int | None, Query(ge=1, le=10_000, description="At most this many (a page).")] = None,
        offset: Annotated[int, Query(ge=0, le=INT_MAX, description="Skip this many first.")] = 0,
    ) -> JSON:
        """The stored sources (id, kind, title, language, media type, collection), ordered by id, filtered
        and paged; ``total`` counts every match."""

        store = _store(request)

        def load() -> JSON:
            sources = store.list_sources(kind=kind, lang=lang, collection=collection, limit=limit, offset=offset)
            total = store.count_sources(kind=kind, lang=lang, collection=collection)
            return JSON({"sources": [source_dict(s) for s in sources], "count": len(sources), "total": total})

        return await run_in_threadpool(load)

    @router.get("/api/sources/{source_id:path}/cues")
    async def cues(
        request: Request,
        source_id: str,
        start_ms: Annotated[int, Query(ge=0, le=INT_MAX, description="Only cues ending after this time.")] = 0,
        end_ms: Annotated[int | None, Query(ge=0, le=INT_MAX, description="Only cues starting before this time.")] = None,
    ) -> JSON:
        """The timed cues of a track (its transcript), optionally those overlapping ``start_ms–end_ms``:
        the chat narrows a citation's window to the cues of the sentence it quotes."""

        store = _store(request)

        def load() -> JSON:
            src = _source(store, source_id)
            found = store.get_cues(source_id, start_ms, end_ms)
            # every track records its transcript's name, or that its transcript is a machine's
            if not found and "transcript" not in src.meta and "transcript_by" not in src.meta:
                raise NotFound(f"source {source_id!r} is not a track with timed cues")
            picked = [{"start_ms": c.start_ms, "end_ms": c.end_ms, "text": c.text} for c in found]
            return JSON({"source_id": source_id, "cues": picked})

        return await run_in_threadpool(load)

    @router.get(
        "/api/sources/{source_id:path}/view",
        response_class=Response,
        responses={200: {"content": {"text/html": {}}, "description": "The source as a page, an anchor per citable place."}},
    )
    async def view(
        request: Request,
        source_id: str,
        f: Annotated[str | None, Query(max_length=1000, description="Fragment id of the cited passage, marked on the page.")] = None,
    ) -> Response:
        """The source rendered to read (``footnote.server.source_view``): a verse book with an anchor per
        address (``#HB-2.2``), a transcript per window (``#t-N``), other text per passage (``#p-N``);
        ``f`` marks the cited passage. Every piece of the source's text is escaped: the page runs no
        script and shows no markup of the source."""

        store = _store(request)

        def render() -> Response:
            src = _source(store, source_id)
            frags = store.fragments_of(source_id)
            words = VIEW_WORDS.get(src.lang, VIEW_WORDS["en"])
            page = render_source(src, frags, cited=f, original_url=source_url(source_id), labels=words,
                                 max_fragments=state.settings.server.view_max_fragments)
            return Response(page, media_type="text/html; charset=utf-8", headers=VIEW_HEADERS)

        return await run_in_threadpool(render)

    @router.get(
        "/api/sources/{source_id:path}/pages/{page}",
        response_class=Response,
        responses={200: {"content": {"image/png": {}}, "description": "The page as PNG, the passage highlighted."}},
    )
    async def page_image(
        request: Request,
        source_id: str,
        page: int,
        fragment: Annotated[str | None, Query(description="Fragment id whose text to highlight.")] = None,
        q: Annotated[str | None, Query(
            description="Text to highlight: alone, or with `fragment` the cited sentence when the fragment quotes it.",
        )] = None,
    ) -> Response:
        """A page of a stored PDF rendered to PNG, with the cited passage (``fragment``) or text (``q``) highlighted."""

        store = _store(request)

        def render() -> Response:
            src = _source(store, source_id)
            scan = src.media_type.startswith("image/")
            if src.media_type != PDF and not scan:
                raise NotFound(f"source {source_id!r} is not a PDF or a scanned page ({src.media_type})")
            passage = q
            if fragment:
                found = store.get_fragments([fragment])
                if not found or found[0].source_id != source_id:
                    raise NotFound(f"no fragment {fragment!r} in source {source_id!r}")
                # the cited sentence when the fragment quotes it (extractive answers do), else the fragment
                passage = q if q and quoted_in(q, found[0].text) else found[0].text
            original = _original(store, source_id)
            ocr = state.settings.ocr if "ocr" in src.meta else None  # a scan: its words are read again to light them
            out = state.pages.render(original.data, original.name, page, passage, image=scan, ocr=ocr,
                                     ocr_languages=ocr_languages(src.meta))
            headers = {
                "X-Footnote-Page": str(out.page),
                "X-Footnote-Pages": str(out.pages),
                "X-Footnote-Highlights": str(out.highlights),
                "Cache-Control": "private, max-age=3600",
            }
            if out.box is not None:  # the lit passage in image pixels: left,top,right,bottom
                headers["X-Footnote-Highlight-Box"] = ",".join(str(v) for v in out.box)
            return Response(out.png, media_type="image/png", headers=headers)

        if q is not None and len(q) > max_chars:
            raise UsageError(f"'q' is {len(q)} characters long; the limit is {max_chars}")
        return await run_in_threadpool(render)

    @router.delete(
        "/api/sources/{source_id:path}",
        responses={
            200: {"description": "The source was removed (fragments, vectors, cues, unshared original)."},
            403: {"description": "This server has no API key, so it removes nothing."},
            404: {"description": "No such source."},
        },
    )
    async def delete(source_id: str, request: Request) -> JSON:
        """Remove a source with its fragments, vectors, cues and its original when no other source shares
        it, in one transaction. Only on a server with an API key, sent in a header (a cookie is not
        enough: the browser sends cookies on its own)."""
        access = state.access(request)
        require_writer(access, request, needs="removing a source",
                       refused="removes nothing over HTTP; use `footnote remove` on the store")
        store = _store(request)

        def remove() -> JSON:
            src = _source(store, source_id)  # another collection's source: 404, as if it were not there
            require_writer(access, request, needs="removing a source", refused="removes nothing over HTTP",
                           collection=src.collection)
            removed = state.engine.store.delete_sources([source_id])
            if not removed:
                raise NotFound(f"no source {source_id!r} in the store")
            return JSON({"removed": removed})

        return await run_in_threadpool(remove)

    @router.head("/api/sources/{source_id:path}", response_class=Response, include_in_schema=False)
    @router.get(
        "/api/sources/{source_id:path}",
        response_class=Response,
        responses={
            200: {"description": "The original file as uploaded."},
            206: {"description": "A byte range of it (HTTP Range)."},
            416: {"description": "The range lies outside the file."},
        },
    )
    async def original(source_id: str, request: Request) -> Response:
        """The original file as uploaded (audio, PDF, text), with HTTP Range so audio can seek."""
        orig = await run_in_threadpool(_original, _store(request), source_id)
        return original_response(request, orig)

    return router
