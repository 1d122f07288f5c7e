"""Citation support in each answer's trace: real SQLite store, hash embedder, the scripted model server
for a model-written answer."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from click.testing import CliRunner

from footnote.cli import main
from footnote.testing.openai_server import Reply

from .conftest import FOG_Q, OFF_Q, model_overrides

OUTLINE_1 = json.dumps({"theses": [{"text": "The keeper starts the horn when the beacon is lost.", "notes": [1]}]})
SYNTH_MIXED = ("The keeper must start the fog horn when he can no longer see the Black Skerry beacon [1]. "
               "The lighthouse was painted blue by Portuguese sailors in 1702 [1].")


def test_extractive_answer_carries_its_support_all_supported(build_engine: Any) -> None:
    a = build_engine().ask(FOG_Q)
    sup = a.trace.support
    assert a.mode.value == "corpus"
    assert sup["n_sentences"] >= 1 and sup["supported_share"] == 1.0 and sup["unsupported"] == []
    assert sup["citation_precision"] == 1.0 and sup["ms"] >= 0
    for s in sup["sentences"]:
        assert "[" not in s["sentence"]  # markers stripped, the sentence as quoted
        assert s["supported"] and all(c["n"] in {x.n for x in a.citations} for c in s["citations"])
    assert a.to_dict()["trace"]["support"] == sup  # in the contract of ask --json and the HTTP API


def test_support_reuses_the_turns_vectors(build_engine: Any) -> None:
    eng = build_engine(**{"backlog.warm_sentences_max_fragments": 0})  # the turn makes its sentences' vectors
    seen: list[str] = []
    real = eng.embedder.embed_passages

    def counting(texts: Sequence[str]) -> Any:
        seen.extend(texts)
        return real(texts)

    eng.embedder.embed_passages = counting  # type: ignore[method-assign]
    a = eng.ask(FOG_Q)
    quoted = {s["sentence"] for s in a.trace.support["sentences"]}
    assert quoted and quoted <= set(seen)
    # each quoted sentence was embedded at most once in the turn (by the ranker), never again for support
    for s in quoted:
        assert seen.count(s) <= 1


def test_model_answer_lists_the_unsupported_sentence(build_engine: Any, scripted: Any) -> None:
    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [Reply(SYNTH_MIXED)]})
    # flagging only: the unsupported sentence is shown and listed (by default it is removed: tests/server/test_support_drop.py)
    flag = {"support.on_unsupported": "flag"}
    a = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"), **flag).ask(FOG_Q)
    sup = a.trace.support
    assert sup["n_sentences"] == 2 and sup["supported_share"] == 0.5
    assert sup["unsupported"] == ["The lighthouse was painted blue by Portuguese sailors in 1702."]
    by_text = {s["sentence"]: s for s in sup["sentences"]}
    assert by_text[sup["unsupported"][0]]["citations"][0]["supported"] is False


def test_a_models_sentences_are_not_kept_as_corpus_sentence_vectors(build_engine: Any, scripted: Any) -> None:
    """Support embeds the model's answer sentences; the store keeps vectors of corpus sentences only."""
    from footnote.answer.extractive import sentence_key

    srv = scripted({"planner-m": [Reply(OUTLINE_1)], "synthesizer-m": [Reply(SYNTH_MIXED)]})
    eng = build_engine(**model_overrides(srv.base_url, "planner", "synthesizer"), **{"support.on_unsupported": "flag"})
    a = eng.ask(FOG_Q)
    assert a.trace.support["n_sentences"] == 2
    invented = "The lighthouse was painted blue by Portuguese sailors in 1702."
    assert eng.store.get_sentence_vectors(eng.embedder.name, [sentence_key(invented)]) == {}


def test_no_support_for_answers_that_cite_nothing_or_when_off(build_engine: Any) -> None:
    eng = build_engine()
    assert "support" not in eng.ask(OFF_Q).to_dict()["trace"]  # not found: nothing cited by design
    off = build_engine(**{"support.in_trace": False})
    assert "support" not in off.ask(FOG_Q).to_dict()["trace"]


def test_cli_ask_prints_the_support_line(build_engine: Any, tmp_path: Any) -> None:
    build_engine()  # ingests the test corpus into tmp_path/store.db
    args = ["--store", str(tmp_path / "store.db"), "--embedder", "hash"]
    r = CliRunner().invoke(main, ["ask", FOG_Q, *args])
    assert r.exit_code == 0, r.output
    assert "citation support: " in r.output and " sentences supported" in r.output
    r = CliRunner().invoke(main, ["ask", FOG_Q, "--json", *args])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["trace"]["support"]["supported_share"] == 1.0


def test_a_cited_note_is_analysed_once_for_all_its_claims_and_turns(build_engine: Any, monkeypatch: Any) -> None:
    """Support splits and analyses a cited note once (kept by ``support.note_cache``), not once per claim
    citing it and per turn; the scores are the same as a fresh scorer's."""
    import footnote.answer.support as support

    eng = build_engine()
    a = eng.ask(FOG_Q)
    notes = {c.fragment.text for c in a.citations}
    split: list[str] = []
    real = support.split_sentences

    def counting(text: str) -> list[str]:
        split.append(text)
        return real(text)

    monkeypatch.setattr(support, "split_sentences", counting)
    scorer = support.SupportScorer(eng.settings.support, eng.embedder)
    note = next(iter(notes))
    pairs = [("The keeper starts the fog horn.", note), ("The horn blows twice a minute.", note)]
    first = scorer.score_pairs(pairs)
    assert scorer.score_pairs(pairs) == first  # a second turn citing the same note
    assert split.count(note) == 1
    fresh = support.SupportScorer(eng.settings.support, eng.embedder).score_pairs(pairs)
    assert fresh == first
    assert all(st.cpu_ms >= 0 for st in a.trace.stages) and "cpu_ms" in a.trace.support
    assert all("cpu_ms" in st for st in a.to_dict()["trace"]["stages"])
