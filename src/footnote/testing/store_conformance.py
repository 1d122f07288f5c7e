"""The backend-agnostic conformance suite every ``Store`` backend passes unchanged, split by capability —
``SourceStore`` (``store_conformance_sources``: ``WriteTests``, ``DeleteTests``, ``CurationTests``, ``CueTests``,
``GenerationTests``), ``LaneStore`` (``store_conformance_lanes``: ``LexicalTests``, ``AddressTests``,
``TrigramTests``, ``DenseTests``), ``VectorStore`` (``store_conformance_vectors``: ``BindingTests``; the backlog's
claims in ``store_conformance_backlog``), batched lanes (``store_conformance_batch``) — and combined in
``StoreConformance``; the fixtures are in ``store_fixtures``.

Use it from a backend's test module::

    from footnote.testing.store_conformance import StoreConformance

    class TestMyBackend(StoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            s = open_store(...)      # a fresh, empty store
            yield s
            s.close()

Every test uses only the ``Store`` protocol (no backend SQL). Fixtures and vectors are built with
the helpers below; vectors come from the deterministic ``HashEmbedder``.
"""

from __future__ import annotations

from footnote.testing.store_conformance_lanes import AddressTests, DenseTests, LexicalTests, TrigramTests
from footnote.testing.store_conformance_sources import (
    CueTests,
    CurationTests,
    DeleteTests,
    GenerationTests,
    WriteTests,
)
from footnote.testing.store_conformance_vectors import BindingTests
from footnote.testing.store_fixtures import (
    DIM,
    EMBEDDER,
    distinct_texts,
    embed,
    embed_query,
    file_locator,
    ids,
    make_fragments,
    make_source,
    put,
)

__all__ = [
    "DIM", "EMBEDDER", "AddressTests", "BindingTests", "CueTests", "CurationTests", "DeleteTests", "DenseTests",
    "GenerationTests", "LexicalTests", "StoreConformance", "TrigramTests", "WriteTests", "distinct_texts", "embed",
    "embed_query", "file_locator", "ids", "make_fragments", "make_source", "put",
]


class StoreConformance(
    WriteTests, DeleteTests, CurationTests, CueTests, LexicalTests, AddressTests, TrigramTests, DenseTests,
    BindingTests, GenerationTests,
):
    """The whole suite: subclass it in a backend's test module and provide a ``store`` fixture that
    yields a fresh, empty Store (and closes it afterwards). Every test uses only the Store protocol."""
