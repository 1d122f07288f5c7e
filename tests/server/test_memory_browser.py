"""Curated memory in the web chat, in a real headless Chromium (Debian's, driven by Playwright), on its own
copy of the demo store with the demo's notes: the pinned chip is marked as the editors' answer (who,
when), and the curator view lists, adds, edits and removes notes. Screenshots: artifacts/screenshots/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serverkit import build_store, start_server, stop_server
from test_server_browser import TIMEOUT_MS, ask

from footnote.engine import Engine
from footnote.server.app import create_app

pytestmark = [pytest.mark.browser, pytest.mark.integration]

REPO = Path(__file__).resolve().parents[2]
KEY = "curator-key"  # notes are written only on a server with an API key


@pytest.fixture(scope="module")
def memory_url(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Iterator[tuple[str, Engine]]:
    root = tmp_path_factory.mktemp("memory-browser")
    settings = build_store(root, demo_dir).with_overrides(**{"server.api_key": KEY})
    engine = Engine.from_settings(settings)
    assert engine.import_memory([REPO / "demo-memory"]).failed == 0
    url, server, thread = start_server(create_app(engine, settings))
    try:
        yield url, engine
    finally:
        stop_server(server, thread)
        engine.close()


@pytest.fixture
def pg(browser: Any, memory_url: tuple[str, Engine]) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: d.accept())  # the remove confirmation
    page.goto(memory_url[0] + "/")
    page.wait_for_selector("#key-form:not([hidden])", timeout=TIMEOUT_MS)
    page.fill("#key-input", KEY)
    page.click("#key-form button")
    page.wait_for_selector("#status-line:not(:empty)", timeout=TIMEOUT_MS)
    yield page
    ctx.close()
    assert not errors, errors


def test_the_pinned_chip_is_the_editors_answer_with_who_and_when(pg: Any, screenshots: Path) -> None:
    turn = ask(pg, "When do the keepers start the fog horn?")
    assert turn.get_attribute("data-state") == "answered"
    first = turn.locator(".turn__answer .chip").first
    assert first.get_attribute("data-type") == "pinned" and first.get_attribute("data-kind") == "pinned"
    assert first.get_attribute("data-note") == "fog-horn-rule"
    assert first.get_attribute("data-author") == "Editorial board of the Marrowick collection"
    label = turn.locator(".turn__sources .source__label").first.inner_text()
    assert label.startswith("Editors' answer: The fog horn rule — Editorial board of the Marrowick collection, 20")
    # its sources are cited beside it, as ordinary chips
    assert {c.get_attribute("data-type") for c in turn.locator(".turn__sources .chip").all()[1:]} <= {"transcript", "verse"}
    first.click()
    pg.wait_for_selector("#viewer:not([hidden])", timeout=TIMEOUT_MS)
    assert pg.locator("#viewer").get_attribute("data-type") == "pinned"
    assert pg.locator("#viewer-meta").inner_text().startswith("The editors' answer to this question")
    assert "Black Skerry" in pg.locator("#viewer-text").inner_text()
    assert pg.locator("#viewer-open").is_hidden()  # a note has no original file to open
    pg.screenshot(path=str(screenshots / "memory-pinned-chip.png"))
    pg.keyboard.press("Escape")


def test_curator_view_lists_adds_edits_and_removes_notes(pg: Any, memory_url: tuple[str, Engine], screenshots: Path) -> None:
    engine = memory_url[1]
    pg.click("#open-memory")
    pg.wait_for_selector("#memory-list .memory-row", timeout=TIMEOUT_MS)
    assert pg.locator("#memory-count").inner_text() == "6 notes"
    assert pg.locator("#memory-readonly").is_hidden() and pg.locator("#memory-new").is_visible()
    ids = [r.get_attribute("data-note") for r in pg.locator("#memory-list .memory-row").all()]
    assert ids == sorted(ids) and "fog-horn-rule" in ids

    # add: a bad note first (its source is not in the store): the server's reason is shown, nothing saved
    pg.click("#memory-new")
    pg.fill("#memory-id", "oil-store-limit")
    pg.select_option("#memory-kind", "pinned")
    pg.fill("#memory-triggers", "How much paraffin may the oil store hold?")
    pg.fill("#memory-sources", "pdf/nowhere.pdf")
    pg.fill("#memory-author", "Curator Q")
    pg.fill("#memory-body", "No more than 600 gallons of paraffin.")
    pg.click("#memory-save")
    pg.wait_for_selector("#memory-error:not([hidden])", timeout=TIMEOUT_MS)
    assert "source(s) not in the store: 'pdf/nowhere.pdf'" in pg.locator("#memory-error").inner_text()
    assert engine.store.get_memory_note("oil-store-limit") is None
    pg.fill("#memory-sources", "pdf/keepers-handbook.pdf")
    pg.click("#memory-save")
    pg.wait_for_selector('#memory-list .memory-row[data-note="oil-store-limit"]', timeout=TIMEOUT_MS)
    assert pg.locator("#memory-count").inner_text() == "7 notes"
    saved = engine.store.get_memory_note("oil-store-limit")
    assert saved is not None and saved.author == "Curator Q" and saved.sources == ("pdf/keepers-handbook.pdf",)
    pg.screenshot(path=str(screenshots / "memory-curator-view.png"))

    # edit: the form comes back filled, the id fixed; the change reaches the store
    pg.locator('#memory-list .memory-row[data-note="oil-store-limit"] .memory-row__edit').click()
    # (the add form still holds '600 gallons': wait for the fetched note itself, its id fixed — under load
    # the body check alone passed before the note arrived and the readonly check failed)
    pg.wait_for_selector("#memory-id[readonly]", timeout=TIMEOUT_MS)
    pg.wait_for_function("() => document.getElementById('memory-body').value.includes('600 gallons')", timeout=TIMEOUT_MS)
    assert pg.locator("#memory-sources").input_value() == "pdf/keepers-handbook.pdf"
    pg.fill("#memory-body", "The oil store may hold no more than 600 gallons of paraffin.")
    pg.click("#memory-save")
    pg.wait_for_selector("#memory-ok:not([hidden])", timeout=TIMEOUT_MS)
    after = engine.store.get_memory_note("oil-store-limit")
    assert after is not None and after.body.startswith("The oil store may hold") and after.updated >= saved.updated

    # remove
    pg.locator('#memory-list .memory-row[data-note="oil-store-limit"] .tool--remove').click()
    pg.wait_for_function("() => !document.querySelector('#memory-list .memory-row[data-note=\"oil-store-limit\"]')",
                         timeout=TIMEOUT_MS)
    assert engine.store.get_memory_note("oil-store-limit") is None
    assert pg.locator("#memory-count").inner_text() == "6 notes"
    pg.keyboard.press("Escape")
    assert pg.locator("#memory-panel").is_hidden()


def test_curator_view_is_read_only_on_a_server_without_a_key(browser: Any, tmp_path: Path, demo_dir: Path) -> None:
    settings = build_store(tmp_path, demo_dir)
    engine = Engine.from_settings(settings)
    assert engine.import_memory([REPO / "demo-memory"]).failed == 0
    url, server, thread = start_server(create_app(engine, settings))
    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        pg = ctx.new_page()
        pg.goto(url + "/")
        pg.wait_for_selector("#status-line:not(:empty)", timeout=TIMEOUT_MS)
        pg.click("#open-memory")
        pg.wait_for_selector("#memory-list .memory-row", timeout=TIMEOUT_MS)
        assert pg.locator("#memory-count").inner_text() == "6 notes"
        assert pg.locator("#memory-readonly").is_visible() and "footnote memory import" in pg.locator(
            "#memory-readonly").inner_text()
        assert pg.locator("#memory-new").is_hidden()
        assert pg.locator("#memory-list .memory-row__edit").count() == 0
        assert pg.locator("#memory-list .tool--remove").count() == 0
    finally:
        ctx.close()
        stop_server(server, thread)
        engine.close()
