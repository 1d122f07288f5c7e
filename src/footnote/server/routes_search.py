"""``GET /api/search`` (the ``footnote search --json`` document), ``GET /api/examples`` and ``GET /api/status``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from footnote.engine import Engine
from footnote.redact import redact_tree
from footnote.retrieve.format import search_result_dict
from footnote.server.state import JSON, ServerState


def make_router(state: ServerState) -> APIRouter:
    router = APIRouter(tags=["search"])
    max_chars = state.settings.answer.max_question_chars

    def search_doc(engine: Engine, q: str, lang: str | None) -> dict[str, Any]:
        result = engine.search(q, lang=lang)
        doc = search_result_dict(result, result.corpus.titles(c.fragment.source_id for c in result.candidates))
        return {**doc, "embedding": engine.backlog_status()}

    @router.get("/api/search")
    async def search(
        request: Request,
        q: Annotated[str, Query(description="The question or search text.")],
        lang: Annotated[str | None, Query(description="Question language (detected when absent).")] = None,
    ) -> JSON:
        """Retrieval only (plan, lanes, fusion, gate): the ``footnote search --json`` document."""
        engine = state.engine_for(request)
        q = engine.question(q)  # the engine's one check (422)
        return JSON(await run_in_threadpool(search_doc, engine, q, lang))

    @router.get("/api/examples")
    async def examples(request: Request) -> JSON:
        """Example questions made from the corpus's own passages (a verse's address, a topic the collection
        comes back to), each checked to get an answer from the corpus; cached until the store changes."""
        found = await run_in_threadpool(state.engine_for(request).example_questions)
        return JSON({"examples": [e.to_dict() for e in found]})

    @router.get("/api/status")
    async def status(request: Request) -> JSON:
        """Store counts, embedder, lexical-only mode, models, whether the fallback is enabled, and what the
        request's key reads (`access`)."""
        data = redact_tree(await run_in_threadpool(state.engine_for(request).status), state.secrets)  # no password leaves
        data["access"] = state.access(request).to_dict()
        data["fallback_enabled"] = state.settings.answer.enable_corpus_fallback
        data["max_question_chars"] = max_chars
        data["active_streams"] = state.pump.active  # streamed turns running now (a dropped one stops within a read)
        return JSON(data)

    return router
