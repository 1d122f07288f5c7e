"""What a reader gets while the corpus is still being embedded (issue 43, "an unfinished index is a state").

Ingests verses of the Bhagavad-gita (``../shared/eval/gita/corpus.jsonl``, the verse rows of the chapters named)
without waiting for vectors, then embeds the backlog in steps and asks Russian paraphrases of known verses at
each step. For every question and step it prints what the turn did: the verse it cited first, whether that is the
right verse, or the abstention (``index_incomplete`` with the share and the ETA). A wrong verse cited with a
corpus answer is the failure this measures.

    .venv/bin/python bench/index_incomplete.py [--shared ../shared] [--embedder embeddinggemma]
        [--chapters 2,4,11,13] [--steps 0,25,50,100]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from footnote.engine import Engine
from footnote.settings import load_settings

#: Russian paraphrases of four verses (none quotes the translation's words; the verse's address is not named)
QUESTIONS = [
    ("BG 2.47", "Что говорится о праве на действие, но не на его плоды?"),
    ("BG 2.20", "Душа не рождается и не умирает — где об этом сказано?"),
    ("BG 2.22", "Как человек сменяет старую одежду на новую, так и душа меняет тела — что это за стих?"),
    ("BG 4.7", "Когда праведность приходит в упадок, я являю себя — о чём этот стих?"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[1].parent / "shared"))
    ap.add_argument("--embedder", default="embeddinggemma")
    ap.add_argument("--chapters", default="2,4,11,13")
    ap.add_argument("--steps", default="0,25,50,100", help="percent embedded at which to ask")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    chapters = {c.strip() for c in args.chapters.split(",")}
    src = Path(args.shared) / "eval" / "gita" / "corpus.jsonl"
    rows = [r for r in map(json.loads, src.open(encoding="utf-8"))
            if r["kind"] == "verse" and r.get("address", {}).get("loc", "").split(".")[0] in chapters]
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "gita.jsonl"
        corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        eng = Engine.from_settings(load_settings(None, **{"store.url": str(Path(tmp) / "g.db"),
                                                          "embedder.name": args.embedder}))
        eng.ingest([corpus], wait=False)
        total = eng.store.backlog().fragments
        for step in sorted(int(s) for s in args.steps.split(",")):
            want = total * step // 100
            have = eng.store.backlog().embedded
            if want > have:
                eng.embed_backlog(workers=1) if step == 100 else _embed(eng, want - have)
            bl = eng.store.backlog()
            for gold, q in QUESTIONS:
                a = eng.ask(q)
                first = a.citations[0].fragment.id.split("#")[0] if a.citations else None
                row: dict[str, Any] = {"embedded_pct": round(100 * bl.embedded / bl.fragments, 1), "gold": gold, "mode": a.mode.value,
                       "abstention": a.abstention.reason.value if a.abstention else None, "cited_first": first,
                       "wrong_verse": a.mode.value == "corpus" and first is not None and first != gold,
                       "answer": a.answer[:160]}
                out.append(row)
                if not args.json:
                    print(f"{row['embedded_pct']:5.1f}% {gold:8} {row['mode']:9} {row['abstention'] or '-':18} "
                          f"{first or '-':8} {'WRONG' if row['wrong_verse'] else ''} {row['answer'][:90]!r}", flush=True)
        eng.close()
    wrong = sum(bool(r["wrong_verse"]) for r in out)
    if args.json:
        print(json.dumps({"rows": out, "wrong_verse_answers": wrong}, ensure_ascii=False, indent=1))
    else:
        print(f"answers citing a wrong verse: {wrong} of {len(out)} turns ({total} verse fragments)")
    return 0


def _embed(eng: Engine, n: int) -> None:
    from footnote.corpus.embedding import BacklogEmbedder

    assert eng.embedder is not None
    BacklogEmbedder(eng.settings, eng.store, eng.embedder).run(workers=1, limit=n)


if __name__ == "__main__":
    sys.exit(main())
