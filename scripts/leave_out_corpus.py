"""Write a corpus without the paragraphs that a question set's near-miss rows left out.

    .venv/bin/python scripts/leave_out_corpus.py ../shared/eval/squad2/corpus.jsonl \
        tests/data/squad2_ru.jsonl /tmp/squad2-ru-corpus.jsonl

Near-miss questions are asked about a paragraph that is *not* in the corpus while the rest of its
article is. A question file marks that paragraph with a ``left_out`` list on each near-miss row (the
loader ignores the field); this script copies the shared corpus minus those ids, so that the project
keeps only its own questions and never a copy of the shared data. It refuses a ``left_out`` id the
corpus does not hold and an in-corpus question whose gold paragraph would be left out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    corpus, questions, out = (Path(a) for a in argv)
    rows = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    left_out = {i for r in rows for i in r.get("left_out", [])}
    gold = {i for r in rows if r.get("answerable") for i in r.get("gold", [])}
    if left_out & gold:
        print(f"{questions}: in-corpus questions use left-out paragraphs {sorted(left_out & gold)}", file=sys.stderr)
        return 1
    kept, seen = [], set()
    for line in corpus.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        doc = json.loads(line)
        seen.add(doc["id"])
        if doc["id"] not in left_out:
            kept.append(line)
    missing = sorted((left_out | gold) - seen)
    if missing:
        print(f"{corpus}: no paragraph with id {missing}", file=sys.stderr)
        return 1
    out.write_text("\n".join(kept) + "\n", encoding="utf-8")
    print(f"{out}: {len(kept)} of {len(seen)} paragraphs ({len(left_out)} left out)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
