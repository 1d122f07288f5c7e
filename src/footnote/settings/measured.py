"""The values measured per embedder, as package data: ``settings/measured/<embedder>.toml``, one file per embedder
(a ``/`` in its name is ``--`` in the file's), each with the tables ``gate``, ``memory``, ``support`` and
``fusion`` that are the defaults of ``gate.by_embedder.<embedder>``, ``memory.by_embedder.<embedder>``,
``support.by_embedder.<embedder>`` and ``retrieve.fusion.by_embedder.<embedder>``.

``footnote calibrate --into-package`` writes a fresh fit here (:func:`write_table`) instead of into a user's
footnote.toml; the files' comments (what each was fitted on) are kept."""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from footnote.errors import ConfigError

#: the tables a file may hold, and the settings section whose ``by_embedder`` each one fills
TABLES: dict[str, str] = {"gate": "gate", "memory": "memory", "support": "support", "fusion": "retrieve.fusion"}


def measured_dir() -> Path:
    """The package's folder of measured tables."""
    return Path(str(resources.files("footnote.settings") / "measured"))


def file_name(embedder: str) -> str:
    return embedder.replace("/", "--") + ".toml"


@functools.cache
def _load(directory: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(directory).glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"{path}: the measured tables cannot be read: {e}") from e
        name = data.get("embedder")
        if not isinstance(name, str) or file_name(name) != path.name:
            raise ConfigError(f"{path}: `embedder` must name the embedder the file is named after")
        unknown = set(data) - {"embedder", *TABLES}
        if unknown:
            raise ConfigError(f"{path}: unknown table(s) {', '.join(sorted(unknown))} (known: {', '.join(TABLES)})")
        out[name] = {k: v for k, v in data.items() if k in TABLES}
    return out


def tables(table: str, directory: Path | None = None) -> dict[str, dict[str, Any]]:
    """``embedder → its `table``` for every embedder whose file has one (parsed once per process)."""
    if table not in TABLES:
        raise KeyError(table)
    loaded = _load(str(directory or measured_dir()))
    return {name: dict(t[table]) for name, t in loaded.items() if table in t}


def write_table(embedder: str, table: str, values: dict[str, Any], directory: Path | None = None) -> Path:
    """Put ``values`` as ``[table]`` of ``embedder``'s file (created if missing), keeping the file's comments and
    its other tables; returns the file."""
    import tomlkit

    if table not in TABLES:
        raise KeyError(table)
    folder = directory or measured_dir()
    path = folder / file_name(embedder)
    try:
        doc = tomlkit.parse(path.read_text(encoding="utf-8")) if path.is_file() else tomlkit.document()
        if "embedder" not in doc:
            doc.add("embedder", embedder)
        doc[table] = _without_none(values)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
        tmp.replace(path)
    except OSError as e:
        raise ConfigError(f"{path}: cannot write the measured tables ({e.strerror or e}); --into-package needs a "
                          "writable checkout (pip install -e .)") from e
    _load.cache_clear()
    return path


def _without_none(d: dict[str, Any]) -> dict[str, Any]:
    """TOML has no null: an unset optional table (``derived = None``) is left out."""
    return {k: _without_none(v) if isinstance(v, dict) else v for k, v in d.items() if v is not None}
