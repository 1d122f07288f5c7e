"""``asr``: speech recognition of recordings without a transcript."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from footnote.settings.base import _Frozen


class AsrSettings(_Frozen):
    """Offline speech recognition of recordings that have no transcript (`footnote ingest --transcribe`)."""

    enabled: bool = Field(
        False,
        description="Transcribe audio files that have no transcript when ingesting (as `--transcribe`; "
        "`--no-transcribe` overrides). Off: such files are reported as unpaired and skipped.",
    )
    model: str = Field(
        "whisper-base",
        description="Installed speech model (a folder under models.dir, `footnote models install whisper-base`).",
    )
    language: str = Field(
        "",
        description="Language spoken in the recordings (en, ru, …); empty: detected per recording from its "
        "first 30 s (unreliable on short clips). `ingest --lang` wins.",
    )
    beam_size: int = Field(5, ge=1, description="Beam search width (1: greedy, faster, a little less accurate).")
    compute_type: str = Field("int8", description="CTranslate2 compute type on the CPU: int8, int8_float32, float32.")
    threads: int = Field(0, ge=0, description="CPU threads for recognition (0: every core this process may use).")
    nice: int = Field(
        10, ge=0, le=19,
        description="CPU niceness the ingest process takes when it starts transcribing, so a server on the "
        "same machine answers first (0: none).",
    )
    vad: bool = Field(True, description="Skip silence with the Silero voice-activity detector shipped in faster-whisper.")
    window_s: int = Field(
        600, ge=60,
        description="Audio decoded and recognised a piece at a time (seconds): bounds memory for long "
        "recordings and is the resume step after an interruption.",
    )
    max_audio_s: int = Field(
        6 * 3600, ge=1,
        description="Longest recording transcribed (seconds); a longer one fails alone with its length.",
    )
    truncated_tolerance_s: float = Field(
        2.0, ge=0,
        description="A recording whose decoded audio ends more than this many seconds before the length its "
                    "header announces is logged as truncated; its recorded duration is the decoded one.",
    )
    cue_max_ms: int = Field(
        8_000, description="A machine cue ends at a punctuation mark, a pause, or after this long (milliseconds)."
    )
    cue_gap_ms: int = Field(
        400, description="A pause between two words at least this long ends a machine cue (milliseconds)."
    )
    cache_dir: str = Field(
        "~/.cache/footnote/asr",
        description="Where recognised transcripts are kept by audio content and settings (finished ones and "
        "the part of an interrupted one), so a re-run or a resumed run does not recognise them again.",
    )

    @property
    def cache_path(self) -> Path:
        """``cache_dir`` with ``~`` expanded."""
        return Path(self.cache_dir).expanduser()
