"""numpy's BLAS threads are limited by the composition root (``store.blas_threads``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.blas import limit_blas_threads
from footnote.engine import Engine
from footnote.settings import load_settings

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads() -> set[int]:
    return {int(p["num_threads"]) for p in threadpoolctl.threadpool_info() if p.get("user_api") == "blas"}


def test_engine_limits_blas_to_the_setting(tmp_path: Path) -> None:
    if not _blas_threads():
        pytest.skip("numpy has no BLAS threadpoolctl can see")
    try:
        threadpoolctl.threadpool_limits(limits=2, user_api="blas")
        s = load_settings(None).with_overrides(**{"store.url": f"sqlite:///{tmp_path / 'f.db'}",
                                                  "embedder.name": "hash", "store.blas_threads": 1})
        Engine.from_settings(s).close()
        assert _blas_threads() == {1}
        assert limit_blas_threads(0) is None and _blas_threads() == {1}  # 0 changes nothing
    finally:
        threadpoolctl.threadpool_limits(limits=1, user_api="blas")
