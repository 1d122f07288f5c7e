"""Hypothesis over the CLI's arguments (issue 44): store URLs (malformed, with credentials), questions (any
text, the undecodable bytes of an argv as surrogate escapes) and paths. Every run ends with a documented exit
status (0, 1 or 2) and a message — never a traceback, a RecursionError, or a password in the output."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from footnote.cli import main

PW = "pw-Fuzz-9137"
SETTINGS = settings(max_examples=40, deadline=None, database=None, derandomize=True,
                    phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))

_HOSTS = st.sampled_from(["[::1", "[::1]", "::1", "[", "]", "127.0.0.1:1", "127.0.0.1:99999", "127.0.0.1:x",
                          "127.0.0.1:0", "[fe80::1%eth0]:1", "", "@", "h@h"])
_TAILS = st.sampled_from(["/db", "", "/db?sslmode=require", "/db?password=" + PW, "/%", "/db#frag", "?", "/../x"])
STORE_URLS = (
    st.builds(lambda scheme, user, host, tail: f"{scheme}://{user}:{PW}@{host}{tail}",
              st.sampled_from(["postgresql", "postgres", "sqlite", "http", "ftp", "", "POSTGRESQL"]),
              st.sampled_from(["bob", "", "b:c", "b@c", "%40"]), _HOSTS, _TAILS)
    | st.builds(lambda k: f"host=127.0.0.1 port=1 {k}={PW} dbname=x", st.sampled_from(["password", "sslpassword"]))
    | st.text(max_size=40).filter(lambda t: "\x00" not in t and not t.startswith("-"))
)


def _no_crash(result: object, *, secret: str | None = None) -> None:
    out = getattr(result, "output", "")
    exc = getattr(result, "exception", None)
    assert result.exit_code in (0, 1, 2), (result.exit_code, out, exc)  # type: ignore[attr-defined]
    if result.exit_code != 0 and not isinstance(exc, SystemExit):  # type: ignore[attr-defined]
        raise AssertionError(f"an exception escaped: {exc!r}\n{out}")
    assert "Traceback" not in out and "RecursionError" not in out
    if secret:
        assert secret not in out, out


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # a store URL taken as a path creates nothing outside the test's folder
    return tmp_path


def test_any_store_url(in_tmp: Path) -> None:
    runner = CliRunner()

    @given(url=STORE_URLS)
    @SETTINGS
    def one(url: str) -> None:
        result = runner.invoke(main, ["status", "--store", url])
        _no_crash(result, secret=PW)

    one()


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("cli-fuzz")
    (root / "lamp.md").write_text("# The lamp\n\nThe keepers trim the lamp wick every evening at dusk.\n", encoding="utf-8")
    db = str(root / "s.db")
    assert CliRunner().invoke(main, ["ingest", str(root / "lamp.md"), "--store", db, "--embedder", "hash"]).exit_code == 0
    return db


# argv bytes that are not UTF-8 arrive as surrogate escapes ("\udcff"): a question can hold them
QUESTIONS = st.text(max_size=60) | st.builds(lambda t, b: t + b.decode("utf-8", "surrogateescape"), st.text(max_size=20),
                                             st.binary(min_size=1, max_size=6))


def test_any_question(small_store: str) -> None:
    runner = CliRunner()

    @given(question=QUESTIONS.filter(lambda q: "\x00" not in q and not q.startswith("-")),
           command=st.sampled_from(["search", "ask"]))
    @SETTINGS
    def one(question: str, command: str) -> None:
        _no_crash(runner.invoke(main, [command, question, "--store", small_store]))

    one()


PATHS = st.lists(st.text(st.characters(codec="utf-8", exclude_characters="\x00/"), min_size=1, max_size=12),
                 min_size=1, max_size=3).map("/".join) | st.sampled_from(["~nobody/x", "\\\\server\\share", "x" * 250,
                                                                       "./missing/../x"])


def test_any_path_to_ingest(in_tmp: Path, small_store: str) -> None:
    runner = CliRunner()

    @given(path=PATHS.filter(lambda p: not p.startswith("-")))
    @settings(SETTINGS, max_examples=25)
    def one(path: str) -> None:
        _no_crash(runner.invoke(main, ["ingest", path, "--store", str(in_tmp / "p.db"), "--embedder", "hash"]))
        _no_crash(runner.invoke(main, ["remove", path, "--store", small_store]))

    one()


def test_a_path_longer_than_the_system_allows(in_tmp: Path) -> None:
    """Found by this fuzzer: the loader's Path.is_dir() raised ENAMETOOLONG, which escaped as a traceback. Now the
    file fails alone, named, with the system's reason."""
    r = CliRunner().invoke(main, ["ingest", "x" * 300, "--store", str(in_tmp / "p.db"), "--embedder", "hash"])
    _no_crash(r)
    assert r.exit_code == 1 and "x" * 300 in r.output and "too long" in r.output.lower(), r.output
