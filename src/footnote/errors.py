"""One exception hierarchy for Footnote, translated once at each edge.

The CLI maps these to exit codes (``exit_code``), the HTTP server to statuses (``http_status``).
Library code raises the most specific class and never prints.
"""

from __future__ import annotations

from pathlib import Path


class FootnoteError(Exception):
    """Base class of every error Footnote raises on purpose."""

    exit_code: int = 1
    http_status: int = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(FootnoteError):
    """Settings are invalid or inconsistent (bad URL, unknown model name, bad settings file)."""

    exit_code = 2
    http_status = 500


class UsageError(FootnoteError):
    """The caller asked for something malformed (bad argument, question too long, unknown kind)."""

    exit_code = 2
    http_status = 400


class InvalidQuestion(UsageError):
    """A question the engine will not take: empty, too long, or not valid Unicode text (a lone surrogate)."""

    http_status = 422


class NotFound(FootnoteError):
    """A source, fragment or page that the store does not hold."""

    exit_code = 1
    http_status = 404


class InputError(FootnoteError):
    """A source file cannot be loaded: it names the file (and line, where there is one) and the problem."""

    exit_code = 1
    http_status = 422

    def __init__(self, path: str | Path, problem: str, line: int | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class StoreError(FootnoteError):
    """The store cannot be opened, migrated or written (wrong URL, missing extension, dimension mismatch)."""

    exit_code = 1
    http_status = 503


class StoreMissing(StoreError):
    """A command that only reads was pointed at a store that does not exist (``ingest`` creates stores)."""

    exit_code = 2


class StoreURLError(StoreError):
    """The store URL itself is malformed (an unclosed IPv6 ``[``, a bad port, an unknown scheme, a libpq
    string): a settings error, found before any connection."""

    exit_code = 2


class ModelError(FootnoteError):
    """A model (embedder, reranker, chat model) failed: unreachable, timed out, or answered malformed output."""

    exit_code = 1
    http_status = 502


class ModelNotInstalled(ModelError):
    """A new store would be built with an embedder whose model is not installed (EmbeddingGemma, the default, on a
    fresh machine): a setup step is missing, so exit 2 before anything is written, naming the install command and
    the light alternative."""

    exit_code = 2
    http_status = 503


class OcrUnavailable(ModelError):
    """Tesseract, or a language model it was asked to read with, is not installed (``make ocr``)."""

    exit_code = 2
    http_status = 503


class OcrFailed(ModelError):
    """Tesseract failed on a page (a crash, a page past ``ocr.page_timeout_s``): its source fails alone."""

    http_status = 422


class ModelTimeout(ModelError):
    """A model call ran past its timeout after the bounded retries."""

    http_status = 504


class TurnDeadline(ModelTimeout):
    """The turn's deadline (``answer.turn_timeout_s``) passed during a model call: the turn ends with
    the best answer it has (extractive), whatever ``on_model_failure`` says."""


class Cancelled(FootnoteError):
    """The turn was stopped because its client went away."""

    exit_code = 130
    http_status = 499


class ServeError(FootnoteError):
    """The server cannot start: its address is in use, not available here, or not allowed (the OS's reason).
    Exit 3, as uvicorn's own start-up failure."""

    exit_code = 3
    http_status = 500


class AuthError(FootnoteError):
    """A request lacks the configured API key."""

    exit_code = 2
    http_status = 401


class Forbidden(FootnoteError):
    """A request this server refuses whoever sends it (e.g. deleting sources on a server without a key)."""

    exit_code = 2
    http_status = 403
