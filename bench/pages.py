"""PDF page rendering for the web chat's page view: the pixel budget and the bounded worker pool.

    .venv/bin/python bench/pages.py [--workers 2] [--max-pixels 16000000] [--n 10]

Builds two PDFs with reportlab (a normal A4 page, and a 14,400 pt square page — PDF's largest), then
prints: a normal page's render time alone (p50 over ``--n`` renders, each with another highlight so the
cache never answers); the huge page's render time and image size under ``--max-pixels``; and a normal
page's render time while huge pages render at the same time (the pool keeps a slot; before the pool, a
global lock made every page wait behind the huge one).
"""

from __future__ import annotations

import argparse
import io
import statistics
import threading
import time

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from footnote.server.pages import PageRenderer

WORDS = ["fog", "horn", "blasts", "minute", "keeper", "beacon", "lamp", "tide", "gannet", "light"]


def _pdf(size: tuple[float, float], font: int) -> bytes:
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=size, invariant=1)
    c.setFont("Helvetica", font)
    for i, w in enumerate(WORDS):
        c.drawString(font * 2, size[1] - font * 3 * (i + 2), f"The {w} line number {i} of the page.")
    c.save()
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--max-pixels", type=int, default=16_000_000)
    ap.add_argument("--n", type=int, default=10)
    ns = ap.parse_args()
    normal, huge = _pdf(A4, 12), _pdf((14_400, 14_400), 200)
    r = PageRenderer(1.5, 4, 2, max_pixels=ns.max_pixels, workers=ns.workers)
    try:
        warm = [threading.Thread(target=r.render, args=(normal, "normal.pdf", 1, f"fog line {k}"))
                for k in range(ns.workers)]
        for w in warm:  # start every worker process (spawned on demand: seconds each)
            w.start()
        for w in warm:
            w.join()
        alone = []
        for i in range(ns.n):
            t0 = time.perf_counter()
            r.render(normal, "normal.pdf", 1, f"{WORDS[i % len(WORDS)]} line number {i}")
            alone.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        big = r.render(huge, "huge.pdf", 1, "fog line")
        huge_ms = (time.perf_counter() - t0) * 1000
        done = threading.Event()

        def huge_loop() -> None:
            k = 0
            while not done.is_set():
                r.render(huge, "huge.pdf", 1, f"keeper line number {k}")  # another highlight: no cache hit
                k += 1

        t = threading.Thread(target=huge_loop, daemon=True)
        t.start()
        time.sleep(0.2)
        during = []
        for i in range(ns.n):
            t0 = time.perf_counter()
            r.render(normal, "normal.pdf", 1, f"{WORDS[i % len(WORDS)]} of the page {i}")
            during.append((time.perf_counter() - t0) * 1000)
        done.set()
        t.join()
    finally:
        r.close()
    print(f"workers {ns.workers}, max_pixels {ns.max_pixels:,}")
    print(f"  normal page alone             p50 {statistics.median(alone):7.1f} ms  max {max(alone):7.1f} ms  n={len(alone)}")
    print(f"  huge page (14,400 pt square)  {huge_ms:7.1f} ms  image {big.width}x{big.height} "
          f"({big.width * big.height / 1e6:.1f} MP)")
    print(f"  normal page while huge pages render  p50 {statistics.median(during):7.1f} ms  max {max(during):7.1f} ms")


if __name__ == "__main__":
    main()
