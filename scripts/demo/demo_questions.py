"""Resolve the demo questions (``questions.json``) against the generated corpus and render README.md.

Every expectation is checked while resolving, so a regenerated corpus that no longer answers a
question fails the build instead of shipping a README that points nowhere:
transcript quotes → the cue that holds them (start/end ms); verse addresses → the ``## HB x.y``
heading; PDF quotes → the page whose text layer holds them; letter/prose quotes → the file (and section).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pypdf import PdfReader

Cues = dict[str, list[tuple[int, int, str]]]


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _clock(ms: int) -> str:
    m, s = divmod(ms / 1000, 60)
    return f"{int(m):02d}:{s:04.1f}"


def _section_of(text: str, quote: str) -> str | None:
    section = None
    for line in text.splitlines():
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        elif norm(quote) in norm(line):
            return section
    return None


def resolve(exp: dict[str, Any], demo: Path, cues: Cues) -> str:
    """A human label for one expectation; raises SystemExit when the corpus does not hold it."""
    file = exp["file"]
    path = demo / file
    if file in cues:
        for start, end, text in cues[file]:
            if norm(exp["quote"]) in norm(text):
                exp_out = f"`{file}` {_clock(start)}–{_clock(end)} ({start}–{end} ms)"
                return exp_out
        raise SystemExit(f"{file}: no cue holds {exp['quote']!r}")
    if "address" in exp:
        if f"## {exp['address']}\n" not in path.read_text(encoding="utf-8"):
            raise SystemExit(f"{file}: no verse {exp['address']}")
        return f"`{file}` {exp['address']}"
    if file.endswith(".pdf"):
        page_text = PdfReader(str(path)).pages[exp["page"] - 1].extract_text()
        if norm(exp["quote"]) not in norm(page_text):
            raise SystemExit(f"{file}: page {exp['page']} does not hold {exp['quote']!r}")
        return f"`{file}` p. {exp['page']}"
    text = path.read_text(encoding="utf-8")
    section = _section_of(text, exp["quote"])
    if norm(exp["quote"]) not in norm(text):
        raise SystemExit(f"{file}: does not hold {exp['quote']!r}")
    if exp.get("section") and section != exp["section"]:
        raise SystemExit(f"{file}: {exp['quote']!r} is under {section!r}, not {exp['section']!r}")
    return f"`{file}`" + (f" § {section}" if exp.get("section") else "")


def render_questions(template: Path, questions: Path, demo: Path, cues: Cues) -> str:
    data = json.loads(questions.read_text(encoding="utf-8"))
    lines = ["| role | lang | question | where the answer is |", "| --- | --- | --- | --- |"]
    for q in data["questions"]:
        where = "; ".join(resolve(e, demo, cues) for e in q["expect"]) or "nowhere: must abstain"
        lines.append(f"| {q['role']} | {q['lang']} | {q['question']} | {where} |")
    return template.read_text(encoding="utf-8").replace("{{QUESTIONS}}", "\n".join(lines))
