"""Footnote: answers that cite their sources — or say they don't know."""

__version__ = "0.1.0"
