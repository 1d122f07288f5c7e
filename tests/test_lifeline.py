"""Issue 44 items 4, 5, 8 (fast checks; tests/test_processes.py kills the real commands under ``-m slow``):
worker processes die with their parent, a dead worker's claims do not hold the backlog, status does not
show a dead worker as running, each worker's first task is small, Ctrl-C/SIGTERM exit 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from footnote.corpus.embedding import (
    BacklogEmbedder,
    describe_backlog,
    holder_alive,
    new_holder,
    reclaim_dead_claims,
)
from footnote.corpus.ingest import Ingestor
from footnote.models.embedders import HashEmbedder
from footnote.settings import Settings
from footnote.store import open_store
from footnote.store.protocol import BacklogStats

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process semantics")

PARENT = textwrap.dedent("""
    import multiprocessing, os, sys, time
    from concurrent.futures import ProcessPoolExecutor
    from footnote.corpus.embedding import _init_worker
    from footnote.server.pages import PageRenderer
    from footnote.settings import Settings

    def pid():
        return os.getpid()

    if __name__ == "__main__":
        s = Settings().embedder.model_copy(update={"name": "hash"})
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker,
                                   initargs=(s, 0, None, os.getpid()))
        pages = PageRenderer(1.0, 4, 3, workers=1)
        print(pool.submit(pid).result(), pages._executor().submit(pid).result(), flush=True)
        time.sleep(120)
""")


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:][:1] not in ("Z", "X")


@linux
def test_embedding_and_page_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    """Item 4: after kill -9 of the parent, its embedding worker (PR_SET_PDEATHSIG and a watchdog) and its
    page renderer (the watchdog) end; before, both stayed alive under init."""
    script = tmp_path / "parent.py"
    script.write_text(PARENT, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip(), proc.stderr.read() if proc.stderr else ""
        workers = [int(x) for x in line.split()]
        assert all(_alive(w) for w in workers)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [w for w in workers if _alive(w)]
    finally:
        proc.kill()
    for w in left:  # never leave them behind when the test fails
        os.kill(w, signal.SIGKILL)
    assert left == []


def test_holder_names_a_live_process_and_a_dead_one() -> None:
    assert holder_alive(new_holder()) is True
    mine = new_holder().split(":")
    assert holder_alive(":".join([mine[0], str(_dead_pid()), mine[2], "abc"])) is False
    assert holder_alive(":".join([mine[0], str(os.getpid()), "1", "abc"])) is False  # the pid, reused
    assert holder_alive("elsewhere:1:2:abc") is None  # another host: cannot be told
    assert holder_alive("") is None


def _pending_store(settings: Settings, tmp: Path, n: int = 30):  # type: ignore[no-untyped-def]
    d = tmp / "c"
    d.mkdir(parents=True)
    for i in range(n):
        (d / f"n{i:02d}.txt").write_text(f"Note {i} about the river number{i}.\n", encoding="utf-8")
    store = open_store(settings.store.url, settings.store)
    Ingestor(settings, store, HashEmbedder(settings.embedder.hash_dim)).run([d], wait=False)
    return store


def test_a_dead_workers_claims_are_taken_back_at_once(hash_settings: Settings, tmp_path: Path) -> None:
    """Item 5: a killed run's claims (its process gone) no longer hold the backlog for lease_s (120 s):
    the next run embeds every fragment; a live holder's claims are left alone."""
    settings = hash_settings.with_overrides(**{"backlog.lease_s": 600.0})
    store = _pending_store(settings, tmp_path)
    host, _, start, _ = new_holder().split(":")
    dead = f"{host}:{_dead_pid()}:{start}:deadbeef0000"
    assert len(store.claim_pending(20, dead, 600.0)) == 20
    assert [(c.holder, c.fragments) for c in store.claim_holders()] == [(dead, 20)]
    report = BacklogEmbedder(settings, store, HashEmbedder(settings.embedder.hash_dim)).run()
    assert (report.embedded, report.remaining) == (30, 0)
    assert store.claim_holders() == []
    # a live holder (this process) keeps its claims: they are real work in flight
    store2 = _pending_store(hash_settings.with_overrides(**{"store.url": str(tmp_path / "b.db")}), tmp_path / "b")
    live = new_holder()
    store2.claim_pending(5, live, 600.0)
    assert reclaim_dead_claims(store2) == 0 and store2.claim_holders()[0].fragments == 5
    store.close()
    store2.close()


def test_status_does_not_show_a_dead_worker_running(hash_settings: Settings, tmp_path: Path) -> None:
    """Item 5: a killed worker's last rate (noted seconds ago) made status say "about 5 s left" for two
    minutes; now it says paused, and what the claims left behind mean (taken back at once, or how long)."""
    cfg = hash_settings.backlog
    now = time.time()
    host, _, start, _ = new_holder().split(":")
    dead = f"{host}:{_dead_pid()}:{start}:deadbeef0000"
    from footnote.store.protocol import ClaimHolder

    bl = BacklogStats(1000, 990, 2.0, now - 3, dead)
    d = describe_backlog(bl, bound="hash", embedder="hash", cfg=cfg, now=now, claims=[ClaimHolder(dead, 10, now + 100)])
    assert d["state"] == "paused" and "left" not in d["message"] and d["eta_s"] is None
    assert "stopped worker: the next run takes them back at once" in d["message"]
    live = describe_backlog(BacklogStats(1000, 990, 2.0, now - 3, new_holder()), bound="hash", embedder="hash",
                            cfg=cfg, now=now)
    assert live["state"] == "embedding" and "about 5 s left" in live["message"]
    other = ClaimHolder("elsewhere:12:34:abc", 10, now + 75)
    waits = describe_backlog(BacklogStats(1000, 990), bound="hash", embedder="hash", cfg=cfg, now=now, claims=[other])
    assert "claimed by another worker (elsewhere) until its claims end in 75 s at most" in waits["message"]


def test_each_workers_first_task_is_small(hash_settings: Settings, tmp_path: Path) -> None:
    """Item 8: the first task of a run is backlog.first_task_fragments, not batch_fragments (128: over 74 s
    for embeddinggemma on a loaded machine, with no vector kept by a Ctrl-C meanwhile)."""
    sizes: list[int] = []

    class Recording(HashEmbedder):
        def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            sizes.append(len(texts))
            return super().embed_passages(texts)

    settings = hash_settings.with_overrides(**{"backlog.batch_fragments": 128, "backlog.tail_fragments": 4})
    store = _pending_store(settings, tmp_path, 300)
    report = BacklogEmbedder(settings, store, Recording(settings.embedder.hash_dim)).run(workers=1)
    assert report.embedded == 300
    assert sizes[0] == settings.backlog.first_task_fragments == 8 and max(sizes) > 8
    store.close()


def test_sigterm_and_ctrl_c_exit_130_without_aborted(tmp_path: Path) -> None:
    """Item 11: `serve` on Ctrl-C printed "Aborted!" and exited 1 (README: 130); SIGTERM stops it the same way."""
    db = tmp_path / "s.db"
    (tmp_path / "a.md").write_text("# A\n\nText about lamps.\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    cli = [sys.executable, "-c", "from footnote.cli import main; main()"]
    subprocess.run([*cli, "ingest", str(tmp_path / "a.md"), "--store", str(db), "--embedder", "hash"], env=env,
                   check=True, capture_output=True, timeout=120)
    for sig in (signal.SIGINT, signal.SIGTERM):
        # a pytest-xdist worker runs with SIGINT ignored, and a child inherits that: give it a terminal's default
        proc = subprocess.Popen([*cli, "serve", "--store", str(db), "--no-demo", "--port", "0"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert "serving" in line
            _wait_until_answering(line.split("serving ", 1)[1].split()[0])  # the signal lands on a running server
            proc.send_signal(sig)
            _out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert proc.returncode == 130, (sig, err)
        assert "Aborted!" not in err and "interrupted" in err


def _wait_until_answering(url: str, timeout_s: float = 90.0) -> None:
    """Poll ``url`` until the server answers (any HTTP status): "serving" is printed before uvicorn has started,
    and on a loaded machine a signal sent in between was seen to leave the process running."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/healthz", timeout=2).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {timeout_s} s")
