"""Units of the server edge: the event pump (threads end when the client leaves), SSE frames, HTTP
Range parsing, and finding a passage on a PDF page."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from footnote.answer.types import Event, Stage, Token
from footnote.errors import NotFound
from footnote.server.pages import match_spans
from footnote.server.ranges import ByteRange, RangeNotSatisfiable, parse_range
from footnote.server.sse import EventPump, sse_body, sse_frame


def run_async(make: Callable[[], Awaitable[Any]]) -> Any:
    """asyncio.run in a fresh thread (Playwright's sync API keeps a loop on the main thread)."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(make())  # type: ignore[arg-type]
        except BaseException as e:
            out["error"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join(60)
    if "error" in out:
        raise out["error"]
    return out.get("value")


def test_sse_frame_is_one_json_line() -> None:
    frame = sse_frame("token", {"text": "две\nстроки <b>"})
    assert frame.endswith(b"\n\n")
    lines = frame.decode().strip("\n").split("\n")
    assert lines[0] == "event: token" and len(lines) == 2
    assert json.loads(lines[1][len("data: "):]) == {"text": "две\nстроки <b>"}


def test_pump_stops_the_worker_when_the_consumer_leaves() -> None:
    pump = EventPump(workers=4, queue_events=8)
    closed = threading.Event()
    produced = []

    def endless() -> Iterator[Event]:
        try:
            i = 0
            while True:
                time.sleep(0.01)
                produced.append(i)
                yield Token(str(i))
                i += 1
        finally:
            closed.set()

    async def consume() -> list[str]:
        got = []
        events = pump.events(lambda _stop: endless())
        async for ev in events:
            assert isinstance(ev, Token)
            got.append(ev.text)
            if len(got) == 3:
                break
        await events.aclose()
        return got

    assert run_async(consume) == ["0", "1", "2"]
    assert closed.wait(5), "the generator was never closed"
    deadline = time.monotonic() + 5
    while pump.active and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pump.active == 0
    n = len(produced)
    time.sleep(0.1)
    assert len(produced) == n  # nothing runs on after the client left
    pump.shutdown()


def test_pump_backpressure_bounds_the_buffer() -> None:
    pump = EventPump(workers=2, queue_events=4)
    produced = []

    def fast() -> Iterator[Event]:
        for i in range(1000):
            produced.append(i)
            yield Token(str(i))

    async def slow_reader() -> None:
        events = pump.events(lambda _stop: fast())
        await events.__anext__()
        await asyncio.sleep(0.3)
        assert len(produced) <= 4 + 2  # the worker waits for the reader
        await events.aclose()

    run_async(slow_reader)
    pump.shutdown()


def test_pump_raises_the_iterators_error_and_sse_turns_later_ones_into_events() -> None:
    pump = EventPump(workers=2, queue_events=8)

    def broken() -> Iterator[Event]:
        raise NotFound("no such thing")
        yield  # pragma: no cover

    def half() -> Iterator[Event]:
        yield Stage("plan", 1.0)
        raise NotFound("gone midway")

    async def run() -> list[bytes]:
        with pytest.raises(NotFound):
            async for _ in pump.events(lambda _stop: broken()):
                pass
        events = pump.events(lambda _stop: half())
        first = await events.__anext__()
        return [chunk async for chunk in sse_body(first, events)]

    frames = run_async(run)
    assert frames[0].startswith(b"event: stage")
    assert frames[-1].startswith(b"event: error") and b"gone midway" in frames[-1]
    pump.shutdown()


@pytest.mark.parametrize(
    ("header", "want"),
    [
        (None, None),
        ("bytes=0-9", ByteRange(0, 9)),
        ("bytes=90-", ByteRange(90, 99)),
        ("bytes=-10", ByteRange(90, 99)),
        ("bytes=-500", ByteRange(0, 99)),
        ("bytes=50-5000", ByteRange(50, 99)),
        ("bytes=9-3", None),  # invalid: ignored, whole body
        ("items=0-9", None),
        ("bytes=0-1,5-6", None),  # multi-range: whole body
    ],
)
def test_parse_range(header: str | None, want: ByteRange | None) -> None:
    assert parse_range(header, 100) == want


@pytest.mark.parametrize("header", ["bytes=100-", "bytes=500-600", "bytes=-0"])
def test_unsatisfiable_range(header: str) -> None:
    with pytest.raises(RangeNotSatisfiable):
        parse_range(header, 100)


def test_match_spans_tolerates_layout_whitespace() -> None:
    page = "3. The Fog Signal\nThe fog horn gives two\r\nblasts of three seconds each, once every minute.\nFooter"
    passage = "The fog horn gives two blasts of three seconds each"
    spans = match_spans(page, passage, 2)
    assert len(spans) == 1
    s, e = spans[0]
    assert page[s:e].split() == passage.split()
    assert match_spans(page, "risotto parmesan", 2) == []
    assert match_spans(page, "Footer", 2)  # a one-word passage still lights up


def test_huge_pdf_page_is_rendered_under_the_pixel_budget(tmp_path: Any) -> None:
    from reportlab.pdfgen import canvas

    from footnote.errors import NotFound
    from footnote.server.pages import PageRenderer, fit_scale

    path = tmp_path / "huge.pdf"
    c = canvas.Canvas(str(path), pagesize=(14_400, 14_400), invariant=1)  # 200 inches square: PDF's largest page
    c.setFont("Helvetica", 200)
    c.drawString(500, 7000, "The fog horn gives two blasts every minute.")
    c.save()
    assert fit_scale(14_400, 14_400, 1.5, 4_000_000) < 0.14
    pages = PageRenderer(1.5, 4, 2, max_pixels=4_000_000, workers=2)
    try:
        t0 = time.monotonic()
        out = pages.render(path.read_bytes(), "huge.pdf", 1, "two blasts every minute")
        assert out.width * out.height <= 4_000_000 and out.width > 1000
        assert out.highlights >= 1
        assert time.monotonic() - t0 < 30  # was 71 s and 7 GB at full scale
        with pytest.raises(NotFound):
            pages.render(path.read_bytes(), "huge.pdf", 2, None)
    finally:
        pages.close()


def test_pages_render_concurrently_in_a_bounded_pool(tmp_path: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from reportlab.pdfgen import canvas

    from footnote.server.pages import PageRenderer

    path = tmp_path / "three.pdf"
    c = canvas.Canvas(str(path), invariant=1)
    for i in range(3):
        c.drawString(72, 720, f"Page {i + 1}: the lamp turns once every ten seconds.")
        c.showPage()
    c.save()
    data = path.read_bytes()
    pages = PageRenderer(1.0, 8, 2, workers=2)
    try:
        with ThreadPoolExecutor(6) as pool:
            outs = list(pool.map(lambda n: pages.render(data, "three.pdf", n, "ten seconds"), [1, 2, 3, 1, 2, 3]))
        assert [o.page for o in outs] == [1, 2, 3, 1, 2, 3] and all(o.highlights >= 1 for o in outs)
        assert outs[0].png != outs[1].png
    finally:
        pages.close()


def test_an_error_event_carries_the_json_error_body() -> None:
    """The stream's ``error`` event and a failed request's JSON body name the reason by the same keys."""
    from footnote.errors import NotFound
    from footnote.server.sse import error_payload
    from footnote.server.state import error_body

    event = error_payload(NotFound("no conversation 'x'"), ())
    body = error_body("no conversation 'x'", "NotFound")
    assert {k: event[k] for k in body} == body and event["status"] == 404
    assert error_payload(RuntimeError("secret"), ()) == {"error": "internal error", "type": "InternalError", "status": 500}
