"""The ground floor: the frozen records every stage passes along — fragments and sources with their
locators (``fragments``), languages (``lang``), curated memory notes (``memory``). Nothing here imports
another Footnote package but ``errors``; everything else may import from here (docs/architecture.md)."""
