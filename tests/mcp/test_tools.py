"""What the MCP tools return, over the demo store (no transport: tests/mcp/test_mcp.py drives the wire)."""

from __future__ import annotations

from typing import Any

import pytest

from footnote.answer.types import Citation
from footnote.engine import Engine
from footnote.errors import NotFound, UsageError
from footnote.mcp.tools import FootnoteTools
from footnote.records.fragments import fragment_dict
from footnote.retrieve.format import search_result_dict
from footnote.settings import Settings

TRACK = "demo/lectures/02-fog-and-tides.vtt"
PDF = "demo/pdf/keepers-handbook.pdf"


@pytest.fixture
def tools(mcp_store: Settings) -> FootnoteTools:
    engine = Engine.from_settings(mcp_store.with_overrides(**{"mcp.page_size": 4, "mcp.context_fragments": 1}))
    yield FootnoteTools(engine)  # type: ignore[misc]
    engine.close()


def test_a_transcript_span_comes_with_its_neighbours(tools: FootnoteTools) -> None:
    first, second = sorted(tools.engine.store.fragments_of(TRACK), key=lambda f: f.ordinal)[:2]
    at = first.locator.end_ms + 1_000  # type: ignore[union-attr]  # inside the second window only
    got = tools.get_source(TRACK, {"track_id": TRACK, "start_ms": at, "end_ms": at + 2_000})
    assert [(f["fragment_id"], f["cited"]) for f in got["fragments"]] == [(first.id, False), (second.id, True)]
    with pytest.raises(UsageError, match="names track"):
        tools.get_source(TRACK, {"track_id": "demo/lectures/01-lamp-and-lens.srt", "start_ms": 0, "end_ms": 1})


def test_a_verse_comes_with_its_commentary_and_neighbours(tools: FootnoteTools) -> None:
    got = tools.get_source("demo/verses/harbour-book.md", {"book": "HB", "loc": "3.2"})
    cited = [f for f in got["fragments"] if f["cited"]]
    assert {f["kind"] for f in cited} == {"verse", "commentary"} and {f["label"] for f in cited} == {"HB 3.2"}
    assert not got["fragments"][0]["cited"] and not got["fragments"][-1]["cited"]  # one neighbour each side


def test_a_pdf_page_is_its_text(tools: FootnoteTools) -> None:
    got = tools.get_source(PDF, {"file": PDF, "page": 2})
    cited = [f for f in got["fragments"] if f["cited"]]
    assert cited and all(f["locator"]["page"] == 2 for f in cited)
    assert all(f["label"].startswith(f"{PDF} p. 2") for f in cited)
    with pytest.raises(NotFound, match="has no passage at"):
        tools.get_source(PDF, {"file": PDF, "page": 99})
    with pytest.raises(UsageError, match="is not one of"):
        tools.get_source(PDF, {"page": 2})


def test_sources_page_with_a_cursor_and_filter(tools: FootnoteTools) -> None:
    seen: list[str] = []
    cursor = None
    while True:
        page = tools.list_sources(cursor=cursor)
        assert len(page["sources"]) <= 4
        seen += [s["source_id"] for s in page["sources"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == page["total"] == len(tools.engine.store.list_sources())
    ru = tools.list_sources(lang="ru")
    assert ru["total"] >= 3 and all(s["lang"] == "ru" for s in ru["sources"])
    for bad in ("-4", "abc"):
        with pytest.raises(UsageError, match="cursor"):
            tools.list_sources(cursor=bad)


def test_the_resource_text_is_bounded(mcp_store: Settings) -> None:
    engine = Engine.from_settings(mcp_store.with_overrides(**{"mcp.resource_max_chars": 600}))
    try:
        text = FootnoteTools(engine).source_text(PDF)
        assert len(text) < 800 and "cut at 600 characters" in text and text.startswith("# ")
    finally:
        engine.close()


def test_ask_labels_a_commentary_with_its_commentator(tools: FootnoteTools) -> None:
    got = tools.ask("What does HB 2.2 say about the horn?")
    comm = [c for c in got["citations"] if c["kind"] == "commentary"]
    assert comm, got["citations"]
    assert all(c["label"] == "HB 2.2 — commentary, Ada Penhallow" for c in comm)
    assert all(c["source_meta"] == {"commentator": "Ada Penhallow"} for c in comm)


def test_ask_and_search_carry_the_abstention(tools: FootnoteTools, mcp_store: Settings) -> None:
    nothing = "Who invented the Marrowick fog horn?"  # the gate bails out
    got = tools.ask(nothing)
    assert got["mode"] == "not_found" and got["abstention"] == {"reason": "no_relevant_content", "stage": "gate"}
    assert "trace" not in got
    found = tools.search(nothing)
    assert found["verdict"] == "bail_out" and found["corpus_has_nothing"] is True
    assert found["abstention"] == {"reason": "no_relevant_content", "stage": "gate"}
    assert tools.search("What does HB 3.2 say?")["abstention"] is None
    assert tools.ask("What does HB 3.2 say?")["abstention"] is None
    # a near miss: the corpus has the horn, not its colour (with a sentence floor for the test embedder, and a
    # term share no sentence about the horn reaches: "Marrowick fog horn" alone is 3 of the question's 5 terms)
    engine = Engine.from_settings(mcp_store.with_overrides(**{"answer.extractive.min_similarity": {"hash": 0.9},
                                                               "answer.extractive.min_overlap": 0.8}))
    try:
        near = FootnoteTools(engine).ask("What colour is the Marrowick fog horn painted?")
    finally:
        engine.close()
    assert near["abstention"] == {"reason": "answer_not_in_passages", "stage": "answer"}
    assert near["answer"].startswith("The closest passages in the corpus come from “")


def test_every_surface_shows_a_fragment_in_the_one_shape(tools: FootnoteTools) -> None:
    """A search's notes (the CLI's and HTTP's ``search --json``), an answer's citations and the MCP tools all
    carry :func:`fragment_dict` of the fragment, and a stored citation reads back with its language."""
    q = "When must the keeper start the fog horn?"
    store = tools.engine.store

    def carries_the_shape(d: dict[str, Any]) -> bool:
        f = store.get_fragments([str(d["fragment_id"])])[0]
        return all(d.get(k) == v for k, v in fragment_dict(f).items())

    answer = tools.engine.ask(q)
    shown = [*search_result_dict(tools.engine.search(q))["notes"], *tools.search(q)["notes"],
             *(c.to_dict() for c in answer.citations if c.fragment.kind != "pinned"),
             *tools.get_source(TRACK, {"track_id": TRACK, "start_ms": 5_000, "end_ms": 6_000})["fragments"]]
    assert len(shown) > 4 and [d for d in shown if not carries_the_shape(d)] == []
    back = Citation.from_dict(answer.citations[0].to_dict())
    assert back.fragment.lang == answer.citations[0].fragment.lang != ""
    assert back.to_dict() == answer.citations[0].to_dict()
