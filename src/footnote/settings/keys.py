"""Every dotted key of the settings tree, and the keys a mistyped one was probably meant to be."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from pydantic import BaseModel


def dotted_keys(model: type[BaseModel], prefix: str = "", *, sections: bool = False) -> list[str]:
    """Every leaf key of ``model`` (sections are walked, a dict-valued field is one leaf), in declaration order;
    ``sections``: each section's own key too (``answer.extractive``)."""
    out: list[str] = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out += [f"{prefix}{name}"] if sections else []
            out += dotted_keys(ann, f"{prefix}{name}.", sections=sections)
        else:
            out.append(f"{prefix}{name}")
    return out


def close_keys(key: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The known keys ``key`` was probably meant to be: those with its last part in another section
    (``answer.max_sentences`` → ``answer.extractive.max_sentences``), else those spelled nearly alike, whole or by
    the last part within the same section (``enable_corpus_fallbak``)."""
    known = list(known)
    leaf = key.rsplit(".", 1)[-1]
    same_leaf = [k for k in known if k.rsplit(".", 1)[-1] == leaf]
    if same_leaf:
        return sorted(same_leaf)[:n]
    whole = difflib.get_close_matches(key, known, n=n, cutoff=0.8)
    if whole:
        return whole
    section = key.rsplit(".", 1)[0] if "." in key else ""
    siblings = {k.rsplit(".", 1)[-1]: k for k in known if (k.rsplit(".", 1)[0] if "." in k else "") == section}
    return [siblings[m] for m in difflib.get_close_matches(leaf, list(siblings), n=n, cutoff=0.75)]
