"""Each check runs once per turn: a question the edge checked (``Engine.question``: the server's 422) and a
conversation id it checked (the 404) are typed as checked, and the engine takes them as they are."""

from __future__ import annotations

from typing import Any

import pytest

from footnote import engine as engine_mod
from footnote.errors import InvalidQuestion, NotFound
from footnote.store import conversations

from .conftest import FOG_Q


def test_a_checked_question_is_not_checked_again(build_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    eng = build_engine()
    calls: list[str] = []
    real = engine_mod.check_question

    def counting(question: str, max_chars: int) -> Any:
        calls.append(question)
        return real(question, max_chars)

    monkeypatch.setattr(engine_mod, "check_question", counting)
    q = eng.question(f"  {FOG_Q}\u200b ")
    assert q == FOG_Q and isinstance(q, engine_mod.Question) and calls == [f"  {FOG_Q}\u200b "]
    assert eng.question(q) is q and len(calls) == 1
    a = eng.ask(q)
    assert a.citations and len(calls) == 1  # the turn took it as checked
    eng.ask(FOG_Q)  # a plain string is checked, once
    assert len(calls) == 2
    with pytest.raises(InvalidQuestion):
        eng.question("   ")


def test_a_checked_conversation_id_is_not_checked_again(build_engine: Any) -> None:
    eng = build_engine()
    first = eng.ask(FOG_Q, remember=True)
    assert first.conversation_id
    cid = conversations.check_conversation_id(first.conversation_id)
    assert isinstance(cid, conversations.ConversationId) and conversations.check_conversation_id(cid) is cid
    follow = eng.ask("And at night?", conversation_id=cid)
    assert follow.conversation_id == cid and follow.turn == 2
    with pytest.raises(NotFound):
        conversations.check_conversation_id("not-an-id")


def test_a_question_in_look_alike_letters_gets_the_plain_questions_answer(build_engine: Any) -> None:
    """A question typed with Cyrillic look-alikes inside English words, or in full-width letters, is read as meant
    (``text.unmix_letters``): the same checked question, so the same passages and citations — before, its words
    matched nothing and the gate said "nothing on this"."""
    eng = build_engine()
    disguised = FOG_Q.replace("o", "\u043e").replace("e", "\u0435")  # Cyrillic о and е
    full_width = "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in FOG_Q)
    assert disguised != FOG_Q and full_width != FOG_Q
    plain = eng.ask(FOG_Q)
    assert plain.citations
    for typed in (disguised, full_width):
        assert eng.question(typed) == FOG_Q
        got = eng.ask(typed)
        assert got.answer == plain.answer and [c.fragment.id for c in got.citations] == [c.fragment.id for c in plain.citations]


@pytest.mark.parametrize("noise", ["?!?!... ,,, ;;; ---", "¿¡…", "🔥🔥🔥"])
def test_a_question_without_a_letter_or_digit_is_refused_with_the_reason(build_engine: Any, noise: str) -> None:
    eng = build_engine()
    with pytest.raises(InvalidQuestion, match="no words to search for"):
        eng.question(noise)
    assert eng.question("42?") == "42?"  # a digit is something to search for
