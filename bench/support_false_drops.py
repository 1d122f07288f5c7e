"""What support-or-drop costs (issue 39 §1): the share of supported sentences the check would wrongly drop.

    .venv/bin/python bench/support_false_drops.py                      # the demo corpus and its questions
    .venv/bin/python bench/support_false_drops.py --corpus ../shared/eval/xquad/corpus.en.jsonl \
        --questions ../shared/eval/xquad/questions.dev.jsonl
    .venv/bin/python bench/support_false_drops.py --translations ../shared/eval/xquad --limit 0

1. **Extractive sentences.** Every question is asked with no model; each corpus answer's sentences quote the
   passages they cite, so they are supported by construction. Each is put through the very check a model's
   sentence passes while it streams (``SupportScorer.judge`` on the unit with its ``[n]``, against the cited
   passages with their titles and address labels); every one it would drop is a false drop.
2. **Translations** (``--translations XQUAD_DIR``): xquad's paragraphs exist in English and Russian, sentence for
   sentence a faithful translation — what a model answering in the reader's language from passages in another
   writes at best. Each Russian sentence is judged citing its English paragraph, and each English sentence
   citing its Russian one: every drop is a false drop (cross-lingual similarity, names across scripts, numbers
   written in words). As a control, the same sentence citing the next paragraph of the same article (same
   topic, other facts) should be dropped: the share it keeps is printed too.

The corpus is ingested once into a cached store under /tmp/footnote-cache/bench-support. Prints the counts,
the share dropped, why (``score``, ``number``, ``date``, ``name``, ``instruction``) and the dropped sentences.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from footnote.answer.support import CitedPassage, SupportScorer
from footnote.answer.units import CITE, is_introducer, split_units
from footnote.eval.questions import question_texts
from footnote.eval.runner import prepare_engine
from footnote.settings import load_settings
from footnote.text import split_sentences

ROOT = Path(__file__).resolve().parents[1]


def _extractive(engine: object, questions: list[str], show: int) -> None:
    from footnote.engine import Engine

    assert isinstance(engine, Engine)
    scorer = engine.answerer.support
    answers = sentences = dropped = 0
    why: Counter[str] = Counter()
    examples: list[tuple[str, str, tuple[str, ...]]] = []
    t0 = time.perf_counter()
    for q in questions:
        a = engine.ask(q)
        if a.mode.value != "corpus" or not a.citations:
            continue
        answers += 1
        by_n = {c.n: CitedPassage.of(c.fragment, c.title) for c in a.citations}
        for unit in split_units(a.answer):
            if not CITE.search(unit) or (is_introducer(unit) and not unit.strip()):
                continue
            sentences += 1
            v = scorer.judge(unit.strip(), by_n)
            if not v.supported:
                dropped += 1
                why.update(v.why)
                examples.append((q, unit.strip(), v.why))
    secs = time.perf_counter() - t0
    share = dropped / sentences if sentences else 0.0
    print(f"extractive: {len(questions)} questions, {answers} corpus answers, {sentences} sentences judged, "
          f"{dropped} dropped (false drops) = {share:.1%}; why: {dict(why) or '-'}  ({secs:.0f} s)")
    for q, s, w in examples[:show]:
        print(f"  {list(w)}  {s[:160]!r}  ← {q[:80]}")


def _translations(scorer: SupportScorer, xquad: Path, limit: int | None, show: int) -> None:
    def load(lang: str) -> dict[str, dict[str, str]]:
        rows = [json.loads(x) for x in (xquad / f"corpus.{lang}.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
        return {r["id"]: r for r in rows}

    en, ru = load("en"), load("ru")
    ids = [i for i in en if i in ru][: limit or None]
    for src, dst, name in ((ru, en, "ru sentence citing its en paragraph"), (en, ru, "en sentence citing its ru paragraph")):
        n = dropped = control_n = control_kept = 0
        why: Counter[str] = Counter()
        examples: list[tuple[str, tuple[str, ...]]] = []
        t0 = time.perf_counter()
        for i, pid in enumerate(ids):
            own = {1: CitedPassage(dst[pid]["text"], (dst[pid].get("title", ""),))}
            art = pid.split("#")[0]
            nxt = ids[i + 1] if i + 1 < len(ids) and ids[i + 1].split("#")[0] == art else None
            other = {1: CitedPassage(dst[nxt]["text"], (dst[nxt].get("title", ""),))} if nxt else None
            for s in split_sentences(src[pid]["text"]):
                if len(s.split()) < 3:
                    continue
                unit = s.rstrip(".!?…") + " [1]."
                n += 1
                v = scorer.judge(unit, own)
                if not v.supported:
                    dropped += 1
                    why.update(v.why)
                    examples.append((s, v.why))
                if other is not None:
                    control_n += 1
                    control_kept += scorer.judge(unit, other).supported
        secs = time.perf_counter() - t0
        print(f"translations, {name}: {len(ids)} paragraphs, {n} sentences, {dropped} dropped (false drops) = "
              f"{dropped / max(n, 1):.1%}; why: {dict(why) or '-'}; control (citing the next paragraph of the article): "
              f"{control_kept} of {control_n} kept = {control_kept / max(control_n, 1):.1%}  ({secs:.0f} s)")
        for s, w in examples[:show]:
            print(f"  {list(w)}  {s[:160]!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=ROOT / "demo")
    ap.add_argument("--questions", type=Path, default=ROOT / "scripts/demo/questions.json")
    ap.add_argument("--embedder", default="embeddinggemma")
    ap.add_argument("--limit", type=int, default=None, help="questions (or, with --translations, paragraphs); 0: none")
    ap.add_argument("--translations", type=Path, default=None, help="an xquad folder (corpus.en.jsonl, corpus.ru.jsonl)")
    ap.add_argument("--show", type=int, default=12, help="dropped sentences printed per part")
    ap.add_argument("--out", type=Path, default=Path("/tmp/footnote-cache/bench-support"))
    ns = ap.parse_args()
    config = ROOT / "demo/footnote.toml" if ns.corpus == ROOT / "demo" else None
    settings = load_settings(config, **{"embedder.name": ns.embedder})
    questions = question_texts(ns.questions, limit=ns.limit)
    if ns.translations is not None and ns.limit == 0:
        questions = []
    engine, _ = prepare_engine(settings, [ns.corpus], out_dir=ns.out, progress=False)
    with engine:
        print(f"embedder {ns.embedder}, support thresholds {engine.answerer.support.thresholds.same_lang} (same language) / "
              f"{engine.answerer.support.thresholds.cross_lang} (across), corpus {ns.corpus.name}")
        if questions:
            _extractive(engine, questions, ns.show)
        if ns.translations is not None:
            _translations(engine.answerer.support, ns.translations, ns.limit or None, ns.show)


if __name__ == "__main__":
    main()
