"""The demo's own settings file (demo/footnote.toml) is read by every command over the demo's store, not only by
`footnote serve`: a stranger's "Что говорит Книга гавани 3.2?" was answered in the chat but not by `footnote ask`
from the same checkout. A store of other books is never read with the demo's names, by the CLI or by serve."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from footnote.cli import main
from footnote.commands.demo import demo_config
from footnote.settings import load_settings

REPO = Path(__file__).resolve().parents[1]
QUESTION = "Что говорит Книга гавани 3.2?"


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder like the checkout: demo/ with its settings file, no ./footnote.toml, no FOOTNOTE_CONFIG."""
    shutil.copytree(REPO / "demo", tmp_path / "demo")  # all of it: a lecture's source is stored with its recording
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FOOTNOTE_CONFIG", raising=False)
    return tmp_path


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, [*args, "--embedder", "hash"])
    return r.exit_code, r.stdout, r.stderr


def _first_label(out: str) -> str:
    return str(json.loads(out)["notes"][0]["label"])


def test_the_cli_reads_the_demos_settings_over_the_demos_store(checkout: Path) -> None:
    code, _, err = _run("ingest", "demo")
    assert code == 0, err
    code, out, err = _run("search", QUESTION, "--json")
    assert code == 0, err
    assert _first_label(out) == "HB 3.2"  # "книга гавани" → HB: a name only the demo's file gives
    assert f"settings: {Path('demo') / 'footnote.toml'} (the demo's own)" in err


def test_a_store_of_other_books_is_not_read_with_the_demos_names(checkout: Path) -> None:
    books = checkout / "books"
    books.mkdir()
    shutil.copy(checkout / "demo" / "verses" / "harbour-book.md", books / "harbour-book.md")
    code, _, err = _run("ingest", "books")
    assert code == 0, err
    code, out, err = _run("search", QUESTION, "--json")
    assert code == 0, err
    assert "the demo's own" not in err and _first_label(out) != "HB 3.2"
    settings = load_settings(None)
    assert demo_config(settings, False, checkout / "demo") is None
    assert demo_config(settings, True, checkout / "demo", empty_too=True) is None  # --config given
    # serve counts a store it is about to fill with the demo, never one holding other books
    assert demo_config(settings.with_overrides(**{"store.url": str(checkout / "new.db")}), False, checkout / "demo",
                       empty_too=True) == checkout / "demo" / "footnote.toml"
    assert demo_config(settings, False, checkout / "demo", empty_too=True) is None


def test_a_folder_called_demo_is_not_the_demo(checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The store holds the demo only when it holds one of the demo's files byte for byte under the demo's ids."""
    other = tmp_path_factory.mktemp("elsewhere") / "demo"
    (other / "verses").mkdir(parents=True)
    (other / "verses" / "harbour-book.md").write_text("# Another book\n\nNothing of the light.\n", encoding="utf-8")
    code, _, err = _run("ingest", str(other))
    assert code == 0, err
    assert demo_config(load_settings(None), False, checkout / "demo") is None


def test_a_local_settings_file_wins(checkout: Path) -> None:
    code, _, err = _run("ingest", "demo")
    assert code == 0, err
    (checkout / "footnote.toml").write_text("", encoding="utf-8")
    code, out, err = _run("search", QUESTION, "--json")
    assert code == 0, err
    assert "the demo's own" not in err and _first_label(out) != "HB 3.2"


def test_settings_shows_the_demos_file_and_will_not_write_over_it(checkout: Path) -> None:
    """A helper's attack: `footnote settings` said "settings file: none" over the demo's store, and `--set` wrote a
    ./footnote.toml that silently turned the demo's book names off."""
    code, _, err = _run("ingest", "demo")
    assert code == 0, err
    code, out, _ = _run("settings")
    assert code == 0 and out.startswith(f"# settings file: {Path('demo') / 'footnote.toml'}")
    code, _, err = _run("settings", "--set", "answer.corpus_description=lighthouse")
    assert code == 2 and "--config" in err and "the demo's own" in err
    assert not (checkout / "footnote.toml").exists()


def test_asking_reads_a_store_without_opening_it(checkout: Path) -> None:
    """Every command asks whether the store is the demo's: an empty file stays empty (it was given a schema), and a
    PostgreSQL store is never connected to for it (an unreachable one cost every command a second timeout)."""
    empty = checkout / "empty.db"
    empty.write_bytes(b"")
    code, _, err = _run("models", "list", "--store", str(empty))
    assert code == 0, err
    assert empty.stat().st_size == 0
    settings = load_settings(None, **{"store.url": "postgresql://u:p@192.0.2.1:5432/none"})  # TEST-NET: no reply
    assert demo_config(settings, False, checkout / "demo") is None
    assert demo_config(settings, False, checkout / "demo", empty_too=True) == checkout / "demo" / "footnote.toml"
