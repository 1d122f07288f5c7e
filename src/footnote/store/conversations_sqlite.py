"""Conversations on the SQLite store (migrations 0004, 0006 owner): a mixin of :class:`~footnote.store.sqlite.SqliteStore`.

Writes take the store's write lock and one ``BEGIN IMMEDIATE`` transaction but leave the corpus
generation alone (the dense cache does not care about chats)."""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footnote.store.conversations import (
    Conversation,
    ConversationSummary,
    TurnRecord,
)
from footnote.store.sql import CONVERSATION_ROW, CONVERSATION_TURNS, append_turn_rows

_SUMMARY = (
    "SELECT c.id, c.title, c.created_at, c.updated_at,"
    " (SELECT COUNT(*) FROM conversation_turns t WHERE t.conversation_id = c.id) FROM conversations c"
)


class SqliteConversations:
    """``ConversationStore`` over the host store's connections (``_conn``, ``_immediate``, ``_read``)."""

    if TYPE_CHECKING:  # provided by SqliteStore
        path: Path

        def _conn(self) -> sqlite3.Connection: ...

        def _immediate(self, conn: sqlite3.Connection, locked: str, failed: str) -> AbstractContextManager[None]: ...

        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def append_turn(self, conversation_id: str | None, turn: TurnRecord, owner: str | None = None) -> tuple[str, int]:
        conn = self._conn()
        now = time.time()
        with self._immediate(conn, "the store is locked by another writer", "saving the turn failed"):
            return append_turn_rows(conn.execute, conversation_id, turn, owner,
                                    json.dumps(turn.answer, ensure_ascii=False), now)

    def get_conversation(self, conversation_id: str, owner: str | None = None) -> Conversation | None:
        with self._read() as conn:
            row = conn.execute(CONVERSATION_ROW, (conversation_id,)).fetchone()
            if row is None or (owner is not None and row[4] != owner):
                return None
            turns = conn.execute(CONVERSATION_TURNS, (conversation_id,)).fetchall()
        return Conversation(row[0], row[1], row[2], row[3], tuple(_turn(t) for t in turns))

    def list_conversations(self, limit: int = 50, offset: int = 0, owner: str | None = None) -> list[ConversationSummary]:
        page = (max(0, int(limit)), max(0, int(offset)))
        if owner is None:
            rows = self._conn().execute(_SUMMARY + " ORDER BY c.updated_at DESC, c.id LIMIT ? OFFSET ?", page).fetchall()
        else:
            rows = self._conn().execute(
                _SUMMARY + " WHERE c.owner = ? ORDER BY c.updated_at DESC, c.id LIMIT ? OFFSET ?", (owner, *page)
            ).fetchall()
        return [ConversationSummary(*r) for r in rows]

    def delete_conversation(self, conversation_id: str, owner: str | None = None) -> bool:
        conn = self._conn()
        with self._immediate(conn, "the store is locked by another writer", "deleting the conversation failed"):
            row = conn.execute("SELECT owner FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
            if row is None or (owner is not None and row[0] != owner):
                return False
            conn.execute("DELETE FROM conversation_turns WHERE conversation_id = ?", (conversation_id,))
            gone = conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,)).rowcount
        return bool(gone)


def _turn(row: tuple[Any, ...]) -> TurnRecord:
    return TurnRecord(question=row[1], answer=json.loads(row[3]), rewritten_question=row[2], n=int(row[0]),
                      created_at=float(row[4]))
