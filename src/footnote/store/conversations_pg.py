"""Conversations on the PostgreSQL store (migrations 0007, 0009 owner): a mixin of :class:`~footnote.store.postgres.PostgresStore`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.types.json import Jsonb

from footnote.errors import StoreError
from footnote.store.conversations import (
    Conversation,
    ConversationSummary,
    TurnRecord,
)
from footnote.store.sql import CONVERSATION_ROW, CONVERSATION_TURNS, append_turn_rows, pg

if TYPE_CHECKING:
    from footnote.store.pg_support import Pool

_SUMMARY = (
    "SELECT c.id, c.title, c.created_at, c.updated_at,"
    " (SELECT COUNT(*) FROM conversation_turns t WHERE t.conversation_id = c.id) FROM conversations c"
)


def _clean(s: str | None) -> str | None:
    """PostgreSQL text cannot hold NUL."""
    return None if s is None else s.replace("\x00", " ")


class PgConversations:
    """``ConversationStore`` over the host store's pool."""

    if TYPE_CHECKING:  # provided by PostgresStore
        url: str
        _pool: Pool

    def append_turn(self, conversation_id: str | None, turn: TurnRecord, owner: str | None = None) -> tuple[str, int]:
        now = time.time()
        try:
            with self._pool.connection() as conn, conn.transaction():
                # the row lock orders concurrent appends to one conversation
                return append_turn_rows(lambda q, a: conn.execute(pg(q), a), conversation_id, turn, owner,
                                        Jsonb(_strip_nul(turn.answer)), now, lock=" FOR UPDATE", clean=_clean)
        except psycopg.Error as e:
            raise StoreError(f"saving the turn in {self.url} failed: {e}") from e

    def get_conversation(self, conversation_id: str, owner: str | None = None) -> Conversation | None:
        with self._pool.connection() as conn, conn.transaction():
            row = conn.execute(pg(CONVERSATION_ROW), (conversation_id,)).fetchone()
            if row is None or (owner is not None and row[4] != owner):
                return None
            turns = conn.execute(pg(CONVERSATION_TURNS), (conversation_id,)).fetchall()
        return Conversation(row[0], row[1], float(row[2]), float(row[3]), tuple(
            TurnRecord(question=t[1], answer=dict(t[3]), rewritten_question=t[2], n=int(t[0]), created_at=float(t[4]))
            for t in turns
        ))

    def list_conversations(self, limit: int = 50, offset: int = 0, owner: str | None = None) -> list[ConversationSummary]:
        page = (max(0, int(limit)), max(0, int(offset)))
        with self._pool.connection() as conn:
            if owner is None:
                rows = conn.execute(_SUMMARY + " ORDER BY c.updated_at DESC, c.id LIMIT %s OFFSET %s", page).fetchall()
            else:
                rows = conn.execute(
                    _SUMMARY + " WHERE c.owner = %s ORDER BY c.updated_at DESC, c.id LIMIT %s OFFSET %s",
                    (_clean(owner), *page),
                ).fetchall()
        return [ConversationSummary(r[0], r[1], float(r[2]), float(r[3]), int(r[4])) for r in rows]

    def delete_conversation(self, conversation_id: str, owner: str | None = None) -> bool:
        with self._pool.connection() as conn, conn.transaction():
            if owner is None:
                cur = conn.execute("DELETE FROM conversations WHERE id = %s", (conversation_id,))
            else:
                cur = conn.execute("DELETE FROM conversations WHERE id = %s AND owner = %s", (conversation_id, _clean(owner)))
            return bool(cur.rowcount)


def _strip_nul(v: Any) -> Any:
    """jsonb cannot hold U+0000 either."""
    if isinstance(v, str):
        return v.replace("\x00", " ")
    if isinstance(v, dict):
        return {k: _strip_nul(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_strip_nul(x) for x in v]
    return v
