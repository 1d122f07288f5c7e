"""Chat model clients: an OpenAI-compatible client over httpx (OpenRouter, OpenAI, Ollama, vLLM,
llama.cpp's server — anything speaking ``POST {base_url}/chat/completions``) and, optionally, a local
llama.cpp model (``base_url = "llama-cpp://qwen2.5-coder-1.5b"`` or ``"llama-cpp:///path/to/model.gguf"``, see
:mod:`footnote.models.llama_local`).

``make_chat_models`` is called by the composition root only. A role without ``base_url`` and ``model``
has no model: ``{}`` is the first-class no-model mode (extractive answers).

Failure policy (bounded): connect errors, timeouts, HTTP 429 and 5xx are retried ``retries`` times with
a short backoff, then raise :class:`ModelTimeout` (timeouts) or :class:`ModelError` with a message that
names the role, the endpoint and what went wrong. Other 4xx are not retried. A stream is retried only
before its first delta arrives — text already handed out cannot be taken back.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import httpx

from footnote.errors import Cancelled, ConfigError, ModelError, ModelTimeout, TurnDeadline
from footnote.models.protocols import Budget, ChatMessage, ChatModel, ChoiceModel
from footnote.models.watchdog import WATCHDOG, watch_on_connect, watch_response, watchable
from footnote.redact import install_log_filters, mask_url, redact
from footnote.settings import LOCAL_SCHEME as LLAMA_CPP_SCHEME
from footnote.settings import ChatModelSettings, ModelsSettings

log = logging.getLogger(__name__)
install_log_filters()  # httpx logs every request's full URL: a base_url's user:password must not reach a log

T = TypeVar("T")

ROLES: tuple[str, ...] = ("router", "planner", "synthesizer", "fallback", "answer_check")

_RETRY_STATUS = frozenset({408, 409, 425, 429})
#: log-probabilities asked for the first token of a :meth:`OpenAIChatModel.choose` reply (OpenAI allows 0–20)
CHOICE_TOP_LOGPROBS = 10
CHARS_PER_TOKEN_CAP = 8  # a stream is also cut past max_tokens × this many characters (deltas can hold many tokens)


def check_budget(budget: Budget | None, where: str) -> None:
    """Raise ``Cancelled`` once the turn's client went away, ``TurnDeadline`` past its deadline."""
    if budget is None:
        return
    if budget.stopped():
        raise Cancelled(f"{where}: the client went away; the call was stopped")
    if budget.expired():
        limit = f" of {budget.turn_timeout_s:g} s" if budget.turn_timeout_s is not None else ""
        raise TurnDeadline(f"{where}: the turn's deadline{limit} passed (answer.turn_timeout_s)")


#: how much of an upstream's error body is read and masked before it is cut for a message
_BODY_READ = 65536


def _masked(text: str, secrets: Sequence[str], keep: int) -> str:
    """An upstream's text for a message: its secrets masked first, then cut to ``keep`` characters (cut first, a key
    straddling the cut would no longer be found)."""
    return redact(text[:_BODY_READ], secrets)[:keep]


class _Retryable(Exception):
    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


class OpenAIChatModel:
    """One role's model at an OpenAI-compatible endpoint. Thread-safe; counts calls and HTTP requests."""

    def __init__(self, role: str, settings: ChatModelSettings, *, client: httpx.Client | None = None) -> None:
        if not settings.configured:
            raise ConfigError(f"models.{role}: base_url and model are both needed")
        self.role = role
        self.settings = settings
        self.base_url = settings.base_url.rstrip("/")
        self.shown_url = mask_url(self.base_url)  # credentials in a base_url never reach a message
        self.name = f"{settings.model}@{self.shown_url}"
        self._client = client
        self._own_client = client is None
        self._blocking: httpx.Client | None = None  # budgeted complete(): one connection per request
        self._lock = threading.Lock()
        self.calls = 0  # logical calls (complete/stream)
        self.requests = 0  # HTTP requests including retries

    # -- plumbing ------------------------------------------------------------------------------
    def _http(self) -> httpx.Client:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = httpx.Client(timeout=httpx.Timeout(self.settings.timeout_s))
        return self._client

    def _blocking_http(self, budget: Budget | None) -> httpx.Client:
        """The client for a blocking completion. Under a watchable budget (a deadline or a stop flag)
        our own client opens a fresh connection per request (no keep-alive), so the connection hook in
        :func:`~footnote.models.watchdog.watch_on_connect` always sees the socket; an injected client is used as it is."""
        if not self._own_client or not watchable(budget):
            return self._http()
        if self._blocking is None:
            with self._lock:
                if self._blocking is None:
                    self._blocking = httpx.Client(
                        timeout=httpx.Timeout(self.settings.timeout_s),
                        limits=httpx.Limits(max_keepalive_connections=0),
                    )
        return self._blocking

    def close(self) -> None:
        if self._own_client:
            for c in (self._client, self._blocking):
                if c is not None:
                    c.close()
            self._client = self._blocking = None

    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json"}
        if self.settings.api_key:
            h["Authorization"] = f"Bearer {self.settings.api_key}"
        return h

    def _body(self, messages: Sequence[ChatMessage], *, stream: bool, response_format: dict[str, Any] | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_tokens,
            "stream": stream,
        }
        if response_format is not None:
            body["response_format"] = response_format
        return body

    def _count(self, *, call: bool) -> None:
        with self._lock:
            if call:
                self.calls += 1
            else:
                self.requests += 1

    def _where(self) -> str:
        return f"models.{self.role} ({self.settings.model} at {self.shown_url})"

    def _attempts(self) -> int:
        return max(0, self.settings.retries) + 1

    def _backoff(self, attempt: int, budget: Budget | None = None) -> None:
        delay = self.settings.retry_backoff_s * (2**attempt)
        left = budget.remaining() if budget is not None else None
        if left is not None:
            delay = min(delay, max(0.0, left))
        if delay > 0:
            time.sleep(delay)
        check_budget(budget, self._where())

    def _raise_final(self, last: _Retryable) -> None:
        msg = f"{self._where()}: {last} (after {self._attempts()} attempts)"
        if last.timeout:
            raise ModelTimeout(msg)
        raise ModelError(msg)

    def _status_error(self, resp: httpx.Response) -> str:
        """``HTTP 401: <the upstream's body>`` with any secret in the body masked (an upstream that
        echoes the key or the URL it was called with must not make us repeat it)."""
        try:
            text = resp.read().decode("utf-8", "replace")
        except httpx.HTTPError:
            text = ""
        text = _masked(text, self._secrets(), 300)
        return f"HTTP {resp.status_code}" + (f": {text.strip()}" if text.strip() else "")

    def _secrets(self) -> list[str]:
        """What an upstream's text must not repeat: the key, and the base_url (its password, in every
        encoding: :func:`~footnote.redact.secret_forms`)."""
        return [self.settings.api_key, self.base_url]

    def _timeout(self, budget: Budget | None) -> float:
        """The per-request (and per-read) timeout: ``timeout_s``, or less when the turn's deadline is nearer."""
        t = float(self.settings.timeout_s)
        left = budget.remaining() if budget is not None else None
        return t if left is None else max(0.01, min(t, left))

    # -- complete ------------------------------------------------------------------------------
    def complete(
        self, messages: Sequence[ChatMessage], *, json_schema: dict[str, Any] | None = None, budget: Budget | None = None
    ) -> str:
        """One completion (content text). With ``json_schema`` the endpoint is asked for JSON
        (``response_format`` json_schema; an endpoint that rejects it is asked for json_object, then
        for plain text). The reply is returned as text: parse it with :func:`extract_json`."""
        self._count(call=True)
        formats: list[dict[str, Any] | None] = [None]
        if json_schema is not None:
            formats = [
                {"type": "json_schema", "json_schema": {"name": "reply", "schema": json_schema, "strict": False}},
                {"type": "json_object"},
                None,
            ]
        return self._post(messages, formats, budget, {}, self._content)

    def choose(self, messages: Sequence[ChatMessage], options: Sequence[str], *,
               budget: Budget | None = None) -> dict[str, float]:
        """How likely the model's reply starts with each of ``options`` (one word each, e.g. "yes", "no"), from
        the first token's top log-probabilities (temperature 0, one token); the shares are over ``options``
        alone and sum to 1. An endpoint that sends no log-probabilities is read by the word it replied (1 for
        that option); a reply that is none of them gives ``{}``."""
        self._count(call=True)
        extra = {"max_tokens": 1, "temperature": 0.0, "logprobs": True, "top_logprobs": CHOICE_TOP_LOGPROBS}
        return self._post(messages, [None], budget, extra, lambda resp: self._choice(resp, options))

    def _choice(self, resp: httpx.Response, options: Sequence[str]) -> dict[str, float]:
        try:
            data = resp.json()
            choice = data["choices"][0]
            content = str((choice.get("message") or {}).get("content") or "")
            firsts = ((choice.get("logprobs") or {}).get("content") or [])[:1]
            top = [(str(t["token"]), float(t["logprob"])) for t in (firsts[0].get("top_logprobs") or [])] if firsts else []
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
            raise ModelError(f"{self._where()}: malformed reply ({type(e).__name__}): "
                             f"{_masked(resp.text, self._secrets(), 200)!r}") from e
        return choice_shares(top, content, options)

    def _post(self, messages: Sequence[ChatMessage], formats: list[dict[str, Any] | None], budget: Budget | None,
              extra: dict[str, Any], parse: Callable[[httpx.Response], T]) -> T:
        """One blocking request with its retries; ``formats``: response formats to try in turn when the endpoint
        rejects one (HTTP 400); ``extra``: body fields that override the role's; ``parse`` reads a 200 reply."""
        last: _Retryable | None = None
        fmt_i = 0
        attempt = 0
        while attempt < self._attempts():
            check_budget(budget, self._where())
            body = self._body(messages, stream=False, response_format=formats[fmt_i]) | extra
            watched: list[int] = []
            try:
                self._count(call=False)
                resp = self._blocking_http(budget).post(
                    f"{self.base_url}/chat/completions", json=body, headers=self._headers(), timeout=self._timeout(budget),
                    extensions=watch_on_connect(budget, watched),
                )
            except httpx.TimeoutException as e:
                check_budget(budget, self._where())
                last = _Retryable(f"timed out after {self.settings.timeout_s:g} s ({type(e).__name__})", timeout=True)
            except httpx.TransportError as e:
                check_budget(budget, self._where())
                last = _Retryable(f"cannot reach the endpoint: {type(e).__name__}: {redact(str(e), self._secrets())}")
            else:
                if resp.status_code == 400 and fmt_i + 1 < len(formats):
                    log.info("%s rejected response_format %s; trying a simpler one", self._where(), formats[fmt_i])
                    fmt_i += 1
                    continue  # not a retry: a different request
                if resp.status_code >= 500 or resp.status_code in _RETRY_STATUS:
                    last = _Retryable(self._status_error(resp))
                elif resp.status_code >= 400:
                    raise ModelError(f"{self._where()}: {self._status_error(resp)}")
                else:
                    return parse(resp)
            finally:
                for key in watched:
                    WATCHDOG.unwatch(key)
            log.warning("%s: %s (attempt %d of %d)", self._where(), last, attempt + 1, self._attempts())
            if attempt + 1 < self._attempts():
                self._backoff(attempt, budget)
            attempt += 1
        assert last is not None
        self._raise_final(last)
        raise AssertionError("unreachable")  # pragma: no cover

    def _content(self, resp: httpx.Response) -> str:
        try:
            data = resp.json()
            content = data["choices"][0]["message"].get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
            raise ModelError(f"{self._where()}: malformed reply ({type(e).__name__}): "
                             f"{_masked(resp.text, self._secrets(), 200)!r}") from e
        return str(content or "")

    # -- stream --------------------------------------------------------------------------------
    def stream(self, messages: Sequence[ChatMessage], *, budget: Budget | None = None) -> Iterator[str]:
        """Text deltas from an SSE stream (``data: {...}`` chunks, ``data: [DONE]``). Bounded here, not
        only by the endpoint: the turn's ``budget`` is checked at every delta and a watchdog shuts the
        connection once it runs out (so a stalled read ends at once), and the stream is cut past
        ``max_tokens`` deltas (or ``max_tokens × CHARS_PER_TOKEN_CAP`` characters) whatever the endpoint sends."""
        self._count(call=True)
        body = self._body(messages, stream=True, response_format=None)
        last: _Retryable | None = None
        cap = max(1, self.settings.max_tokens)
        for attempt in range(self._attempts()):
            check_budget(budget, self._where())
            started = False
            try:
                self._count(call=False)
                with self._http().stream(
                    "POST", f"{self.base_url}/chat/completions", json=body, headers=self._headers(),
                    timeout=self._timeout(budget),
                ) as resp:
                    if resp.status_code >= 500 or resp.status_code in _RETRY_STATUS:
                        last = _Retryable(self._status_error(resp))
                    elif resp.status_code >= 400:
                        raise ModelError(f"{self._where()}: {self._status_error(resp)}")
                    else:
                        watch = watch_response(resp, budget)
                        try:
                            chars = 0
                            for deltas, delta in enumerate(_sse_deltas(resp.iter_lines(), self._where(), self._secrets()), 1):
                                check_budget(budget, self._where())
                                chars += len(delta)
                                if deltas > cap or chars > cap * CHARS_PER_TOKEN_CAP:
                                    raise ModelError(
                                        f"{self._where()}: the stream ran past max_tokens = {cap} (the endpoint did "
                                        "not stop; cut here)"
                                    )
                                started = True
                                yield delta
                            # the watchdog's shutdown reads as a clean end of a close-delimited body
                            check_budget(budget, self._where())
                        finally:
                            if watch is not None:
                                WATCHDOG.unwatch(watch)
                        return
            except httpx.TimeoutException as e:
                check_budget(budget, self._where())
                if started:
                    raise ModelTimeout(f"{self._where()}: stream stalled past {self.settings.timeout_s:g} s") from e
                last = _Retryable(f"timed out after {self.settings.timeout_s:g} s ({type(e).__name__})", timeout=True)
            except httpx.TransportError as e:
                check_budget(budget, self._where())
                if started:
                    raise ModelError(f"{self._where()}: stream broke: {type(e).__name__}: {redact(str(e), self._secrets())}") from e
                last = _Retryable(f"cannot reach the endpoint: {type(e).__name__}: {redact(str(e), self._secrets())}")
            log.warning("%s: %s (attempt %d of %d)", self._where(), last, attempt + 1, self._attempts())
            if attempt + 1 < self._attempts():
                self._backoff(attempt, budget)
        assert last is not None
        self._raise_final(last)


def _sse_deltas(lines: Iterator[str], where: str, secrets: Sequence[str] = ()) -> Iterator[str]:
    for line in lines:
        line = line.strip()
        if not line or line.startswith(":") or not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            return
        try:
            data = json.loads(payload)
        except ValueError as e:
            raise ModelError(f"{where}: malformed stream chunk {redact(payload[:120], secrets)!r}") from e
        if isinstance(data, dict) and data.get("error"):
            raise ModelError(f"{where}: error in stream: {_masked(str(data['error']), secrets, 200)}")
        try:
            choice = data["choices"][0]
        except (KeyError, IndexError, TypeError):
            continue
        delta = choice.get("delta") or choice.get("message") or {}
        text = delta.get("content") if isinstance(delta, dict) else None
        if text:
            yield str(text)


def choice_shares(top: Sequence[tuple[str, float]], content: str, options: Sequence[str]) -> dict[str, float]:
    """Each option's share of the probability the first token's ``top`` (token, log-probability) pairs give the
    options (a token counts for an option when it is the option's word, any case, spaces and punctuation aside);
    without ``top``, the ``content`` the model replied counts 1 for the option it starts with. ``{}``: none."""
    def word(text: str) -> str:  # a tokenizer's own word-start marks too ("▁yes", "Ġyes")
        return text.strip().lstrip("▁Ġ").strip(".,!:;\"'*").lower()

    wanted = {word(o): o for o in options}
    mass = dict.fromkeys(options, 0.0)
    for token, logprob in top:
        o = wanted.get(word(token))
        if o is not None and not math.isnan(logprob):  # a probability is at most 1: a log-probability above 0 is 0
            mass[o] += math.exp(min(logprob, 0.0))
    total = sum(mass.values())
    if total <= 0.0:
        first = word(content.split(maxsplit=1)[0]) if content.split() else ""
        if first not in wanted:
            return {}
        return {o: float(o == wanted[first]) for o in options}
    return {o: m / total for o, m in mass.items()}


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The JSON value in a model's reply, tolerating code fences and prose around it.

    Raises :class:`ModelError` when no JSON object or array can be found."""
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for c in candidates:
        try:
            return json.loads(c)
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
            except ValueError:
                continue
            return value
    raise ModelError(f"the model's reply holds no JSON: {text[:160]!r}")


def complete_parsed(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    parse: Callable[[str], T],
    *,
    json_schema: dict[str, Any] | None,
    attempts: int,
    retry_on: type[ModelError] = ModelError,
) -> tuple[T, int]:
    """Ask ``model`` until ``parse`` accepts its reply: the parsed value and the number of calls made.
    A reply ``parse`` rejects with ``retry_on`` is logged and asked again, ``attempts`` calls in all
    (at least one); then the last rejection is raised. Errors of the call itself are not retried here."""
    last: ModelError | None = None
    for i in range(max(1, attempts)):
        reply = model.complete(messages, json_schema=json_schema)
        try:
            return parse(reply), i + 1
        except retry_on as e:
            log.warning("%s (attempt %d)", e.message, i + 1)
            last = e
    assert last is not None
    raise last


class CountingChatModel:
    """Wraps a model for one turn: counts its calls (each ``complete`` or ``stream`` is one) and hands
    every call the turn's budget (deadline, stop flag)."""

    def __init__(self, inner: ChatModel, counter: list[int], budget: Budget | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self._counter = counter
        self.budget = budget

    def complete(
        self, messages: Sequence[ChatMessage], *, json_schema: dict[str, Any] | None = None, budget: Budget | None = None
    ) -> str:
        self._counter[0] += 1
        b = budget or self.budget
        check_budget(b, f"models ({self.name})")
        return self.inner.complete(messages, json_schema=json_schema, budget=b)

    def choose(self, messages: Sequence[ChatMessage], options: Sequence[str], *,
               budget: Budget | None = None) -> dict[str, float]:
        """The inner model's :meth:`OpenAIChatModel.choose` (counted, under the turn's budget)."""
        if not isinstance(self.inner, ChoiceModel):
            raise ModelError(f"models ({self.name}): this model cannot weigh a choice")
        self._counter[0] += 1
        b = budget or self.budget
        check_budget(b, f"models ({self.name})")
        return self.inner.choose(messages, options, budget=b)

    def stream(self, messages: Sequence[ChatMessage], *, budget: Budget | None = None) -> Iterator[str]:
        self._counter[0] += 1
        b = budget or self.budget
        check_budget(b, f"models ({self.name})")
        return self.inner.stream(messages, budget=b)


def shown_name(model: ChatModel) -> str:
    """The model's name as a reader may see it: the configured model id, never its endpoint (whose URL may name a
    user, ``http://alice:***@host``, or an internal host); a local model's ``llama-cpp:NAME``."""
    inner = model.inner if isinstance(model, CountingChatModel) else model
    return inner.settings.model if isinstance(inner, OpenAIChatModel) else inner.name


def make_chat_model(role: str, settings: ChatModelSettings, models: ModelsSettings | None = None,
                    local: dict[Path, Any] | None = None) -> ChatModel:
    """The model for one configured role. ``models``: where ``llama-cpp://NAME`` finds installed models;
    ``local``: llama.cpp servers by GGUF file, shared by the roles that name the same one."""
    if settings.base_url.startswith(LLAMA_CPP_SCHEME):
        from footnote.models.llama_local import LlamaCppChatModel, resolve_gguf

        ms = models or ModelsSettings()
        path = resolve_gguf(settings.base_url, ms.dir_path,
                            sorted(n for n, m in ms.split_installable.items() if m.runtime == "gguf"))
        shared = local.get(path) if local is not None else None
        model = LlamaCppChatModel(role, settings, path=path, shared=shared)
        if local is not None:
            local[path] = model.server
        return model
    if not settings.base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"models.{role}.base_url {settings.base_url!r}: expected http(s)://…/v1, llama-cpp://NAME (an installed "
            "local model) or llama-cpp:///path/model.gguf"
        )
    return OpenAIChatModel(role, settings)


def make_chat_models(settings: ModelsSettings) -> dict[str, ChatModel]:
    """A model per configured role (``router``, ``planner``, ``synthesizer``, ``fallback``); ``{}`` when none."""
    out: dict[str, ChatModel] = {}
    local: dict[Path, Any] = {}  # one llama.cpp server per GGUF file, shared by roles
    for role in ROLES:
        s: ChatModelSettings = getattr(settings, role)
        if s.base_url and not s.model and not s.base_url.startswith(LLAMA_CPP_SCHEME):
            raise ConfigError(
                f"models.{role}: base_url {s.base_url!r} is set but no model name: set models.{role}.model, or "
                "FOOTNOTE_LLM_MODEL (with FOOTNOTE_LLM_BASE_URL it configures every role without a model of its own)"
            )
        if s.model and not s.base_url:
            raise ConfigError(
                f"models.{role}: model {s.model!r} is set but no base_url: set models.{role}.base_url "
                "(or FOOTNOTE_LLM_BASE_URL)"
            )
        if not s.configured:
            continue
        out[role] = make_chat_model(role, s, settings, local)
    return out
