"""Export from the web chat (issue 41 item 4), in a real headless Chromium: the "Export" button appears with a
conversation, downloads Markdown or one HTML page written by the server, an answer's "Save as a page" keeps that
answer alone, and the saved page opens offline with links that reach the originals on the server.
Screenshots: artifacts/screenshots/export-*.png."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from serverkit import LiveServer
from test_chat_browser import SIZES, open_chat
from test_server_api import RISOTTO
from test_server_browser import FOG, TIMEOUT_MS, ask

pytestmark = [pytest.mark.browser, pytest.mark.integration]


@pytest.mark.parametrize("size", list(SIZES))
def test_export_from_the_chat(browser: Any, live: LiveServer, screenshots: Path, tmp_path: Path, size: str) -> None:
    ctx, pg, errors = open_chat(browser, live.url + "/", size)
    try:
        assert not pg.locator("#export-chat").is_visible()  # nothing to export before a conversation
        ask(pg, FOG)
        ask(pg, RISOTTO)
        pg.click("#export-chat")
        pg.wait_for_selector("#export-menu:not([hidden])", timeout=TIMEOUT_MS)
        pg.screenshot(path=str(screenshots / f"export-menu-{size}.png"))
        with pg.expect_download(timeout=TIMEOUT_MS) as dl:
            pg.click("#export-menu [data-format=md]")
        md_path = tmp_path / dl.value.suggested_filename
        dl.value.save_as(md_path)
        assert md_path.suffix == ".md"
        md = md_path.read_text(encoding="utf-8")
        assert f"## Question 1: {FOG}" in md and f"## Question 2: {RISOTTO}" in md
        assert "**Not answered from the corpus**" in md and live.url + "/api/sources/" in md
        assert pg.locator("#export-menu").is_hidden()

        with pg.expect_download(timeout=TIMEOUT_MS) as dl:  # one answer alone, from its own tools
            pg.locator(".turn").first.locator(".tool--save").click()
        page_path = tmp_path / dl.value.suggested_filename
        dl.value.save_as(page_path)
        html = page_path.read_text(encoding="utf-8")
        assert page_path.name.endswith("-1.html") and FOG in html and RISOTTO not in html

        saved = ctx.new_page()  # the saved page, opened from disk: readable with nothing fetched
        requests: list[str] = []
        saved.on("request", lambda r: requests.append(r.url))
        saved.goto(page_path.as_uri())
        assert saved.locator("h1").inner_text() == FOG
        assert requests == [page_path.as_uri()]
        saved.screenshot(path=str(screenshots / f"export-page-{size}.png"), full_page=True)
        href = saved.locator("ol.sources a").first.get_attribute("href")
        assert href and href.startswith(live.url + "/api/sources/")
        assert httpx.get(href.split("#", 1)[0], timeout=30).status_code == 200  # the citation opens the original
        saved.close()
    finally:
        ctx.close()
    assert not errors, errors
