"""The one typed settings tree. Every threshold and model name lives here, each with a description.

Loaded from defaults, then a TOML file (``--config``, env ``FOOTNOTE_CONFIG``, or ``./footnote.toml``
when present), then environment variables for the few values operators set per deployment
(``FOOTNOTE_STORE``, ``FOOTNOTE_API_KEY``, ``FOOTNOTE_EMBEDDER``, ``FOOTNOTE_LLM_BASE_URL``,
``FOOTNOTE_LLM_API_KEY``, ``FOOTNOTE_LLM_MODEL``: every model role without a model of its own;
``FOOTNOTE_SYNTHESIZER_BASE_URL``: the synthesizer alone, e.g. ``llama-cpp://qwen2.5-coder-1.5b``;
``FOOTNOTE_ANSWER_CHECK_BASE_URL``: the check model alone; ``FOOTNOTE_TURN_TIMEOUT_S``: the turn's deadline;
``FOOTNOTE_EMBEDDER_API_KEY``). Thresholds that depend on the embedding model's cosine scale are keyed by
embedder name (``gate.by_embedder``), and inside that by query/corpus language pair where measured.

One module per section (``settings/answer.py`` is ``[answer]``, ``settings/extractive.py`` its nested
``[answer.extractive]``, …); the values measured per embedder (gate, memory, support, fusion) are package
data, ``settings/measured/<embedder>.toml`` (``settings/measured.py``); loading and provenance in ``settings/loader.py``. Import from here.
"""

from __future__ import annotations

from footnote.settings.answer import AnswerSettings
from footnote.settings.asr import AsrSettings
from footnote.settings.backlog import BacklogSettings
from footnote.settings.base import DEFAULT_STORE
from footnote.settings.conversation import ConversationSettings
from footnote.settings.corpus import ChunkSettings, CorpusSettings
from footnote.settings.embedder import EmbedderSettings, OpenAIEmbedderSettings
from footnote.settings.extractive import ExtractiveSettings
from footnote.settings.fusion import FusionSettings, FusionWeights
from footnote.settings.gate import SEED_EMBEDDER, SEED_THRESHOLDS, EmbedderGate, GateSettings
from footnote.settings.gemma import GemmaSettings
from footnote.settings.loader import (
    LLM_ENV,
    MODEL_ROLES,
    Resolved,
    default_config_path,
    load_settings,
    resolve_settings,
    write_settings_file,
)
from footnote.settings.memory import EmbedderMemory, MemorySettings, MemoryThreshold
from footnote.settings.models import (
    EMBEDDINGGEMMA,
    GEMMA_VERSIONS,
    LOCAL_SCHEME,
    QWEN_CODER_1_5B,
    WHISPER_BASE,
    ChatModelSettings,
    InstallableModel,
    ModelPart,
    ModelsSettings,
    SplitModel,
)
from footnote.settings.ocr import OcrSettings
from footnote.settings.renamed import (
    RENAMED_PREFIXES,
    RETIRED_KEYS,
    current_key,
    renamed_key,
    upgrade_section,
    upgrade_tree,
)
from footnote.settings.rerank import RerankSettings
from footnote.settings.retrieve import RetrieveSettings
from footnote.settings.server import McpSettings, ServerSettings
from footnote.settings.store import StoreSettings
from footnote.settings.store_postgres import PostgresSettings
from footnote.settings.store_sqlite import SqliteSettings
from footnote.settings.support import (
    JudgeSettings,
    SupportSettings,
    SupportThresholds,
)
from footnote.settings.thresholds import GateThresholds, ThresholdChoice, ThresholdSource
from footnote.settings.tree import Settings

__all__ = [
    "DEFAULT_STORE",
    "EMBEDDINGGEMMA",
    "GEMMA_VERSIONS",
    "LLM_ENV",
    "LOCAL_SCHEME",
    "MODEL_ROLES",
    "QWEN_CODER_1_5B",
    "RENAMED_PREFIXES",
    "RETIRED_KEYS",
    "SEED_EMBEDDER",
    "SEED_THRESHOLDS",
    "WHISPER_BASE",
    "AnswerSettings",
    "AsrSettings",
    "BacklogSettings",
    "ChatModelSettings",
    "ChunkSettings",
    "ConversationSettings",
    "CorpusSettings",
    "EmbedderGate",
    "EmbedderMemory",
    "EmbedderSettings",
    "ExtractiveSettings",
    "FusionSettings",
    "FusionWeights",
    "GateSettings",
    "GateThresholds",
    "GemmaSettings",
    "InstallableModel",
    "JudgeSettings",
    "McpSettings",
    "MemorySettings",
    "MemoryThreshold",
    "ModelPart",
    "ModelsSettings",
    "OcrSettings",
    "OpenAIEmbedderSettings",
    "PostgresSettings",
    "RerankSettings",
    "Resolved",
    "RetrieveSettings",
    "ServerSettings",
    "Settings",
    "SplitModel",
    "SqliteSettings",
    "StoreSettings",
    "SupportSettings",
    "SupportThresholds",
    "ThresholdChoice",
    "ThresholdSource",
    "current_key",
    "default_config_path",
    "load_settings",
    "renamed_key",
    "resolve_settings",
    "upgrade_section",
    "upgrade_tree",
    "write_settings_file",
]
