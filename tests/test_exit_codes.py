"""The README's exit-status table matches what the commands do."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from footnote.cli import main

REPO = Path(__file__).resolve().parents[1]
_SCRIPT = Path(sys.executable).parent / "footnote"
FOOTNOTE = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-c", "from footnote.cli import main; main()"]


def readme_table() -> dict[int, str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return {int(code): meaning for code, meaning in re.findall(r"^\| (\d+) \| (.*) \|$", text, re.MULTILINE)}


def test_readme_lists_every_exit_status() -> None:
    table = readme_table()
    assert {0, 1, 2, 130} <= set(table)
    assert "interrupted" in table[130] and "store that does not exist" in table[2]
    assert any("port" in meaning for meaning in table.values())


def test_statuses_0_1_2(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("# A\n\nText.\n", encoding="utf-8")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    db = str(tmp_path / "s.db")
    assert CliRunner().invoke(main, ["ingest", str(tmp_path / "ok.md"), "--store", db, "--embedder", "hash"]).exit_code == 0
    assert CliRunner().invoke(main, ["ingest", str(tmp_path / "bad.json"), "--store", db]).exit_code == 1
    assert CliRunner().invoke(main, ["search", "x", "--store", str(tmp_path / "none.db")]).exit_code == 2


def test_serve_on_a_busy_port_exits_as_the_readme_says(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("# A\n\nText.\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    assert CliRunner().invoke(main, ["ingest", str(tmp_path / "ok.md"), "--store", db, "--embedder", "hash"]).exit_code == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run([*FOOTNOTE, "serve", "--store", db, "--port", str(port), "--no-demo"],
                           capture_output=True, text=True, env=env, timeout=120)
    said = [code for code, meaning in readme_table().items() if "port" in meaning]
    assert said == [r.returncode], r.stderr  # the README's row for a busy port says what really happens
    assert "address already in use" in r.stderr.lower()
