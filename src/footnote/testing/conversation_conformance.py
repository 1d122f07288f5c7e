"""Conformance mixin for conversations (``ConversationStore``): both backends pass it unchanged.

Use it beside the store suite::

    class TestMyBackend(StoreConformance, ConversationConformance):
        @pytest.fixture
        def store(self, tmp_path): ...
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from footnote.errors import NotFound
from footnote.store.conversations import TurnRecord, new_conversation_id, owner_of, stored_answer
from footnote.store.protocol import Store


def answer_dict(text: str, *, n_citations: int = 1) -> dict[str, Any]:
    """An answer contract as ``Answer.to_dict()`` writes it (what a turn stores)."""
    return {
        "answer": text,
        "citations": [
            {"n": i, "source_id": f"src-{i}", "fragment_id": f"src-{i}#0", "kind": "letter",
             "locator": {"type": "file", "file": f"src-{i}.txt", "page": i, "section": None},
             "text": f"passage {i} — «ё» 🌊", "title": f"Title {i}"}
            for i in range(1, n_citations + 1)
        ],
        "verdict": "sufficient", "corpus_insufficient": False, "mode": "corpus", "disclaimer": None,
        "dropped_citations": 0, "removed_mentions": 0, "removed_sentences": 0, "model_calls": 0, "lang": "en",
        "trace": {"stages": [1, 2, 3]},
    }


class ConversationConformance:
    """Conversation semantics every backend keeps (needs the suite's ``store`` fixture)."""

    def test_new_conversation_and_follow_up(self, store: Store) -> None:
        assert store.list_conversations() == []
        cid, n = store.append_turn(None, TurnRecord("Why do fog horns sound?", stored_answer(answer_dict("Because [1]."))))
        assert n == 1 and len(cid) == 32
        cid2, n2 = store.append_turn(
            cid, TurnRecord("What about at night?", answer_dict("At night too [1] [2].", n_citations=2),
                            rewritten_question="What about fog horns at night?")
        )
        assert (cid2, n2) == (cid, 2)
        conv = store.get_conversation(cid)
        assert conv is not None and conv.title == "Why do fog horns sound?"
        assert [t.n for t in conv.turns] == [1, 2]
        assert [t.question for t in conv.turns] == ["Why do fog horns sound?", "What about at night?"]
        assert conv.turns[0].rewritten_question is None
        assert conv.turns[1].rewritten_question == "What about fog horns at night?"
        assert conv.turns[1].answer["answer"] == "At night too [1] [2]."
        assert [c["n"] for c in conv.turns[1].answer["citations"]] == [1, 2]
        assert conv.turns[1].answer["citations"][0]["text"] == "passage 1 — «ё» 🌊"
        assert conv.turns[1].answer["citations"][0]["locator"]["page"] == 1
        assert "trace" not in conv.turns[0].answer  # stored_answer leaves the trace out
        assert conv.updated_at >= conv.created_at

    def test_list_most_recent_first_with_paging(self, store: Store) -> None:
        a, _ = store.append_turn(None, TurnRecord("first", answer_dict("a")))
        b, _ = store.append_turn(None, TurnRecord("second", answer_dict("b")))
        store.append_turn(a, TurnRecord("first again", answer_dict("c")))  # a is now the most recent
        got = store.list_conversations()
        assert [c.id for c in got] == [a, b]
        assert [c.turns for c in got] == [2, 1]
        assert got[0].title == "first"
        assert [c.id for c in store.list_conversations(limit=1)] == [a]
        assert [c.id for c in store.list_conversations(limit=1, offset=1)] == [b]
        assert store.list_conversations(limit=5, offset=2) == []

    def test_delete(self, store: Store) -> None:
        a, _ = store.append_turn(None, TurnRecord("one", answer_dict("a")))
        b, _ = store.append_turn(None, TurnRecord("two", answer_dict("b")))
        store.append_turn(a, TurnRecord("one more", answer_dict("c")))
        assert store.delete_conversation(a) is True
        assert store.get_conversation(a) is None
        assert store.delete_conversation(a) is False
        assert [c.id for c in store.list_conversations()] == [b]
        with pytest.raises(NotFound):
            store.append_turn(a, TurnRecord("after delete", answer_dict("d")))
        assert store.get_conversation(a) is None  # the refused append left nothing behind

    def test_unknown_conversation(self, store: Store) -> None:
        unknown = new_conversation_id()
        assert store.get_conversation(unknown) is None
        with pytest.raises(NotFound):
            store.append_turn(unknown, TurnRecord("q", answer_dict("a")))
        assert store.list_conversations() == []

    def test_long_title_and_odd_text(self, store: Store) -> None:
        q = "Fog\u00a0horn " * 60 + "\x00end"
        cid, _ = store.append_turn(None, TurnRecord(q, answer_dict("nul\x00inside")))
        conv = store.get_conversation(cid)
        assert conv is not None and len(conv.title) <= 120 and conv.title.endswith("…")
        assert conv.turns[0].question.endswith("end")
        assert conv.turns[0].answer["answer"].startswith("nul") and conv.turns[0].answer["answer"].endswith("inside")

    def test_conversations_do_not_touch_the_corpus(self, store: Store) -> None:
        before = store.stats()
        store.append_turn(None, TurnRecord("q", answer_dict("a")))
        after = store.stats()
        assert (after.sources, after.fragments, after.embedded) == (before.sources, before.fragments, before.embedded)

    def test_concurrent_appends_number_turns_without_gaps(self, store: Store) -> None:
        cid, _ = store.append_turn(None, TurnRecord("start", answer_dict("a")))
        errors: list[BaseException] = []

        def add(i: int) -> None:
            try:
                store.append_turn(cid, TurnRecord(f"turn {i}", answer_dict(str(i))))
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=add, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        conv = store.get_conversation(cid)
        assert conv is not None and [t.n for t in conv.turns] == list(range(1, 10))

    def test_each_owner_reaches_only_their_own(self, store: Store) -> None:
        alice, bob = owner_of("alice-token-" + "a" * 20), owner_of("bob-token-" + "b" * 20)
        a, _ = store.append_turn(None, TurnRecord("Alice's question", answer_dict("a")), alice)
        b, _ = store.append_turn(None, TurnRecord("Bob's question", answer_dict("b")), bob)
        legacy, _ = store.append_turn(None, TurnRecord("before owners", answer_dict("c")))  # owner ''
        assert [c.id for c in store.list_conversations(owner=alice)] == [a]
        assert [c.id for c in store.list_conversations(owner=bob)] == [b]
        assert {c.id for c in store.list_conversations()} == {a, b, legacy}  # no owner: the operator sees all
        assert store.get_conversation(a, bob) is None and store.get_conversation(legacy, bob) is None
        got = store.get_conversation(a, alice)
        assert got is not None and got.title == "Alice's question"
        with pytest.raises(NotFound):
            store.append_turn(a, TurnRecord("Bob writes into Alice's", answer_dict("x")), bob)
        assert store.delete_conversation(a, bob) is False
        conv = store.get_conversation(a)
        assert conv is not None and len(conv.turns) == 1  # Bob's attempts changed nothing
        assert store.append_turn(a, TurnRecord("Alice again", answer_dict("y")), alice) == (a, 2)
        assert store.append_turn(a, TurnRecord("the operator", answer_dict("z"))) == (a, 3)  # owner None: any
        assert [c.id for c in store.list_conversations(owner=alice)] == [a]  # still Alice's
        assert store.delete_conversation(a, alice) is True and store.get_conversation(a) is None
        assert store.get_conversation(b, bob) is not None
