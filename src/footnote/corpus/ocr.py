"""Text recognition of page images with Tesseract (Debian's ``tesseract-ocr``; ``make ocr``).

One page is one ``tesseract`` process reading a greyscale PGM on its standard input and writing TSV (a row per
word with its box, its confidence and its block, paragraph and line). :func:`page_from_tsv` turns that
into the page's text — words joined on their lines, lines into paragraphs as Tesseract found them, a
word broken at a line's end with a hyphen joined again — keeping every word's box, so that a citation
can light the passage on the page image (``footnote.server.pages``). Words less sure than
``ocr.min_confidence`` are left out (noise read from stains and pictures).

:class:`Ocr` runs pages in parallel, a process each (``ocr.workers``), each process limited to one
thread (Tesseract's own OpenMP threads would fight the other pages for the cores).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import math
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from footnote.errors import OcrFailed, OcrUnavailable
from footnote.settings import OcrSettings

log = logging.getLogger(__name__)

#: ``--lang`` of an ingest → Tesseract's model for it.
TESSERACT_LANGS = {"en": "eng", "ru": "rus", "de": "deu", "sa": "Devanagari", "hi": "Devanagari",
                   "fr": "fra", "es": "spa", "it": "ita", "pt": "por", "uk": "ukr"}
#: The script Tesseract's detection names → the model that reads it.
SCRIPT_MODELS = {"Devanagari": "Devanagari", "Cyrillic": "rus", "Latin": "eng"}
_HYPHEN_END = re.compile(r"[-\u00ad‐]$")
_STOP_END = re.compile(r"[.!?:;…»”\")\]]$")
_SCRIPT = re.compile(r"^Script:\s*(\S+)", re.MULTILINE)


#: A page to read: its image bytes (:func:`page_bytes`), width, height, and its resolution when it says one.
Rendered = tuple[bytes, int, int, int | None]


@dataclass(frozen=True)
class Word:
    text: str
    box: tuple[int, int, int, int]  # left, top, right, bottom in the image's pixels
    conf: float


@dataclass(frozen=True)
class OcrPage:
    """A recognised page: its text, its words with their boxes (in reading order), its mean confidence."""

    text: str
    words: tuple[Word, ...]
    confidence: float  # mean word confidence, 0-100; 0.0 when no word was read
    width: int
    height: int
    languages: str = ""  # the Tesseract models that read it (another script's when the page was read again in it)


#: Cyrillic letters drawn like Latin ones, and back: what a page read with eng+rus confuses (B.C. read "В.С.").
_CYR_TO_LAT = str.maketrans("АВСЕНКМОРТХаеорсухіјѕІЈЅ", "ABCEHKMOPTXaeopcyxijsIJS")
_LAT_TO_CYR = str.maketrans("ABCEHKMOPTXaeopcyx", "АВСЕНКМОРТХаеорсух")
_CYR_LOOKALIKE = set("АВСЕНКМОРТХаеорсухіјѕІЈЅ")
_LAT_LOOKALIKE = set("ABCEHKMOPTXaeopcyx")


def _script(ch: str) -> str:
    if "a" <= ch.lower() <= "z":
        return "L"
    if "\u0400" <= ch <= "\u04ff":
        return "C"
    return ""


def one_script(texts: list[str]) -> list[str]:
    """Words of a page read in two scripts, each in one: a word's Cyrillic letters that look Latin become Latin
    when the word is mostly Latin, or — every letter of it a look-alike — when the page is (four in five of its
    letters), and the same the other way. A word with a letter that looks like nothing in the other script
    ("мо", "lighthouse") is left as it was read."""
    counts = {"L": 0, "C": 0}
    for t in texts:
        for ch in t:
            k = _script(ch)
            if k:
                counts[k] += 1
    total = counts["L"] + counts["C"]
    page = "L" if total and counts["L"] >= 0.8 * total else "C" if total and counts["C"] >= 0.8 * total else ""
    out = []
    for t in texts:
        lat = sum(1 for ch in t if _script(ch) == "L")
        cyr = sum(1 for ch in t if _script(ch) == "C")
        want = "L" if lat > cyr else "C" if cyr > lat else page
        if lat and cyr and want:  # a mixed word: its minority letters, when they all have a look-alike
            minority = {ch for ch in t if _script(ch) == ("C" if want == "L" else "L")}
            if minority <= (_CYR_LOOKALIKE if want == "L" else _LAT_LOOKALIKE):
                t = t.translate(_CYR_TO_LAT if want == "L" else _LAT_TO_CYR)
        elif cyr and not lat and page == "L" and {ch for ch in t if _script(ch) == "C"} <= _CYR_LOOKALIKE:
            t = t.translate(_CYR_TO_LAT)
        elif lat and not cyr and page == "C" and {ch for ch in t if _script(ch) == "L"} <= _LAT_LOOKALIKE:
            t = t.translate(_LAT_TO_CYR)
        out.append(t)
    return out


def page_from_tsv(tsv: str, min_conf: float, width: int = 0, height: int = 0) -> OcrPage:
    """The page Tesseract's TSV describes (see the module's text)."""
    rows: list[tuple[tuple[int, int, int], str, tuple[int, int, int, int], float]] = []
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5":
            continue
        text = cols[11].strip()
        try:
            conf = float(cols[10])
            left, top, w, h = (int(c) for c in cols[6:10])
            key = (int(cols[2]), int(cols[3]), int(cols[4]))
        except ValueError:
            continue
        if text and conf >= min_conf:
            rows.append((key, text, (left, top, left + w, top + h), conf))
    words: list[Word] = []
    lines: dict[tuple[int, int, int], list[Word]] = {}  # in reading order (dicts keep it)
    for (key, _, box, conf), text in zip(rows, one_script([r[1] for r in rows]), strict=True):
        word = Word(text, box, conf)
        lines.setdefault(key, []).append(word)
        words.append(word)
    order = list(lines)
    paras: list[str] = []
    current: tuple[int, int] | None = None
    buf = ""
    for key in order:
        line = " ".join(w.text for w in lines[key])
        # a new paragraph of Tesseract's that goes on with the sentence before it (lower case after no stop):
        # one paragraph, so no sentence is cut in two
        same_sentence = bool(buf) and not _STOP_END.search(buf) and line[:1].islower()
        if key[:2] != current and not same_sentence:
            if buf:
                paras.append(buf)
            buf, current = line, key[:2]
        elif key[:2] != current:  # continuing the sentence across Tesseract's paragraph break
            current = key[:2]
            buf = buf[:-1] + line if _HYPHEN_END.search(buf) else f"{buf} {line}"
        elif _HYPHEN_END.search(buf) and line[:1].islower():
            buf = buf[:-1] + line  # a word broken at the line's end
        else:
            buf = f"{buf} {line}"
    if buf:
        paras.append(buf)
    conf = sum(w.conf for w in words) / len(words) if words else 0.0
    return OcrPage("\n\n".join(paras), tuple(words), round(conf, 1), width, height)


class Ocr:
    """Tesseract with the settings' languages, resolution and parallelism."""

    def __init__(self, settings: OcrSettings, languages: str | None = None) -> None:
        self.settings = settings
        self.languages = languages or settings.languages
        self._checked = False
        self._models: set[str] | None = None

    @staticmethod
    def for_lang(settings: OcrSettings, lang: str | None) -> Ocr:
        """An Ocr for ``--lang`` (its model alone) or for the settings' languages."""
        return Ocr(settings, TESSERACT_LANGS.get((lang or "").lower()) if lang else None)

    @property
    def name(self) -> str:
        return f"tesseract {self.languages} psm{self.settings.page_seg_mode}"

    def available(self) -> bool:
        return shutil.which(self.settings.command) is not None

    def check(self) -> None:
        """OcrUnavailable unless Tesseract and every language asked for are installed."""
        if self._checked:
            return
        exe = shutil.which(self.settings.command)
        if exe is None:
            raise OcrUnavailable(f"Tesseract is not installed ({self.settings.command!r} not found): `make ocr`, or "
                                 "apt-get install tesseract-ocr tesseract-ocr-rus (docs/corpus.md)")
        have = self._installed()
        missing = [lang for lang in self.languages.split("+") if lang and lang not in have]
        if missing:
            raise OcrUnavailable(f"Tesseract has no model for {', '.join(missing)} (installed: {', '.join(sorted(have))}); "
                                 "`make ocr` installs eng, rus, deu and Devanagari")
        self._checked = True

    def _run(self, png: bytes, args: list[str]) -> str:
        s = self.settings
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        try:
            out = subprocess.run([s.command, "stdin", "stdout", *args], input=png, capture_output=True,
                                 timeout=s.page_timeout_s, env=env, check=False)
        except subprocess.TimeoutExpired as e:
            raise OcrFailed(f"recognition took longer than ocr.page_timeout_s = {s.page_timeout_s:g} s") from e
        except OSError as e:
            raise OcrUnavailable(f"Tesseract cannot run: {e}") from e
        if out.returncode != 0:
            err = out.stderr.decode("utf-8", "replace").strip().splitlines()
            raise OcrFailed(f"tesseract failed: {err[-1] if err else out.returncode}")
        return out.stdout.decode("utf-8", "replace")

    def _read(self, png: bytes, languages: str, dpi: int, width: int, height: int) -> OcrPage:
        tsv = self._run(png, ["-l", languages, "--psm", str(self.settings.page_seg_mode), "--dpi", str(dpi), "tsv"])
        return replace(page_from_tsv(tsv, self.settings.min_confidence, width, height), languages=languages)

    def recognise(self, png: bytes, dpi: int | None = None, width: int = 0, height: int = 0) -> OcrPage:
        """One page image (:func:`page_bytes`, or any image file's bytes): straightened when it leans (``ocr.deskew_*``; the words' boxes are
        turned back to the page as given), then read; a page read with little confidence is read again in its
        own script's model when that is installed and was not tried (``ocr.script_retry_below``)."""
        self.check()
        s = self.settings
        angle = 0.0
        from PIL import Image

        image = Image.open(io.BytesIO(png))
        width, height = width or image.width, height or image.height
        if ink_share(image) < s.blank_ink_share:  # a blank page: nothing for Tesseract to read
            return OcrPage("", (), 0.0, width, height, self.languages)
        if s.deskew_max_degrees > 0:
            angle = skew_angle(image, s.deskew_max_degrees)
            if abs(angle) >= max(s.deskew_min_degrees, 1e-6):
                png = page_bytes(image.convert("L").rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=255))
            else:
                angle = 0.0
        page = self._recognise(png, dpi or s.dpi, width, height)
        return page if not angle else unrotate(page, angle)

    def _recognise(self, png: bytes, dpi: int, width: int, height: int) -> OcrPage:
        s = self.settings
        page = self._read(png, self.languages, dpi, width, height)
        if page.confidence >= s.script_retry_below:
            return page
        try:
            found = _SCRIPT.search(self._run(png, ["--psm", "0", "--dpi", str(dpi)]))
        except OcrFailed:  # too little text to tell its script: keep the first reading
            return page
        model = SCRIPT_MODELS.get(found.group(1)) if found else None
        if model is None or model in self.languages.split("+") or model not in self._installed():
            return page
        again = self._read(png, model, dpi, width, height)
        return replace(again, languages=model) if again.confidence > page.confidence else page

    def _installed(self) -> set[str]:
        """The models Tesseract has, asked once (a page read again in its script's model asks too)."""
        if self._models is not None:
            return self._models
        try:
            out = subprocess.run([self.settings.command, "--list-langs"], capture_output=True, text=True, timeout=30,
                                 check=False)
        except (OSError, subprocess.TimeoutExpired):
            return set()
        self._models = {ln.strip() for ln in out.stdout.splitlines()[1:]}
        return self._models

    def workers(self) -> int:
        n = self.settings.workers
        if n > 0:
            return n
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - not Linux
            return max(1, os.cpu_count() or 1)

    @property
    def fingerprint(self) -> str:
        """What a page's reading depends on besides its pixels: the languages and every setting that shapes it."""
        s = self.settings
        parts = (CACHE_VERSION, self.languages, s.page_seg_mode, s.dpi, s.min_confidence, s.deskew_max_degrees,
                 s.deskew_min_degrees, s.script_retry_below)
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]

    def cached(self, doc_sha: str, page: int) -> OcrPage | None:
        """Page ``page`` of the file whose bytes hash to ``doc_sha``, as read before with these settings."""
        folder = self.settings.cache_path
        if folder is None:
            return None
        return load_page(folder / self.fingerprint / doc_sha[:2] / f"{doc_sha}.{page}.json")

    def _keep(self, doc_sha: str, page: int, got: OcrPage) -> None:
        folder = self.settings.cache_path
        if folder is None:
            return
        path = folder / self.fingerprint / doc_sha[:2] / f"{doc_sha}.{page}.json"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(page_json(got), ensure_ascii=False), encoding="utf-8")
            tmp.replace(path)
        except OSError as e:  # a read-only cache costs the resume, not the page
            log.warning("OCR cache %s not written: %s", path, e)

    def recognise_all(self, pages: Iterable[tuple[int, Callable[[], Rendered]]], doc_sha: str = "",
                      done: Callable[[int, OcrPage], None] | None = None) -> Iterator[tuple[int, OcrPage]]:
        """(page number, page) for every (page number, render) given, in page order; ``render`` makes the
        page's image (:data:`Rendered`), called in the worker; ``done`` hears of each page in page order, in
        the caller's thread (a progress line). With ``doc_sha`` (the file's sha256) each page is kept in
        ``ocr.cache_dir`` as it ends and a page kept before is not read again: a stopped ingest resumes there."""
        jobs = list(pages)
        kept = {n: got for n, _ in jobs if doc_sha and (got := self.cached(doc_sha, n)) is not None}
        if len(kept) < len(jobs):  # pages to read: Tesseract must be there (all read before: not even asked)
            self.check()

        def one(job: tuple[int, Callable[[], Rendered]]) -> tuple[int, OcrPage]:
            n, render = job
            page = kept.get(n)
            if page is None:
                image, w, h, dpi = render()
                page = self.recognise(image, dpi, width=w, height=h)
                if doc_sha:
                    self._keep(doc_sha, n, page)
            return n, page

        def told(results: Iterable[tuple[int, OcrPage]]) -> Iterator[tuple[int, OcrPage]]:
            for n, page in results:
                if done is not None:
                    done(n, page)
                yield n, page

        if len(jobs) - len(kept) <= 1 or self.workers() == 1:
            yield from told(map(one, jobs))
            return
        pool = ThreadPoolExecutor(self.workers(), thread_name_prefix="ocr")
        try:
            yield from told(pool.map(one, jobs))
        finally:  # a failed page, Ctrl-C or a consumer that stops: the pages not begun are never read
            pool.shutdown(wait=False, cancel_futures=True)


CACHE_VERSION = 2


def page_json(page: OcrPage) -> dict[str, Any]:
    return {"v": CACHE_VERSION, "text": page.text, "confidence": page.confidence, "width": page.width,
            "height": page.height, "languages": page.languages, "words": [[w.text, *w.box, w.conf] for w in page.words]}


def load_page(path: Path) -> OcrPage | None:
    """A page kept by :meth:`Ocr._keep`; None when absent, damaged or from another version."""
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        if d.get("v") != CACHE_VERSION:
            return None
        words = tuple(Word(str(w[0]), (int(w[1]), int(w[2]), int(w[3]), int(w[4])), float(w[5])) for w in d["words"])
        return OcrPage(str(d["text"]), words, float(d["confidence"]), int(d["width"]), int(d["height"]),
                       str(d.get("languages", "")))
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None  # absent, damaged, or not what this version writes: read the page again


def ink_share(image: Any) -> float:
    """The share of a page's pixels that are dark (at full resolution: a copy scaled down would grey thin strokes
    out of the count; a 300 dpi page takes ~30 ms)."""
    import numpy as np

    return float((np.asarray(image.convert("L")) < 128).mean())


def skew_angle(image: Any, limit: float) -> float:
    """The rotation (degrees, counter-clockwise) that straightens a page's lines: the one whose rows of ink
    change most sharply from one row to the next (text lines aligned with the rows), found every 0.5° within
    ±``limit`` and then every 0.1° around the best, on a copy about 1,000 pixels across (~0.1 s a page)."""
    import numpy as np
    from PIL import Image

    k = min(1.0, 1000 / max(image.width, image.height, 1))
    small = image.convert("L").resize((max(1, int(image.width * k)), max(1, int(image.height * k))))
    ink = Image.fromarray(((np.asarray(small) < 128) * 255).astype(np.uint8))

    def score(deg: float) -> float:
        rows = (np.asarray(ink.rotate(deg, resample=Image.Resampling.NEAREST)) > 0).sum(axis=1).astype(np.float64)
        return float(np.square(np.diff(rows)).sum())

    coarse = max(np.arange(-limit, limit + 0.25, 0.5), key=lambda d: score(float(d)))
    fine = max(np.arange(coarse - 0.4, coarse + 0.45, 0.1), key=lambda d: score(float(d)))
    return round(float(max(-limit, min(limit, fine))), 2)


def unrotate(page: OcrPage, angle: float) -> OcrPage:
    """``page`` read from the image rotated by ``angle`` about its centre: each word's box turned back onto
    the page as given (the box around the turned corners)."""
    cx, cy = page.width / 2, page.height / 2
    t = math.radians(angle)  # PIL turns counter-clockwise on screen (y down): undo with the same sign here
    cos, sin = math.cos(t), math.sin(t)

    def back(x: float, y: float) -> tuple[float, float]:
        dx, dy = x - cx, y - cy
        return cx + dx * cos - dy * sin, cy + dx * sin + dy * cos

    words = []
    for w in page.words:
        left, top, right, bottom = w.box
        pts = [back(x, y) for x in (left, right) for y in (top, bottom)]
        box = (int(min(p[0] for p in pts)), int(min(p[1] for p in pts)),
               math.ceil(max(p[0] for p in pts)), math.ceil(max(p[1] for p in pts)))
        words.append(Word(w.text, box, w.conf))
    return OcrPage(page.text, tuple(words), page.confidence, page.width, page.height, page.languages)


def fit_scale(width_pt: float, height_pt: float, scale: float, max_pixels: int) -> float:
    """``scale``, or less so that a page rendered at it has at most ``max_pixels`` pixels."""
    area = max(1.0, width_pt * height_pt)
    return min(scale, math.sqrt(max_pixels / area) * 0.999)


def page_bytes(image: Any) -> bytes:
    """A PIL image as the bytes Tesseract reads: greyscale PGM (no compression to pay for: a 300 dpi page is
    encoded in milliseconds, where PNG took 0.7 s)."""
    buf = io.BytesIO()
    img = image if image.mode == "L" else image.convert("L")
    img.save(buf, format="PPM")
    return buf.getvalue()
