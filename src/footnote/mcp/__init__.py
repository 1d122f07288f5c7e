"""Footnote over the Model Context Protocol: ``footnote mcp`` (stdio) and ``/mcp`` in ``footnote serve``
(streamable HTTP). See docs/mcp.md."""
