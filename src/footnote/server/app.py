"""The FastAPI application: ``create_app(engine, settings)``.

Routes: ``POST /api/ask`` (SSE or JSON), ``GET /api/search``, ``GET /api/sources``,
``GET /api/sources/{id}`` (original, HTTP Range), ``GET /api/sources/{id}/pages/{n}`` (PDF page PNG),
``GET /api/status``, ``POST /api/session`` (sets the key cookie for the web chat), ``GET /healthz``,
the web chat at ``/`` and OpenAPI at ``/docs``. Errors from ``footnote.errors`` are translated here,
once, by ``FootnoteError.http_status``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from footnote.engine import Engine
from footnote.errors import AuthError, FootnoteError, UsageError
from footnote.redact import redact, settings_secrets
from footnote.server import routes_ask, routes_conversations, routes_memory, routes_search, routes_sources
from footnote.server.access import Engines, Keyring, access_of
from footnote.server.backlog import BacklogWorker
from footnote.server.guard import BodyLimit, CrashGuard, HostGuard, make_access_dependency, presented_key
from footnote.server.pages import PageRenderer
from footnote.server.readers import Reader, hand_out, new_reader_token, reader_of
from footnote.server.routes_mcp import mount_mcp
from footnote.server.sse import EventPump
from footnote.server.state import JSON, ServerState, error_body
from footnote.settings import Settings

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"

PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; style-src 'self'; "
        "script-src 'self'; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

HTTP_REASONS = {400: "BadRequest", 401: "Unauthorized", 404: "NotFound", 405: "MethodNotAllowed",
                413: "RequestTooLarge", 416: "RangeNotSatisfiable", 422: "InvalidRequest"}


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)


def _install_handlers(app: FastAPI, secrets: tuple[str, ...]) -> None:
    @app.exception_handler(FootnoteError)
    async def footnote_error(request: Request, exc: FootnoteError) -> Response:
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, AuthError) else None
        message = redact(exc.message, secrets)  # no password or key leaves the process in an error
        if exc.http_status >= 500:
            log.error("%s %s: %s", request.method, request.url.path, message)
        return JSON(error_body(message, type(exc).__name__), status_code=exc.http_status, headers=headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        return JSON(error_body(str(exc.detail), HTTP_REASONS.get(exc.status_code, "HTTPError")),
                    status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        detail = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()]
        return JSON(error_body(_validation_message(exc), "InvalidRequest", detail=detail), status_code=422)

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSON(error_body("internal error", "InternalError"), status_code=500)


def warm_up(engine: Engine) -> None:
    """Load the embedder and build the stages once, so the first asks do not all pay for it at once."""
    t = time.perf_counter()
    try:
        if engine.embedder is not None:
            engine.embedder.embed_queries(["warm up"])
        _ = engine.answerer
    except FootnoteError as e:  # the server still starts; the error shows on the first request
        log.warning("warm-up failed: %s", e.message)
    log.info("warm-up took %.0f ms", (time.perf_counter() - t) * 1000)


def warm_sentences(engine: Engine, max_fragments: int, stop: threading.Event) -> None:
    """In the background after start: the sentence vectors of a small store's fragments, so that the
    first asks do not make them (``server.warm_sentences_max_fragments``)."""
    t = time.perf_counter()
    try:
        made = engine.answerer.warm_sentences(engine.retriever.corpus(), max_fragments, stop)
    except FootnoteError as e:  # e.g. the store went away; the asks make them then
        log.info("warming sentence vectors stopped: %s", e.message)
        return
    if made:
        log.info("sentence vectors: %d made in %.1f s", made, time.perf_counter() - t)


def create_app(engine: Engine, settings: Settings | None = None) -> FastAPI:
    """The HTTP API and the web chat over ``engine``."""
    settings = settings or engine.settings
    srv = settings.server
    secrets = settings_secrets(settings)
    state = ServerState(
        engine=engine,
        settings=settings,
        pump=EventPump(srv.stream_workers, srv.stream_queue_events),
        pages=PageRenderer(srv.page_render_scale, srv.page_cache_size, srv.highlight_min_words,
                           max_pixels=srv.page_max_pixels, workers=srv.page_render_workers),
        keyring=Keyring(engine, srv),
        engines=Engines(engine, srv),
        secrets=secrets,
    )

    worker = BacklogWorker(engine)
    warming = threading.Event()  # set: stop warming sentence vectors (shutdown)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if srv.warm_up:
            await run_in_threadpool(warm_up, engine)
        if settings.backlog.serve_worker:
            worker.start()
        warmer = None
        if srv.warm_up and srv.warm_sentences_max_fragments > 0:
            warmer = threading.Thread(target=warm_sentences, args=(engine, srv.warm_sentences_max_fragments, warming),
                                      name="footnote-warm-sentences", daemon=True)
            warmer.start()
        async with run_mcp():
            yield
        warming.set()
        if warmer is not None:
            warmer.join(timeout=10)
        worker.stop()
        state.pump.shutdown()
        state.pages.close()

    app = FastAPI(
        title="Footnote",
        summary="Answers that cite their sources — or say they don't know.",
        version="0.1.0",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.state.footnote = state
    app.add_middleware(CrashGuard)  # innermost: a crash is a 500 on a connection that stays usable
    app.add_middleware(BodyLimit, limit=srv.max_request_bytes)
    app.add_middleware(HostGuard, settings=srv, keyring=state.keyring)
    _install_handlers(app, secrets)

    guarded = [Depends(make_access_dependency(state.keyring, srv.cookie_name))]
    app.include_router(routes_ask.make_router(state), dependencies=guarded)
    app.include_router(routes_search.make_router(state), dependencies=guarded)
    app.include_router(routes_sources.make_router(state), dependencies=guarded)
    app.include_router(routes_conversations.make_router(state), dependencies=guarded)
    app.include_router(routes_memory.make_router(state), dependencies=guarded)
    run_mcp = mount_mcp(app, state)  # /mcp: MCP over streamable HTTP, behind the same key (docs/mcp.md)

    meta = APIRouter(tags=["meta"])

    @meta.get("/openapi.json", include_in_schema=False, dependencies=guarded)
    async def openapi() -> JSON:
        return JSON(app.openapi())

    @meta.get("/docs", include_in_schema=False)
    async def docs() -> Response:
        """An offline rendering of /openapi.json (Swagger UI would load its code from a CDN);
        the document itself needs the key when one is set."""
        return FileResponse(STATIC_DIR / "docs.html", media_type="text/html", headers=PAGE_HEADERS)

    @meta.post("/api/session", dependencies=guarded)
    async def session(request: Request) -> Response:
        """Check the key (header) and hand the browser an HttpOnly cookie with it, so that audio and
        page images (which cannot send headers) load. Says what the key reads: `collections` (null: every
        one) and whether it may `write`."""
        access = access_of(request)
        closed = await run_in_threadpool(state.keyring.has_keys)
        resp = JSON({"ok": True, "auth": closed, **access.to_dict()})
        key = presented_key(request, srv.cookie_name)
        if closed and key:
            resp.set_cookie(srv.cookie_name, key, httponly=True, samesite="strict", path="/")
        return resp

    @meta.get("/healthz")
    async def healthz() -> JSON:
        """Liveness (never needs the key)."""
        return JSON({"status": "ok"})

    @meta.get("/", include_in_schema=False)
    async def index(request: Request) -> Response:
        """The web chat; a new reader gets their reader cookie here (their conversations are theirs)."""
        resp = FileResponse(STATIC_DIR / "index.html", media_type="text/html", headers=PAGE_HEADERS)
        try:
            hand_out(resp, reader_of(request, srv), request, srv)
        except UsageError:  # a mangled cookie: a fresh one replaces it
            hand_out(resp, Reader(new_reader_token(), new=True), request, srv)
        return resp

    app.include_router(meta)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


def app_state(app: Any) -> ServerState:
    """The server state of an app made by :func:`create_app` (tests and benchmarks use it)."""
    st: ServerState = app.state.footnote
    return st
