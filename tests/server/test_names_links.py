"""Issue 39 §3–4 over real HTTP (httpx → uvicorn on loopback, the demo in a real SQLite store, the models at the
scripted OpenAI-compatible server): a source's name in the forms people and models write it, a link whose
address no cited passage carries, and a pinned note whose body the corpus does not back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from serverkit import build_store, start_server, stop_server

from footnote.cli import main
from footnote.engine import Engine
from footnote.server.app import create_app
from footnote.settings import Settings
from footnote.testing.openai_server import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FOG = "When do the Marrowick keepers start the fog horn, and how does it sound?"
TIDES = "The tide tables of Marrowick are printed each spring and posted at https://tides.marrowick.example/tables for the boats."
OUTLINE = json.dumps({"theses": [{"text": "The horn.", "notes": [1, 2, 3, 4]}, {"text": "More.", "notes": [5, 6, 7, 8]}]})
ALL = "[1][2][3][4][5][6][7][8]"
LEAD = f"The keeper on watch starts the fog horn when the Black Skerry beacon can no longer be seen {ALL}."


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> tuple[Path, Settings]:
    root = tmp_path_factory.mktemp("names-links")
    settings = build_store(root, demo_dir)
    extra = root / "more"
    extra.mkdir()
    (extra / "tide-tables.md").write_text(f"# Tide tables\n\n{TIDES} The fog horn is tested when the tables are posted.\n",
                                          encoding="utf-8")
    with Engine.from_settings(settings) as engine:
        assert engine.ingest([extra]).ok
    return root, settings.with_overrides(**{"server.api_key": "k3y"})


def _models(base_url: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for role in ("planner", "synthesizer"):
        out |= {f"models.{role}.base_url": base_url, f"models.{role}.model": f"{role}-m", f"models.{role}.timeout_s": 30.0,
                f"models.{role}.retries": 0, f"models.{role}.retry_backoff_s": 0.0}
    return out


def _ask(store: tuple[Path, Settings], synth: str, question: str = FOG) -> dict[str, Any]:
    """The non-streamed answer of a live server whose synthesizer writes ``synth``."""
    with ScriptedOpenAIServer({"planner-m": [Reply(OUTLINE)] * 2, "synthesizer-m": [Reply(synth)] * 2}) as model:
        settings = store[1].with_overrides(**_models(model.base_url))
        engine = Engine.from_settings(settings)
        url, server, thread = start_server(create_app(engine, settings))
        try:
            key = {"X-API-Key": "k3y"}
            r = httpx.post(url + "/api/ask", json={"question": question, "stream": False}, headers=key, timeout=60)
            streamed = httpx.post(url + "/api/ask", json={"question": question}, headers=key, timeout=60).text
        finally:
            stop_server(server, thread)
            engine.close()
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    data["streamed"] = _tokens(streamed)
    return data


def _tokens(sse: str) -> str:
    """The text the reader was streamed: the ``token`` events of an SSE body, joined."""
    out = []
    for frame in sse.split("\n\n"):
        lines = frame.strip().split("\n")
        if lines and lines[0] == "event: token":
            out.append(json.loads(lines[1].removeprefix("data: "))["text"])
    assert out, sse[:500]
    return "".join(out)


def _cited_sources(data: dict[str, Any]) -> set[str]:
    return {c["source_id"] for c in data["citations"]}


# -- §3 names in the forms people write them ---------------------------------------------------------------

FORMS = (
    "Ada Penhallow to the Marrowick Harbour Board",  # the title without its date
    "Ada  Penhallow to the  Marrowick Harbour Board, 16 February 1886",  # doubled spaces
    "Ada Penhallow to the **Marrowick Harbour Board**, 16 February 1886",  # Markdown bold inside
    "demo/letters/1886-02-penhallow-to-harbour-board.md",  # the source id with its folders
    "letters/1886-02-penhallow-to-harbour-board",  # a path without the extension
    "1886-02-penhallow-to-harbour-board",  # the file stem
    "1886_02_penhallow_to_harbour_board",  # … with underscores
    "1886 02 penhallow to harbour board",  # … with spaces
    "dolgiy_tuman",  # a two-word stem with an underscore
    "The lamp and the lens of the Marrowick Light",  # a lecture's title without its label ("Lecture 1.")
)


def test_names_in_every_form_are_removed_unless_the_turn_carries_them(store: tuple[Path, Settings]) -> None:
    synth = LEAD + "".join(f" The horn gives two blasts every minute, as {f} records {ALL}." for f in FORMS)
    data = _ask(store, synth)
    assert data["mode"] == "corpus", data
    cited = _cited_sources(data)
    assert "demo/letters/1886-02-penhallow-to-harbour-board.md" not in cited
    assert not cited & {"demo/prose/dolgiy-tuman.ru.md", "demo/lectures/01-lamp-and-lens.srt"}
    for shown in (data["answer"], data["streamed"]):
        low = shown.lower()
        for word in ("penhallow", "harbour_board", "harbour board", "1886", "dolgiy", "lamp and the lens"):
            assert word not in low, (word, shown)
        assert "black skerry beacon" in low and "two blasts every minute" in low  # the rest of each sentence stays
    assert data["removed_mentions"] == len(FORMS)
    assert len(data["trace"]["removed_mentions"]) == len(FORMS)
    # the same name stays where the turn carries it: no false removal
    q = "What did Ada Penhallow ask the Harbour Board to send after the gale broke the lantern glass?"
    # (a sentence the letter supports: every sentence shown is supported by a passage it cites, issue 39 §1)
    kept = _ask(store, f"Her letter, Ada Penhallow to the Marrowick Harbour Board, asks the Board to send two new panes "
                       f"of lantern glass by the first boat that can cross the bar {ALL}.", q)
    assert "demo/letters/1886-02-penhallow-to-harbour-board.md" in _cited_sources(kept)
    assert "Ada Penhallow to the Marrowick Harbour Board" in kept["answer"] and kept["removed_mentions"] == 0


# -- §4 links ------------------------------------------------------------------------------------------------

def test_a_link_stays_only_when_a_cited_passage_carries_its_address(store: tuple[Path, Settings]) -> None:
    q = "When are the Marrowick tide tables printed and where are they posted for the boats?"
    synth = (f"The tide tables are printed each spring and posted at [the harbour page](https://tides.marrowick.example/tables) {ALL}. "
             f"The fog horn is tested when the tables are posted, as [the keepers' site](https://evil.example/horn) says {ALL}. "
             f"The tide tables of Marrowick are printed each spring and posted at https://evil.example/lamp for the boats {ALL}. "
             f"The bell is rung in fog as <https://evil.example/bell> explains in detail {ALL}.")
    data = _ask(store, synth, q)
    assert "more/tide-tables.md" in {s.rsplit("/", 2)[-2] + "/" + s.rsplit("/", 1)[-1] for s in _cited_sources(data)}
    for shown in (data["answer"], data["streamed"]):
        assert "evil.example" not in shown, shown
        assert "[the harbour page](https://tides.marrowick.example/tables)" in shown  # approved: still a link
        assert "the keepers' site" in shown and "](" not in shown.replace("](https://tides.marrowick.example", "")
        assert "printed each spring and posted at for the boats" in shown  # a bare address goes, its sentence stays
    assert {"https://evil.example/horn", "https://evil.example/lamp", "https://evil.example/bell"} <= set(
        data["trace"]["removed_mentions"])
    # the web chat (markdown.js) links only ``[t](url)`` — bare and autolinked addresses stay text — so what the
    # server lets through is all it can link
    js = (REPO / "src/footnote/server/static/markdown.js").read_text(encoding="utf-8")
    assert 'el("a", { href: m[3] }' in js and js.count('el("a"') == 1


# -- §4 pinned notes are checked when imported or edited ----------------------------------------------------

@pytest.fixture(scope="module")
def client(store: tuple[Path, Settings]) -> Iterator[httpx.Client]:
    settings = store[1]
    engine = Engine.from_settings(settings)
    url, server, thread = start_server(create_app(engine, settings))
    try:
        with httpx.Client(base_url=url, timeout=60, headers={"Authorization": "Bearer k3y"}) as c:
            yield c
    finally:
        stop_server(server, thread)
        engine.close()


def _pinned(body: str, note_id: str = "checked") -> dict[str, Any]:
    return {"id": note_id, "kind": "pinned", "title": "Checked", "triggers": ["When is the fog horn started?"],
            "sources": ["lectures/02-fog-and-tides.vtt", "HB 2.1"], "body": body}


GOOD = "The keepers start the fog horn when the beacon is lost [1].\nThe verse HB 2.1 says so [2]."


@pytest.mark.parametrize(("line2", "reason"), [
    ("It sounds like a cow [99].", "[99] points at none of the note's sources"),
    ("It is in secret-manual.pdf as well [1].", "'secret-manual.pdf' is no source of the store"),
    ("See demo/letters/1899-nowhere.md too [1].", "'demo/letters/1899-nowhere.md' is no source"),
    ("The verse HB 9.9 says so [2].", "the address 'HB 9.9' is not in the corpus"),
    ("The verse \u041d\u0412 2.1 says so [2].", "look-alike or invisible characters"),
    ("More at [the board](https://evil.example/horn) [1].", "'https://evil.example/horn' appears in no passage"),
    ("More at https://evil.example/horn [1].", "appears in no passage"),
])
def test_a_pinned_note_that_the_corpus_does_not_back_is_a_422_naming_the_line(
        client: httpx.Client, line2: str, reason: str) -> None:
    body = "The keepers start the fog horn when the beacon is lost [1].\n" + line2
    r = client.post("/api/memory", json=_pinned(body))
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert reason in err and "body line 2" in err, err
    assert client.get("/api/memory/checked").status_code == 404  # nothing written


def test_an_edit_is_checked_too(client: httpx.Client) -> None:
    assert client.post("/api/memory", json=_pinned(GOOD, "edited")).status_code == 200
    r = client.put("/api/memory/edited", json=_pinned(GOOD + "\nIt sounds like a cow [99].", "edited"))
    assert r.status_code == 422 and "body line 3" in r.json()["error"] and "[99]" in r.json()["error"]
    assert client.get("/api/memory/edited").json()["body"] == GOOD  # the edit was refused whole
    client.delete("/api/memory/edited")


def test_cli_import_refuses_a_bad_pinned_note_by_file_and_line_and_the_demo_memory_imports(
        tmp_path: Path, store: tuple[Path, Settings]) -> None:
    db = tmp_path / "copy.db"
    db.write_bytes(Path(store[1].store.url).read_bytes())
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "forged.md").write_text(
        "---\nkind: pinned\ntriggers: [\"When is the fog horn started?\"]\n"
        "sources: [\"lectures/02-fog-and-tides.vtt\"]\n---\n\n"
        "The keepers start the fog horn when the beacon is lost [1].\nIt is in secret-manual.pdf [1].\n",
        encoding="utf-8")
    args = ["--store", str(db), "--embedder", "hash"]
    r = CliRunner().invoke(main, ["memory", "import", str(notes), *args])
    assert r.exit_code == 1, r.output
    assert f"{notes / 'forged.md'}:8: the file name 'secret-manual.pdf' is no source of the store" in r.output
    ok = CliRunner().invoke(main, ["memory", "import", str(REPO / "demo-memory"), "--json", *args])
    assert ok.exit_code == 0, ok.output
    report = json.loads(ok.output)
    assert report["failed"] == 0 and report["imported"] >= 6
