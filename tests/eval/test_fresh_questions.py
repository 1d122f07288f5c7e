"""The project's own fresh Russian questions over the SQuAD 2.0 corpus (tests/data/squad2_ru.jsonl) and the
script that leaves their near-miss paragraphs out of the shared corpus (scripts/leave_out_corpus.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from footnote.eval.questions import load_questions

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "tests" / "data" / "squad2_ru.jsonl"
SCRIPT = ROOT / "scripts" / "leave_out_corpus.py"


def _rows() -> list[dict[str, object]]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_fresh_russian_set_loads_and_covers_each_category() -> None:
    qs = load_questions(QUESTIONS)
    cats = {c: sum(q.category == c for q in qs) for c in ("in_corpus", "near_miss", "off_topic")}
    assert len(qs) == sum(cats.values()) >= 40 and min(cats.values()) >= 10
    assert all(q.lang == "ru" for q in qs) and len({q.id for q in qs}) == len(qs)
    # every near-miss row names the paragraph it was asked about, and that paragraph is nobody's gold
    left_out = {p for r in _rows() if r["category"] == "near_miss" for p in r["left_out"]}  # type: ignore[attr-defined]
    assert len(left_out) >= 8 and not left_out & {g for q in qs for g in q.gold}


def test_leave_out_corpus_drops_the_near_miss_paragraphs(shared_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "corpus.jsonl"
    r = subprocess.run([sys.executable, str(SCRIPT), str(shared_dir / "eval" / "squad2" / "corpus.jsonl"), str(QUESTIONS),
                        str(out)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    ids = {json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()}
    left_out = {p for row in _rows() for p in row.get("left_out", [])}  # type: ignore[attr-defined]
    gold = {g for q in load_questions(QUESTIONS) for g in q.gold}
    assert not ids & left_out and gold <= ids and len(ids) == 83 - len(left_out)


def test_leave_out_corpus_refuses_a_gold_paragraph_left_out(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "A#0", "text": "x"}) + "\n", encoding="utf-8")
    qs = tmp_path / "q.jsonl"
    qs.write_text("\n".join(json.dumps(r) for r in [
        {"id": "1", "question": "?", "lang": "ru", "answerable": True, "category": "in_corpus", "gold": ["A#0"]},
        {"id": "2", "question": "?", "lang": "ru", "answerable": False, "category": "near_miss", "left_out": ["A#0"]},
    ]) + "\n", encoding="utf-8")
    r = subprocess.run([sys.executable, str(SCRIPT), str(corpus), str(qs), str(tmp_path / "o.jsonl")],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 1 and "left-out paragraphs ['A#0']" in r.stderr and not (tmp_path / "o.jsonl").exists()
