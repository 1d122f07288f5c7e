"""The ``int8tok`` graph of EmbeddingGemma: the installed 8-bit block graph with its projections on onnxruntime's
integer GEMM, activations quantised per token.

The ``int8`` graph runs every projection as ``MatMulNBits`` (8-bit weights, one scale per block of 32 inputs,
activations quantised per row and block): faithful (cosine ≥ 0.9996 to fp32) but ~80 % of a query's CPU.
onnxruntime's ``MatMulInteger`` (MLAS's integer GEMM) does the same multiply-adds in about half of that
time. What kept it out before was the activation scale: ``DynamicQuantizeLinear`` takes one scale for the
whole tensor, and Gemma's activations carry outliers, so every other token lost its resolution (the retired ``int8dq``:
gate/up only, reference cosine 0.997). Here each token (row) gets its own symmetric scale, computed in the
graph::

    s = max(|x_row|, 1e-8) / 127          # [B, T, 1]
    xq = uint8(round(x / s) + 128)        # zero point 128: values 1 … 255
    y = float(MatMulInteger(xq, Wq, 128, 128)) × w_scale × s

with ``Wq`` symmetric 8-bit weights, one scale per output channel (``w_scale``), requantised from the installed
8-bit blocks (no download, a few CPU-seconds) and stored as uint8 with zero point 128. uint8 × uint8, not
uint8 × int8: on AVX2 without VNNI, MLAS's uint8 × int8 kernel adds pairs of products in saturating 16-bit
(``vpmaddubsw``), and per-token activations use their whole range, so full-range int8 weights overflowed
(the tiny test model lost cosine 0.99 → 0.95; on EmbeddingGemma reference cosine 0.99731 against 0.99735).
uint8 × uint8 widens to 16 bits first (no saturation) for ~13 % more CPU than the saturating kernel. Projections that read the same tensor (q/k/v; gate/up) share one
quantised copy of it. Because a row's scale depends on that row only, a text's vector does not depend on
what else is in its batch or how far it is padded (unlike a per-tensor scale).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from footnote.errors import ModelError
from footnote.models.gemma_onnx import save_with_external_weights

#: The seven ``MatMulNBits`` nodes of one layer, in the order ``gemma_onnx.build_graph`` writes them.
LAYER_ROLES: tuple[str, ...] = ("q", "k", "v", "o", "gate", "up", "down")
#: Projections the ``int8tok`` graph moves to per-token int8 (measured, docs/embedders.md).
TOKEN_ROLES: tuple[str, ...] = LAYER_ROLES
ZERO_POINT = 128


def dequantize_nbits(node: Any, inits: dict[str, Any]) -> np.ndarray:
    """The float weight [N, K] of an 8-bit ``MatMulNBits`` node (zero point 2^(bits-1), one scale per block)."""
    from onnx import helper, numpy_helper

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    k, n, bits = int(attrs["K"]), int(attrs["N"]), int(attrs["bits"])
    if bits != 8:
        raise ModelError(f"{node.name or node.output[0]}: {bits}-bit weights cannot be requantised here (8 expected)")
    q = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32) - 2 ** (bits - 1)  # [N, K/block, block]
    s = numpy_helper.to_array(inits[node.input[2]]).reshape(n, -1, 1)
    return (q * s).reshape(n, -1)[:, :k]


def per_channel_uint8(w_n_k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``w`` [N, K] → (uint8 [K, N] with zero point 128, float32 scale [N]): symmetric, one scale per output channel."""
    w = np.asarray(w_n_k, dtype=np.float32).T
    scale = (np.maximum(np.abs(w).max(axis=0), 1e-12) / 127.0).astype(np.float32)
    return (np.clip(np.rint(w / scale), -127, 127) + ZERO_POINT).astype(np.uint8), scale


def requantize_per_token(graph_path: Path, out_path: Path, roles: tuple[str, ...] = TOKEN_ROLES, *,
                         data_path: Path | None = None) -> int:
    """Write ``out_path``: the 8-bit block graph at ``graph_path`` with the projections of ``roles`` turned into
    per-token uint8 activations × per-channel 8-bit weights (``MatMulInteger``). The tensors go to ``data_path``
    (default ``<out_path>.data``). Returns the nodes changed."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(graph_path))
    inits = {t.name: t for t in model.graph.initializer}
    nbits = [n for n in model.graph.node if n.op_type == "MatMulNBits"]
    if not nbits or len(nbits) % len(LAYER_ROLES):
        raise ModelError(f"{graph_path}: {len(nbits)} MatMulNBits nodes, not {len(LAYER_ROLES)} per layer: "
                         "not a graph footnote.models.gemma_onnx wrote")
    role = {id(n): LAYER_ROLES[i % len(LAYER_ROLES)] for i, n in enumerate(nbits)}
    consts: dict[str, np.ndarray] = {"tok_zp": np.array(ZERO_POINT, np.uint8), "tok_eps": np.array(1e-8, np.float32),
              "tok_inv127": np.array(1.0 / 127.0, np.float32), "tok_zpf": np.array(float(ZERO_POINT), np.float32)}
    new_inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    nodes: list[Any] = []
    quantised: dict[str, tuple[str, str]] = {}  # float input → (its uint8 copy, its per-row scale)
    changed = 0
    for node in model.graph.node:
        if node.op_type != "MatMulNBits" or role[id(node)] not in roles:
            nodes.append(node)
            continue
        x = node.input[0]
        if x not in quantised:
            t = f"tokq{len(quantised)}"
            nodes += [
                helper.make_node("Abs", [x], [f"{t}_abs"]),
                helper.make_node("ReduceMax", [f"{t}_abs"], [f"{t}_amax"], axes=[-1], keepdims=1),
                helper.make_node("Max", [f"{t}_amax", "tok_eps"], [f"{t}_amax1"]),
                helper.make_node("Mul", [f"{t}_amax1", "tok_inv127"], [f"{t}_s"]),
                helper.make_node("Div", [x, f"{t}_s"], [f"{t}_div"]),
                helper.make_node("Round", [f"{t}_div"], [f"{t}_r"]),
                helper.make_node("Add", [f"{t}_r", "tok_zpf"], [f"{t}_shift"]),
                helper.make_node("Cast", [f"{t}_shift"], [f"{t}_q"], to=onnx.TensorProto.UINT8),
            ]
            quantised[x] = (f"{t}_q", f"{t}_s")
        xq, xs = quantised[x]
        wq, ws = per_channel_uint8(dequantize_nbits(node, inits))
        t = f"tokmm{changed}"
        new_inits += [numpy_helper.from_array(np.ascontiguousarray(wq), f"{t}_w"), numpy_helper.from_array(ws, f"{t}_ws")]
        nodes += [
            helper.make_node("MatMulInteger", [xq, f"{t}_w", "tok_zp", "tok_zp"], [f"{t}_acc"]),
            helper.make_node("Cast", [f"{t}_acc"], [f"{t}_accf"], to=onnx.TensorProto.FLOAT),
            helper.make_node("Mul", [f"{t}_accf", f"{t}_ws"], [f"{t}_y"]),
            helper.make_node("Mul", [f"{t}_y", xs], [node.output[0]]),
        ]
        changed += 1
    model.graph.initializer.extend(new_inits)
    used = {i for nd in nodes for i in nd.input}
    keep = [t for t in model.graph.initializer if t.name in used]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    del model.graph.initializer[:]
    model.graph.initializer.extend(keep)
    save_with_external_weights(model, out_path, data_path=data_path)
    return changed
