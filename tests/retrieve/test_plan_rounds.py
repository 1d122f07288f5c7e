"""The plan's second round inside a real search (hash embedder, real SQLite): a router is called once
between the gate's bounds, never on a bail-out; its malformed output falls back to the deterministic plan."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from footnote.engine import Engine
from footnote.models.embedders import make_embedder
from footnote.models.protocols import ChatMessage
from footnote.retrieve.types import Verdict
from footnote.settings import Settings, load_settings
from footnote.store import open_store

CORPUS = [
    {"id": "Warsaw#0", "kind": "prose_chapter", "title": "Warsaw", "lang": "en",
     "text": "Warsaw is the capital and largest city of Poland, on the Vistula River."},
    {"id": "Castle#0", "kind": "prose_chapter", "title": "Royal Castle", "lang": "en",
     "text": "The Royal Castle in Warsaw was rebuilt after the Second World War and completed in 1984."},
]


class Router:
    name = "scripted-router"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls: list[Sequence[ChatMessage]] = []

    def complete(self, messages: Sequence[ChatMessage], *, json_schema: dict[str, Any] | None = None) -> str:
        self.calls.append(messages)
        return self.reply

    def stream(self, messages: Sequence[ChatMessage]) -> Iterator[str]:  # pragma: no cover - unused
        yield self.reply


def _settings(tmp_path: Path, *, bail_out: float, good_enough: float) -> Settings:
    base = load_settings(None, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash"})
    return base.with_overrides(**{
        "gate.by_embedder.hash.default.bail_out": bail_out,
        "gate.by_embedder.hash.default.sufficient": good_enough,
        "gate.by_embedder.hash.default.good_enough": good_enough,
    })


def _engine(settings: Settings, router: Router | None, tmp_path: Path) -> Engine:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in CORPUS) + "\n")
    engine = Engine(settings, open_store(settings.store.url, settings.store), make_embedder(settings.embedder),
                    None, {"router": router} if router else {})
    engine.ingest([corpus])
    return engine


def test_between_bounds_the_router_plans_round_two(tmp_path: Path) -> None:
    reply = json.dumps({"subquestions": [
        {"text": "Royal Castle reconstruction", "paraphrases": ["castle rebuilt after the war"]},
    ]})
    router = Router(reply)
    with _engine(_settings(tmp_path, bail_out=-1.0, good_enough=5.0), router, tmp_path) as engine:
        result = engine.search("When was the castle rebuilt?")
    assert result.rounds == 2 and result.model_calls == 1 and len(router.calls) == 1
    assert "model" in result.plan.source
    texts = [sq.text for sq in result.plan.subquestions]
    assert "Royal Castle reconstruction" in texts
    assert any(t.name.startswith("plan@round2") for t in result.trace)
    assert result.candidates[0].fragment.source_id == "Castle#0"


def test_bail_out_costs_no_model_call(tmp_path: Path) -> None:
    router = Router("{}")
    with _engine(_settings(tmp_path, bail_out=5.0, good_enough=6.0), router, tmp_path) as engine:
        result = engine.search("When was the castle rebuilt?")
    assert result.verdict is Verdict.BAIL_OUT
    assert result.rounds == 1 and result.model_calls == 0 and router.calls == []


def test_malformed_router_reply_falls_back_to_the_deterministic_round(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    router = Router("sorry, I cannot help with that")
    with _engine(_settings(tmp_path, bail_out=-1.0, good_enough=5.0), router, tmp_path) as engine:
        result = engine.search("Who rebuilt the castle? When was it completed?")
    assert result.rounds == 2 and result.model_calls == 1
    assert "model" not in result.plan.source
    texts = [sq.text for sq in result.plan.subquestions]
    assert "Who rebuilt the castle?" in texts and "When was it completed?" in texts
    assert any("deterministic" in r.getMessage() for r in caplog.records)


def test_without_a_router_the_gate_goes_straight_to_its_verdict(tmp_path: Path) -> None:
    with _engine(_settings(tmp_path, bail_out=-1.0, good_enough=5.0), None, tmp_path) as engine:
        result = engine.search("How large is the capital of Poland?")
    assert result.verdict is Verdict.INSUFFICIENT
    assert result.rounds == 1 and result.model_calls == 0
    assert [sq.text for sq in result.plan.subquestions] == ["How large is the capital of Poland?"]


def test_a_router_that_answers_no_plan_gets_the_deterministic_round(tmp_path: Path) -> None:
    router = Router("this is not a plan")
    with _engine(_settings(tmp_path, bail_out=-1.0, good_enough=5.0), router, tmp_path) as engine:
        result = engine.search("How large is the capital of Poland?")
    assert result.rounds == 2 and result.model_calls == 1 and len(router.calls) == 1
    assert any("capital Poland" in p for sq in result.plan.subquestions for p in sq.paraphrases)


def test_the_retired_switch_is_read_and_ignored(tmp_path: Path) -> None:
    """``gate.second_round_without_router`` (retired): a config that still sets it warns and runs no second round."""
    config = tmp_path / "old.toml"
    config.write_text("[gate]\nsecond_round_without_router = true\n")
    s = load_settings(config, **{"store.url": str(tmp_path / "s.db"), "embedder.name": "hash"}).with_overrides(**{
        "gate.by_embedder.hash.default.bail_out": -1.0, "gate.by_embedder.hash.default.sufficient": 5.0,
        "gate.by_embedder.hash.default.good_enough": 5.0})
    with _engine(s, None, tmp_path) as engine:
        result = engine.search("How large is the capital of Poland?")
    assert result.rounds == 1 and result.model_calls == 0
