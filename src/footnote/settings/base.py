"""Shared pieces of the settings tree: the frozen base model and the default store path."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

from footnote.settings.renamed import upgrade_section

DEFAULT_STORE = "./footnote-data/footnote.db"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    #: this section's dotted path in the tree ("store"): keys renamed inside it still work (settings/renamed.py)
    section: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        if cls.section and isinstance(data, dict):
            return upgrade_section(cls.section, data)
        return data
