"""Each archive format's citation opens its original at the place, in a real headless Chromium, at desktop and
phone size: a video lecture plays from the cited cue, a scan's page shows with the passage lit and says it was
read by OCR, a Word paragraph opens on the rendered page scrolled to it and lit (screenshots in
artifacts/screenshots/formats-*)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from serverkit import LiveServer
from test_chat_browser import open_chat
from test_server_browser import TIMEOUT_MS, ask

pytestmark = [pytest.mark.browser, pytest.mark.integration]

VIDEO_Q = "How often was the bell rung in fog during the lecture?"
SCAN_Q = "What did the quick brown dog jump over?"
DOCX_Q = "What was the keeper's allowance for the year 1887?"


def _chip_of(pg: Any, turn: Any, kind: str, title_has: str) -> str:
    """Click the first chip of ``kind`` whose viewer title has ``title_has``; the viewer's title."""
    chips = turn.locator(".turn__answer .chip--" + kind)
    for i in range(chips.count()):
        chips.nth(i).click()
        pg.wait_for_selector("#viewer:not([hidden])", timeout=TIMEOUT_MS)
        title = pg.inner_text("#viewer-title")
        if title_has in title:
            return title
        pg.click("#viewer-close")
    raise AssertionError(f"no {kind} chip for {title_has!r} in {turn.inner_text()!r}")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_video_lecture_plays_from_the_cited_cue(browser: Any, archive: LiveServer, screenshots: Path,
                                                   size: str) -> None:
    ctx, pg, errors = open_chat(browser, archive.url + "/", size)
    try:
        turn = ask(pg, VIDEO_Q)
        _chip_of(pg, turn, "transcript", "lecture")
        pg.wait_for_selector("#video-player:not([hidden])", timeout=TIMEOUT_MS)
        pg.wait_for_function("() => document.getElementById('video-player').readyState >= 1", timeout=TIMEOUT_MS)
        got = pg.evaluate("""() => { const v = document.getElementById('video-player');
            return {src: v.getAttribute('src'), t: v.currentTime, end: v.dataset.end, w: v.videoWidth,
                    audioHidden: document.getElementById('player').hidden}; }""")
        assert got["src"].endswith("/api/sources/archive/lecture.mp4") and got["audioHidden"], got
        assert got["w"] == 64 and 0 <= got["t"] <= 6.0 and float(got["end"]) <= 6.0, got  # the cue span, not the file
        pg.screenshot(path=str(screenshots / f"formats-video-{size}.png"))
    finally:
        ctx.close()
    assert not errors, errors


@pytest.mark.usefixtures("ocr_installed")
@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_scanned_page_opens_with_the_passage_lit(browser: Any, archive: LiveServer, screenshots: Path,
                                                   size: str) -> None:
    ctx, pg, errors = open_chat(browser, archive.url + "/", size)
    try:
        turn = ask(pg, SCAN_Q)
        title = _chip_of(pg, turn, "pdf", "phototest")
        assert "read by OCR" in title and "%" in title, title
        pg.wait_for_function("() => document.getElementById('viewer-page').dataset.box !== ''", timeout=60_000)
        box = [int(v) for v in pg.evaluate("() => document.getElementById('viewer-page').dataset.box").split(",")]
        assert box[0] < box[2] <= 640 and box[1] < box[3] <= 480, box
        pg.screenshot(path=str(screenshots / f"formats-scan-{size}.png"))
    finally:
        ctx.close()
    assert not errors, errors


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_word_paragraph_opens_scrolled_and_lit(browser: Any, archive: LiveServer, screenshots: Path,
                                                 size: str) -> None:
    ctx, pg, errors = open_chat(browser, archive.url + "/", size)
    try:
        turn = ask(pg, DOCX_Q)
        title = _chip_of(pg, turn, "passage", "Keeper’s Report")
        assert "¶" in title, title
        href = pg.get_attribute("#viewer-open", "href") or ""
        assert "/view?f=" in href and "#p-" in href, href
        pg.goto(archive.url + href)
        pg.wait_for_selector("section:target .cited", timeout=TIMEOUT_MS)
        got = pg.evaluate("""() => { const s = document.querySelector('section:target');
            const r = s.getBoundingClientRect();
            return {top: r.top, vh: innerHeight, text: s.innerText, bg: getComputedStyle(s).backgroundColor}; }""")
        assert 0 <= got["top"] < got["vh"] and "¶" in got["text"], got
        assert got["bg"] not in ("rgba(0, 0, 0, 0)", "transparent"), got  # lit
        pg.screenshot(path=str(screenshots / f"formats-docx-{size}.png"))
    finally:
        ctx.close()
    assert not errors, errors
