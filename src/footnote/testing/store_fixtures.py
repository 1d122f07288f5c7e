"""The conformance suite's fixtures: sources and fragments of every locator type, deterministic vectors (the
``HashEmbedder``), distinct texts — shared by every capability's mixins (``footnote.testing.store_conformance``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from footnote.models.embedders import HashEmbedder
from footnote.records.fragments import (
    FileLocator,
    Fragment,
    Locator,
    Source,
    sha256_bytes,
    sha256_text,
)
from footnote.store.protocol import Store

#: Dimension of the vectors the suite writes (any dimension must work).
DIM = 64
EMBEDDER = "hash"

_embedder = HashEmbedder(DIM)


# --- helpers ------------------------------------------------------------------------------------


def make_source(
    source_id: str,
    *,
    kind: str = "letter",
    lang: str = "en",
    original: bytes | None = None,
    title: str | None = None,
    version: str = "1",
    meta: dict[str, str] | None = None,
) -> tuple[Source, bytes]:
    """A source and its original bytes (default: bytes derived from the id and version)."""
    data = original if original is not None else f"original of {source_id} v{version}".encode()
    src = Source(
        id=source_id,
        kind=kind,
        title=title or f"Title of {source_id}",
        lang=lang,
        content_hash=sha256_text(f"{source_id}:{version}"),
        blob_sha256=sha256_bytes(data),
        original_name=f"{source_id}.txt",
        media_type="text/plain",
        origin=f"/corpus/{source_id}.txt",
        meta=meta if meta is not None else {"version": version},
    )
    return src, data


def file_locator(source: Source, i: int) -> Locator:
    return FileLocator(file=source.original_name, page=i + 1, section=f"Section {i}")


def make_fragments(
    source: Source,
    texts: Sequence[str],
    *,
    kind: str | None = None,
    lang: str | None = None,
    locators: Sequence[Locator] | None = None,
) -> list[Fragment]:
    """Fragments ``{source.id}#{i}`` with the given texts (file locators unless given)."""
    out = []
    for i, text in enumerate(texts):
        loc = locators[i] if locators is not None else file_locator(source, i)
        out.append(
            Fragment(
                id=f"{source.id}#{i}",
                source_id=source.id,
                ordinal=i,
                kind=kind or source.kind,
                lang=lang or source.lang,
                text=text,
                locator=loc,
                content_hash=sha256_text(text),
            )
        )
    return out


def embed(fragments: Sequence[Fragment]) -> np.ndarray:
    """L2-normalised hash vectors (DIM) of the fragments' texts."""
    return _embedder.embed_passages([f.text for f in fragments])


def embed_query(text: str) -> np.ndarray:
    return _embedder.embed_queries([text])[0]


def put(
    store: Store, source: Source, data: bytes, fragments: Sequence[Fragment], embedded: bool = True
) -> None:
    store.put_source(source, fragments, embed(fragments) if embedded else None, data)


def ids(hits: Sequence[Any]) -> list[str]:
    return [h.fragment_id for h in hits]


_WORDS = [
    "amber",
    "basalt",
    "cedar",
    "dune",
    "ember",
    "fjord",
    "glacier",
    "harbor",
    "island",
    "jungle",
    "kelp",
    "lagoon",
    "meadow",
    "nebula",
    "oasis",
    "prairie",
    "quartz",
    "reef",
    "savanna",
    "tundra",
    "umber",
    "valley",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "anchor",
    "beacon",
    "canyon",
    "delta",
]


def distinct_texts(n: int, seed: int = 0) -> list[str]:
    """n distinct short texts made of nature words plus a unique token (no ties in dense search)."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(_WORDS, size=6, replace=False)) + f" token{seed}x{i}" for i in range(n)]
