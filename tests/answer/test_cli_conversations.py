"""``footnote ask --conversation`` and ``footnote conversations`` through click's runner, over a real store."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from footnote.cli import main

from .conftest import CORPUS, FOG_Q


def _run(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, args)
    return r.exit_code, r.stdout, r.stderr


def test_cli_conversation(tmp_path: Path) -> None:
    d = tmp_path / "corpus"
    d.mkdir()
    for name, text in CORPUS.items():
        (d / name).write_text(text, encoding="utf-8")
    common = ["--store", str(tmp_path / "s.db"), "--embedder", "hash"]
    assert _run(["ingest", str(d), *common])[0] == 0

    code, out, _ = _run(["ask", FOG_Q, *common])
    assert code == 0 and "conversation:" not in out  # a plain ask saves nothing
    code, out, _ = _run(["conversations", *common])
    assert code == 0 and "no conversations yet" in out

    code, out, _ = _run(["ask", FOG_Q, "--conversation", "new", "--json", *common])
    first = json.loads(out)
    cid = first["conversation_id"]
    assert code == 0 and len(cid) == 32 and first["turn"] == 1

    code, out, err = _run(["ask", "And how many blasts each minute?", "--conversation", cid, *common])
    assert code == 0
    assert f"Searching for: {FOG_Q} — And how many blasts each minute?" in err
    assert "three seconds" in out and f"conversation: {cid} (turn 2" in out

    code, out, _ = _run(["conversations", *common])
    assert code == 0 and cid in out and "2 turns" in out and FOG_Q in out
    code, out, _ = _run(["conversations", cid, "--json", *common])
    conv = json.loads(out)
    assert [t["n"] for t in conv["turns"]] == [1, 2] and conv["turns"][1]["answer"]["citations"]
    code, out, _ = _run(["conversations", cid, *common])
    assert "searched for: " + FOG_Q in out and "[1]" in out

    code, out, err = _run(["ask", "q?", "--conversation", "nope", *common])
    assert code != 0 and "no conversation" in (out + err)
    assert _run(["conversations", cid, "--delete", *common])[0] == 0
    code, out, err = _run(["conversations", cid, *common])
    assert code != 0 and "no conversation" in (out + err)
    code, out, err = _run(["conversations", "--delete", *common])
    assert code == 2
