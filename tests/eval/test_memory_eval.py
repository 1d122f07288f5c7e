"""``footnote calibrate --memory`` and ``footnote eval --memory`` through click's runner, with the hash
embedder over a small corpus: the threshold is fitted where the labelled questions put it, written to
the settings file, and the report counts hits, false matches and lean vs wide turns."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from click.testing import CliRunner

from footnote.cli import main

NOTE = """---
kind: pinned
triggers: ["When must the keeper start the fog horn?", "fog horn rule"]
sources: ["fog.md"]
author: Board
---
The keeper starts the fog horn when the beacon is lost.
"""

QUESTIONS = {"questions": [
    {"q": "When must the keeper start the fog horn?", "lang": "en", "note": "fog", "split": "fit"},
    {"q": "When must the keeper on watch start the fog horn?", "lang": "en", "note": "fog", "split": "test"},
    {"q": "Which football club won the league in 2018?", "lang": "en", "note": None, "split": "fit"},
    {"q": "How do I bake sourdough bread?", "lang": "en", "note": None, "split": "fit"},
    {"q": "What is the capital of Peru?", "lang": "en", "note": None, "split": "test"},
    {"q": "How do I knit woollen socks?", "lang": "en", "note": None, "split": "test"},
]}


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "fog.md").write_text("When the beacon is lost, the keeper starts the fog horn.\n", encoding="utf-8")
    (corpus / "lamp.md").write_text("The lamp burns paraffin with four wicks.\n", encoding="utf-8")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "fog.md").write_text(NOTE, encoding="utf-8")
    (notes / "questions.json").write_text(json.dumps(QUESTIONS), encoding="utf-8")
    return corpus, notes


def test_calibrate_memory_fits_and_writes_the_threshold(tmp_path: Path) -> None:
    corpus, notes = _setup(tmp_path)
    cfg = tmp_path / "footnote.toml"
    r = CliRunner().invoke(main, ["calibrate", "--memory", str(notes), "--corpus", str(corpus), "--embedder", "hash",
                                  "--settings-file", str(cfg), "--work-dir", str(tmp_path / "w"), "--no-progress",
                                  "--margin", "0.02", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    fit = out["outcomes"]["fit"]
    assert fit["false_matches"] == 0 and fit["hit_rate"] == 1.0 and fit["auroc"] == 1.0
    written = tomllib.loads(cfg.read_text(encoding="utf-8"))["memory"]["by_embedder"]["hash"]["default"]
    assert written["match"] == out["threshold"] and "AUROC fit 1.0" in written["fitted_on"]
    # the threshold sits just above the best-scoring fit question written for no note
    assert 0.02 <= out["threshold"] < 1.0

    r = CliRunner().invoke(main, ["eval", "--memory", str(notes), "--corpus", str(corpus), "--embedder", "hash",
                                  "--config", str(cfg), "--out", str(tmp_path / "ev"), "--no-progress", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    test = rep["outcomes"]["test"]
    assert test["hit_rate"] == 1.0 and test["n_for_none"] == 2
    # the hash embedder counts shared words ("what is the …"): a held-out question for no note clears the
    # threshold fitted on the other half, and the report says which
    assert test["false_matches"] == 1 and test["false"] == ["What is the capital of Peru?"]
    lat = rep["latency"]
    assert lat["n"] == 2 and lat["lean_share"] == 1.0 and lat["lean_p50_ms"] > 0 and lat["wide_p50_ms"] > 0
    assert json.loads((tmp_path / "ev" / "memory.json").read_text())["latency"]["n"] == 2


def test_calibrate_memory_needs_questions_for_notes_and_for_none(tmp_path: Path) -> None:
    corpus, notes = _setup(tmp_path)
    (notes / "questions.json").write_text(json.dumps({"questions": QUESTIONS["questions"][:2]}), encoding="utf-8")
    r = CliRunner().invoke(main, ["calibrate", "--memory", str(notes), "--corpus", str(corpus), "--embedder", "hash",
                                  "--no-write", "--work-dir", str(tmp_path / "w"), "--no-progress"])
    assert r.exit_code == 2 and "written for a note and questions written for none" in r.stderr


def test_eval_with_questions_and_memory_puts_a_memory_section_in_the_report(tmp_path: Path) -> None:
    corpus, notes = _setup(tmp_path)
    qfile = tmp_path / "q.jsonl"
    rows = [{"id": "q1", "question": "When does the keeper start the fog horn?", "lang": "en", "answerable": True,
             "category": "in_corpus", "gold": ["corpus/fog.md"]},
            {"id": "q2", "question": "Who won the 2018 league?", "lang": "en", "answerable": False,
             "category": "off_topic"}]
    qfile.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["eval", "--corpus", str(corpus), "--questions", str(qfile), "--memory", str(notes),
                                  "--embedder", "hash", "--out", str(tmp_path / "ev"), "--no-progress", "--no-plots"])
    assert r.exit_code == 0, r.output
    assert "memory test: hit rate 1.0" in r.stdout and "lean vs wide (pinned questions, 2×3)" in r.stdout
    report = json.loads((tmp_path / "ev" / "report.json").read_text())
    assert report["memory"]["notes"] == 1 and report["memory"]["outcomes"]["fit"]["n_for_notes"] == 1
    assert report["overall"]["n"] == 2  # the search report is there too
