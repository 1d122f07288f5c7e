"""Loading the tree: defaults ← preset ← TOML file ← environment ← flags, with where each value came from.

A preset (``settings/presets/<name>.toml``: ``fast``, ``accurate``, ``lexical``) is named by ``preset = "…"`` at the
top of the settings file or by ``FOOTNOTE_PRESET`` (which wins); it is a base the file's own keys refine."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from footnote.errors import ConfigError
from footnote.settings.presets import preset_tree
from footnote.settings.renamed import current_key, upgrade_tree
from footnote.settings.tree import Settings, _unset_embedder_name

_ENV_MAP = {
    "FOOTNOTE_STORE": "store.url",
    "FOOTNOTE_API_KEY": "server.api_key",
    "FOOTNOTE_EMBEDDER": "embedder.name",
    "FOOTNOTE_MODELS_DIR": "models.dir",
    "FOOTNOTE_SYNTHESIZER_BASE_URL": "models.synthesizer.base_url",
    "FOOTNOTE_ANSWER_CHECK_BASE_URL": "models.answer_check.base_url",
    "FOOTNOTE_TURN_TIMEOUT_S": "answer.turn_timeout_s",
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


#: Environment variables that fill every chat-model role without a model of its own.
LLM_ENV = ("FOOTNOTE_LLM_BASE_URL", "FOOTNOTE_LLM_API_KEY", "FOOTNOTE_LLM_MODEL")
MODEL_ROLES = ("router", "planner", "synthesizer", "fallback")


def _llm_env(data: dict[str, Any]) -> dict[str, str]:
    """``FOOTNOTE_LLM_*`` → dotted overrides. A role with neither a model nor a base URL of its own takes
    the environment's model and base URL; a role with its own model but no base URL takes the base URL;
    a role without a key takes the key. A role with its own base URL but no model is left alone (and is a
    startup error: :func:`footnote.models.chat.make_chat_models`)."""
    url, key, model = (os.environ.get(v, "") for v in LLM_ENV)
    out: dict[str, str] = {}
    for role in MODEL_ROLES:
        own = data["models"][role]
        if model and not own["model"] and not own["base_url"]:
            out[f"models.{role}.model"] = model
        if url and not own["base_url"]:
            out[f"models.{role}.base_url"] = url
        if key and not own["api_key"]:
            out[f"models.{role}.api_key"] = key
    return out


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        out[key] = v
    return out


class Resolved:
    """Settings and where each dotted key's value came from (``default``, ``preset``, ``file``, ``env``, ``flag``)."""

    def __init__(self, settings: Settings, sources: dict[str, str], path: Path | None, preset: str | None = None) -> None:
        self.settings = settings
        self.sources = sources
        self.path = path
        #: the preset in effect, if any
        self.preset = preset

    def source_of(self, dotted: str) -> str:
        """The origin of a key's value: its own, else that of the latest-layer key set inside it (a table
        field such as ``corpus.book_aliases`` set key by key), else ``default``."""
        if dotted in self.sources:
            return self.sources[dotted]
        inside = {v for k, v in self.sources.items() if k.startswith(dotted + ".")}
        for layer in ("flag", "env", "file", "preset"):
            if layer in inside:
                return layer
        return "default"


def resolve_settings(config: str | Path | None = None, *, preset: str | None = None, **overrides: Any) -> Resolved:
    """Defaults ← preset ← TOML file ← environment ← explicit dotted overrides (e.g. from CLI flags), with
    provenance. ``preset``: a preset by name (else the file's ``preset`` key, and ``FOOTNOTE_PRESET`` over both)."""
    data: dict[str, Any] = Settings().model_dump()
    sources: dict[str, str] = {}
    path = Path(config) if config else default_config_path()
    file_data: dict[str, Any] = {}
    if path is not None:
        try:
            file_data = upgrade_tree(tomllib.loads(path.read_text(encoding="utf-8")), str(path))
        except FileNotFoundError as e:
            raise ConfigError(f"{path}: settings file not found") from e
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: not valid TOML: {e}") from e
    named = file_data.pop("preset", None)
    if named is not None and not isinstance(named, str):
        raise ConfigError(f"{path}: preset must be a preset's name, e.g. preset = \"fast\"")
    chosen = os.environ.get("FOOTNOTE_PRESET") or preset or named
    preset_data: dict[str, Any] = {}
    if chosen:
        preset_data = preset_tree(chosen, f"{path}" if named == chosen else "")
        data = _merge(data, preset_data)
        sources.update({k: "preset" for k in _flatten(preset_data)})
    if file_data:
        data = _merge(data, file_data)
        sources.update({k: "file" for k in _flatten(file_data)})
    flat: dict[str, Any] = {}
    for env, dotted in _ENV_MAP.items():
        if os.environ.get(env):
            flat[dotted] = os.environ[env]
    flat.update(_llm_env(data))
    emb_key = os.environ.get("FOOTNOTE_EMBEDDER_API_KEY")
    if emb_key and not data["embedder"]["openai"]["api_key"]:
        flat["embedder.openai.api_key"] = emb_key
    sources.update({k: "env" for k in flat})
    flags = {current_key(k): v for k, v in overrides.items() if v is not None}
    flat.update(flags)
    sources.update({k: "flag" for k in flags})
    name_given = ("embedder.name" in flat or "name" in (file_data.get("embedder") or {})
                  or "name" in (preset_data.get("embedder") or {}))
    for key, value in flat.items():
        node = data
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    try:
        settings = Settings.model_validate(data)
    except ValidationError as e:
        where = f" in {path}" if path else ""
        raise ConfigError(f"invalid settings{where}: {explain(e)}") from e
    return Resolved(settings if name_given else _unset_embedder_name(settings), sources, path, chosen or None)


def explain(e: ValidationError) -> str:
    """The settings' validation errors in a line each: an unknown key with the keys it was probably meant to be,
    else the key, what is wrong and the value given (pydantic's own text without its links)."""
    from footnote.settings.keys import close_keys, dotted_keys

    known: list[str] | None = None
    lines = []
    for err in e.errors():
        key = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            known = known if known is not None else dotted_keys(Settings, sections=True)
            close = close_keys(key, known)
            hint = f" (did you mean {', '.join(close)}?)" if close else " (`footnote settings --all` lists them)"
            lines.append(f"unknown setting {key}{hint}")
        else:
            lines.append(f"{key}: {err['msg']} (given {err.get('input')!r})")
    return "; ".join(lines)


def load_settings(config: str | Path | None = None, *, preset: str | None = None, **overrides: Any) -> Settings:
    """Defaults ← preset ← TOML file ← environment ← explicit dotted overrides (e.g. from CLI flags)."""
    return resolve_settings(config, preset=preset, **overrides).settings


def write_settings_file(path: str | Path, updates: dict[str, Any]) -> None:
    """Merge ``updates`` (a nested dict) into the TOML file at ``path`` (created if missing), keeping the
    file's comments, order and formatting (tomlkit)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    p = Path(path)
    try:
        doc = tomlkit.parse(p.read_text(encoding="utf-8")) if p.exists() else tomlkit.document()
    except TOMLKitError as e:
        raise ConfigError(f"{p}: not valid TOML: {e}") from e
    _merge_into(doc, updates)
    p.write_text(tomlkit.dumps(doc), encoding="utf-8")


def _plain(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _merge_into(node: Any, updates: dict[str, Any]) -> None:
    import tomlkit

    for k, v in updates.items():
        if isinstance(v, dict):
            if k not in node or not isinstance(node[k], dict):
                node[k] = tomlkit.table()
            _merge_into(node[k], v)
        else:
            node[k] = _plain(v)
