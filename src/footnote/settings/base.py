"""Shared pieces of the settings tree: the frozen base model and the default store path."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

DEFAULT_STORE = "./footnote-data/footnote.db"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
