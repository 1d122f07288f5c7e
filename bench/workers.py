"""One embedding worker against two, on one PostgreSQL (issue 41 item 3; ``footnote worker``).

    .venv/bin/python bench/workers.py --corpus ../shared/eval/gita/corpus.jsonl --limit 600 --embedder embeddinggemma

Starts an embedded PostgreSQL, and for each run (one worker, then two) makes a fresh database, ingests the same
corpus there lexically (``--no-wait``: every fragment waits for a vector), then starts the workers — each with its
own models directory, as on separate machines — with ``--until-empty`` and times them until the backlog is empty.
Prints fragments/s for each run and their ratio, and checks that the workers' embedded counts add up to the
backlog exactly (nothing embedded twice, nothing left). On one machine the workers share its cores: the ratio says
what a second worker adds here, not what a second machine would.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FOOTNOTE = str(Path(sys.executable).with_name("footnote"))


def run(url: str, corpus: Path, n_workers: int, embedder: str, models: str | None, tmp: Path) -> dict[str, float]:
    env = {**os.environ, "FOOTNOTE_STORE": url}
    ing = subprocess.run([FOOTNOTE, "ingest", str(corpus), "--embedder", embedder, "--no-wait"], env=env,
                         capture_output=True, text=True)
    if ing.returncode != 0:
        raise SystemExit(ing.stderr)
    st = json.loads(subprocess.run([FOOTNOTE, "status", "--json"], env=env, capture_output=True, text=True).stdout)
    pending = st["embedding"]["pending"]
    t0 = time.monotonic()
    procs = []
    for i in range(n_workers):
        wenv = dict(env)
        if models:  # each worker its own copy of the models directory, as on its own machine
            own = tmp / f"models-{n_workers}-{i}"
            subprocess.run(["cp", "-r", models, str(own)], check=True)
            wenv["FOOTNOTE_MODELS_DIR"] = str(own)
        procs.append(subprocess.Popen([FOOTNOTE, "worker", "--until-empty", "--poll", "0.2", "--json"], env=wenv,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    reports = [json.loads(p.communicate()[0]) for p in procs]
    seconds = time.monotonic() - t0
    embedded = [r["embedded"] for r in reports]
    return {"pending": pending, "embedded": sum(embedded), "per_worker": embedded, "seconds": round(seconds, 1),
            "rate": round(sum(embedded) / seconds, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="A file or folder to ingest.")
    ap.add_argument("--limit", type=int, default=0, help="Only the first N lines of a JSON Lines corpus.")
    ap.add_argument("--embedder", default="embeddinggemma")
    args = ap.parse_args()

    import psycopg

    from footnote.settings import load_settings
    from footnote.testing.internal import pgserver

    models = load_settings(None).models.dir_path if args.embedder not in ("hash", "none") else None
    pg = pgserver.start(watch_pid=os.getpid())
    try:
        with tempfile.TemporaryDirectory() as t:
            tmp = Path(t)
            corpus = args.corpus
            if args.limit and corpus.suffix == ".jsonl":
                corpus = tmp / corpus.name
                with args.corpus.open(encoding="utf-8") as src:
                    corpus.write_text("".join(line for _, line in zip(range(args.limit), src, strict=False)),
                                      encoding="utf-8")
            out = {}
            for n in (1, 2):
                url = pg.create_database(f"footnote_workers_{n}")
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
                out[n] = run(url, corpus, n, args.embedder, str(models) if models else None, tmp)
                ok = out[n]["embedded"] == out[n]["pending"]
                print(f"{n} worker{'s' if n > 1 else ''}: {out[n]['embedded']} of {out[n]['pending']} fragments in "
                      f"{out[n]['seconds']} s = {out[n]['rate']}/s (per worker {out[n]['per_worker']}); "
                      f"{'every fragment once' if ok else 'MISMATCH'}", flush=True)
            print(f"two against one: {out[2]['rate'] / out[1]['rate']:.2f}x ({os.cpu_count()} CPUs, {args.embedder})")
            return 0 if all(o["embedded"] == o["pending"] for o in out.values()) else 1
    finally:
        pg.stop()


if __name__ == "__main__":
    sys.exit(main())
