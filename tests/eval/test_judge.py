"""`footnote judge` plumbing against the scripted OpenAI-compatible server (real HTTP)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.errors import ModelError
from footnote.eval.judge import (
    JudgeCache,
    a_first,
    agreement,
    better_supported,
    compare_runs,
    judge_run,
    load_run,
    parse_scores,
    sign_test,
)
from footnote.models.chat import OpenAIChatModel
from footnote.settings import ChatModelSettings
from footnote.testing.openai_server import Reply, ScriptedOpenAIServer

CORPUS = [
    {"id": "Warsaw#0", "kind": "prose_chapter", "title": "Warsaw", "lang": "en",
     "text": "Warsaw is the capital and largest city of Poland. It stands on the Vistula River in east-central Poland."},
    {"id": "Rhine#0", "kind": "prose_chapter", "title": "Rhine", "lang": "en",
     "text": "The Rhine is a European river that begins in the Swiss canton of Graubünden and flows to the North Sea."},
]
QUESTIONS = [
    {"id": "q1:en", "question": "What is the capital of Poland?", "lang": "en", "answerable": True,
     "category": "in_corpus", "gold": ["Warsaw#0"]},
    {"id": "q2:en", "question": "Where does the Rhine river begin?", "lang": "en", "answerable": True,
     "category": "in_corpus", "gold": ["Rhine#0"]},
    {"id": "q3:en", "question": "Which river flows through Warsaw?", "lang": "en", "answerable": True,
     "category": "in_corpus", "gold": ["Warsaw#0"]},
    {"id": "q1:ru", "question": "Какая столица Польши?", "lang": "ru", "answerable": True,
     "category": "in_corpus", "gold": ["Warsaw#0"]},
    {"id": "q4:en", "question": "How do I bake sourdough bread at home?", "lang": "en", "answerable": False,
     "category": "off_topic", "gold": []},
    {"id": "q4:ru", "question": "Как испечь хлеб на закваске?", "lang": "ru", "answerable": False,
     "category": "off_topic", "gold": []},
]


def _write(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path

GOOD = json.dumps({c: {"score": 4, "reason": f"{c} fine"} for c in ("faithfulness", "completeness", "structure", "balance")})


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("judge")
    corpus, questions = _write(tmp / "corpus.jsonl", CORPUS), _write(tmp / "questions.jsonl", QUESTIONS)
    out = tmp / "run"
    r = CliRunner().invoke(main, ["eval", "--corpus", str(corpus), "--questions", str(questions), "--out", str(out),
                                  "--embedder", "hash", "--no-progress", "--no-plots", "--answers"])
    assert r.exit_code == 0, r.output
    return out


def _fresh(run_dir: Path, tmp_path: Path, name: str = "run") -> Path:
    dst = tmp_path / name
    shutil.copytree(run_dir, dst, ignore=shutil.ignore_patterns("stores"))
    (dst / "judge_cache.json").unlink(missing_ok=True)
    return dst


def _model(srv: ScriptedOpenAIServer) -> OpenAIChatModel:
    return OpenAIChatModel("judge", ChatModelSettings(base_url=srv.base_url, model="j", temperature=0.0, retries=0))


def test_eval_answers_rows_carry_what_the_judge_needs(run_dir: Path) -> None:
    items = load_run(run_dir)
    assert len(items) == 6 and all(it.question and it.answer for it in items)
    assert any(it.passages for it in items)
    rep = json.loads((run_dir / "report.json").read_text())
    assert "cite_recall" in rep["answers"]["overall"]


def test_scores_retry_malformed_json_blind_and_cached(run_dir: Path, tmp_path: Path) -> None:
    run = _fresh(run_dir, tmp_path)
    script = [Reply("I think it is good."), Reply(GOOD.replace('"score": 4', '"score": 9', 1)), *[Reply(GOOD)] * 6]
    with ScriptedOpenAIServer(script) as srv:
        sec = judge_run(_model(srv), "j", run, attempts=3)
        assert srv.remaining() == 0 and not srv.unexpected
        bodies = srv.requests
        sent = srv.all_text_sent()
    assert sec["n"] == 6 and sec["calls"] == 8 and sec["failed"] == 0 and sec["cached"] == 0
    assert sec["mean"] == dict.fromkeys(("faithfulness", "completeness", "structure", "balance"), 4.0)
    assert all(b["temperature"] == 0.0 and b["response_format"]["type"] == "json_schema" for b in bodies)
    for word in ("not_found", "corpus_insufficient", "extractive", "verdict", str(run), "sufficient"):
        assert word not in sent  # blind: no mode, verdict or run
    assert all(f"({i}) {s}" in sent for it in load_run(run) for i, s in enumerate(it.sentences(), 1))  # each sentence, numbered
    # a re-run asks nothing: every verdict comes from the cache
    with ScriptedOpenAIServer([]) as srv:
        again = judge_run(_model(srv), "j", run, attempts=3)
        assert srv.requests == []
    assert again["cached"] == 6 and again["calls"] == 0 and again["mean"] == sec["mean"]


def test_a_judge_that_never_complies_is_recorded_as_failed(run_dir: Path, tmp_path: Path) -> None:
    run = _fresh(run_dir, tmp_path)
    with ScriptedOpenAIServer([Reply("nope")] * 12) as srv:
        sec = judge_run(_model(srv), "j", run, attempts=2)
    assert sec["failed"] == 6 and sec["calls"] == 12 and sec["mean"]["faithfulness"] is None
    assert json.loads((run / "judge_cache.json").read_text()) == {}  # failures are not cached


def test_compare_assigns_sides_by_question_hash(run_dir: Path, tmp_path: Path) -> None:
    a = _fresh(run_dir, tmp_path, "a")
    b = _fresh(run_dir, tmp_path, "b")
    rows = [json.loads(x) for x in (b / "questions.jsonl").read_text().splitlines()]
    for r in rows:
        r["extra"]["answer"]["text"] = "BANSWER " + r["extra"]["answer"]["text"]
    (b / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pick_first = json.dumps({"winner": "first", "reason": "clearer"})
    with ScriptedOpenAIServer([Reply(pick_first)] * 6) as srv:
        sec = compare_runs(_model(srv), "j", a, b, attempts=2)
        prompts = [r["messages"][-1]["content"] for r in srv.requests]
    ids = [r["id"] for r in rows]
    for qid, prompt in zip(ids, prompts, strict=True):
        b_shown_first = prompt.index("BANSWER") < prompt.index("Second answer:")
        assert b_shown_first == (not a_first(qid))
        if "[1]" in prompt:  # both runs cite the same notes: shown once, not twice
            assert "both answers cite these" in prompt and prompt.count("[1] ") == 1
    n_a_first = sum(a_first(q) for q in ids)
    assert sec["a_wins"] == n_a_first and sec["b_wins"] == 6 - n_a_first and sec["ties"] == 0
    assert sec["sign_test_p"] == sign_test(n_a_first, 6 - n_a_first)
    assert sec["picked_by_position"] == {"first": 6, "second": 0, "tie": 0}  # a judge that always picks the first


def test_side_assignment_is_balanced_and_stable() -> None:
    ids = [f"q{i}" for i in range(2000)]
    share = sum(a_first(q) for q in ids) / len(ids)
    assert 0.45 < share < 0.55
    assert [a_first(q) for q in ids[:20]] == [a_first(q) for q in ids[:20]]


def test_sign_test() -> None:
    assert sign_test(0, 0) is None
    assert sign_test(5, 5) == 1.0
    assert sign_test(10, 0) == pytest.approx(2 / 1024)


def test_parse_scores_rejects_bad_replies() -> None:
    assert parse_scores("```json\n" + GOOD + "\n```")["balance"]["score"] == 4
    for bad in ("[]", json.dumps({"faithfulness": {"score": 3, "reason": ""}}), GOOD.replace("4", "true", 1)):
        with pytest.raises(ModelError):
            parse_scores(bad)


def test_cli_judge_writes_the_report_and_needs_a_model(run_dir: Path, tmp_path: Path) -> None:
    run = _fresh(run_dir, tmp_path)
    r = CliRunner().invoke(main, ["judge", str(run)])
    assert r.exit_code != 0 and "models.judge" in r.output
    with ScriptedOpenAIServer([Reply(GOOD)] * 6) as srv:
        cfg = tmp_path / "f.toml"
        cfg.write_text(f'[models.judge]\nbase_url = "{srv.base_url}"\nmodel = "j"\ntemperature = 0.7\n')
        r = CliRunner().invoke(main, ["judge", str(run), "--config", str(cfg)])
        assert r.exit_code == 0, r.output
        assert all(b["temperature"] == 0.0 for b in srv.requests)
    rep = json.loads((run / "report.json").read_text())
    assert rep["judge"]["n"] == 6 and rep["judge"]["mean"]["structure"] == 4.0 and "answers" in rep
    assert (run / "judge.md").read_text().startswith("judge j")
    svg = (run / "judge.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "faithfulness" in svg  # the plot
    assert rep["judge"]["agreement"]["n"] == sum(1 for r in rep["judge"]["per_question"] if r["support"] is not None)
    r = CliRunner().invoke(main, ["judge"])
    assert r.exit_code == 2 and "RUN_DIR" in r.output


def _row(faith: int, support: float | None) -> dict[str, object]:
    return {"scores": {"faithfulness": {"score": faith, "reason": ""}}, "support": support}


def test_agreement_of_judge_and_citation_support() -> None:
    rows = [_row(5, 1.0), _row(4, 1.0), _row(2, 0.5), _row(5, 0.5), _row(1, 1.0), _row(3, None), _row(5, 0.0)]
    ag = agreement(rows, faithful_min=4, supported_min=1.0)
    assert ag["n"] == 6  # the answer without a support share is left out
    assert (ag["both"], ag["neither"], ag["judge_only"], ag["support_only"]) == (2, 1, 2, 1)
    assert ag["agree"] == 0.5
    assert agreement([_row(5, 1.0), _row(3, 0.5), _row(1, 0.0)], faithful_min=4, supported_min=1.0)["spearman"] == 1.0
    assert agreement([_row(4, 1.0)] * 3, faithful_min=4, supported_min=1.0)["spearman"] is None  # constant
    assert agreement([], faithful_min=4, supported_min=1.0)["agree"] is None


def test_the_judge_numbers_sentences_and_is_compared_with_support_per_sentence(run_dir: Path, tmp_path: Path) -> None:
    run = _fresh(run_dir, tmp_path)
    rows = [json.loads(x) for x in (run / "questions.jsonl").read_text().splitlines()]
    target = next(r for r in rows if (r["extra"]["answer"].get("support") or {}).get("sentences"))
    target["extra"]["answer"]["text"] = "Warsaw is the capital of Poland [1]. It has a famous zoo [1]."
    target["extra"]["answer"]["support"]["sentences"] = [{"sentence": "a", "supported": True, "citations": []},
                                                         {"sentence": "b", "supported": False, "citations": []}]
    (run / "questions.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    second_bad = json.loads(GOOD)
    second_bad["faithfulness"]["unsupported"] = [2]
    script = [Reply(json.dumps(second_bad)) if r is target else Reply(GOOD) for r in rows]
    with ScriptedOpenAIServer(script) as srv:
        sec = judge_run(_model(srv), "j", run, attempts=1)
        prompt = srv.requests[rows.index(target)]["messages"][-1]["content"]
        schema = srv.requests[0]["response_format"]["json_schema"]["schema"]
    assert "(1) Warsaw is the capital of Poland. [1]\n(2) It has a famous zoo. [1]" in prompt
    assert "unsupported" in schema["properties"]["faithfulness"]["required"]
    row = next(r for r in sec["per_question"] if r["id"] == target["id"])
    assert row["judge_sentences"] == [True, False] and row["sentence_support"] == [True, False]
    sa = sec["sentence_agreement"]
    assert sa["neither"] >= 1 and sa["support_unsupported"] >= 1 and sa["judge_unsupported"] == 1
    assert sa["n"] == sa["both"] + sa["neither"] + sa["judge_only"] + sa["support_only"]


def test_unsupported_must_be_sentence_numbers() -> None:
    bad = json.loads(GOOD)
    bad["faithfulness"]["unsupported"] = "sentence two"
    with pytest.raises(ModelError):
        parse_scores(json.dumps(bad))
    ok = json.loads(GOOD)
    ok["faithfulness"]["unsupported"] = [3, 1, 3]
    assert parse_scores(json.dumps(ok))["faithfulness"]["unsupported"] == [1, 3]


def test_two_judge_processes_sharing_a_cache_keep_each_others_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "judge_cache.json"
    one, two = JudgeCache(path), JudgeCache(path)
    one.data["a"] = {"winner": "first"}
    one.save()
    two.data["b"] = {"winner": "tie"}
    two.save()  # read before "a" was written, must not drop it
    assert set(json.loads(path.read_text())) == {"a", "b"}


def test_compare_says_whether_the_judge_prefers_the_better_supported_answer() -> None:
    rows = [{"winner": "A", "support_a": 1.0, "support_b": 0.5}, {"winner": "A", "support_a": 0.5, "support_b": 1.0},
            {"winner": "tie", "support_a": 1.0, "support_b": 0.0}, {"winner": "B", "support_a": 1.0, "support_b": 1.0},
            {"winner": None, "support_a": 1.0, "support_b": 0.0}]
    assert better_supported(rows) == {"n": 3, "judge_picks_better": 1, "judge_picks_worse": 1, "tie": 1}
