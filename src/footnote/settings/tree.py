"""The root of the settings tree: one section per stage."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from footnote.settings.answer import AnswerSettings
from footnote.settings.asr import AsrSettings
from footnote.settings.backlog import BacklogSettings
from footnote.settings.base import _Frozen
from footnote.settings.conversation import ConversationSettings
from footnote.settings.corpus import ChunkSettings, CorpusSettings
from footnote.settings.embedder import EmbedderSettings
from footnote.settings.gate import GateSettings
from footnote.settings.memory import MemorySettings
from footnote.settings.models import (
    ModelsSettings,
)
from footnote.settings.ocr import OcrSettings
from footnote.settings.renamed import current_key
from footnote.settings.retrieve import (
    RetrieveSettings,
)
from footnote.settings.server import McpSettings, ServerSettings
from footnote.settings.store import StoreSettings
from footnote.settings.support import (
    JudgeSettings,
    SupportSettings,
)


class Settings(_Frozen):
    corpus: CorpusSettings = Field(default_factory=CorpusSettings, description="Kinds, groups, book aliases.")
    chunk: ChunkSettings = Field(default_factory=ChunkSettings, description="Chunker sizes.")
    store: StoreSettings = Field(default_factory=StoreSettings, description="Where fragments live.")
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings, description="Dense embeddings.")
    gate: GateSettings = Field(default_factory=GateSettings, description="Coverage gate thresholds.")
    retrieve: RetrieveSettings = Field(default_factory=RetrieveSettings, description="Lanes, cap, rerank, reserves.")
    memory: MemorySettings = Field(default_factory=MemorySettings, description="Curated memory: pinned, boost, memory notes.")
    models: ModelsSettings = Field(default_factory=ModelsSettings, description="Chat models per role.")
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description="Answering and fallback.")
    server: ServerSettings = Field(default_factory=ServerSettings, description="HTTP server.")
    backlog: BacklogSettings = Field(default_factory=BacklogSettings, description="Background embedding.")
    mcp: McpSettings = Field(default_factory=McpSettings, description="Model Context Protocol server (tools for agents).")
    conversation: ConversationSettings = Field(
        default_factory=ConversationSettings, description="Conversations: memory and follow-up questions."
    )
    support: SupportSettings = Field(default_factory=SupportSettings, description="Citation support (eval).")
    judge: JudgeSettings = Field(default_factory=JudgeSettings, description="The answer judge (`footnote judge`).")
    asr: AsrSettings = Field(
        default_factory=AsrSettings, description="Speech recognition of recordings without a transcript."
    )
    ocr: OcrSettings = Field(default_factory=OcrSettings, description="Text recognition of scanned pages and images.")

    def with_overrides(self, **dotted: Any) -> Settings:
        """A copy with dotted-path overrides, e.g. ``with_overrides(**{"store.url": "x.db"})``."""
        data = self.model_dump()
        dotted = {current_key(k): v for k, v in dotted.items()}
        for key, value in dotted.items():
            node = data
            parts = key.split(".")
            for p in parts[:-1]:
                node = node[p]
            node[parts[-1]] = value
        out = Settings.model_validate(data)
        return out if self.embedder_name_explicit or "embedder.name" in dotted else _unset_embedder_name(out)

    @property
    def embedder_name_explicit(self) -> bool:
        """Whether ``embedder.name`` was given (flag, environment, settings file, constructor) rather than
        left at its default: only a given one may differ from the embedder a store was built with."""
        return "name" in self.embedder.model_fields_set


def _unset_embedder_name(settings: Settings) -> Settings:
    """``settings`` with ``embedder.name`` at its default and marked as not given."""
    values = settings.embedder.model_dump()
    values.pop("name")
    return settings.model_copy(update={"embedder": EmbedderSettings.model_validate(values)})
