"""``POST /api/ask``: the turn as Server-Sent Events, or the Answer JSON (``footnote ask --json``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from footnote.server.sse import sse_body
from footnote.server.state import JSON, ServerState

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The question, in any language.")
    fallback: bool | None = Field(
        None, description="Allow (true) or forbid (false) the general-knowledge fallback for this turn; null: the server's setting."
    )
    stream: bool = Field(True, description="Stream Server-Sent Events (true) or return the Answer JSON (false).")


def wants_json(request: Request, body: AskRequest) -> bool:
    if not body.stream:
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/event-stream" not in accept


def make_router(state: ServerState) -> APIRouter:
    router = APIRouter(tags=["ask"])
    max_chars = state.settings.answer.max_question_chars

    @router.post(
        "/api/ask",
        response_model=None,
        responses={
            200: {
                "description": "text/event-stream of `stage`, `token`, `citation`, `verdict`, `done` (the Answer) "
                "and `error` events; with `stream: false` or `Accept: application/json`, the Answer JSON.",
                "content": {"text/event-stream": {}, "application/json": {}},
            },
            413: {"description": "Request body over `server.max_request_bytes`."},
            422: {"description": "Empty question, question over `answer.max_question_chars`, or a malformed body."},
        },
    )
    async def ask(body: AskRequest, request: Request) -> Response:
        """Answer a question from the corpus, with citations resolved on the server."""
        question = body.question.strip()
        if not question:
            raise HTTPException(422, "the question is empty")
        if len(question) > max_chars:
            raise HTTPException(422, f"the question is {len(question)} characters long; the limit is {max_chars}")
        engine = state.engine
        if wants_json(request, body):
            answer = await run_in_threadpool(engine.ask, question, fallback=body.fallback)
            data: dict[str, Any] = answer.to_dict()
            return JSON(data)
        events = state.pump.events(lambda: engine.ask_stream(question, fallback=body.fallback))
        try:
            first = await events.__anext__()  # an error before the first event still gets a real status
        except StopAsyncIteration:
            first = None
        except BaseException:
            await events.aclose()
            raise
        return StreamingResponse(sse_body(first, events), media_type="text/event-stream", headers=SSE_HEADERS)

    return router
