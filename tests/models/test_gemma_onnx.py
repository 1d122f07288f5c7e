"""The ONNX graph builder against an independent numpy forward pass, on a tiny random Gemma3 checkpoint:
padding, the bidirectional sliding window (window 3 over 7 tokens), grouped key/value heads, rotary tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gemma_tiny import CONFIG, make_tiny_model, numpy_forward

from footnote.errors import ModelError
from footnote.models.gemma_onnx import SafeTensors, build_graph, quantize_blocks
from footnote.models.gemma_requant import requantize_per_token

ort = pytest.importorskip("onnxruntime")


def _run(model: Path, seqs: list[list[int]]) -> np.ndarray:
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    width = max(map(len, seqs))
    ids = np.zeros((len(seqs), width), np.int64)
    mask = np.zeros_like(ids)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = s
        mask[i, : len(s)] = 1
    out: np.ndarray = session.run(["embeddings"], {"input_ids": ids, "attention_mask": mask})[0]
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray]]:
    folder = tmp_path_factory.mktemp("tiny")
    return folder, make_tiny_model(folder)


SEQS = [[2, 7, 9, 11, 13, 17, 1], [2, 5, 1], [2, 40, 41, 42, 1]]  # 7 tokens > window 3; padded rows


def test_fp32_graph_matches_numpy_forward(tiny: tuple[Path, dict[str, np.ndarray]], tmp_path: Path) -> None:
    folder, weights = tiny
    steps: list[tuple[int, int]] = []
    build_graph(folder, tmp_path / "m.onnx", quantize=False, progress=lambda d, t: steps.append((d, t)))
    assert steps[-1][0] == steps[-1][1]
    got = _run(tmp_path / "m.onnx", SEQS)
    want = np.vstack([numpy_forward(weights, s) for s in SEQS])
    assert np.abs(got - want).max() < 1e-4
    # the sliding window matters here: without it (a window wider than the text) the first row differs
    assert np.abs(got[0] - numpy_forward(weights, SEQS[0], window=100)).max() > 1e-3


def test_int8_graph_stays_close(tiny: tuple[Path, dict[str, np.ndarray]], tmp_path: Path) -> None:
    folder, weights = tiny
    build_graph(folder, tmp_path / "q.onnx", quantize=True)
    got = _run(tmp_path / "q.onnx", SEQS)
    want = np.vstack([numpy_forward(weights, s) for s in SEQS])
    assert ((got * want).sum(axis=1) > 0.99).all()


def test_quantize_blocks_round_trip() -> None:
    w = np.random.default_rng(1).normal(size=(6, 40)).astype(np.float32)  # 40 inputs: a padded last block
    q, scales = quantize_blocks(w, 8, 32)
    assert q.shape == (6, 2, 32) and q.dtype == np.uint8 and scales.shape == (12,)
    back = ((q.astype(np.float32) - 128) * scales.reshape(6, 2, 1)).reshape(6, 64)[:, :40]
    assert np.abs(back - w).max() <= scales.max() / 2 + 1e-6


def test_not_a_safetensors_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "model.safetensors"
    bad.write_bytes(b"\xff" * 64)
    with pytest.raises(ModelError, match=r"model\.safetensors"):
        SafeTensors(bad)


def test_requantize_per_token_refuses_a_graph_it_did_not_build(
        tiny: tuple[Path, dict[str, np.ndarray]], tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    folder, _ = tiny
    build_graph(folder, tmp_path / "q.onnx", quantize=True)
    m = onnx.load(str(tmp_path / "q.onnx"))
    first = next(n for n in m.graph.node if n.op_type == "MatMulNBits")
    m.graph.node.remove(first)  # a layer short of one projection is not a graph this builder wrote
    onnx.save_model(m, str(tmp_path / "broken.onnx"), save_as_external_data=True, location="broken.onnx.data")
    with pytest.raises(ModelError, match="not 7 per layer"):
        requantize_per_token(tmp_path / "broken.onnx", tmp_path / "x.onnx")


def test_requantize_per_token_puts_every_projection_on_integer_matmuls(
        tiny: tuple[Path, dict[str, np.ndarray]], tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    folder, weights = tiny
    build_graph(folder, tmp_path / "q.onnx", quantize=True)
    changed = requantize_per_token(tmp_path / "q.onnx", tmp_path / "tok.onnx")
    ops = [n.op_type for n in onnx.load(str(tmp_path / "tok.onnx")).graph.node]
    layers = CONFIG["num_hidden_layers"]
    assert changed == 7 * layers == ops.count("MatMulInteger") and "MatMulNBits" not in ops
    # one quantised copy per input tensor: q/k/v share one, gate/up share one; o and down read their own
    assert ops.count("ReduceMax") == 4 * layers
    assert "DynamicQuantizeLinear" not in ops  # no per-tensor scale anywhere
    got, int8 = _run(tmp_path / "tok.onnx", SEQS), _run(tmp_path / "q.onnx", SEQS)
    want = np.vstack([numpy_forward(weights, s) for s in SEQS])
    assert ((got * want).sum(axis=1) > 0.99).all()
    assert np.abs(got - int8).max() > 0  # a different computation, not a copy of the int8 graph
    # a row's scale is its own: a text's vector does not depend on its batch or its padding
    alone = np.vstack([_run(tmp_path / "tok.onnx", [s]) for s in SEQS])
    assert np.abs(got - alone).max() < 1e-5


def test_requantize_per_token_of_selected_roles_only(tiny: tuple[Path, dict[str, np.ndarray]], tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    folder, _ = tiny
    build_graph(folder, tmp_path / "q.onnx", quantize=True)
    assert requantize_per_token(tmp_path / "q.onnx", tmp_path / "gu.onnx", roles=("gate", "up")) == 6
    ops = [n.op_type for n in onnx.load(str(tmp_path / "gu.onnx")).graph.node]
    assert ops.count("MatMulNBits") == 15 and ops.count("MatMulInteger") == 6 and ops.count("ReduceMax") == 3
    build_graph(folder, tmp_path / "f.onnx", quantize=False)
    with pytest.raises(ModelError, match="not 7 per layer"):  # a float graph has nothing to requantise
        requantize_per_token(tmp_path / "f.onnx", tmp_path / "f2.onnx")
