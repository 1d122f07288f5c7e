"""Small thread-safe caches: an LRU map (query vectors, prepared notes) and a value kept for one generation of the
corpus (:class:`ByGeneration`: the books, the prose check's names)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """At most ``size`` entries; ``get`` refreshes an entry, ``put`` evicts the least recently used."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._d: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            v = self._d.get(key)
            if v is not None:
                self._d.move_to_end(key)
            return v

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)

    def __len__(self) -> int:
        return len(self._d)


class ByGeneration(Generic[V]):
    """One value, kept for the generation it was made at (docs/architecture.md, "What a turn reads, and how fresh"):
    ``get(gen, make)`` returns it while ``gen`` is the same, else makes it anew (outside the lock: concurrent turns
    are not held up). A value made for an older generation than the one kept does not replace it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: tuple[int, V] | None = None

    def get(self, gen: int, make: Callable[[], V]) -> V:
        with self._lock:
            if self._kept is not None and self._kept[0] == gen:
                return self._kept[1]
        value = make()
        with self._lock:
            if self._kept is None or gen >= self._kept[0]:
                self._kept = (gen, value)
        return value
