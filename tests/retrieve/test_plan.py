"""Plan: address parsing, deterministic rounds, router-made plans (validated, capped, logged fallback)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from footnote.errors import ModelError
from footnote.models.protocols import ChatMessage
from footnote.records.fragments import AddressLocator
from footnote.retrieve.plan import (
    deterministic_second_round,
    first_round_plan,
    keywords,
    parse_addresses,
    sandhi_joined,
    second_round_plan,
    split_parts,
)
from footnote.settings import Settings, load_settings

# The defaults plus the demo's own names for its Harbour Book (demo/footnote.toml).
ALIASES = load_settings(Path(__file__).resolve().parents[2] / "demo" / "footnote.toml").corpus.book_aliases


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("BG 2.13", [("BG", "2.13")]),
        ("What does Bg. 2.13 say?", [("BG", "2.13")]),
        ("Bhagavad-gita 2.13", [("BG", "2.13")]),
        ("bhagavad gita 2.13", [("BG", "2.13")]),
        ("Что говорит БГ 2.13?", [("BG", "2.13")]),
        ("Бхагавад-гита 4.7", [("BG", "4.7")]),
        ("SB 1.2.6 and BG 18.66", [("SB", "1.2.6"), ("BG", "18.66")]),
        ("HB 1.2", [("HB", "1.2")]),
        ("BG 2:13", [("BG", "2.13")]),
        ("BG2.13", [("BG", "2.13")]),
        ("BG 1.16-18", [("BG", "1.16-18")]),
        ("BG 2.13, again BG 2.13", [("BG", "2.13")]),
        # QA: typed with a full-width keyboard (CJK input methods): the same address, not "nothing found"
        ("What does ＨＢ ３.２ say?", [("HB", "3.2")]),
        ("ＢＧ ２：１３", [("BG", "2.13")]),
    ],
)
def test_parse_addresses_forms(text: str, expected: list[tuple[str, str]]) -> None:
    got = parse_addresses(text, ALIASES)
    assert [(a.book, a.loc) for a in got] == expected
    assert all(a.label == f"{a.book} {a.loc}" for a in got)


def test_nonexistent_address_is_kept_exactly_never_rounded() -> None:
    assert parse_addresses("BG 19.5", ALIASES) == [AddressLocator("BG", "19.5", "BG 19.5")]
    assert parse_addresses("BG 2.130", ALIASES) == [AddressLocator("BG", "2.130", "BG 2.130")]


@pytest.mark.parametrize(
    "text",
    ["What is the population of Warsaw?", "The SBG 2.13 thing", "debug 2.13", "I sb 3 times", "", "BG"],
)
def test_no_address_in_ordinary_text(text: str) -> None:
    assert parse_addresses(text, ALIASES) == []


def test_aliases_come_from_settings() -> None:
    assert parse_addresses("Harbour Book 3.4", ALIASES) == [AddressLocator("HB", "3.4", "HB 3.4")]
    custom = {"ramayana": "RAM", "рам": "RAM"}
    assert parse_addresses("Ramayana 1.2 and BG 2.13", custom) == [AddressLocator("RAM", "1.2", "RAM 1.2")]
    assert parse_addresses("BG 2.13", {}) == []


def test_first_round_is_the_question_plus_addresses() -> None:
    s = Settings()
    plan = first_round_plan("  What does BG 2.13 say about the body?  ", s)
    assert plan.source == "deterministic"
    assert plan.lang == "en"
    assert len(plan.subquestions) == 1
    sq = plan.subquestions[0]
    assert sq.text == "What does BG 2.13 say about the body?"
    assert sq.paraphrases == ()
    assert sq.addresses == (AddressLocator("BG", "2.13", "BG 2.13"),)
    assert first_round_plan("Что такое душа?", s).lang == "ru"
    assert first_round_plan("Что такое душа?", s, lang="en").lang == "en"
    assert first_round_plan("What does BG 2.13 say about the body?", s) == plan  # deterministic


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("karmaṇy evādhikāras te", "karmaṇyevādhikāraste"),
        ("karmany evadhikaras te", "karmanyevadhikaraste"),
        ("karmaṇyevādhikāraste mā phaleṣu", "karmaṇyevādhikārastemāphaleṣu"),
    ],
)
def test_transliterated_phrase_gets_a_joined_paraphrase(text: str, joined: str) -> None:
    assert sandhi_joined(text) == joined
    plan = first_round_plan(text, Settings())
    assert plan.subquestions[0].paraphrases == (joined,)


@pytest.mark.parametrize("text", ["What is the capital of France?", "Warsaw Uprising", "karma", "Что такое карма?"])
def test_ordinary_questions_get_no_joined_paraphrase(text: str) -> None:
    assert sandhi_joined(text) is None


def test_keywords_and_split() -> None:
    assert keywords("What is the population of Warsaw?") == ["population", "Warsaw"]
    assert keywords("Какое население у Варшавы?") == ["население", "Варшавы"]
    assert split_parts("Who built the castle? When was it rebuilt?") == [
        "Who built the castle?",
        "When was it rebuilt?",
    ]
    assert split_parts("Who built the castle?") == ["Who built the castle?"]


def test_deterministic_second_round() -> None:
    s = Settings()
    plan, calls = second_round_plan("Who built the Royal Castle? When was it rebuilt after BG 2.13?", s, None)
    assert calls == 0
    assert plan.source == "deterministic"
    assert [q.text for q in plan.subquestions] == ["Who built the Royal Castle?", "When was it rebuilt after BG 2.13?"]
    assert plan.subquestions[0].paraphrases == ("built Royal Castle",)
    assert plan.subquestions[1].addresses == (AddressLocator("BG", "2.13", "BG 2.13"),)
    assert plan == deterministic_second_round("Who built the Royal Castle? When was it rebuilt after BG 2.13?", s)
    many = "A one? B two? C three? D four? E five? F six?"
    assert len(second_round_plan(many, s, None)[0].subquestions) == s.retrieve.max_subquestions


class ScriptedRouter:
    """A ChatModel that replays scripted replies and records the messages it got."""

    name = "scripted"

    def __init__(self, replies: Sequence[str | Exception]) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[list[ChatMessage], dict[str, Any] | None]] = []

    def complete(self, messages: Sequence[ChatMessage], *, json_schema: dict[str, Any] | None = None) -> str:
        self.calls.append((list(messages), json_schema))
        r = self.replies.pop(0)
        if isinstance(r, Exception):
            raise r
        return r

    def stream(self, messages: Sequence[ChatMessage]) -> Iterator[str]:  # pragma: no cover - unused
        yield self.complete(messages)


def test_router_plan_is_validated_and_capped() -> None:
    s = Settings()
    reply = {
        "subquestions": [
            {"text": "Who built the castle", "paraphrases": ["castle builder", "architect of the castle", "third", "x"]},
            {"text": "who built the castle", "paraphrases": []},  # duplicate: dropped
            {"text": "castle rebuilding date", "paraphrases": ["when rebuilt"]},
            {"text": "q3", "paraphrases": []},
            {"text": "q4", "paraphrases": []},
            {"text": "q5", "paraphrases": []},
        ]
    }
    router = ScriptedRouter([json.dumps(reply)])
    plan, calls = second_round_plan("Who built the castle in BG 2.13 and when?", s, router)
    assert calls == 1
    assert plan.source == "model"
    assert len(plan.subquestions) == 4
    assert plan.subquestions[0].paraphrases == ("castle builder", "architect of the castle")
    # the question's own address survives a rewrite that dropped it
    assert plan.subquestions[0].addresses == (AddressLocator("BG", "2.13", "BG 2.13"),)
    msgs, schema = router.calls[0]
    assert schema is not None and "subquestions" in schema["properties"]
    assert "Who built the castle in BG 2.13 and when?" in msgs[-1].content


def test_router_reply_in_code_fence_is_accepted() -> None:
    fenced = '```json\n{"subquestions":[{"text":"Warsaw population","paraphrases":["people in Warsaw"]}]}\n```'
    plan, calls = second_round_plan("How many people live in Warsaw?", Settings(), ScriptedRouter([fenced]))
    assert (plan.source, calls) == ("model", 1)
    assert plan.subquestions[0].paraphrases == ("people in Warsaw",)


@pytest.mark.parametrize(
    "reply",
    [
        "not json at all",
        '{"subquestions": []}',
        '{"subquestions": [{"paraphrases": ["x"]}]}',
        '{"answer": 42}',
        ModelError("router unreachable"),
    ],
)
def test_malformed_router_output_falls_back_and_logs(reply: str | Exception, caplog: pytest.LogCaptureFixture) -> None:
    s = Settings()
    q = "Who built the Royal Castle?"
    with caplog.at_level(logging.WARNING, logger="footnote.retrieve.plan"):
        plan, calls = second_round_plan(q, s, ScriptedRouter([reply]))
    assert calls == 1
    assert plan == deterministic_second_round(q, s)
    assert any("deterministic" in r.getMessage() for r in caplog.records)
