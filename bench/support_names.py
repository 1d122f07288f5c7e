"""The names rule of support-or-drop alone (answer/particulars.py), on xquad's faithful translations — fast, no model.

    .venv/bin/python bench/support_names.py                  # figures
    .venv/bin/python bench/support_names.py --show 40        # and the sentences behind them

xquad's paragraphs exist in English and Russian, sentence for sentence. Each sentence with a proper name is judged
citing the paragraph in the other language: a ``name`` verdict is a false drop (a translated or transliterated name
the rule does not recognise). As a control, in each sentence with exactly one name that the rule carries, that name
is swapped for a name of the same script from another article (chosen by a seed from the sentence): the share still
kept is the rule's false keeps. The whole support check, with its similarity score: bench/support_false_drops.py.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from footnote.answer.particulars import (
    ClaimParticulars,
    PassageParticulars,
    claim_particulars,
    missing_particulars,
    passage_particulars,
)
from footnote.text import split_sentences

ROOT = Path(__file__).resolve().parents[1]


def _load(xquad: Path, lang: str) -> dict[str, dict[str, str]]:
    rows = [json.loads(x) for x in (xquad / f"corpus.{lang}.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    return {r["id"]: r for r in rows}


def _latin(word: str) -> bool:
    return word[:1].isascii()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xquad", default=str(ROOT.parent / "shared" / "eval" / "xquad"))
    ap.add_argument("--show", type=int, default=0, help="print this many dropped and wrongly kept sentences")
    args = ap.parse_args()
    xquad = Path(args.xquad)
    en, ru = _load(xquad, "en"), _load(xquad, "ru")
    ids = [i for i in en if i in ru]
    for src, dst, label in ((ru, en, "ru sentence citing its en paragraph"), (en, ru, "en sentence citing its ru paragraph")):
        judged: list[tuple[str, str, PassageParticulars, ClaimParticulars, bool]] = []
        pool: set[tuple[str, str]] = set()  # (article, name)
        for i in ids:
            passage = passage_particulars(dst[i]["text"], [dst[i].get("title", "")])
            article = src[i].get("title") or i.split("#")[0]
            for sent in split_sentences(src[i]["text"]):
                claim = claim_particulars(sent)
                if not claim.names:
                    continue
                pool |= {(article, w) for w, _ in claim.names}
                judged.append((article, sent, passage, claim, "name" in missing_particulars(claim, [passage])))
        drops = [s for _, s, _, _, dropped in judged if dropped]
        kept, swapped = [], 0
        for article, sent, passage, claim, dropped in judged:
            if dropped or len(claim.names) != 1:
                continue
            word = claim.names[0][0]
            others = sorted({w for a, w in pool if a != article and len(w) >= 4 and w[:1] != word[:1]
                             and _latin(w) == _latin(word)})
            other = random.Random(sent).choice(others)
            changed = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", other, sent, count=1)
            if changed == sent:
                continue
            swapped += 1
            if "name" not in missing_particulars(claim_particulars(changed), [passage]):
                kept.append(f"{word} → {other}: {changed}")
        print(f"{label}: {len(judged)} sentences with names, {len(drops)} dropped for a name (false drops) = "
              f"{len(drops) / max(len(judged), 1):.1%}; control (one name swapped for another article's): "
              f"{len(kept)}/{swapped} kept = {len(kept) / max(swapped, 1):.1%}")
        for s in drops[: args.show]:
            print(f"  dropped: {s[:160]!r}")
        for s in kept[: args.show]:
            print(f"  kept: {s[:160]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
