"""Rewrite the generated part of docs/settings.md (between its markers) from the settings tree.

    .venv/bin/python scripts/settings_docs.py [--check]

``--check`` changes nothing and exits 1 when the file is out of date.
"""

from __future__ import annotations

import sys
from pathlib import Path

from footnote.settings_view import DOCS_BEGIN, DOCS_END, markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "settings.md"


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    head, _, rest = text.partition(DOCS_BEGIN)
    _, _, tail = rest.partition(DOCS_END)
    new = head + markdown() + tail.lstrip("\n")
    if "--check" in sys.argv:
        if new != text:
            print(f"{DOC} is out of date: run .venv/bin/python scripts/settings_docs.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
