"""SQL both backends share, written once: statements with SQLite's ``?`` placeholders, which :func:`pg`
turns into psycopg's ``%s`` (none of them holds a literal ``?`` or ``%``), and the source listing's filter
and page clauses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def pg(statement: str) -> str:
    """``statement`` with psycopg's placeholders."""
    return statement.replace("?", "%s")


def source_filter(kind: str | None, lang: str | None, collection: str | None,
                  clean: Callable[[str], str] = str) -> tuple[str, list[Any]]:
    """``WHERE`` over the filters given (``?`` placeholders) and its arguments."""
    conds, args = [], []
    for col, val in (("kind", kind), ("lang", lang), ("collection", collection)):
        if val is not None:
            conds.append(f"{col} = ?")
            args.append(clean(val))
    return (" WHERE " + " AND ".join(conds)) if conds else "", args


def page_clause(limit: int | None, offset: int, unlimited: Any) -> tuple[str, list[Any]]:
    """``LIMIT ? OFFSET ?`` and its arguments (``unlimited``: the backend's "no limit"), or nothing."""
    if limit is None and not offset:
        return "", []
    return " LIMIT ? OFFSET ?", [unlimited if limit is None else max(0, int(limit)), max(0, int(offset))]


# a conversation and its turns (store/conversations_*.py)
CONVERSATION_ROW = "SELECT id, title, created_at, updated_at, owner FROM conversations WHERE id = ?"
CONVERSATION_TURNS = ("SELECT n, question, rewritten_question, answer, created_at FROM conversation_turns"
                      " WHERE conversation_id = ? ORDER BY n")
