"""The ``footnote`` command line. Errors are translated once here (``FootnoteError.exit_code``):
0 all well, 1 some input failed, 2 usage error.

Every command takes ``--store URL`` (env FOOTNOTE_STORE), ``--config FILE`` and ``--json``.
"""

from __future__ import annotations

import logging
import sys

import click

# Re-exported: what commands share lives in footnote.commands.base.
from footnote.commands.base import EMBEDDER_NAMES, Ctx, ProgressBar, common_options, langs_option


@click.group()
@click.option("-v", "--verbose", count=True, help="More logging (-v info, -vv debug).")
@click.version_option(package_name="footnote")
def main(verbose: int) -> None:
    """Footnote: answers that cite their sources — or say they don't know."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


# Commands live in footnote.commands.* (one module per command family) and register here.
def _register() -> None:
    from footnote.commands import register_all

    register_all(main)


_register()

__all__ = ["EMBEDDER_NAMES", "Ctx", "ProgressBar", "common_options", "langs_option", "main"]

if __name__ == "__main__":  # pragma: no cover
    main()
