"""The web chat's status line while a collection is being embedded (real headless Chromium)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from serverkit import start_server, stop_server

from footnote.engine import Engine
from footnote.server.app import create_app
from footnote.settings import load_settings

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def test_status_line_shows_paused_embedding(browser: Any, tmp_path: Path, screenshots: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    for i in range(3):
        (corpus / f"n{i}.txt").write_text(f"Keeper {i} trims the lamp wick at dusk.\n", encoding="utf-8")
    settings = load_settings(None, **{
        "store.url": str(tmp_path / "s.db"), "embedder.name": "hash", "server.warm_up": False,
        "backlog.serve_worker": False,
    })
    with Engine.from_settings(settings) as engine:
        engine.ingest([corpus], wait=False)
        url, server, thread = start_server(create_app(engine, settings))
        ctx = browser.new_context(viewport={"width": 1000, "height": 700})
        try:
            pg = ctx.new_page()
            pg.goto(url + "/")
            line = pg.locator("#status-line[data-embedding='paused']")
            line.wait_for(timeout=30_000)
            assert "embedding paused at 0%" in line.inner_text()
            banner = pg.locator("#lexical-banner")
            assert banner.is_visible() and "Lexical search while the collection is embedded" in banner.inner_text()
            pg.screenshot(path=str(screenshots / "chat-embedding-paused.png"))
        finally:
            ctx.close()
            stop_server(server, thread)
