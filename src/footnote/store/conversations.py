"""Conversations: the turns of a chat kept in the store (both backends), so a reload, a permalink or
``footnote ask --conversation ID`` continues it.

A conversation is a list of turns; a turn keeps the question as asked, the standalone question the
turn searched for (``rewritten_question``, when the follow-up was rewritten) and the answer contract
(``Answer.to_dict()`` without its trace: text, citations, verdict, mode, disclaimer). Ids are random
128-bit hex strings (a permalink is as hard to guess as a key). Each conversation has an ``owner``: the
server stores the SHA-256 of the reader's token (``owner_of``) and every read, list, append and delete
through HTTP names it, so one reader never sees another's conversations; ``owner=None`` (the CLI, the
operator) reaches them all.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from footnote.errors import NotFound

#: Shape of a conversation id (``new_conversation_id``); anything else is refused before the store sees it.
ID_RE = re.compile(r"^[0-9a-f]{32}$")
#: Characters of the first question kept as a conversation's title.
TITLE_CHARS = 120


def new_conversation_id() -> str:
    return secrets.token_hex(16)


class ConversationId(str):
    """A conversation id that passed :func:`check_conversation_id`: not checked again further in."""

    __slots__ = ()


def check_conversation_id(cid: str) -> ConversationId:
    """``cid`` if it has the shape of a conversation id, else :class:`NotFound` (never a store query); once:
    a :class:`ConversationId` is returned as it is."""
    if isinstance(cid, ConversationId):
        return cid
    if not isinstance(cid, str) or not ID_RE.match(cid):
        raise NotFound(f"no conversation {cid!r} (a conversation id is 32 hex digits)")
    return ConversationId(cid)


def owner_of(token: str) -> str:
    """What a conversation stores of its reader's token: its SHA-256 (hex), so the store never holds a
    token a reader could present."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def title_of(question: str) -> str:
    q = " ".join(question.split())
    return q if len(q) <= TITLE_CHARS else q[: TITLE_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True)
class TurnRecord:
    """One stored turn. ``answer`` is ``Answer.to_dict()`` (its trace left out); ``n`` counts from 1."""

    question: str
    answer: dict[str, Any]
    rewritten_question: str | None = None
    n: int = 0
    created_at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "question": self.question,
            "rewritten_question": self.rewritten_question,
            "created_at": self.created_at,
            "answer": self.answer,
        }


@dataclass(frozen=True)
class ConversationSummary:
    id: str
    title: str
    created_at: float
    updated_at: float
    turns: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "created_at": self.created_at,
                "updated_at": self.updated_at, "turns": self.turns}


@dataclass(frozen=True)
class Conversation:
    id: str
    title: str
    created_at: float
    updated_at: float
    turns: tuple[TurnRecord, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "created_at": self.created_at,
                "updated_at": self.updated_at, "turns": [t.to_dict() for t in self.turns]}


@runtime_checkable
class ConversationStore(Protocol):
    """What a store keeps of conversations (the conformance mixin ``ConversationConformance`` checks it)."""

    def append_turn(self, conversation_id: str | None, turn: TurnRecord, owner: str | None = None) -> tuple[str, int]:
        """Append ``turn`` to the conversation (a new one when ``conversation_id`` is None, titled by the
        question and owned by ``owner``, '' when None) in one transaction; returns (conversation id, the
        turn's number). NotFound when the conversation does not exist (deleted meanwhile) or, with an
        ``owner``, belongs to another reader."""
        ...

    def get_conversation(self, conversation_id: str, owner: str | None = None) -> Conversation | None:
        """The conversation with its turns in order, or None (also when ``owner`` is given and is not its owner)."""
        ...

    def list_conversations(self, limit: int = 50, offset: int = 0, owner: str | None = None) -> list[ConversationSummary]:
        """Conversations, most recently updated first (only ``owner``'s when given; every one when None)."""
        ...

    def delete_conversation(self, conversation_id: str, owner: str | None = None) -> bool:
        """Remove the conversation and its turns; False when there was none (or it is not ``owner``'s)."""
        ...


def stored_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """What a turn keeps of an answer contract: everything but the trace (stages, scores, timings) and
    the conversation fields (the turn's own place says those)."""
    return {k: v for k, v in answer.items() if k not in ("trace", "conversation_id", "turn")}
