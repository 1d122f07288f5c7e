"""SQL both backends share, written once: statements with SQLite's ``?`` placeholders, which :func:`pg`
turns into psycopg's ``%s`` (none of them holds a literal ``?`` or ``%``), and the source listing's filter
and page clauses, and :class:`SourceListing` (listing, counting and grouping sources), the same on both."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from footnote.errors import NotFound
from footnote.records.fragments import Source
from footnote.store.conversations import TurnRecord, new_conversation_id, title_of


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


def append_turn_rows(
    run: Callable[[str, tuple[Any, ...]], Any], conversation_id: str | None, turn: TurnRecord, owner: str | None,
    answer: Any, now: float, *, lock: str = "", clean: Callable[[Any], Any] = lambda s: s,
) -> tuple[str, int]:
    """Write one turn in the caller's transaction: a new conversation titled by its first question, or the
    next turn of one ``owner`` has (else :class:`NotFound`); returns (conversation id, turn number).
    ``run`` executes a ``?`` statement on the backend's connection; ``answer``: the turn's answer as the
    backend stores JSON; ``lock``: the dialect's row lock on the conversation (PostgreSQL's ``FOR UPDATE``
    orders concurrent appends; SQLite's one writer needs none); ``clean``: what text must lose to be stored."""
    if conversation_id is None:
        cid = new_conversation_id()
        run("INSERT INTO conversations (id, title, created_at, updated_at, owner) VALUES (?, ?, ?, ?, ?)",
            (cid, clean(title_of(turn.question)), now, now, clean(owner or "")))
        n = 1
    else:
        cid = conversation_id
        got = run("SELECT owner FROM conversations WHERE id = ?" + lock, (cid,)).fetchone()
        if got is None or (owner is not None and got[0] != owner):
            raise NotFound(f"no conversation {cid!r}")
        row = run("SELECT COALESCE(MAX(n), 0) + 1 FROM conversation_turns WHERE conversation_id = ?", (cid,)).fetchone()
        n = int(row[0]) if row else 1
        run("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, cid))
    run("INSERT INTO conversation_turns (conversation_id, n, question, rewritten_question, answer, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)", (cid, n, clean(turn.question), clean(turn.rewritten_question), answer, now))
    return cid, n

#: the columns of a source row, in the order both backends' row readers take them
SOURCE_COLS = "id, kind, title, lang, content_hash, blob_sha256, original_name, media_type, origin, meta, collection"


class SourceListing:
    """``list_sources``, ``count_sources`` and ``collections`` of the ``Store`` protocol, written once. A
    backend gives the statement runner (``?`` placeholders), its row reader, its "no limit" and how it
    cleans filter values."""

    #: the backend's LIMIT for "no limit" with an OFFSET (SQLite: -1, PostgreSQL: NULL)
    no_limit: ClassVar[Any] = None

    def _select(self, statement: str, args: Sequence[Any]) -> list[Sequence[Any]]:
        raise NotImplementedError

    @staticmethod
    def _source_from_row(row: Sequence[Any]) -> Source:
        raise NotImplementedError

    @staticmethod
    def _filter_value(value: str) -> str:
        return value

    def list_sources(
        self,
        *,
        kind: str | None = None,
        lang: str | None = None,
        collection: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Source]:
        where, args = source_filter(kind, lang, collection, self._filter_value)
        page, more = page_clause(limit, offset, self.no_limit)
        rows = self._select(f"SELECT {SOURCE_COLS} FROM sources{where} ORDER BY id{page}", args + more)
        return [self._source_from_row(r) for r in rows]

    def count_sources(self, *, kind: str | None = None, lang: str | None = None, collection: str | None = None) -> int:
        where, args = source_filter(kind, lang, collection, self._filter_value)
        rows = self._select(f"SELECT count(*) FROM sources{where}", args)
        return int(rows[0][0]) if rows else 0

    def collections(self) -> dict[str, int]:
        rows = self._select("SELECT collection, count(*) FROM sources GROUP BY collection ORDER BY collection", [])
        return {str(c): int(n) for c, n in rows}

    def fragment_counts(self, collections: Sequence[str]) -> list[tuple[str, str, int]]:
        """(kind, lang, fragments) of the sources in ``collections``."""
        if not collections:
            return []
        marks = ", ".join("?" * len(collections))
        rows = self._select("SELECT f.kind, f.lang, count(*) FROM fragments f JOIN sources s ON s.id = f.source_id"
                            f" WHERE s.collection IN ({marks}) GROUP BY f.kind, f.lang",
                            [self._filter_value(c) for c in collections])
        return [(str(k), str(lang), int(n)) for k, lang, n in rows]

    def source_collections(self) -> dict[str, str]:
        return {str(i): str(c) for i, c in self._select("SELECT id, collection FROM sources", [])}
