"""Keys that moved into nested sections. An old key still works wherever a key is given — a settings file,
an override (``--set``, ``Settings.with_overrides``, ``Engine.from_settings``) — with a warning that names
the new one; ``footnote settings`` shows only the new keys."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

#: (old dotted prefix, new dotted prefix): ``answer.extractive_min_similarity`` is now
#: ``answer.extractive.min_similarity``.
RENAMED_PREFIXES: tuple[tuple[str, str], ...] = (
    ("answer.extractive_", "answer.extractive."),
    ("store.pg_", "store.postgres."),
    ("store.hnsw_", "store.postgres.hnsw_"),
    ("store.sqlite_", "store.sqlite."),
    ("retrieve.rerank_", "retrieve.rerank."),
    ("retrieve.fusion_", "retrieve.fusion."),
    ("embedder.gemma_", "embedder.gemma."),
)


#: Keys retired with the comparison they switched (the measured winner is always used now): read, ignored, warned.
RETIRED_KEYS: dict[str, str] = {
    "store.postgres.lexical_one_statement": "both lexical lanes of a query always run as one statement",
}


def renamed_key(dotted: str) -> str | None:
    """The current key for an old one, else None."""
    for old, new in RENAMED_PREFIXES:
        if dotted.startswith(old) and len(dotted) > len(old):
            return new + dotted[len(old):]
    return None


def current_key(dotted: str, where: str = "", *, warn: bool = True) -> str:
    """``dotted`` as it is named now, warning once per use when it was renamed."""
    new = renamed_key(dotted)
    if new is None:
        return dotted
    if warn:
        log.warning("setting %s%s is deprecated: it is now %s", dotted, f" ({where})" if where else "", new)
    return new


def upgrade_tree(data: dict[str, Any], where: str = "") -> dict[str, Any]:
    """A nested settings table (a parsed TOML file) with every renamed key moved to where it lives now."""
    out = _copy(data)
    for old, _ in RENAMED_PREFIXES:
        old_parts = old.rstrip("_").split(".")
        section, stem = old_parts[:-1], old_parts[-1] + "_"
        node = _walk(out, section)
        if node is None:
            continue
        for key in [k for k in node if isinstance(k, str) and k.startswith(stem) and len(k) > len(stem)]:
            target = current_key(".".join([*section, key]), where).split(".")
            dest = out
            for p in target[:-1]:
                nxt = dest.setdefault(p, {})
                if not isinstance(nxt, dict):
                    break
                dest = nxt
            else:
                dest.setdefault(target[-1], node.pop(key))
    return out


def upgrade_section(section: str, data: dict[str, Any]) -> dict[str, Any]:
    """The fields given to one section (``store``: a constructor's keywords, a table) with the keys renamed
    inside it moved to where they live now (``pg_pool_size`` → ``postgres.pool_size``)."""
    head = section + "."
    out = data
    for key in [k for k in data if isinstance(k, str) and current_key(head + k, warn=False) in RETIRED_KEYS]:
        if out is data:
            out = dict(data)
        out.pop(key)
        log.warning("setting %s is retired and ignored: %s", head + key, RETIRED_KEYS[current_key(head + key, warn=False)])
    for old, _ in RENAMED_PREFIXES:
        if not old.startswith(head):
            continue
        stem = old[len(head):]
        for key in [k for k in out if isinstance(k, str) and k.startswith(stem) and len(k) > len(stem)]:
            if out is data:
                out = dict(data)
            parts = current_key(head + key).split(".")[len(section.split(".")):]
            node = out
            for part in parts[:-1]:
                child = node.get(part)
                child = dict(child) if isinstance(child, dict) else {} if child is None else child
                if not isinstance(child, dict):  # already a model instance: leave the old key to fail loudly
                    break
                node[part] = child
                node = child
            else:
                node.setdefault(parts[-1], out.pop(key))
    return out


def _walk(data: dict[str, Any], parts: list[str]) -> dict[str, Any] | None:
    node: Any = data
    for p in parts:
        node = node.get(p) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def _copy(data: dict[str, Any]) -> dict[str, Any]:
    return {k: _copy(v) if isinstance(v, dict) else v for k, v in data.items()}
