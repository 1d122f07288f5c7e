"""Every command module can be imported on its own, first, in a fresh interpreter (no import cycle
through :mod:`footnote.cli`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from footnote.commands import MODULES


@pytest.mark.parametrize("name", MODULES)
def test_command_module_imports_first(name: str) -> None:
    code = f"import footnote.commands.{name} as m; assert callable(m.register)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
