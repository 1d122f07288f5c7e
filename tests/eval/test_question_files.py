"""Question files: JSON Lines, or one JSON array of the same objects; bad ones name file and place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.errors import InputError
from footnote.eval.questions import load_questions

ROWS = [
    {"id": "q1", "question": "What is the capital of Poland?", "lang": "en", "answerable": True,
     "category": "in_corpus", "gold": ["Warsaw#0"]},
    {"id": "q2", "question": "How do I bake bread?", "lang": "en", "answerable": False, "category": "off_topic"},
]


def test_a_json_array_reads_like_json_lines(tmp_path: Path) -> None:
    lines = tmp_path / "q.jsonl"
    lines.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    array = tmp_path / "q.json"
    array.write_text(json.dumps(ROWS, indent=2), encoding="utf-8")
    assert load_questions(array) == load_questions(lines)


@pytest.mark.parametrize(("text", "problem"), [
    ('[{"id": "q1"', r"q.json:1: not valid JSON .*expected JSON Lines .* or one JSON array"),
    ('[{"id": "q1", "question": "x", "lang": "en", "answerable": true, "category": "c"}]',
     r"q.json: item 1: answerable question 'q1' has no gold ids"),
    ("[1]", r"q.json: item 1: not a question row"),
    ('{"id": "q1",\n "question": "x"}', r"q.json:1: not valid JSON: .*expected JSON Lines"),
])
def test_bad_files_say_where_and_what_is_expected(tmp_path: Path, text: str, problem: str) -> None:
    p = tmp_path / "q.json"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=problem):
        load_questions(p)


def test_eval_accepts_a_json_array(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "Warsaw#0", "kind": "prose_chapter", "title": "Warsaw", "lang": "en",
                                  "text": "Warsaw is the capital and largest city of Poland."}) + "\n",
                      encoding="utf-8")
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(ROWS), encoding="utf-8")
    r = CliRunner().invoke(main, ["eval", "--corpus", str(corpus), "--questions", str(questions), "--embedder",
                                  "hash", "--out", str(tmp_path / "out"), "--no-plots", "--no-progress", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["overall"]["n"] == 2
