"""The passage vectors of corpus sentences, kept by text (:class:`SentenceVectorCache`): one cache per engine,
shared by the gate's sentence term (``retrieve/signal.py``) and the extractive answer (``answer/extractive.py``)."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from footnote.errors import Cancelled, StoreError
from footnote.models.protocols import Embedder
from footnote.settings import Settings
from footnote.store.protocol import SentenceVectorStore

log = logging.getLogger(__name__)


def sentence_key(text: str) -> str:
    """The key a sentence's vector is kept under (SHA-1 of its text)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class SentenceVectorCache:
    """Passage vectors of candidate sentences by text: a bounded LRU in memory (shared by concurrent
    turns) over the store's kept sentence vectors (:class:`SentenceVectorStore`), so a sentence is
    embedded once per store and embedder, not once per process. A store that cannot keep them (locked by
    a writer, read-only) costs only the re-embedding next time."""

    def __init__(self, size: int, kept: SentenceVectorStore | None = None, stop_every: int = 16) -> None:
        self.size = size
        self.kept = kept
        self.stop_every = max(1, stop_every)
        self._d: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        # texts one turn is embedding now: a concurrent turn that needs them waits for that turn's vectors
        # instead of embedding them again (34 first asks on a cold store embedded the same notes 34 times)
        self._inflight: dict[str, threading.Event] = {}
        self.embedded = 0  # sentences this process embedded (tests, the bench)

    def vectors(self, embedder: Embedder, texts: Sequence[str], *, keep: bool = True,
                stopped: Callable[[], bool] | None = None, expired: Callable[[], bool] | None = None,
                claim: bool = True) -> np.ndarray:
        """Passage vectors of ``texts``: from memory, else the store's kept sentence vectors, else embedded
        (and kept in the store when ``keep``: corpus sentences only, never a model's text). A text another
        turn is fetching or embedding at the moment is waited for, not embedded twice. ``stopped`` is
        checked every ``stop_every`` embedded texts: once it is true the vectors made so far are kept and
        :class:`~footnote.errors.Cancelled` is raised (a turn whose client hung up stops embedding). ``expired``
        (the turn's deadline passed) is checked as often: the texts not embedded by then get zero vectors,
        neither kept nor remembered — the turn ends in time, scoring them by their words alone. ``claim`` False (a
        warm-up going through a whole corpus): others do not wait for these texts, they embed what they need
        themselves — a search never queues behind a warm-up that reaches its passages minutes later."""
        if not texts:
            return np.zeros((0, embedder.dim), np.float32)
        found: dict[str, np.ndarray] = {}
        mine: list[str] = []
        theirs: list[tuple[str, threading.Event]] = []
        with self._lock:
            for t in dict.fromkeys(texts):
                v = self._d.get(t)
                if v is not None:
                    self._d.move_to_end(t)
                    found[t] = v
                elif (ev := self._inflight.get(t)) is not None:
                    theirs.append((t, ev))
                else:
                    if claim:
                        self._inflight[t] = threading.Event()
                    mine.append(t)
        if mine:
            try:
                found.update(self._fetch(embedder, mine, keep, stopped, expired))
            finally:
                with self._lock:  # the texts not published (a failure, the deadline): their waiters go on too
                    done = [ev for t in mine if claim and (ev := self._inflight.pop(t, None)) is not None]
                for ev in done:
                    ev.set()
        late: list[str] = []
        for t, ev in theirs:
            if not self._wait(ev, stopped, expired):
                continue  # the deadline passed while another turn embeds it: scored by its words (a zero vector)
            with self._lock:
                v = self._d.get(t)
            if v is None:  # that turn failed, or its vector was evicted already: embed it here
                late.append(t)
            else:
                found[t] = v
        if late:
            found.update(self._fetch(embedder, late, keep, stopped, expired))
        zero = np.zeros(embedder.dim, np.float32)
        return np.stack([np.asarray(found[t], dtype=np.float32) if t in found else zero for t in texts])

    def _fetch(self, embedder: Embedder, texts: list[str], keep: bool,
               stopped: Callable[[], bool] | None = None,
               expired: Callable[[], bool] | None = None) -> dict[str, np.ndarray]:
        """The store's kept vectors of ``texts``, the rest embedded (until ``expired``); all remembered."""
        got = self._kept(embedder, texts)
        self._publish(got)
        todo = [t for t in texts if t not in got]
        try:
            watched = stopped is not None or expired is not None
            step = self.stop_every if watched else max(1, len(todo))
            for i in range(0, len(todo), step):
                if stopped is not None and stopped():
                    raise Cancelled("the client went away; the turn was stopped while embedding its sentences")
                if expired is not None and expired():
                    log.warning("the turn's deadline came with %d sentences not embedded: scored by their words",
                                len(todo) - i)
                    break
                piece = todo[i : i + step]
                vecs = np.asarray(embedder.embed_passages(piece), dtype=np.float32)
                fresh = dict(zip(piece, vecs, strict=True))
                self.embedded += len(piece)
                got.update(fresh)
                if keep:
                    self._keep(embedder, fresh)
                self._publish(fresh)  # a turn waiting for one of these goes on now, not when the whole call ends
        finally:
            self._publish(got)
        return got

    def _publish(self, vectors: dict[str, np.ndarray]) -> None:
        """Remember ``vectors`` and wake whoever waits for one of them (another turn, the gate beside a warm-up)."""
        if not vectors:
            return
        with self._lock:
            woken = [ev for t in vectors if (ev := self._inflight.pop(t, None)) is not None]
            for t, v in vectors.items():
                self._d[t] = v
                self._d.move_to_end(t)
            while len(self._d) > self.size:
                self._d.popitem(last=False)
        for ev in woken:
            ev.set()

    @staticmethod
    def _wait(ev: threading.Event, stopped: Callable[[], bool] | None, expired: Callable[[], bool] | None) -> bool:
        """Wait for another caller's text; False when ``expired`` came first. ``stopped``: :class:`Cancelled`."""
        while not ev.wait(0.05):
            if stopped is not None and stopped():
                raise Cancelled("the client went away; the turn was stopped while waiting for its sentences")
            if expired is not None and expired():
                return False
        return True

    def _kept(self, embedder: Embedder, texts: list[str]) -> dict[str, np.ndarray]:
        if self.kept is None:
            return {}
        keys = {sentence_key(t): t for t in texts}
        try:
            stored = self.kept.get_sentence_vectors(embedder.name, list(keys))
        except StoreError as e:
            log.warning("sentence vectors could not be read from the store (embedding them instead): %s", e)
            return {}
        return {keys[k]: v for k, v in stored.items() if k in keys and v.shape == (embedder.dim,)}

    def _keep(self, embedder: Embedder, fresh: dict[str, np.ndarray]) -> None:
        if self.kept is None or not fresh:
            return
        try:
            self.kept.put_sentence_vectors(embedder.name, {sentence_key(t): v for t, v in fresh.items()})
        except StoreError as e:
            log.warning("sentence vectors could not be kept in the store (they are embedded again next time): %s", e)


def shared_cache(settings: Settings, store: object) -> SentenceVectorCache:
    """The engine's one sentence-vector cache (``answer.extractive.cache``), over the store's kept vectors when
    it keeps them (:class:`SentenceVectorStore`)."""
    c = settings.answer.extractive.cache
    return SentenceVectorCache(c.vectors, store if isinstance(store, SentenceVectorStore) else None,
                               c.stop_check_sentences)


__all__ = ["SentenceVectorCache", "sentence_key", "shared_cache"]
