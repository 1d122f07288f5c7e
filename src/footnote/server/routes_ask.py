"""``POST /api/ask``: the turn as Server-Sent Events, or the Answer JSON (``footnote ask --json``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from footnote.answer.types import Error
from footnote.errors import NotFound
from footnote.server.readers import hand_out, reader_of
from footnote.server.sse import sse_body
from footnote.server.state import JSON, ServerState
from footnote.store.conversations import check_conversation_id

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The question, in any language.")
    fallback: bool | None = Field(
        None, description="Allow (true) or forbid (false) the general-knowledge fallback for this turn; null: the server's setting."
    )
    stream: bool = Field(True, description="Stream Server-Sent Events (true) or return the Answer JSON (false).")
    conversation_id: str | None = Field(
        None,
        description="Continue this conversation: the question is understood as a follow-up (rewritten into a "
        "standalone question, sent as an `understood` event) and the turn is saved there. Null: a new "
        "conversation (when `conversation.keep`). The `done` event names it in `conversation_id`. A conversation "
        "belongs to the reader who started it (the `footnote_reader` cookie or `X-Footnote-Reader` header, handed "
        "out on a reader's first ask): another reader's id is a 404.",
    )


def wants_json(request: Request, body: AskRequest) -> bool:
    if not body.stream:
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/event-stream" not in accept


def make_router(state: ServerState) -> APIRouter:
    router = APIRouter(tags=["ask"])

    @router.post(
        "/api/ask",
        response_model=None,
        responses={
            200: {
                "description": "text/event-stream of `understood` (a follow-up's standalone question), `stage`, `token`, `citation`, `verdict`, `done` (the Answer) "
                "and `error` events; with `stream: false` or `Accept: application/json`, the Answer JSON.",
                "content": {"text/event-stream": {}, "application/json": {}},
            },
            413: {"description": "Request body over `server.max_request_bytes`."},
            404: {"description": "`conversation_id` names no conversation of this reader."},
            400: {"description": "A malformed reader token."},
            422: {"description": "Empty question, question over `answer.max_question_chars`, not valid Unicode, or a malformed body."},
            503: {"description": "The store is unavailable (before the stream starts)."},
        },
    )
    async def ask(body: AskRequest, request: Request) -> Response:
        """Answer a question from the corpus, with citations resolved on the server."""
        engine = state.engine_for(request)  # the collections the request's key reads, and no other
        question = engine.question(body.question)  # the engine's one check: 422 before anything runs
        cid = body.conversation_id
        if cid is not None:
            cid = check_conversation_id(cid)  # 404 before anything runs; the engine takes it as checked
        remember = state.settings.conversation.keep
        reader = reader_of(request, state.settings.server)
        if reader.new and cid is not None:  # a reader with no token owns no conversation
            raise NotFound(f"no conversation {cid!r}")
        owner = state.access(request).owner(reader.token)  # a reader's conversations under this key only
        if wants_json(request, body):
            answer = await run_in_threadpool(
                lambda: engine.ask(question, fallback=body.fallback, conversation_id=cid, remember=remember, owner=owner)
            )
            data: dict[str, Any] = answer.to_dict()
            resp: Response = JSON(data)
            hand_out(resp, reader, request, state.settings.server)
            return resp
        events = state.pump.events(lambda stop: engine.ask_stream(
            question, fallback=body.fallback, stop=stop, conversation_id=cid, remember=remember, owner=owner
        ))
        try:
            first = await events.__anext__()  # an error before the first event still gets a real status
        except StopAsyncIteration:
            first = None
        except BaseException:
            await events.aclose()
            raise
        if isinstance(first, Error):  # failed before anything was shown (store down): the JSON path's status
            await events.aclose()
            raise first.exc
        resp = StreamingResponse(sse_body(first, events, state.secrets), media_type="text/event-stream", headers=SSE_HEADERS)
        hand_out(resp, reader, request, state.settings.server)
        return resp

    return router
