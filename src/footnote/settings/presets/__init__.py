"""Named presets: partial settings trees shipped as data files (``presets/<name>.toml``), each saying in its
comments what it trades and on what figures. A preset is the base a settings file refines
(``footnote.settings.loader``)."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from footnote.errors import ConfigError


def presets_dir() -> Path:
    return Path(str(resources.files("footnote.settings.presets")))


def preset_names() -> list[str]:
    """The presets that ship, by name."""
    return sorted(p.stem for p in presets_dir().glob("*.toml"))


def preset_tree(name: str, where: str = "") -> dict[str, Any]:
    """The settings tree of preset ``name`` (``where``: the file that named it, for the error)."""
    path = presets_dir() / f"{name}.toml"
    if "/" in name or "\\" in name or not path.is_file():
        said = f"{where}: " if where else ""
        raise ConfigError(f"{said}unknown preset {name!r} (presets: {', '.join(preset_names())}; FOOTNOTE_PRESET or "
                          "preset = '…' at the top of footnote.toml)")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:  # a broken package, not the user's doing
        raise ConfigError(f"{path}: the preset cannot be read: {e}") from e


def preset_summary(name: str) -> str:
    """The first comment line of a preset's file: what it is, in a sentence."""
    for line in (presets_dir() / f"{name}.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return name
