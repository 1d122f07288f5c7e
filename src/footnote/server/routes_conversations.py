"""``/api/conversations``: the conversations the chat keeps (list, one with its turns, delete) — each
reader's own only (``footnote.server.readers``): another reader's id is a 404."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from footnote.errors import NotFound
from footnote.server.export import ExportFormat, export_conversation
from footnote.server.readers import presented_token
from footnote.server.state import JSON, ServerState
from footnote.store.conversations import Conversation, check_conversation_id
from footnote.store.protocol import INT_MAX


def make_router(state: ServerState) -> APIRouter:
    router = APIRouter(tags=["conversations"])
    max_limit = state.settings.conversation.list_limit_max
    srv = state.settings.server

    def owner(request: Request) -> str | None:
        """The reader's token joined with the key: conversations made under another key are not theirs here."""
        token = presented_token(request, srv)
        return state.access(request).owner(token) if token else None

    async def own(conversation_id: str, request: Request) -> Conversation:
        """The reader's conversation ``conversation_id``; another reader's, or none, is a 404 alike."""
        cid = check_conversation_id(conversation_id)
        who = owner(request)
        conv = await run_in_threadpool(state.engine.store.get_conversation, cid, who) if who else None
        if conv is None:
            raise NotFound(f"no conversation {conversation_id!r}")
        return conv

    @router.get("/api/conversations", responses={422: {"description": "`limit` or `offset` out of range."}})
    async def list_conversations(
        request: Request,
        limit: int = Query(50, ge=1, le=max_limit, description="Conversations per page."),
        offset: int = Query(0, ge=0, le=INT_MAX, description="Conversations to skip (most recently updated first)."),
    ) -> JSON:
        """The reader's conversations, most recently updated first: id, title (the first question), times,
        turn count. A reader with no token (cookie or `X-Footnote-Reader`) has none."""
        who = owner(request)
        if who is None:
            return JSON({"conversations": [], "next_offset": None})
        rows = await run_in_threadpool(state.engine.store.list_conversations, limit + 1, offset, who)
        more = len(rows) > limit
        return JSON({
            "conversations": [c.to_dict() for c in rows[:limit]],
            "next_offset": offset + limit if more else None,
        })

    @router.get("/api/conversations/{conversation_id}",
                responses={404: {"description": "No such conversation, or another reader's."}})
    async def get_conversation(conversation_id: str, request: Request) -> JSON:
        """One of the reader's conversations: its turns in order, each with the question, the standalone
        question it searched for, and the answer with its citations."""
        return JSON((await own(conversation_id, request)).to_dict())

    @router.get("/api/conversations/{conversation_id}/export",
                responses={404: {"description": "No such conversation or turn, or another reader's."},
                           422: {"description": "`format` is not md or html, or `turn` is out of range."},
                           200: {"content": {"text/markdown": {}, "text/html": {}},
                                 "description": "The file, as an attachment."}})
    async def export(
        conversation_id: str, request: Request,
        format: Annotated[ExportFormat, Query(description="`md` (Markdown) or `html` (one self-contained page).")] = (
            ExportFormat.MARKDOWN),
        turn: Annotated[int | None, Query(ge=1, le=INT_MAX, description="Only this turn (one answer); all when absent.")] = (
            None),
    ) -> Response:
        """One of the reader's conversations (or one answer of it) as a file to take away: each question, the
        answer as shown, numbered citations linking to the original at the cited place on this server, and an
        abstention shown as one (docs/conversations.md, "Export")."""
        conv = await own(conversation_id, request)
        if turn is not None and all(t.n != turn for t in conv.turns):
            raise NotFound(f"no conversation {conversation_id!r} turn {turn}")
        base = srv.public_url or str(request.base_url)
        body = export_conversation(conv, format, base, turn)
        name = f"footnote-{conv.id[:8]}" + (f"-{turn}" if turn else "") + f".{format.value}"
        media = "text/markdown" if format is ExportFormat.MARKDOWN else "text/html"
        return Response(body, media_type=f"{media}; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"',
                                 "X-Content-Type-Options": "nosniff"})

    @router.delete("/api/conversations/{conversation_id}",
                   responses={404: {"description": "No such conversation, or another reader's."}})
    async def delete_conversation(conversation_id: str, request: Request) -> JSON:
        """Remove one of the reader's conversations and its turns."""
        cid = check_conversation_id(conversation_id)
        who = owner(request)
        if not who or not await run_in_threadpool(state.engine.store.delete_conversation, cid, who):
            raise NotFound(f"no conversation {conversation_id!r}")
        return JSON({"deleted": cid})

    return router
