"""A cited PDF page on a phone (issue 44, item 10b), in a real headless Chromium: the page is drawn at a
readable size and scrolled to the lit passage, with a button for the whole page (and back). Before, a
390 px wide phone drew the page ~358 px wide: its text ~6 px high, the passage unreadable without zoom."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from serverkit import LiveServer
from test_chat_browser import open_chat
from test_server_browser import PARAFFIN, TIMEOUT_MS, ask

pytestmark = [pytest.mark.browser, pytest.mark.integration]

GEOMETRY = """() => {
  const img = document.getElementById('page-image').getBoundingClientRect();
  const box = document.getElementById('page-box');
  const b = box.getBoundingClientRect();
  const lit = (document.getElementById('viewer-page').dataset.box || '').split(',').map(Number);
  const k = img.width / document.getElementById('page-image').naturalWidth;
  return {imgWidth: img.width, natural: document.getElementById('page-image').naturalWidth, k,
          lit, litTop: img.top + lit[1] * k, litLeft: img.left + lit[0] * k, litBottom: img.top + lit[3] * k,
          boxTop: b.top, boxBottom: b.bottom, boxLeft: b.left, boxRight: b.right, vw: innerWidth, vh: innerHeight,
          zoom: document.getElementById('viewer-page').dataset.zoom,
          button: document.getElementById('page-zoom').innerText};
}"""


def test_a_phone_reads_the_cited_passage_of_a_pdf_page(browser: Any, live: LiveServer, screenshots: Path) -> None:
    ctx, pg, errors = open_chat(browser, live.url + "/", "phone")
    try:
        turn = ask(pg, PARAFFIN)
        assert turn.get_attribute("data-state") == "answered"
        turn.locator(".chip--pdf").first.click()
        pg.wait_for_selector("#viewer:not([hidden]) #viewer-page:not([hidden])", timeout=TIMEOUT_MS)
        pg.wait_for_function("() => document.getElementById('viewer-page').dataset.box !== ''", timeout=TIMEOUT_MS)
        pg.wait_for_timeout(200)
        g = pg.evaluate(GEOMETRY)
        assert g["zoom"] == "passage" and g["button"] == "Whole page", g
        # readable: the page at 1 image px per CSS px (1.5 px per point: 11 pt text ≈ 16 px), not squeezed to 358 px
        assert g["imgWidth"] >= 1.5 * g["vw"] and abs(g["k"] - 1.0) < 0.01, g
        # the lit passage is in view inside the page's scroll box
        assert g["boxTop"] - 1 <= g["litTop"] <= g["boxBottom"] - 20, g
        assert g["boxLeft"] - 1 <= g["litLeft"] <= g["boxRight"] - 40, g
        assert g["boxBottom"] <= g["vh"] + 1, g  # the box fits the screen: the passage is not below the fold
        pg.screenshot(path=str(screenshots / "pdf-page-phone-passage.png"))
        # the whole page, and back
        pg.click("#page-zoom")
        g2 = pg.evaluate(GEOMETRY)
        assert g2["zoom"] == "page" and g2["button"] == "Zoom to the passage" and g2["imgWidth"] <= g["vw"], g2
        pg.screenshot(path=str(screenshots / "pdf-page-phone-whole.png"))
        pg.click("#page-zoom")
        assert pg.evaluate(GEOMETRY)["imgWidth"] >= 1.5 * g["vw"]
    finally:
        ctx.close()
    assert not errors, errors


def test_a_wide_screen_shows_the_whole_page(browser: Any, live: LiveServer) -> None:
    ctx, pg, errors = open_chat(browser, live.url + "/", "desktop")
    try:
        ask(pg, PARAFFIN).locator(".chip--pdf").first.click()
        pg.wait_for_function("() => document.getElementById('viewer-page').dataset.box !== ''", timeout=TIMEOUT_MS)
        g = pg.evaluate(GEOMETRY)
        assert g["zoom"] == "page" and g["imgWidth"] <= g["natural"] + 2 and g["button"] == "Zoom to the passage", g
    finally:
        ctx.close()
    assert not errors, errors
