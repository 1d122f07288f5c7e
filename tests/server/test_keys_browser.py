"""Keys in the web chat, in a real headless Chromium: on a server with a public collection a reader with no key
reads it and is told so, signs in with a named key for a closed collection, and then reads that one — at
desktop and phone size. Screenshots: artifacts/screenshots/keys-*.png."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serverkit import LiveServer, serving
from test_keys import INTERNAL_KEY, _internal
from test_server_browser import TIMEOUT_MS, ask

from footnote.engine import Engine
from footnote.settings import load_settings
from footnote.store.keys import ApiKey, key_hash

pytestmark = [pytest.mark.browser, pytest.mark.integration]


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("keys-browser")
    _internal(root / "internal")
    settings = load_settings(None, **{"store.url": str(root / "store.db"), "embedder.name": "hash",
                                      "server.api_key": "admin-only", "server.public_collections": ("demo",)})
    with Engine.from_settings(settings) as engine:
        for folder in (demo_dir, root / "internal"):
            assert engine.ingest([folder]).ok
        engine.store.put_api_key(ApiKey("archivist", "k9", ("internal",), False, time.time()), key_hash(INTERNAL_KEY))
    with serving(settings, root) as server:
        yield server


@pytest.mark.parametrize("size", [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_public_reader_signs_in_for_a_closed_collection(browser: Any, public: LiveServer, screenshots: Path,
                                                          size: tuple[int, int]) -> None:
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(public.url + "/")
    page.wait_for_selector("#access-line:not([hidden])", timeout=TIMEOUT_MS)
    assert page.inner_text("#access-text") == "Open to all: demo."
    assert page.is_hidden("#key-form")
    turn = ask(page, "Who keeps the brass oil key of the north cupboard?")
    assert "Quillfeather" not in turn.inner_text()
    page.screenshot(path=str(screenshots / f"keys-public-{size[0]}.png"))
    page.click("#sign-in")
    page.fill("#key-input", INTERNAL_KEY)
    page.click("#key-form button")
    page.wait_for_selector("#access-text:has-text('Signed in')", timeout=TIMEOUT_MS)
    assert page.inner_text("#access-text") == "Signed in as archivist: internal."
    assert page.is_hidden("#sign-in")
    turn = ask(page, "Who keeps the brass oil key of the north cupboard?")
    assert "Quillfeather" in turn.inner_text()
    page.screenshot(path=str(screenshots / f"keys-signed-in-{size[0]}.png"))
    ctx.close()
    assert not errors, errors
