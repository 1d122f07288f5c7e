"""Accuracy of the deterministic follow-up rule (no model) on hand-written follow-up / new-subject pairs.

    .venv/bin/python bench/followup_rule.py                      # demo/ ingested into a temporary store
    .venv/bin/python bench/followup_rule.py --store /tmp/demo.db --pairs scripts/demo/followups.json
    .venv/bin/python bench/followup_rule.py --old                # also the rule as it was (term count only)

Each pair (``scripts/demo/followups.json``) is a previous question, the next question and whether the
next one leans on the previous (follow) or starts a new subject (new). The rule sees the corpus
through the store's lexical lane (``TurnCorpus.term_share``), as it does in a conversation. Prints the
accuracy per split (``tune``: looked at while the rule was chosen; ``held``: written with them but the
rule's steps not changed for them; ``fresh``: written after the rule was fixed) and every miss.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from footnote.answer.followup import classify, keywords
from footnote.engine import Engine
from footnote.retrieve.books import address_aliases
from footnote.settings import load_settings

REPO = Path(__file__).resolve().parents[1]


def old_rule(question: str, aliases: dict[str, str], max_terms: int) -> bool:
    """The rule before: any question with at most ``max_terms`` content terms was a follow-up."""
    from footnote.answer.followup import _BACK, _CONTINUATION, _WORD, parse_addresses

    if parse_addresses(question, aliases):
        return False
    if _CONTINUATION.match(question):
        return True
    terms = keywords(question)
    if len(terms) <= max_terms:
        return True
    return any(w.lower() in _BACK for w in _WORD.findall(question)) and len(terms) <= max_terms + 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", help="a store with demo/ ingested (default: ingest it into a temporary one)")
    ap.add_argument("--pairs", default=str(REPO / "scripts" / "demo" / "followups.json"))
    ap.add_argument("--old", action="store_true", help="also score the previous rule")
    args = ap.parse_args()
    pairs = json.loads(Path(args.pairs).read_text(encoding="utf-8"))["pairs"]
    with tempfile.TemporaryDirectory() as tmp:
        url = args.store or str(Path(tmp) / "demo.db")
        settings = load_settings(None, **{"store.url": url, "embedder.name": "hash"})
        with Engine.from_settings(settings) as engine:
            if not args.store:
                engine.ingest([REPO / "demo"])
            share = engine.retriever.corpus().term_share
            cfg = settings.conversation
            aliases = address_aliases(settings, engine.retriever.books.get())  # as the answerer reads addresses
            hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            old_hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for p in pairs:
                want = p["label"] == "follow"
                got, why = classify(p["next"], p["prev"], cfg, aliases, share)
                for split in (p.get("split", "all"), "all"):
                    hits[split][0] += got == want
                    hits[split][1] += 1
                    old_hits[split][0] += old_rule(p["next"], aliases, cfg.followup_max_terms) == want
                    old_hits[split][1] += 1
                if got != want:
                    print(f"miss ({p.get('split')}): {p['next']!r} after {p['prev']!r}: want {p['label']}, rule said "
                          f"{'follow' if got else 'new'} ({why})")
    for split, (ok, n) in hits.items():
        line = f"{split:6} accuracy {ok}/{n} = {ok / n:.3f}"
        if args.old:
            o, _ = old_hits[split]
            line += f"   (previous rule: {o}/{n} = {o / n:.3f})"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
