"""How often `records.lang.question_lang` names a question's language, per language, on real question sets.

Reads from ../shared (FOOTNOTE_SHARED): xquad dev and more-languages (en, ru, ar, el, hi, ro, th, vi), squad2-pt
(Portuguese), and the demo's written questions (scripts/demo/*.jsonl: English, Russian, German). Prints, per
language, the questions and the share named right, and the most common wrong names.

    .venv/bin/python bench/question_lang.py [--min-confidence 0.9]
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter, defaultdict
from pathlib import Path

from footnote.settings import CorpusSettings

#: English searches that start with a word other languages ask with (a helper's attack): all must stay English
ENGLISH_CUES = ("como lake?", "para olympics?", "Em dash usage?", "cum laude gpa?", "Cum laude meaning?",
                "chi square?", "Cosa Nostra origins?", "Quanto costs?", "que sera?", "por favor?", "Care home rules?",
                "Come on Eileen lyrics?", "Was Ada Penhallow a keeper?", "Die Penhallow before 1890?",
                "Como Lake is where?", "O'Brien's lighthouse?", "Chi Rho meaning?", "Ce mark on the lamp?")

REPO = Path(__file__).resolve().parents[1]


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-confidence", type=float, default=None, help="corpus.question_lang_min_confidence")
    ap.add_argument("--cue-min-words", type=int, default=None, help="corpus.question_lang_cue_min_words")
    ap.add_argument("--cue-min-confidence", type=float, default=None, help="corpus.question_lang_cue_min_confidence")
    args = ap.parse_args()
    given = {"question_lang_min_confidence": args.min_confidence, "question_lang_cue_min_words": args.cue_min_words,
             "question_lang_cue_min_confidence": args.cue_min_confidence}
    corpus = CorpusSettings(**{k: v for k, v in given.items() if v is not None})
    shared = Path(os.environ.get("FOOTNOTE_SHARED", REPO.parent / "shared"))
    files = [shared / "eval/xquad/questions.dev.jsonl", shared / "eval/xquad/questions.more.dev.jsonl",
             shared / "eval/squad2/questions.jsonl", shared / "eval/squad2-pt/questions.jsonl",
             *sorted((REPO / "scripts/demo").glob("*.jsonl"))]
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong: dict[str, Counter[str]] = defaultdict(Counter)
    seen: set[str] = set()
    for f in files:
        if not f.is_file():
            print(f"(missing: {f})")
            continue
        for r in _rows(f):
            q, lang = str(r.get("question", "")), str(r.get("lang", ""))
            if not q or not lang or q in seen:
                continue
            seen.add(q)
            got = corpus.question_lang(q)
            total[lang] += 1
            if got == lang:
                right[lang] += 1
            else:
                wrong[lang][got] += 1
    print(f"question_lang: min_confidence {corpus.question_lang_min_confidence}, cue_min_words "
          f"{corpus.question_lang_cue_min_words}, cue_min_confidence {corpus.question_lang_cue_min_confidence}")
    print(f"{'lang':5} {'questions':>9} {'right':>7}  wrong names")
    for lang in sorted(total):
        share = right[lang] / total[lang]
        print(f"{lang:5} {total[lang]:9d} {share:7.1%}  {dict(wrong[lang].most_common(4))}")

    moved = [q for q in ENGLISH_CUES if corpus.question_lang(q) != "en"]
    print(f"English searches starting with another language's asking word: {len(ENGLISH_CUES) - len(moved)} of "
          f"{len(ENGLISH_CUES)} stay English" + (f"; moved: {moved}" if moved else ""))


if __name__ == "__main__":
    main()
