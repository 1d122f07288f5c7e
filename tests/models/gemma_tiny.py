"""A tiny random Gemma3 sentence-transformers folder (safetensors written with numpy) and an independent
numpy forward pass, to test the ONNX graph builder and the installer without the 1.2 GB model."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

CONFIG = {
    "hidden_size": 16, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 3,
    "intermediate_size": 24, "vocab_size": 50, "rms_norm_eps": 1e-6, "query_pre_attn_scalar": 8,
    "rope_theta": 1_000_000.0, "rope_local_base_freq": 10_000.0, "sliding_window": 3,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
}


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    header: dict[str, object] = {}
    offset = 0
    blobs = []
    for name, arr in tensors.items():
        data = np.ascontiguousarray(arr, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def make_tiny_model(folder: Path, seed: int = 0) -> dict[str, np.ndarray]:
    """Writes config.json, model.safetensors, modules.json, 2_Dense, 3_Dense; returns every weight."""
    rng = np.random.default_rng(seed)
    c = CONFIG
    h, d, nh, nkv, inter = c["hidden_size"], c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"]

    def w(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.3, shape).astype(np.float32)

    t: dict[str, np.ndarray] = {"embed_tokens.weight": w(c["vocab_size"], h), "norm.weight": w(h)}
    for i in range(c["num_hidden_layers"]):
        p = f"layers.{i}."
        t.update({
            p + "input_layernorm.weight": w(h), p + "post_attention_layernorm.weight": w(h),
            p + "pre_feedforward_layernorm.weight": w(h), p + "post_feedforward_layernorm.weight": w(h),
            p + "self_attn.q_proj.weight": w(nh * d, h), p + "self_attn.k_proj.weight": w(nkv * d, h),
            p + "self_attn.v_proj.weight": w(nkv * d, h), p + "self_attn.o_proj.weight": w(h, nh * d),
            p + "self_attn.q_norm.weight": w(d), p + "self_attn.k_norm.weight": w(d),
            p + "mlp.gate_proj.weight": w(inter, h), p + "mlp.up_proj.weight": w(inter, h),
            p + "mlp.down_proj.weight": w(h, inter),
        })
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(c), encoding="utf-8")
    write_safetensors(folder / "model.safetensors", t)
    dense = {"2_Dense": w(32, h), "3_Dense": w(h, 32)}
    for name, weight in dense.items():
        (folder / name).mkdir(exist_ok=True)
        write_safetensors(folder / name / "model.safetensors", {"linear.weight": weight})
        t[name] = weight
    modules = [{"idx": 0, "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
               {"idx": 3, "path": "3_Dense", "type": "sentence_transformers.models.Dense"},
               {"idx": 4, "path": "4_Normalize", "type": "sentence_transformers.models.Normalize"}]
    (folder / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    return t


def numpy_forward(t: dict[str, np.ndarray], ids: list[int], window: int | None = None) -> np.ndarray:
    """One unpadded sequence through the Gemma3 bidirectional encoder + pooling + Dense + L2, in float64
    (``window``: another sliding window than the config's)."""
    c = CONFIG
    d, nh, nkv, eps = c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"], c["rms_norm_eps"]
    n = len(ids)

    def rms(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * (1.0 + w)

    def rope(x: np.ndarray, theta: float) -> np.ndarray:  # x [heads, n, d]
        freqs = np.arange(n)[:, None] * (1.0 / theta ** (np.arange(0, d, 2) / d))[None]
        ang = np.concatenate([freqs, freqs], -1)
        rot = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], -1)
        return x * np.cos(ang) + rot * np.sin(ang)

    x = t["embed_tokens.weight"][ids].astype(np.float64) * np.sqrt(c["hidden_size"])
    dist = np.abs(np.arange(n)[:, None] - np.arange(n)[None])
    for i, kind in enumerate(c["layer_types"]):
        p = f"layers.{i}."
        theta = c["rope_local_base_freq"] if kind == "sliding_attention" else c["rope_theta"]
        h = rms(x, t[p + "input_layernorm.weight"])
        q = (h @ t[p + "self_attn.q_proj.weight"].T).reshape(n, nh, d).transpose(1, 0, 2)
        k = (h @ t[p + "self_attn.k_proj.weight"].T).reshape(n, nkv, d).transpose(1, 0, 2)
        v = (h @ t[p + "self_attn.v_proj.weight"].T).reshape(n, nkv, d).transpose(1, 0, 2)
        q = rope(rms(q, t[p + "self_attn.q_norm.weight"]), theta)
        k = np.repeat(rope(rms(k, t[p + "self_attn.k_norm.weight"]), theta), nh // nkv, axis=0)
        v = np.repeat(v, nh // nkv, axis=0)
        s = q @ k.transpose(0, 2, 1) * c["query_pre_attn_scalar"] ** -0.5
        if kind == "sliding_attention":
            s = np.where(dist < (window or c["sliding_window"]), s, -np.inf)
        prob = np.exp(s - s.max(-1, keepdims=True))
        prob /= prob.sum(-1, keepdims=True)
        o = (prob @ v).transpose(1, 0, 2).reshape(n, nh * d) @ t[p + "self_attn.o_proj.weight"].T
        x = x + rms(o, t[p + "post_attention_layernorm.weight"])
        h = rms(x, t[p + "pre_feedforward_layernorm.weight"])
        g = h @ t[p + "mlp.gate_proj.weight"].T
        gelu = 0.5 * g * (1 + np.tanh(np.sqrt(2 / np.pi) * (g + 0.044715 * g**3)))
        x = x + rms((gelu * (h @ t[p + "mlp.up_proj.weight"].T)) @ t[p + "mlp.down_proj.weight"].T,
                    t[p + "post_feedforward_layernorm.weight"])
    y = rms(x, t["norm.weight"]).mean(0) @ t["2_Dense"].T @ t["3_Dense"].T
    return y / np.linalg.norm(y)
