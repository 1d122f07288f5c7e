"""The user surface: the keys a user of Footnote sets — where things are, which models, what the corpus is,
how much to show, who may connect. ``footnote.toml.example`` names every one of them (a test checks it),
``footnote settings`` lists them (``--all`` adds the rest) and docs/settings.md puts them first.

Every other key is a tuning key: a threshold, weight, cache size or bound measured on this repository's
question sets and machines (the figures are in the docs/ page of its subsystem). A tuning key still works in
a settings file; it is simply not where a user starts."""

from __future__ import annotations

_ROLES = ("router", "planner", "synthesizer", "fallback", "judge")

#: section → its user keys, in the order ``footnote.toml.example`` gives them
USER_SURFACE: dict[str, tuple[str, ...]] = {
    "corpus": ("kinds", "default_lang", "default_text_kind", "book_aliases"),
    "chunk": ("transcript_window_ms", "transcript_overlap_ms", "text_target_chars"),
    "store": ("url",),
    "store.postgres": ("hnsw_ef_search", "pool_size"),
    "embedder": ("name", "threads", "query_threads"),
    "embedder.openai": ("base_url", "model", "api_key", "dimensions"),
    "gate": ("max_rounds",),
    "memory": ("enabled", "boost_max", "lean_keep_top"),
    "retrieve": ("keep_top", "reserve_verses", "reserve_library", "reranker"),
    "retrieve.rerank": ("url", "model", "api_key"),
    "models": ("dir",),
    **{f"models.{role}": ("base_url", "model", "api_key") + (("max_tokens", "timeout_s") if role == "synthesizer" else ())
       for role in _ROLES},
    "answer": ("enable_corpus_fallback", "corpus_description", "fallback_out_of_scope", "on_model_failure",
               "max_question_chars", "turn_timeout_s"),
    "answer.extractive": ("max_sentences",),
    "server": ("host", "port", "api_key", "public_collections", "allowed_hosts", "demo_corpus"),
    "backlog": ("ingest_workers", "serve_worker"),
    "mcp": ("enabled", "search_k", "page_size"),
    "conversation": ("keep", "rewrite_role", "followup_max_terms"),
    "support": ("in_trace",),
    "judge": ("attempts",),
    "asr": ("enabled", "model", "language", "beam_size", "threads", "nice"),
    "ocr": ("enabled", "languages", "dpi", "workers", "script_retry_below"),
}

#: every user key, dotted
USER_KEYS: frozenset[str] = frozenset(f"{section}.{key}" for section, keys in USER_SURFACE.items() for key in keys)


def is_user_key(dotted: str) -> bool:
    """Whether ``dotted`` (a current key) is on the user surface."""
    return dotted in USER_KEYS
