"""A small front-matter reader: a leading ``---`` block of ``key: value`` lines (no YAML dependency).

Values may be quoted with single or double quotes; ``#`` starts a comment on a line of its own;
keys are lower-cased. Nested YAML (lists, maps) is not supported and is reported with its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from footnote.errors import InputError

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$")


@dataclass(frozen=True)
class FrontMatter:
    fields: dict[str, str] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1  # 1-based line number of the body's first line in the file

    def get(self, key: str) -> str | None:
        v = self.fields.get(key)
        return v if v else None


def split_front_matter(path: Path, text: str) -> FrontMatter:
    """Split ``text`` into front matter fields and the body; text without a ``---`` first line has none."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return FrontMatter({}, text, 1)
    fields: dict[str, str] = {}
    for i in range(1, len(lines)):
        raw = lines[i]
        s = raw.strip()
        if s in ("---", "..."):
            return FrontMatter(fields, "\n".join(lines[i + 1 :]), i + 2)
        if not s or s.startswith("#"):
            continue
        m = _KEY.match(s)
        if m is None:
            raise InputError(path, f"front matter: expected 'key: value', got {s[:60]!r}", line=i + 1)
        value = m.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        fields[m.group(1).lower()] = value
    raise InputError(path, "front matter: opening '---' has no closing '---'", line=1)
