"""Issue 39 §1, the sentence check (``support.model_check``) over real HTTP (httpx → uvicorn on loopback, the demo
in a real SQLite store, the planner, synthesizer and ``models.answer_check`` at the scripted OpenAI-compatible
server): a model-written sentence the support rules keep is shown to the check model with the passages it cites;
under its floor it is removed (``unsupported``, why ``model``), on the JSON answer and the SSE stream alike. A false
relation between true words of a passage is the case: the rules see the words, not who did what. The model can only
remove: its "yes" never shows a sentence the rules drop; a model that fails leaves the rules' verdict and says so."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from serverkit import ask_twice, build_store

from footnote.answer.model_check import SENTENCE_QUESTION, SENTENCE_SYSTEM, SYSTEM
from footnote.settings import Settings
from footnote.testing.openai_server import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.integration

FOG = "When do the Marrowick keepers start the fog horn, and how does it sound?"
OUTLINE = json.dumps({"theses": [{"text": "The horn.", "notes": [1, 2, 3, 4]}, {"text": "More.", "notes": [5, 6, 7, 8]}]})
ALL = "[1][2][3][4][5][6][7][8]"
LEAD = f"The keeper on watch starts the fog horn when the Black Skerry beacon can no longer be seen {ALL}."
#: every word is the passage's, the relation is not: the horn starts when the beacon *can* be seen
TWISTED = "The keeper on watch starts the fog horn when the Black Skerry beacon can be seen"
ATLANTIS = f"The lens was smuggled from Atlantis by pirates in 1492 {ALL}."


def _yes(p: float) -> Reply:
    return Reply("yes" if p >= 0.5 else "no", top_logprobs=(("yes", math.log(p)), ("no", math.log(1 - p))))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Settings:
    return build_store(tmp_path_factory.mktemp("sentence-check"), demo_dir)


class Checker:
    """A check model that says "no" to a statement carrying ``doubt``, "yes" to the rest (and to the answer-level
    check), and keeps what it was asked."""

    def __init__(self, doubt: str = TWISTED, no: float = 0.1, yes: float = 0.9, fail: bool = False) -> None:
        self.doubt, self.no, self.yes, self.fail = doubt, no, yes, fail
        self.statements: list[str] = []
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.bodies.append(body)
        user = body["messages"][-1]["content"]
        if body["messages"][0]["content"] == SYSTEM:  # the answer-level check: this text answers
            return _yes(self.yes)
        statement = user.split("\n\nStatement: ", 1)[1].rsplit("\n\n", 1)[0]
        self.statements.append(statement)
        if self.fail:
            return Reply(status=503)
        return _yes(self.no if self.doubt in statement else self.yes)


def _ask(settings: Settings, synth: str | Reply, checker: Checker | None, **overrides: Any) -> dict[str, Any]:
    reply = synth if isinstance(synth, Reply) else Reply(synth)
    script: dict[str, Any] = {"planner-m": [Reply(OUTLINE)] * 2, "synthesizer-m": [reply] * 2}
    if checker is not None:
        script["check-m"] = checker
    with ScriptedOpenAIServer(script) as model:
        models: dict[str, Any] = {}
        for role, name in (("planner", "planner-m"), ("synthesizer", "synthesizer-m"), ("answer_check", "check-m")):
            if role == "answer_check" and checker is None:
                continue
            models |= {f"models.{role}.base_url": model.base_url, f"models.{role}.model": name,
                       f"models.{role}.retries": 0, f"models.{role}.timeout_s": 30.0}
        return ask_twice(settings.with_overrides(**models, **overrides), FOG)


def _synthesize(data: dict[str, Any]) -> dict[str, Any]:
    stage: dict[str, Any] = next(s for s in data["trace"]["stages"] if s["name"] == "synthesize")
    return stage


def test_the_stream_says_which_model_writes_before_its_first_token(store: Settings) -> None:
    """``event: writing`` names the model (not its endpoint) before any of its text, once: the chat paints "Writing
    the answer with …" through the wait a local model takes."""
    data = _ask(store, f"{LEAD} {ALL}.", None)
    names = [n for n, _ in data["events"]]
    assert names.count("writing") == 1 and names.index("writing") < names.index("token"), names
    said = next(e for n, e in data["events"] if n == "writing")
    assert said == {"model": "synthesizer-m"}, said  # no URL reaches the reader


def test_the_writing_event_names_no_user_of_the_endpoint(store: Settings) -> None:
    """The attack on the first version: the name was cut at its last "@", so a base_url with a user in it
    (``http://alice:…@host``) put "qwen@http://alice:***" on every reader's screen."""
    with ScriptedOpenAIServer({"synthesizer-m": [Reply(f"{LEAD} {ALL}.")] * 2}) as model:
        url = model.base_url.replace("http://", "http://alice:hunter2@")
        data = ask_twice(store.with_overrides(**{
            "models.synthesizer.base_url": url, "models.synthesizer.model": "synthesizer-m",
            "models.synthesizer.retries": 0}), FOG)
    said = [e for n, e in data["events"] if n == "writing"]
    assert said == [{"model": "synthesizer-m"}], said


def test_without_the_model_the_rules_keep_a_false_relation(store: Settings) -> None:
    """The case the sentence check is for: every word is a passage's, so the rules show it."""
    data = _ask(store, f"{LEAD} {TWISTED} {ALL}.", None)
    assert TWISTED in data["answer"], data["answer"]


def test_the_models_no_removes_a_false_relation_before_the_reader_sees_it(store: Settings) -> None:
    checker = Checker()
    data = _ask(store, f"{LEAD} {TWISTED} {ALL}. The horn gives two blasts every minute {ALL}.", checker)
    assert data["mode"] == "corpus", data["answer"]
    for shown in (data["answer"], data["streamed"], next(e for n, e in data["events"] if n == "done")["answer"]):
        assert TWISTED + " " not in shown and "can be seen" not in shown, shown
        assert "no longer be seen" in shown and "two blasts every minute" in shown
    trace = data["trace"]
    assert trace["removed_by_reason"] == {"unsupported": 1}
    [bad] = trace["unsupported_sentences"]
    assert bad["why"] == ["model"] and bad["action"] == "removed" and "sentence" not in bad
    judged = _synthesize(data)["info"]["judged"]
    assert [(j["supported"], j["why"]) for j in judged] == [(True, []), (False, ["model"]), (True, [])]
    checks = [j["check"] for j in judged]
    assert [c["declines"] for c in checks] == [False, True, False]
    assert [c["p_yes"] for c in checks] == [0.9, 0.1, 0.9] and {c["min_yes"] for c in checks} == {0.5}
    assert "sentence" not in json.dumps(judged)  # the trace never repeats what the reader was not shown
    # each sentence was shown once (the second ask read the verdicts kept), without its [n] marks, with the
    # passages it cites as quoted data
    assert len(checker.statements) == 3 and not any("[" in s for s in checker.statements)
    body = next(b for b in checker.bodies if b["messages"][0]["content"] == SENTENCE_SYSTEM)
    user = body["messages"][1]["content"]
    assert user.startswith('Text:\n"""\n') and user.endswith(SENTENCE_QUESTION) and "Black Skerry" in user
    assert body["max_tokens"] == 1 and body["logprobs"] is True
    # the CLI's lines under the answer say what the check did
    from footnote.answer.types import Answer
    from footnote.commands.ask import render_done

    lines = render_done(Answer.from_dict(data))
    assert any(x.startswith("sentence check: check-m@") and x.endswith("judged 3 sentence(s) the rules kept, 1 not "
                                                                      "supported (floor 0.50)") for x in lines), lines
    assert any("removed unsupported sentences: 1" in x for x in lines), lines


def test_the_models_yes_never_shows_what_the_rules_drop(store: Settings) -> None:
    checker = Checker(doubt="no statement carries this")
    data = _ask(store, f"{LEAD} {ATLANTIS}", checker)
    assert "Atlantis" not in data["answer"] and "Atlantis" not in data["streamed"]
    # the rules dropped it first: the model was never asked about it
    assert not any("Atlantis" in s for s in checker.statements)
    [bad] = data["trace"]["unsupported_sentences"]
    assert "model" not in bad["why"]
    # the trace lists both sentences in order; the model's word only on the one the rules kept
    judged = _synthesize(data)["info"]["judged"]
    assert [j["supported"] for j in judged] == [True, False] and "check" in judged[0] and "check" not in judged[1]


def test_a_per_model_floor_and_the_switch(store: Settings) -> None:
    checker = Checker(no=0.3)
    kept = _ask(store, f"{LEAD} {TWISTED} {ALL}.", checker, **{"support.model_min_yes": {"check-m": 0.2}})
    assert TWISTED in kept["answer"]
    assert {j["check"]["min_yes"] for j in _synthesize(kept)["info"]["judged"]} == {0.2}
    off = _ask(store, f"{LEAD} {TWISTED} {ALL}.", Checker(), **{"support.model_check": False})
    assert TWISTED in off["answer"] and not any("check" in j for j in _synthesize(off)["info"]["judged"])


def test_flagging_shows_it_and_lists_it(store: Settings) -> None:
    data = _ask(store, f"{LEAD} {TWISTED} {ALL}.", Checker(), **{"support.on_unsupported": "flag"})
    assert TWISTED in data["answer"]
    [bad] = data["trace"]["unsupported_sentences"]
    assert bad["why"] == ["model"] and bad["action"] == "flagged"


def test_a_failing_model_leaves_the_rules_verdict_and_says_so(store: Settings) -> None:
    data = _ask(store, f"{LEAD} {TWISTED} {ALL}.", Checker(fail=True))
    assert data["mode"] == "corpus" and TWISTED in data["answer"]
    checks = [j["check"] for j in _synthesize(data)["info"]["judged"]]
    assert checks and all(c["p_yes"] is None and not c["declines"] and "HTTP 503" in c["error"] for c in checks)
    assert any(d.startswith("sentence check (") and "HTTP 503" in d and "the rules' verdict stands" in d
               for d in data["trace"]["degraded"]), data["trace"]["degraded"]


def test_nothing_left_after_the_model_ends_weakly_grounded_or_shows_the_passages(store: Settings) -> None:
    data = _ask(store, f"{TWISTED} {ALL}.", Checker(), **{"support.none_supported": "not_found"})
    assert data["mode"] == "not_found"
    assert data["abstention"]["reason"] == "weakly_grounded"
    assert "can be seen" not in data["answer"] and "can be seen" not in data["streamed"]
    data = _ask(store, f"{TWISTED} {ALL}.", Checker())  # the default: the extractive answer, supported by construction
    assert data["mode"] == "corpus" and "Black Skerry" in data["streamed"], data["streamed"]
    assert TWISTED not in data["streamed"] and TWISTED not in data["answer"]


def test_an_answer_replaced_by_the_extractive_one_reports_no_judged_sentences(store: Settings) -> None:
    """A helper's attack: the check removed the model's first sentence, the turn's deadline came before a second, and
    the extractive answer was shown — under a trace and a CLI line that still spoke of the model's sentences."""
    from footnote.answer.types import Answer
    from footnote.commands.ask import render_done

    chunks = (f"{TWISTED} {ALL}. ", "The horn ", "sounds [1].")
    data = _ask(store, Reply(chunks=chunks, chunk_delay_s=3.0), Checker(), **{"answer.turn_timeout_s": 4.0})
    stage = _synthesize(data)
    assert stage["info"]["synthesizer"] == "extractive" and "judged" not in stage["info"], stage
    assert not any(x.startswith("sentence check:") for x in render_done(Answer.from_dict(data)))


def test_the_cli_says_a_model_is_writing_before_the_wait(store: Settings, tmp_path: Path) -> None:
    """The stranger's trial: `footnote ask` printed nothing for the minute the local model wrote and was checked."""
    from click.testing import CliRunner

    from footnote.cli import main

    with ScriptedOpenAIServer({"planner-m": [Reply(OUTLINE)], "synthesizer-m": [Reply(f"{LEAD}")]}) as model:
        config = tmp_path / "f.toml"
        config.write_text("".join(f'[models.{role}]\nbase_url = "{model.base_url}"\nmodel = "{role}-m"\nretries = 0\n'
                                  for role in ("planner", "synthesizer")), encoding="utf-8")
        r = CliRunner().invoke(main, ["ask", FOG, "--config", str(config), "--store", store.store.url,
                                      "--embedder", "hash"])
    assert r.exit_code == 0, r.output
    assert "Writing the answer with synthesizer-m; each sentence" in r.stderr and "no longer be seen" in r.stdout
    # no model writes a declined question: the line is not printed
    r = CliRunner().invoke(main, ["ask", "How many gallons of paraffin does the lamp burn in one night?",
                                  "--config", str(config), "--store", store.store.url, "--embedder", "hash"])
    assert r.exit_code == 0 and "mode: not_found" in r.stdout, r.output
    assert "Writing the answer" not in r.stderr, r.stderr
