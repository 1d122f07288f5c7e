"""Issue 44 items 8 and 11: what a new user's first hour met — silent `make run` steps, licence files ingested
as sources, a JSON Lines file said 2,103 times, "1 sources removed", glued table columns, an empty derived
table, `calibrate` writing ./footnote.toml, the README's snippet leaving my.db in the checkout."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.commands.base import ProgressBar
from footnote.commands.serve import ingest_demo_if_empty
from footnote.engine import Engine
from footnote.eval.table import aligned
from footnote.settings import Settings

REPO = Path(__file__).resolve().parents[1]


def _ingest(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["ingest", *args, "--embedder", "hash"])
    return r.exit_code, r.output


# --- item 8: progress lines ---------------------------------------------------------------------------------


def test_the_demo_ingest_of_serve_says_what_it_does(hash_settings: Settings, tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / "a.md").write_text("# A\n\nThe lamp keeper lights the lamp.\n", encoding="utf-8")
    said: list[str] = []
    with Engine.from_settings(hash_settings, create=True) as engine:
        line = ingest_demo_if_empty(engine, demo, say=said.append)
    assert said and "ingesting the demo corpus" in said[0] and "empty" in said[0]
    assert "1 sources" in line or "sources" in line


def test_progress_without_a_terminal_prints_lines(capsys: pytest.CaptureFixture[str]) -> None:
    """`make run` in a log (no terminal) showed no download or build progress at all."""
    bar = ProgressBar(False, "download", lines_every_s=0.0)
    for i in range(1, 4):
        bar(i, 3, "download")
    assert capsys.readouterr().err.splitlines() == ["download 1/3", "download 2/3", "download 3/3"]
    quiet = ProgressBar(False, "download")  # --no-progress: nothing
    quiet(1, 3, "download")
    assert capsys.readouterr().err == ""


def test_make_run_says_it_sets_up_the_venv() -> None:
    """The quiet pip install of `make run` says what it does (the model check and the demo ingest say it
    themselves: the two tests above)."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = text.split("$(RUN_STAMP): pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert '@echo "make run: setting up' in recipe


# --- item 11: the small ones ------------------------------------------------------------------------------


def test_licence_and_notice_files_are_skipped_with_a_word(tmp_path: Path) -> None:
    d = tmp_path / "sonnets"
    d.mkdir()
    (d / "sonnet1.txt").write_text("Shall I compare thee to a summer's day?\n", encoding="utf-8")
    (d / "LibriVox.txt").write_text("All LibriVox Recordings are in the Public Domain\n\nFor more information, "
                                    "please visit: http://www.librivox.org/\n", encoding="utf-8")
    (d / "LICENSE-MIT.txt").write_text("Permission is hereby granted, free of charge …\n", encoding="utf-8")
    (d / "cc-licence.md").write_text("# Licence\n\nCC BY 4.0\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    code, out = _ingest(str(d), "--store", db)
    assert code == 0, out
    assert re.search(r"skipped: \S*LibriVox\.txt: a short licence or notice text \(it says 'public domain'\)", out)
    assert "LICENSE-MIT.txt: a licence or notice file by its name" in out and "cc-licence.md" in out
    assert "skip_notices = false" in out
    r = CliRunner().invoke(main, ["sources", "--store", db, "--json"])
    assert [s["id"] for s in json.loads(r.output)["sources"]] == ["sonnets/sonnet1.txt"]
    # the setting includes them; a file named on the command line is always ingested
    cfg = tmp_path / "f.toml"
    cfg.write_text("[corpus]\nskip_notices = false\n", encoding="utf-8")
    code, out = _ingest(str(d), "--store", str(tmp_path / "all.db"), "--config", str(cfg))
    assert code == 0 and "4 added" in out, out
    code, out = _ingest(str(d / "LibriVox.txt"), "--store", str(tmp_path / "one.db"))
    assert code == 0 and "added" in out, out


def test_a_json_lines_file_is_said_once_with_a_count(tmp_path: Path) -> None:
    rows = tmp_path / "corpus.jsonl"
    rows.write_text("\n".join(json.dumps({"id": f"r{i}", "text": f"Row {i} about boats."}) for i in range(40)) + "\n",
                    encoding="utf-8")
    code, out = _ingest(str(rows), "--store", str(tmp_path / "s.db"))
    assert code == 0, out
    added = [line for line in out.splitlines() if line.startswith("added")]
    assert len(added) == 1 and "(40 sources, 40 fragments)" in added[0], added


def test_one_source_removed_is_singular(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    assert _ingest(str(tmp_path / "a.md"), "--store", db)[0] == 0
    r = CliRunner().invoke(main, ["remove", str(tmp_path / "a.md"), "--store", db])
    assert r.exit_code == 0 and "1 source removed" in r.output, r.output


def test_table_columns_never_glue() -> None:
    from footnote.commands.evaluate import summary_lines as retrieval_lines
    from footnote.eval.answers import _HEADS, COLUMNS
    from footnote.eval.answers import summary_lines as answer_lines

    cell = {"n": 12, "recall@1": 0.5, "abstain_rate": 0.25}
    lines = retrieval_lines({"overall": cell, "by_category_lang": {"near_miss:ru-en-a-rather-long-cell-name": cell},
                             "auroc": {}, "latency_ms": {}})
    assert lines[0].split() == ["cell", "n", "recall@1", "recall@5", "recall@16", "mrr", "answer_rate",
                                "abstain_rate", "crag"]
    assert lines[2].split()[0] == "near_miss:ru-en-a-rather-long-cell-name"
    head = answer_lines({"overall": {}, "by_lang": {}, "by_category_lang": {}})[1]
    assert head.split() == ["cell", *(_HEADS.get(c, c) for c in COLUMNS)]  # invalid_citations was glued on
    assert aligned(["a", "bb"], [["xxx", "1"]]) == ["a    bb", "xxx   1"]


def _tiny_calibration_set(tmp_path: Path) -> tuple[Path, Path]:
    sys.path.insert(0, str(REPO / "tests" / "eval"))
    try:
        from test_calibration import _tiny_set  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    return _tiny_set(tmp_path)  # type: ignore[no-any-return,unused-ignore]


def test_calibrate_writes_only_where_told_and_says_what(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`calibrate` wrote ./footnote.toml by default (every later command run from that folder changed);
    now it writes only a named file, prints what it wrote, and a one-pair set's derived check says why it
    is empty instead of an empty table."""
    corpus, questions = _tiny_calibration_set(tmp_path)
    monkeypatch.delenv("FOOTNOTE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    base = ["calibrate", "--corpus", str(corpus), "--questions", str(questions), "--embedder", "hash",
            "--all-questions", "--no-progress", "--work-dir", str(tmp_path / "work")]
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "footnote.toml").exists()
    assert "not written" in r.output and "[gate.by_embedder.hash" in r.output
    if "derived (any other pair)" in r.output:
        after = r.output.split("derived (any other pair)")[1].splitlines()[1]
        assert after.strip().startswith("(no check"), after
    cfg = tmp_path / "mine.toml"
    r = CliRunner().invoke(main, [*base, "--settings-file", str(cfg)])
    assert r.exit_code == 0 and cfg.is_file(), r.output
    assert f"written to {cfg}" in r.output and "bail_out" in r.output.split(f"written to {cfg}")[1]


def test_the_readme_snippet_leaves_no_store_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    code = next(b for b in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S) if "engine.ingest(" in b)
    shutil.copytree(REPO / "demo", tmp_path / "demo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOOTNOTE_EMBEDDER", "hash")
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]  # no my.db (nor its -wal, -shm) left
