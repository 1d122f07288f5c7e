"""``/api/conversations``: the conversations the chat keeps (list, one with its turns, delete)."""

from __future__ import annotations

from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool

from footnote.errors import NotFound
from footnote.server.state import JSON, ServerState
from footnote.store.conversations import check_conversation_id


def make_router(state: ServerState) -> APIRouter:
    router = APIRouter(tags=["conversations"])
    max_limit = state.settings.conversation.list_limit_max

    @router.get("/api/conversations", responses={422: {"description": "`limit` or `offset` out of range."}})
    async def list_conversations(
        limit: int = Query(50, ge=1, le=max_limit, description="Conversations per page."),
        offset: int = Query(0, ge=0, description="Conversations to skip (most recently updated first)."),
    ) -> JSON:
        """Conversations, most recently updated first: id, title (the first question), times, turn count."""
        rows = await run_in_threadpool(state.engine.store.list_conversations, limit + 1, offset)
        more = len(rows) > limit
        return JSON({
            "conversations": [c.to_dict() for c in rows[:limit]],
            "next_offset": offset + limit if more else None,
        })

    @router.get("/api/conversations/{conversation_id}", responses={404: {"description": "No such conversation."}})
    async def get_conversation(conversation_id: str) -> JSON:
        """One conversation: its turns in order, each with the question, the standalone question it
        searched for, and the answer with its citations."""
        cid = check_conversation_id(conversation_id)
        conv = await run_in_threadpool(state.engine.store.get_conversation, cid)
        if conv is None:
            raise NotFound(f"no conversation {conversation_id!r}")
        return JSON(conv.to_dict())

    @router.delete("/api/conversations/{conversation_id}", responses={404: {"description": "No such conversation."}})
    async def delete_conversation(conversation_id: str) -> JSON:
        """Remove a conversation and its turns."""
        cid = check_conversation_id(conversation_id)
        if not await run_in_threadpool(state.engine.store.delete_conversation, cid):
            raise NotFound(f"no conversation {conversation_id!r}")
        return JSON({"deleted": cid})

    return router
