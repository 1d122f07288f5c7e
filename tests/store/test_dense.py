"""The in-memory dense index: snapshots, in-place refresh, compaction, masks — against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from footnote.store.dense import DenseCache, DenseSnapshot, Row, normalise_rows

DIM = 16
KINDS = ("verse", "letter", "track_transcript")


def _rows(keys: range | list[int], rng: np.random.Generator) -> tuple[list[Row], dict[int, np.ndarray]]:
    vecs = normalise_rows(rng.standard_normal((len(keys), DIM)))
    rows = [(k, f"f{k}", KINDS[k % 3], vecs[i].tobytes()) for i, k in enumerate(keys)]
    return rows, {k: vecs[i] for i, k in enumerate(keys)}


def _check(snap: DenseSnapshot, truth: dict[int, np.ndarray], rng: np.random.Generator) -> None:
    keys = sorted(truth)
    mat = np.vstack([truth[k] for k in keys]) if keys else np.zeros((0, DIM), np.float32)
    assert snap.size == len(keys)
    for _ in range(3):
        q = normalise_rows(rng.standard_normal((1, DIM)))[0]
        for kinds in (None, ["verse"], ["letter", "track_transcript"]):
            allowed = [i for i, k in enumerate(keys) if kinds is None or KINDS[k % 3] in kinds]
            cos = mat[allowed] @ q if allowed else np.zeros(0)
            want = [f"f{keys[allowed[i]]}" for i in np.argsort(-cos, kind="stable")[:7]]
            hits = snap.search(q, 7, kinds)
            assert [h.fragment_id for h in hits] == want
            np.testing.assert_allclose([h.score for h in hits], np.sort(cos)[::-1][:7], atol=1e-5)


def test_refresh_in_place_and_compaction_match_brute_force() -> None:
    rng = np.random.default_rng(0)
    rows, truth = _rows(range(1, 301), rng)
    snap = DenseSnapshot.build(1, DIM, len(rows), [rows[:100], rows[100:]])
    _check(snap, truth, rng)
    next_key = 301
    old_views = []
    for gen in range(2, 30):
        # delete a few, add a few (keys only grow), sometimes many
        gone = rng.choice(sorted(truth), size=min(len(truth), int(rng.integers(0, 40))), replace=False)
        for k in gone:
            del truth[int(k)]
        add = int(rng.integers(0, 60)) if gen % 7 else 1500  # every 7th: overflow the spare capacity
        new_rows, new_truth = _rows(list(range(next_key, next_key + add)), rng)
        next_key += add
        truth.update(new_truth)
        current = np.array(sorted(truth), dtype=np.int64)
        missing = snap.missing_keys(current)
        assert sorted(missing.tolist()) == sorted(new_truth)
        before = (snap, [h.fragment_id for h in snap.search(np.ones(DIM, np.float32) / 4, 5)])
        snap = snap.refreshed(gen, current, [new_rows])
        old_views.append(before)
        _check(snap, truth, rng)
    # earlier snapshots are unchanged by later in-place appends
    for old, hits in old_views[-5:]:
        assert [h.fragment_id for h in old.search(np.ones(DIM, np.float32) / 4, 5)] == hits


def test_everything_deleted_and_empty() -> None:
    rng = np.random.default_rng(1)
    rows, _ = _rows(range(1, 11), rng)
    snap = DenseSnapshot.build(1, DIM, 10, [rows])
    gone = snap.refreshed(2, np.empty(0, dtype=np.int64), [])
    assert gone.size == 0 and gone.search(np.ones(DIM, np.float32), 5) == []
    empty = DenseSnapshot.empty(3, DIM)
    assert empty.search(np.ones(DIM, np.float32), 5) == []
    assert snap.search(np.ones(DIM, np.float32), 0) == []
    assert snap.search(np.ones(DIM, np.float32), 3, kinds=["unknown-kind"]) == []


def test_filtered_searches_share_the_product_without_changing_it() -> None:
    """The lanes search one query vector once per kind group: the product is memoised and shared, so a
    kind-filtered search must not mask it for the unfiltered one after it (nor a filter's memoised rows
    leak into another filter's)."""
    rng = np.random.default_rng(5)
    rows, truth = _rows(range(1, 31), rng)
    snap = DenseSnapshot.build(1, DIM, 30, [rows])
    q = normalise_rows(rng.standard_normal((1, DIM)))[0]
    keys = sorted(truth)
    cos = {f"f{k}": float(truth[k] @ q) for k in keys}
    for kinds in (["verse"], None, ["letter"], ["verse"], None, ["verse", "letter", "track_transcript"]):
        hits = snap.search(q, 30, kinds)
        want = sorted((f for f in cos if kinds is None or KINDS[int(f[1:]) % 3] in kinds), key=lambda f: -cos[f])
        assert [h.fragment_id for h in hits] == want
        np.testing.assert_allclose([h.score for h in hits], [cos[f] for f in want], atol=1e-5)


def test_snapshot_matrix_is_read_only() -> None:
    rows, _ = _rows(range(1, 4), np.random.default_rng(2))
    snap = DenseSnapshot.build(1, DIM, 3, [rows])
    with pytest.raises(ValueError):
        snap.matrix[0, 0] = 1.0


def test_cache_loads_once_per_generation() -> None:
    calls: list[DenseSnapshot | None] = []
    cache = DenseCache()

    def load(prev: DenseSnapshot | None) -> DenseSnapshot:
        calls.append(prev)
        return DenseSnapshot.empty(gen, DIM)

    gen = 1
    a = cache.get(1, load)
    assert cache.get(1, load) is a and len(calls) == 1
    gen = 2
    b = cache.get(2, load)
    assert calls == [None, a] and b.generation == 2
