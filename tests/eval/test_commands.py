"""``footnote eval`` and ``footnote search`` end to end on a tiny corpus (hash embedder, real SQLite)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.testing.openai_server import Reply, ScriptedOpenAIServer

CORPUS = [
    {"id": "Warsaw#0", "kind": "prose_chapter", "title": "Warsaw", "lang": "en",
     "text": "Warsaw is the capital and largest city of Poland. It stands on the Vistula River in east-central Poland."},
    {"id": "Rhine#0", "kind": "prose_chapter", "title": "Rhine", "lang": "en",
     "text": "The Rhine is a European river that begins in the Swiss canton of Graubünden and flows to the North Sea."},
    {"id": "Panthers#0", "kind": "prose_chapter", "title": "Super Bowl", "lang": "en",
     "text": "The Panthers defense gave up just 308 points, ranking sixth in the league, while leading the NFL in interceptions."},
    {"id": "BG 2.13#verse", "kind": "verse", "title": "BG 2.13", "lang": "en",
     "text": "As the embodied soul continuously passes in this body from boyhood to youth to old age.",
     "address": {"book": "BG", "loc": "2.13", "label": "BG 2.13"}},
]
QUESTIONS = [
    {"id": "q1:en", "question": "What is the capital of Poland?", "lang": "en", "answerable": True,
     "category": "in_corpus", "gold": ["Warsaw#0"]},
    {"id": "q2:en", "question": "Where does the Rhine river begin?", "lang": "en", "answerable": True,
     "category": "in_corpus", "gold": ["Rhine#0"]},
    {"id": "q3:en", "question": "How many points did the Panthers defense give up?", "lang": "en", "answerable": True,
     "category": "in_corpus", "gold": ["Panthers#0"]},
    {"id": "q1:ru", "question": "Какая столица Польши?", "lang": "ru", "answerable": True,
     "category": "in_corpus", "gold": ["Warsaw#0"]},
    {"id": "q4:en", "question": "How do I bake sourdough bread at home?", "lang": "en", "answerable": False,
     "category": "off_topic", "gold": []},
    {"id": "q4:ru", "question": "Как испечь хлеб на закваске?", "lang": "ru", "answerable": False,
     "category": "off_topic", "gold": []},
]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return _write(tmp_path / "corpus.jsonl", CORPUS), _write(tmp_path / "questions.jsonl", QUESTIONS)


def test_eval_writes_the_report_contract_and_reuses_its_store(tmp_path: Path, files: tuple[Path, Path]) -> None:
    corpus, questions = files
    out = tmp_path / "out"
    args = ["eval", "--corpus", str(corpus), "--questions", str(questions), "--out", str(out),
            "--embedder", "hash", "--no-progress", "--json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "report.json").read_text())
    for cell in [rep["overall"], *rep["by_category_lang"].values()]:
        for key in ("n", "recall@1", "recall@5", "recall@16", "mrr", "answer_rate", "abstain_rate", "crag"):
            assert key in cell
    assert set(rep["by_category_lang"]) == {"in_corpus/en", "in_corpus/ru", "off_topic/en", "off_topic/ru"}
    assert rep["overall"]["n"] == 6
    assert rep["by_category_lang"]["in_corpus/en"]["recall@16"] == 1.0  # lexical lanes find all three
    assert set(rep["auroc"]) == {"en", "ru"}
    assert "total" in rep["latency_ms"] and any(k.startswith("lane:") or k == "gate" for k in rep["latency_ms"])
    for stage in rep["latency_ms"].values():
        assert stage["p50"] is not None and stage["p95"] >= stage["p50"]
    assert rep["meta"]["ingest"]["added"] == 4
    assert (out / "report.md").exists() and (out / "roc.png").exists() and (out / "scores_en.png").exists()
    # second run: the store is reused, nothing re-ingested
    r2 = CliRunner().invoke(main, [*args[:-1], "--json", "--limit", "2", "--langs", "en", "--no-plots"])
    assert r2.exit_code == 0, r2.output
    rep2 = json.loads((out / "report.json").read_text())
    assert rep2["meta"]["ingest"]["unchanged"] == 4 and rep2["meta"]["ingest"]["added"] == 0
    assert rep2["overall"]["n"] == 2 and set(rep2["auroc"]) == {"en"}


def test_eval_bad_question_file_names_file_and_line(tmp_path: Path, files: tuple[Path, Path]) -> None:
    corpus, _ = files
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(QUESTIONS[0]) + "\n{oops\n")
    r = CliRunner().invoke(main, ["eval", "--corpus", str(corpus), "--questions", str(bad), "--out",
                                  str(tmp_path / "o"), "--embedder", "hash", "--no-progress"])
    assert r.exit_code == 1
    assert f"{bad}:2" in r.output


def test_search_json_contract_and_address(tmp_path: Path, files: tuple[Path, Path]) -> None:
    corpus, _ = files
    store = str(tmp_path / "s.db")
    r = CliRunner().invoke(main, ["ingest", str(corpus), "--store", store, "--embedder", "hash"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["search", "What does BG 2.13 say?", "--store", store, "--embedder", "hash", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert {"notes", "verdict", "trace", "signal", "lexical_only"} <= set(data)
    first = data["notes"][0]
    assert first["source_id"] == "BG 2.13#verse"
    assert first["locator"] == {"book": "BG", "loc": "2.13", "label": "BG 2.13"}
    assert {"n", "source_id", "fragment_id", "kind", "locator", "text", "score", "rerank", "lanes"} <= set(first)
    assert "address" in first["lanes"]
    assert all({"name", "ms", "counts"} <= set(t) for t in data["trace"])
    assert data["verdict"] in {"sufficient", "good_enough", "bail_out", "insufficient"}


def test_search_text_and_explain(tmp_path: Path, files: tuple[Path, Path]) -> None:
    corpus, _ = files
    store = str(tmp_path / "s.db")
    CliRunner().invoke(main, ["ingest", str(corpus), "--store", store, "--embedder", "hash"])
    r = CliRunner().invoke(main, ["search", "capital of Poland", "--store", store, "--embedder", "hash", "--explain"])
    assert r.exit_code == 0, r.output
    assert "[1] " in r.output and "Warsaw" in r.output and "cosine" in r.output and "lanes:" in r.output
    assert "verdict:" in r.output and "signal:" in r.output
    assert "stages:" in r.output and " ms " in r.output and "total" in r.output
    r = CliRunner().invoke(main, ["search", "   ", "--store", store, "--embedder", "hash"])
    assert r.exit_code == 2 and "empty" in r.output


def test_eval_answers_flag_adds_the_answer_section(tmp_path: Path, files: tuple[Path, Path]) -> None:
    pytest.importorskip("footnote.eval.answers")
    corpus, questions = files
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["eval", "--corpus", str(corpus), "--questions", str(questions), "--out", str(out),
                                  "--embedder", "hash", "--no-progress", "--no-plots", "--answers"])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "report.json").read_text())
    assert rep["answers"]["overall"]["n"] == 6
    assert all("answer" in json.loads(line)["extra"] for line in (out / "questions.jsonl").read_text().splitlines())


@pytest.mark.parametrize("second_round", [True, False])
def test_eval_reports_the_second_rounds_cost_and_effect(tmp_path: Path, files: tuple[Path, Path], second_round: bool) -> None:
    corpus, questions = files
    out = tmp_path / "out"
    config = tmp_path / "rounds.toml"
    # a router (over loopback, answering no plan: the deterministic variant is its fallback) runs the second round
    with ScriptedOpenAIServer({"router-m": [Reply("no plan here")] * 20}) as router:
        routed = f"[models.router]\nbase_url = \"{router.base_url}\"\nmodel = \"router-m\"\n" if second_round else ""
        # thresholds that leave every question between the bounds ("insufficient")
        config.write_text(routed + "[gate.by_embedder.hash.default]\nbail_out = -5.0\nsufficient = 6.0\ngood_enough = 7.0\n")
        r = CliRunner().invoke(main, ["eval", "--corpus", str(corpus), "--questions", str(questions), "--out", str(out),
                                      "--embedder", "hash", "--config", str(config), "--no-progress", "--no-plots"])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "report.json").read_text())
    rounds = rep["rounds"]
    overall = rounds["overall"]
    assert overall["n"] == 6 and set(rounds["by_category_lang"]) == set(rep["by_category_lang"])
    assert sum(c["second_round"] for c in rounds["by_category_lang"].values()) == overall["second_round"]
    between = sum(1 for line in (out / "questions.jsonl").read_text().splitlines()
                  if json.loads(line)["round_effect"])  # the questions the gate left between the bounds
    assert between >= 3  # the in-corpus ones at least
    if second_round:
        assert overall["second_round"] == between and overall["skipped"] == 0
        assert overall["round_ms_p50"] > 0 and overall["verdicts_changed"] == 0  # still between the bounds
        assert 0 <= overall["top_changed"] <= overall["ranks_changed"] <= 6
    else:
        assert overall["second_round"] == 0 and overall["skipped"] == between and overall["round_ms_p50"] is None
        assert overall["recall@1"] == overall["recall@1_round1"]
        assert rounds["auroc_round1"] == rep["auroc"]
    assert "second round: ran" in r.output
    assert "## Second round: cost and effect" in (out / "report.md").read_text()
