"""The no-model mode end to end: real SQLite store, hash embedder, the test corpus."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from footnote.answer.types import Done, Stage, Token
from footnote.cli import main
from footnote.errors import InvalidQuestion, UsageError
from footnote.records.fragments import AddressLocator

from .conftest import FOG_Q, OFF_Q, RU_Q

CONTRACT = {"answer", "citations", "verdict", "corpus_insufficient", "mode", "disclaimer", "dropped_citations",
            "removed_mentions", "model_calls", "trace"}


def test_extractive_answer_is_cited_sentences_streamed(build_engine: Any) -> None:
    eng = build_engine()
    events = list(eng.ask_stream(FOG_Q))
    tokens = [e.text for e in events if isinstance(e, Token)]
    done = events[-1]
    assert isinstance(done, Done)
    a = done.answer.to_dict()
    assert "".join(tokens).strip() == a["answer"]
    assert a["mode"] == "corpus" and a["model_calls"] == 0 and a["corpus_insufficient"] is False
    assert "Black Skerry beacon" in a["answer"] and "[1]" in a["answer"]
    cited = {c["source_id"] for c in a["citations"]}
    assert cited == {"corpus/fog.md"}
    # every cited sentence is verbatim from its note
    text = a["citations"][0]["text"]
    for sentence in a["answer"].split(" [1]"):
        s = sentence.strip(" .")
        if s:
            assert s in " ".join(text.split())
    names = [e.name for e in events if isinstance(e, Stage)]
    assert "outline" in names and "synthesize" in names and "citations" in names
    assert any(n.startswith("search.") for n in names)


def test_off_topic_says_not_in_corpus_with_what_was_searched(build_engine: Any) -> None:
    a = build_engine().ask(OFF_Q)
    assert a.mode.value == "not_found" and a.corpus_insufficient and a.citations == ()
    assert "nothing" in a.answer and f"“{OFF_Q}”" in a.answer and "prose" in a.answer


def test_russian_not_found_is_in_russian(build_engine: Any) -> None:
    a = build_engine().ask("Кто выиграл чемпионат мира по футболу 2018 года?")
    assert a.mode.value == "not_found" and a.answer.startswith("В корпусе")


def test_too_long_question_is_a_usage_error(build_engine: Any) -> None:
    eng = build_engine(**{"answer.max_question_chars": 20})
    with pytest.raises(UsageError, match="max_question_chars"):
        eng.ask(FOG_Q)
    with pytest.raises(InvalidQuestion, match="max_question_chars"):  # before the stream starts
        eng.ask_stream(FOG_Q)


@pytest.mark.parametrize("bad", ["", "   \n\t ", "fog \ud800 horn"])
def test_questions_are_checked_in_one_place(build_engine: Any, bad: str) -> None:
    eng = build_engine()
    for call in (eng.ask, eng.ask_stream, eng.search):
        with pytest.raises(InvalidQuestion):
            call(bad)


def test_question_is_normalised_once(build_engine: Any) -> None:
    eng = build_engine()
    # decomposed "é" and runs of whitespace: the same question as its NFC, single-spaced form
    assert eng.question("  cafe\u0301   au\tlait ") == "caf\u00e9 au lait"


def test_the_question_language_is_found_once_per_turn(build_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer stage finds the question's language and the search uses it; it is not detected again."""
    from footnote.records import lang as lang_mod

    eng = build_engine()
    seen: list[str] = []
    detect = lang_mod.question_lang

    def counting(text: str, *args: Any, **kw: Any) -> str:
        seen.append(text)
        return detect(text, *args, **kw)

    # every stage asks through the settings (CorpusSettings.question_lang), which calls this
    monkeypatch.setattr(lang_mod, "question_lang", counting)
    answer = eng.ask(RU_Q)
    assert seen == [RU_Q]
    assert answer.trace.question_lang == "ru"


def test_concurrent_asks_all_complete(build_engine: Any) -> None:
    eng = build_engine()
    qs = [FOG_Q, RU_Q, OFF_Q] * 8
    with ThreadPoolExecutor(max_workers=24) as pool:
        answers = list(pool.map(eng.ask, qs))
    assert [a.mode.value for a in answers] == ["corpus", "corpus", "not_found"] * 8


def test_cli_ask_json_prints_the_contract(build_engine: Any, tmp_path: Path) -> None:
    build_engine()  # ingests into tmp_path/store.db
    r = CliRunner().invoke(main, ["ask", FOG_Q, "--json", "--store", str(tmp_path / "store.db"), "--embedder", "hash"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert set(data) >= CONTRACT
    c = data["citations"][0]
    assert {"n", "source_id", "kind", "locator", "text"} <= set(c)
    assert data["mode"] in {"corpus", "fallback", "declined", "not_found"}


def test_cli_ask_streams_then_lists_citations_and_verdict(build_engine: Any, tmp_path: Path) -> None:
    build_engine()
    r = CliRunner().invoke(main, ["ask", FOG_Q, "--no-fallback", "--store", str(tmp_path / "store.db"),
                                  "--embedder", "hash"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert "Black Skerry" in lines[0]
    assert any(line.startswith("[1] corpus/fog.md") for line in lines)
    assert any(line.startswith("verdict: ") and "mode: corpus" in line for line in lines)


def test_question_naming_an_address_is_answered_from_that_verse(tmp_path: Path) -> None:
    from footnote.engine import Engine

    from .conftest import make_settings

    d = tmp_path / "verses"
    d.mkdir()
    (d / "book.md").write_text(
        "---\nkind: verse\nbook: HB\ntitle: The Harbour Book\nlang: en\n---\n# The Harbour Book\n"
        "## HB 1.1\nKeep the light before you keep yourself.\n"
        "## HB 1.2\nTrim the wick at every change of watch.\n",
        encoding="utf-8",
    )
    with Engine.from_settings(make_settings(tmp_path)) as eng:
        eng.ingest([d])
        a = eng.ask("What does HB 1.2 say?")
        assert a.mode.value == "corpus" and a.model_calls == 0
        assert "Trim the wick" in a.answer
        loc = a.citations[0].fragment.locator
        assert isinstance(loc, AddressLocator) and loc.label == "HB 1.2"
