"""OCR figures (issue 40): character error rate on real scans with typed ground truth, on Russian pages rendered
here from real Russian text with skew and noise, pages per second, and a whole PDF ingested as a scan.

    .venv/bin/python bench/ocr.py                    # CER on ../shared/data/scans + rendered Russian pages
    .venv/bin/python bench/ocr.py --pdf-pages 117    # + the 117-page ../shared/data/pdf rendered to images, ingested

CER = edit distance / length of the ground truth, both with runs of whitespace as one space (the reading
order of a two-column page is Tesseract's: where it reads the columns in another order than the typed text,
the edit distance counts it). The Russian pages are the demo's two Russian letters (demo/letters/*.ru.md,
front matter and Markdown marks removed) set in DejaVu Serif 12 pt at the given dpi, rotated by a small angle,
with salt-and-pepper noise and a grey background — say so wherever the figure is used.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from footnote.corpus.ocr import Ocr, page_bytes
from footnote.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf")


def levenshtein(a: str, b: str) -> int:
    """Edit distance, one row at a time with numpy (the insertions of a row by a running minimum)."""
    if not a:
        return len(b)
    aa = np.frombuffer(a.encode("utf-32-le"), dtype=np.uint32)
    bb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    prev = np.arange(len(b) + 1, dtype=np.int64)
    idx = np.arange(len(b) + 1, dtype=np.int64)
    for i, c in enumerate(aa):
        cand = np.empty_like(prev)
        cand[0] = i + 1
        cand[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (bb != c))
        prev = np.minimum.accumulate(cand - idx) + idx
    return int(prev[-1])


def flat(text: str) -> str:
    return " ".join(text.split())


def cer(got: str, truth: str) -> float:
    t = flat(truth)
    return levenshtein(flat(got), t) / max(1, len(t))


def cer_in_truth_order(got: str, truth: str) -> float:
    """CER with the page's blocks put in the ground truth's order and spaces ignored: a two-column page's
    caption or running footer read before the columns (the typed text has it after) and a letter-spaced
    heading ("T R A V E L") are not character errors."""
    import difflib

    t = "".join(truth.split())
    placed = []
    for para in (p for p in got.split("\n\n") if p.strip()):
        flat_p = "".join(para.split())
        m = difflib.SequenceMatcher(None, t, flat_p, autojunk=False).find_longest_match(0, len(t), 0, len(flat_p))
        placed.append((m.a - m.b, flat_p))
    ordered = "".join(p for _, p in sorted(placed, key=lambda x: x[0]))
    return levenshtein(ordered, t) / max(1, len(t))


def russian_text() -> str:
    parts = []
    for path in sorted((ROOT / "demo" / "letters").glob("*.ru.md")):
        body = path.read_text(encoding="utf-8").split("---", 2)[-1]
        body = re.sub(r"^#+\s*", "", body, flags=re.MULTILINE).replace("*", "").replace("_", "")
        parts.append(body.strip())
    return "\n\n".join(parts)


def render_page(text: str, dpi: int, skew: float, noise: float, seed: int) -> tuple[Image.Image, str]:
    """A4 page of ``text`` (as much as fits), its exact text; rotated by ``skew`` degrees, noisy."""
    w, h = int(8.27 * dpi), int(11.69 * dpi)
    font = ImageFont.truetype(str(FONT), size=round(12 * dpi / 72))
    margin = int(dpi * 0.9)
    img = Image.new("L", (w, h), 235)
    draw = ImageDraw.Draw(img)
    y = margin
    line_h = int(font.size * 1.45)
    written: list[str] = []
    for para in text.split("\n\n"):
        line = ""
        for word in para.split():
            trial = f"{line} {word}".strip()
            if draw.textlength(trial, font=font) > w - 2 * margin and line:
                if y + line_h > h - margin:
                    break
                draw.text((margin, y), line, font=font, fill=20)
                written.append(line)
                y += line_h
                line = word
            else:
                line = trial
        else:
            if line and y + line_h <= h - margin:
                draw.text((margin, y), line, font=font, fill=20)
                written.append(line)
                y += line_h
            y += line_h // 2
            continue
        break
    img = img.rotate(skew, resample=Image.BICUBIC, expand=False, fillcolor=235)
    arr = np.array(img)
    rng = np.random.default_rng(seed)
    mask = rng.random(arr.shape)
    arr[mask < noise / 2] = 0
    arr[mask > 1 - noise / 2] = 255
    arr = np.clip(arr.astype(np.int16) + rng.normal(0, 8, arr.shape).astype(np.int16), 0, 255).astype(np.uint8)
    return Image.fromarray(arr), " ".join(written)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdf-pages", type=int, default=0, help="render this many pages of the 117-page PDF and ingest "
                    "them as a scan (0: skip)")
    ap.add_argument("--dpi", type=int, nargs="*", default=[200, 300], help="resolutions of the rendered Russian pages")
    args = ap.parse_args()
    settings = Settings()
    settings = settings.with_overrides(**{"ocr.cache_dir": ""})  # every page read, none from the cache
    ocr = Ocr(settings.ocr)
    ocr.check()
    print(f"# OCR figures: {ocr.name}, {ocr.workers()} worker(s)")
    print("\n| scan | language | pixels | CER | CER, blocks in the typed text's order, spaces aside | seconds | "
          "mean confidence |\n| --- | --- | --- | --- | --- | --- | --- |")
    scans = SHARED / "data" / "scans"
    total_s, pages = 0.0, 0
    for tif in ("phototest.tif", "eurotext.tif", "8071_093.3B.tif", "8087_054.3B.tif"):
        img = Image.open(scans / tif)
        truth = (scans / tif).with_suffix(".txt").read_text(encoding="utf-8", errors="replace")
        dpi = img.info.get("dpi")
        t0 = time.perf_counter()
        page = ocr.recognise(page_bytes(img), int(dpi[0]) if dpi else None)
        dt = time.perf_counter() - t0
        total_s, pages = total_s + dt, pages + 1
        lang = "mixed (en, de, fr, it, es, pt)" if tif == "eurotext.tif" else "en"
        print(f"| {tif} | {lang} | {img.width}×{img.height} | {cer(page.text, truth):.2%} | "
              f"{cer_in_truth_order(page.text, truth):.2%} | {dt:.1f} | {page.confidence:.1f} |")
    text = russian_text()
    for dpi in args.dpi:
        for skew, noise in ((0.0, 0.0), (1.2, 0.002), (-2.0, 0.005)):
            img, truth = render_page(text, dpi, skew, noise, seed=dpi)
            t0 = time.perf_counter()
            page = ocr.recognise(page_bytes(img), dpi)
            dt = time.perf_counter() - t0
            total_s, pages = total_s + dt, pages + 1
            print(f"| rendered Russian letters, {dpi} dpi, skew {skew:+.1f}°, noise {noise:.1%} | ru | "
                  f"{img.width}×{img.height} | {cer(page.text, truth):.2%} | {cer_in_truth_order(page.text, truth):.2%} | "
                  f"{dt:.1f} | {page.confidence:.1f} |")
    print(f"\none page at a time: {pages / total_s:.2f} pages/s ({total_s / pages:.1f} s a page)")
    if args.pdf_pages:
        ingest_pdf_as_scan(settings, args.pdf_pages)
    return 0


def ingest_pdf_as_scan(settings: Settings, n: int) -> None:
    import pypdfium2 as pdfium

    from footnote.engine import Engine

    src = next((SHARED / "data" / "pdf").glob("*.pdf"))
    with tempfile.TemporaryDirectory() as tmp:
        pdf = pdfium.PdfDocument(str(src))
        images = []
        t0 = time.perf_counter()
        for i in range(min(n, len(pdf))):
            page = pdf[i]
            images.append(page.render(scale=200 / 72, grayscale=True).to_pil().convert("L"))
            page.close()
        scan = Path(tmp) / "scan" / f"{src.stem}-scanned.pdf"
        scan.parent.mkdir()
        images[0].save(scan, save_all=True, append_images=images[1:], resolution=200.0)
        print(f"\n{len(images)} pages of {src.name} rendered at 200 dpi into an image-only PDF in "
              f"{time.perf_counter() - t0:.0f} s ({scan.stat().st_size / 1e6:.1f} MB)")
        s = settings.with_overrides(**{"store.url": str(Path(tmp) / "s.db"), "embedder.name": "hash",
                                       "ocr.cache_dir": str(Path(tmp) / "ocr-cache")})  # every page really read
        t0 = time.perf_counter()
        with Engine.from_settings(s) as engine:
            report = engine.ingest([scan.parent])
            dt = time.perf_counter() - t0
            if not report.ok:
                raise SystemExit(f"the scanned PDF did not ingest: {[e.error for e in report.entries]}")
            srcs = engine.store.list_sources()
            meta = srcs[0].meta if srcs else {}
        confs = [float(x.split(":")[1]) for x in meta.get("ocr_confidence", "").split(",") if ":" in x]
        print(f"ingested as a scan: {report.summary()}\n  {dt:.0f} s for {len(images)} pages: "
              f"{len(images) / dt:.2f} pages/s with {Ocr(s.ocr).workers()} workers; pages read by OCR "
              f"{len(confs)}, mean confidence {sum(confs) / max(1, len(confs)):.1f}")


if __name__ == "__main__":
    random.seed(0)
    sys.exit(main())
