"""Build an ONNX graph of EmbeddingGemma straight from its safetensors — no torch, no transformers.

The sentence-transformers folder (``config.json``, ``model.safetensors``, ``2_Dense/``, ``3_Dense/``)
is read with numpy (a safetensors file is an 8-byte little-endian header length, a JSON header, then
raw tensor bytes) and written out as one graph with the ``onnx`` helper API:

``input_ids, attention_mask [B, T] (int64) → embeddings [B, 768]`` (L2-normalised)

- token embedding × √hidden;
- per layer (``config.layer_types``): RMSNorm with (1 + w) → q/k/v projections → per-head q/k RMSNorm →
  rotary embedding (``rope_local_base_freq`` on sliding layers, ``rope_theta`` on full ones) →
  attention scaled by ``query_pre_attn_scalar``^-½ under an explicit bidirectional mask (padding keys
  masked; sliding layers also mask |i − j| ≥ ``sliding_window``) → o projection → post-attention norm →
  residual; pre-feed-forward norm → GeLU-tanh gated MLP → post-feed-forward norm → residual;
- final RMSNorm, mean pooling over real tokens, Dense 768→3072 → Dense 3072→768, L2 normalisation.

``quantize=True`` stores every projection as 8-bit weights with one symmetric scale per block of 32
inputs (onnxruntime's ``MatMulNBits``) and the token embedding as int8 with one scale per row: the
~340 MB runtime form, cosine ≥ 0.9996 to the float model on the reference texts. (Per-tensor dynamic
activation quantisation — ``DynamicQuantizeLinear → MatMulInteger``, what ``quantize_dynamic`` emits —
measured only 0.93–0.98: Gemma's activations have outliers.) ``quantize=False`` keeps float32 (1.2 GB).
Tensors are read one at a time from a memory map, so the build needs little more memory than its output.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from footnote.errors import ModelError

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}
OPSET = 17
BITS = 8  # weight bits of the quantised projections (4 bits measured cosine 0.96 to the reference: too coarse)
BLOCK = 32  # weights per quantisation scale, along the input dimension
ACCURACY_LEVEL = 4  # MatMulNBits computes with int8 activations, quantised per block (faster than float, ≥ 0.9996)
MASK_VALUE = -1e9


class SafeTensors:
    """Read-only tensors of one ``.safetensors`` file, memory-mapped (bf16 is widened to float32)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            with path.open("rb") as f:
                (n,) = struct.unpack("<Q", f.read(8))
                if n <= 0 or n > 100_000_000:
                    raise ModelError(f"{path}: not a safetensors file (header length {n})")
                header = json.loads(f.read(n))
        except (OSError, struct.error, ValueError) as e:
            raise ModelError(f"{path}: cannot read safetensors header: {e}") from e
        self._offset = 8 + n
        self._header: dict[str, Any] = {k: v for k, v in header.items() if k != "__metadata__"}
        self._mm = np.memmap(path, dtype=np.uint8, mode="r")

    def names(self) -> list[str]:
        return list(self._header)

    def __contains__(self, name: str) -> bool:
        return name in self._header

    def get(self, name: str) -> np.ndarray:
        try:
            meta = self._header[name]
        except KeyError:
            raise ModelError(f"{self.path}: tensor {name!r} missing") from None
        a, b = meta["data_offsets"]
        raw = self._mm[self._offset + a : self._offset + b]
        if meta["dtype"] == "BF16":
            arr = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif meta["dtype"] in _DTYPES:
            arr = raw.view(_DTYPES[meta["dtype"]])
        else:
            raise ModelError(f"{self.path}: tensor {name!r} has unsupported dtype {meta['dtype']}")
        return arr.reshape(meta["shape"])



def quantize_rows(w: np.ndarray, chunk: int = 16384) -> tuple[np.ndarray, np.ndarray]:
    """``w`` [rows, dim] → (int8 [rows, dim], float32 scale [rows, 1]); in chunks (the vocabulary is large)."""
    q = np.empty(w.shape, dtype=np.int8)
    scale = np.empty((w.shape[0], 1), dtype=np.float32)
    for i in range(0, w.shape[0], chunk):
        part = np.asarray(w[i : i + chunk], dtype=np.float32)
        amax = np.abs(part).max(axis=1, keepdims=True)
        s = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
        q[i : i + chunk] = np.clip(np.rint(part / s), -127, 127).astype(np.int8)
        scale[i : i + chunk] = s
    return q, scale


class _Graph:
    """A small builder over ``onnx.helper``: unique names, initialisers, nodes."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper = helper
        self.numpy_helper = numpy_helper
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._n = 0

    def name(self, hint: str) -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def const(self, value: np.ndarray | np.floating[Any] | float | int | list[int], hint: str = "c", dtype: Any = None) -> str:
        arr = np.asarray(value, dtype=dtype) if dtype is not None or not isinstance(value, np.ndarray) else value
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        n = self.name(hint)
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(arr), n))
        return n

    def op(self, op_type: str, inputs: list[str], n_out: int = 1, **attrs: Any) -> Any:
        outs = [self.name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(self.helper.make_node(op_type, inputs, outs, **attrs))
        return outs[0] if n_out == 1 else outs


def quantize_blocks(w: np.ndarray, bits: int, block: int) -> tuple[np.ndarray, np.ndarray]:
    """``w`` [N, K] → (uint8 [N, K/block, block*bits/8], float32 scales [N*K/block]) for MatMulNBits (zero point 2^(bits-1))."""
    n, k = w.shape
    nb = -(-k // block)
    padded = np.zeros((n, nb * block), np.float32)
    padded[:, :k] = w
    blocks = padded.reshape(n, nb, block)
    qmax = 2 ** (bits - 1) - 1
    amax = np.abs(blocks).max(axis=2, keepdims=True)
    scale = np.where(amax > 0, amax / qmax, 1.0).astype(np.float32)
    q = (np.clip(np.rint(blocks / scale), -qmax, qmax) + 2 ** (bits - 1)).astype(np.uint8)
    if bits == 4:
        q = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(q), scale.reshape(-1)


class _Builder:
    def __init__(self, g: _Graph, cfg: dict[str, Any], quantize: bool) -> None:
        self.g = g
        self.cfg = cfg
        self.quantize = quantize
        self.eps = float(cfg.get("rms_norm_eps", 1e-6))

    def rms(self, x: str, w: np.ndarray) -> str:
        g = self.g
        sq = g.op("Mul", [x, x])
        mean = g.op("ReduceMean", [sq], axes=[-1], keepdims=1)
        inv = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [mean, g.const(self.eps)])])])
        return g.op("Mul", [g.op("Mul", [x, inv]), g.const(1.0 + w.astype(np.float32), "norm")])



    def linear(self, x: str, w_out_in: np.ndarray) -> str:
        """``x @ w.T`` for a torch-layout weight [out, in]; 8-bit blocks when quantising."""
        g = self.g
        w = np.asarray(w_out_in, dtype=np.float32).T
        if not self.quantize:
            return g.op("MatMul", [x, g.const(w, "w")])
        q, scales = quantize_blocks(w.T, BITS, BLOCK)
        out = g.name("matmul_nbits")
        g.nodes.append(g.helper.make_node(
            "MatMulNBits", [x, g.const(q, "wq"), g.const(scales, "ws")], [out], domain="com.microsoft",
            K=w.shape[0], N=w.shape[1], bits=BITS, block_size=BLOCK, accuracy_level=ACCURACY_LEVEL))
        return out


def build_graph(
    model_dir: Path, out_path: Path, *, quantize: bool = True, progress: Callable[[int, int], None] | None = None
) -> None:
    """Write the ONNX graph of the sentence-transformers EmbeddingGemma folder ``model_dir`` to ``out_path``."""
    from onnx import TensorProto

    try:
        cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelError(f"{model_dir / 'config.json'}: cannot read the model config: {e}") from e
    st = SafeTensors(model_dir / "model.safetensors")
    prefix = next((n[: -len("embed_tokens.weight")] for n in st.names() if n.endswith("embed_tokens.weight")), None)
    if prefix is None:
        raise ModelError(f"{st.path}: no embed_tokens.weight: not a Gemma checkpoint")
    hidden, heads, kv_heads = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    head_dim, layers = cfg["head_dim"], cfg["num_hidden_layers"]
    layer_types = cfg.get("layer_types") or ["full_attention"] * layers
    if heads % kv_heads:
        raise ModelError(f"{model_dir}: {heads} heads not a multiple of {kv_heads} key/value heads")
    group = heads // kv_heads
    total = layers + 3
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    g = _Graph()
    b = _Builder(g, cfg, quantize)
    ids, mask = "input_ids", "attention_mask"

    # --- embedding
    emb = st.get(prefix + "embed_tokens.weight")
    if quantize:
        eq, es = quantize_rows(emb)
        rows = g.op("Cast", [g.op("Gather", [g.const(eq, "emb_q"), ids], axis=0)], to=1)
        scale = g.op("Gather", [g.const(es * np.float32(math.sqrt(hidden)), "emb_s"), ids], axis=0)
        x = g.op("Mul", [rows, scale])
        del eq, es
    else:
        x = g.op("Mul", [g.op("Gather", [g.const(np.asarray(emb, np.float32), "emb"), ids], axis=0),
                         g.const(np.float32(math.sqrt(hidden)))])
    del emb
    tick()

    # --- masks [B, 1, 1, T, T] (additive, broadcast over key/value heads and their groups) and rotary tables [T, head_dim]
    maskf = g.op("Cast", [mask], to=1)
    key_bias = g.op("Mul", [g.op("Sub", [g.const(1.0), maskf]), g.const(MASK_VALUE)])  # [B, T]
    full_bias = g.op("Unsqueeze", [key_bias, g.const([1, 2, 3], dtype=np.int64)])  # [B, 1, 1, 1, T]
    seq_len = g.op("Gather", [g.op("Shape", [ids]), g.const(1, dtype=np.int64)], axis=0)
    pos = g.op("Range", [g.const(0, dtype=np.int64), seq_len, g.const(1, dtype=np.int64)])
    posf = g.op("Cast", [pos], to=1)
    dist = g.op("Abs", [g.op("Sub", [g.op("Unsqueeze", [pos, g.const([1], dtype=np.int64)]),
                                     g.op("Unsqueeze", [pos, g.const([0], dtype=np.int64)])])])
    window = int(cfg.get("sliding_window") or 0)
    outside = g.op("Cast", [g.op("Not", [g.op("Less", [dist, g.const(window, dtype=np.int64)])])], to=1)
    sliding_bias = g.op("Add", [full_bias, g.op("Mul", [outside, g.const(MASK_VALUE)])])  # [B, 1, 1, T, T]

    def rotary(theta: float) -> tuple[str, str]:
        inv = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim))
        freqs = g.op("Mul", [g.op("Unsqueeze", [posf, g.const([1], dtype=np.int64)]),
                             g.const(inv.astype(np.float32)[None, :], "inv_freq")])
        angles = g.op("Concat", [freqs, freqs], axis=-1)
        return g.op("Cos", [angles]), g.op("Sin", [angles])

    rope_global = rotary(float(cfg.get("rope_theta", 1_000_000.0)))
    rope_local = rotary(float(cfg.get("rope_local_base_freq", 10_000.0)))
    half = head_dim // 2
    split_sizes = g.const([half, half], dtype=np.int64)

    def apply_rope(t: str, cs: tuple[str, str]) -> str:
        a, c = g.op("Split", [t, split_sizes], n_out=2, axis=-1)
        rotated = g.op("Concat", [g.op("Neg", [c]), a], axis=-1)
        return g.op("Add", [g.op("Mul", [t, cs[0]]), g.op("Mul", [rotated, cs[1]])])

    scaling = float(cfg.get("query_pre_attn_scalar", head_dim)) ** -0.5
    shape_q = g.const([0, 0, heads, head_dim], dtype=np.int64)
    shape_kv = g.const([0, 0, kv_heads, head_dim], dtype=np.int64)
    shape_grouped_q = g.const([0, kv_heads, group, -1, head_dim], dtype=np.int64)
    shape_out = g.const([0, 0, heads * head_dim], dtype=np.int64)

    for i in range(layers):
        p = f"{prefix}layers.{i}."
        sliding = layer_types[i] == "sliding_attention"
        cs = rope_local if sliding else rope_global
        h = b.rms(x, st.get(p + "input_layernorm.weight"))
        q = g.op("Reshape", [b.linear(h, st.get(p + "self_attn.q_proj.weight")), shape_q])
        k = g.op("Reshape", [b.linear(h, st.get(p + "self_attn.k_proj.weight")), shape_kv])
        v = g.op("Reshape", [b.linear(h, st.get(p + "self_attn.v_proj.weight")), shape_kv])
        q = g.op("Transpose", [b.rms(q, st.get(p + "self_attn.q_norm.weight"))], perm=[0, 2, 1, 3])  # [B,H,T,D]
        k = g.op("Transpose", [b.rms(k, st.get(p + "self_attn.k_norm.weight"))], perm=[0, 2, 1, 3])  # [B,KV,T,D]
        v = g.op("Transpose", [v], perm=[0, 2, 1, 3])
        q, k = apply_rope(q, cs), apply_rope(k, cs)
        # grouped-query attention: heads of one key/value head side by side, broadcast over the group
        qg = g.op("Reshape", [q, shape_grouped_q])  # [B, KV, G, T, D]
        kt = g.op("Unsqueeze", [g.op("Transpose", [k], perm=[0, 1, 3, 2]), g.const([2], dtype=np.int64)])
        scores = g.op("MatMul", [qg, kt])  # [B, KV, G, T, T]
        scores = g.op("Add", [g.op("Mul", [scores, g.const(np.float32(scaling))]), sliding_bias if sliding else full_bias])
        probs = g.op("Softmax", [scores], axis=-1)
        ctx = g.op("MatMul", [probs, g.op("Unsqueeze", [v, g.const([2], dtype=np.int64)])])  # [B, KV, G, T, D]
        ctx = g.op("Reshape", [ctx, g.const([0, heads, -1, head_dim], dtype=np.int64)])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), shape_out])
        attn = b.linear(ctx, st.get(p + "self_attn.o_proj.weight"))
        x = g.op("Add", [x, b.rms(attn, st.get(p + "post_attention_layernorm.weight"))])
        h = b.rms(x, st.get(p + "pre_feedforward_layernorm.weight"))
        gate = b.linear(h, st.get(p + "mlp.gate_proj.weight"))
        up = b.linear(h, st.get(p + "mlp.up_proj.weight"))
        cube = g.op("Mul", [gate, g.op("Mul", [gate, gate])])
        inner = g.op("Mul", [g.op("Add", [gate, g.op("Mul", [cube, g.const(0.044715)])]),
                             g.const(math.sqrt(2.0 / math.pi))])
        gelu = g.op("Mul", [g.op("Mul", [gate, g.const(0.5)]), g.op("Add", [g.op("Tanh", [inner]), g.const(1.0)])])
        down = b.linear(g.op("Mul", [gelu, up]), st.get(p + "mlp.down_proj.weight"))
        x = g.op("Add", [x, b.rms(down, st.get(p + "post_feedforward_layernorm.weight"))])
        tick()

    x = b.rms(x, st.get(prefix + "norm.weight"))
    # --- mean pooling over real tokens, the two Dense layers, L2 normalisation
    m3 = g.op("Unsqueeze", [maskf, g.const([2], dtype=np.int64)])  # [B, T, 1]
    summed = g.op("ReduceSum", [g.op("Mul", [x, m3]), g.const([1], dtype=np.int64)], keepdims=0)
    count = g.op("Max", [g.op("ReduceSum", [m3, g.const([1], dtype=np.int64)], keepdims=0), g.const(1.0)])
    y = g.op("Div", [summed, count])
    tick()
    for dense in _dense_dirs(model_dir):
        dst = SafeTensors(dense / "model.safetensors")
        y = g.op("MatMul", [y, g.const(np.asarray(dst.get("linear.weight"), np.float32).T, "dense")])
        if "linear.bias" in dst:
            y = g.op("Add", [y, g.const(np.asarray(dst.get("linear.bias"), np.float32), "dense_b")])
    norm = g.op("Sqrt", [g.op("ReduceSum", [g.op("Mul", [y, y]), g.const([-1], dtype=np.int64)], keepdims=1)])
    g.nodes.append(g.helper.make_node("Div", [y, g.op("Max", [norm, g.const(1e-12)])], ["embeddings"]))
    tick()

    graph = g.helper.make_graph(
        g.nodes, "embeddinggemma",
        [g.helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "tokens"]),
         g.helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "tokens"])],
        [g.helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", None])],
        g.inits,
    )
    model = g.helper.make_model(graph, opset_imports=[g.helper.make_opsetid("", OPSET), g.helper.make_opsetid("com.microsoft", 1)],
                                producer_name="footnote.models.gemma_onnx")
    model.ir_version = 8
    out_path.parent.mkdir(parents=True, exist_ok=True)
    save_with_external_weights(model, out_path)


def require_onnx(doing: str) -> None:
    """The graph build needs the ``onnx`` package (the ``graph`` extra, which ``make run`` and ``make models``
    install); without it, say so before anything is downloaded. Running a built graph needs only onnxruntime."""
    try:
        import onnx  # noqa: F401
    except ImportError as e:
        raise ModelError(f"{doing} needs the onnx package, which is not installed: pip install 'footnote[graph]' "
                         f"(make run and make models install it) — {e}") from e


def weights_path(graph_path: Path) -> Path:
    """Where :func:`save_with_external_weights` puts a graph's tensors: ``<graph file>.data`` beside it."""
    return graph_path.with_name(graph_path.name + ".data")


def save_with_external_weights(model: Any, out_path: Path, *, data_path: Path | None = None) -> None:
    """Write ``model`` as a small graph file plus its tensors in ``<name>.data`` (``data_path``, beside it).
    onnxruntime maps an external data file instead of copying a protobuf's tensors: the int8 graph then
    loads with ~420 MB resident (tokenizer included) instead of ~730 MB, and in half the CPU time
    (measured, docs/embedders.md)."""
    import onnx

    data = data_path or weights_path(out_path)
    onnx.save_model(model, str(out_path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data.name, size_threshold=1024)
    data.chmod(0o644)  # onnx creates it private; the graph file beside it is not


def externalise_weights(graph_path: Path) -> bool:
    """Rewrite a graph saved as one file (installed before weights went outside) in the two-file form, in
    place: the data file is written first and the graph file replaced last, so a kill leaves the old
    graph working. False when the weights are already outside."""
    if weights_path(graph_path).exists():
        return False
    require_onnx("rewriting the installed graph")
    import onnx

    model = onnx.load(str(graph_path))
    tmp = graph_path.with_name(graph_path.name + ".tmp")
    save_with_external_weights(model, tmp, data_path=weights_path(graph_path))
    tmp.replace(graph_path)
    return True


def _dense_dirs(model_dir: Path) -> list[Path]:
    """The sentence-transformers Dense modules in pipeline order (from ``modules.json``, else ``N_Dense``)."""
    modules = model_dir / "modules.json"
    if modules.exists():
        entries = json.loads(modules.read_text(encoding="utf-8"))
        return [model_dir / e["path"] for e in sorted(entries, key=lambda e: int(e.get("idx", 0)))
                if str(e.get("type", "")).endswith("Dense")]
    return sorted((d for d in model_dir.iterdir() if d.is_dir() and d.name.endswith("_Dense")),
                  key=lambda d: int(d.name.split("_")[0]))
