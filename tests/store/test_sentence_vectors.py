"""Kept sentence vectors (the extractive answer's candidates) on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from footnote.settings import StoreSettings
from footnote.store import open_store
from footnote.store.protocol import SentenceVectorStore, Store


class SentenceVectorTests:
    def test_kept_vectors_round_trip_by_embedder_and_key(self, store: Store) -> None:
        assert isinstance(store, SentenceVectorStore)
        a = np.arange(4, dtype=np.float32) / 7
        b = -np.ones(4, dtype=np.float32)
        assert store.get_sentence_vectors("e1", ["k1", "k2"]) == {}
        store.put_sentence_vectors("e1", {"k1": a, "k2": b})
        got = store.get_sentence_vectors("e1", ["k1", "k2", "k3", "k1"])
        assert set(got) == {"k1", "k2"}
        assert np.array_equal(got["k1"], a) and np.array_equal(got["k2"], b) and got["k1"].dtype == np.float32
        assert store.get_sentence_vectors("e2", ["k1"]) == {}  # another embedder's vectors are not these
        store.put_sentence_vectors("e1", {"k1": b})  # replaced
        assert np.array_equal(store.get_sentence_vectors("e1", ["k1"])["k1"], b)

    def test_a_rebind_drops_other_embedders_vectors(self, store: Store) -> None:
        store.bind_embedder("e1", 4)
        store.put_sentence_vectors("e1", {"k": np.ones(4, dtype=np.float32)})
        store.put_sentence_vectors("e0", {"k": np.ones(4, dtype=np.float32)})
        store.rebind_embedder("e2", 4)
        assert store.get_sentence_vectors("e1", ["k"]) == {} and store.get_sentence_vectors("e0", ["k"]) == {}


class TestSqliteSentenceVectors(SentenceVectorTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        s = open_store(str(tmp_path / "store.db"), StoreSettings.model_validate({"url": str(tmp_path / "store.db")}))
        yield s
        s.close()


@pytest.mark.integration
@pytest.mark.postgres
class TestPostgresSentenceVectors(SentenceVectorTests):
    @pytest.fixture
    def store(self, pg_url: str) -> Iterator[Store]:
        s = open_store(pg_url, StoreSettings(url=pg_url))
        yield s
        s.close()
