"""The MCP server (official ``mcp`` SDK): tools ``search``, ``ask``, ``get_source``, ``list_sources`` and
the resource ``footnote://source/{id}``, all going through one :class:`~footnote.engine.Engine`.

The engine is synchronous: each call runs in a worker thread. A :class:`~footnote.errors.FootnoteError`
becomes an MCP error carrying the engine's message: a tool result with ``isError`` (what the protocol
asks of tool failures, so the model reads the reason) and, for resources, a JSON-RPC error
(-32602 for an unknown source).

No ``from __future__ import annotations`` here: the SDK evaluates the tools' annotations, whose bounds
come from the settings (local names).
"""


import logging
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import ListResourcesResult, PaginatedRequestParams, Resource, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from footnote.engine import Engine
from footnote.errors import FootnoteError, NotFound
from footnote.mcp.tools import SOURCE_URI, FootnoteTools

log = logging.getLogger(__name__)

T = TypeVar("T")

INSTRUCTIONS = (
    "Footnote answers questions from a curated corpus (lectures with transcripts, books of verses with "
    "commentary, letters, prose, PDFs) and says plainly when the corpus has nothing. Prefer `ask` for an "
    "answer with citations; use `search` to see the ranked passages and the coverage verdict yourself; "
    "open a cited place with `get_source`. Quote only what these tools return, and cite it by its label. "
    "When `corpus_has_nothing` is true or `mode` is `not_found`, tell the user the corpus does not cover it "
    "rather than answering from memory."
)


class TranscriptSpan(BaseModel):
    """A span of a recording, as a transcript citation's locator gives it."""

    model_config = ConfigDict(extra="forbid")
    track_id: str = Field(description="The track's source id.")
    start_ms: int = Field(ge=0, description="Start of the span in milliseconds.")
    end_ms: int = Field(ge=0, description="End of the span in milliseconds.")


class BookAddress(BaseModel):
    """A structural address in a book, e.g. book 'HB', loc '3.2'."""

    model_config = ConfigDict(extra="forbid")
    book: str = Field(description="Canonical book code, as in a citation's locator.")
    loc: str = Field(description="The verse/chapter address inside the book, e.g. '2.13'.")
    label: str = Field("", description="The label as shown (optional).")


class FilePlace(BaseModel):
    """A place in a file: its page (PDFs) and section heading where known."""

    model_config = ConfigDict(extra="forbid")
    file: str = Field(description="The file name, as in a citation's locator.")
    page: int | None = Field(None, ge=1, description="1-based page (PDFs).")
    section: str | None = Field(None, description="Section heading.")


#: The engine a request reads through: the HTTP request of the MCP message (None on stdio) → the engine
#: (``footnote serve``: the collections the request's key reads; AuthError when it carries no access).
EngineFor = Callable[[Any], Engine]


class FootnoteMCP(MCPServer[Any]):
    """An MCPServer that also lists every stored source the request may read as a concrete
    ``footnote://source/{id}`` resource."""

    def __init__(self, engine_for: EngineFor, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.engine_for = engine_for

    def tools(self, request: Any) -> FootnoteTools:
        """The tools over the engine this request reads through (a FootnoteError: not allowed)."""
        return FootnoteTools(self.engine_for(request))

    async def _handle_list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        # the SDK's own handler calls list_resources() without the request: the sources listed depend on its key
        static = await super().list_resources()
        try:
            sources = await anyio.to_thread.run_sync(lambda: self.tools(ctx.request).listed_sources())
        except FootnoteError as e:
            raise ResourceError(e.message) from e
        return ListResourcesResult(resources=static + [
            Resource(uri=SOURCE_URI + s.id, name=s.id, title=s.title or s.id, mime_type="text/markdown",
                     description=f"{s.kind} ({s.lang}): the source's text with the label of each passage")
            for s in sources
        ])


def _request(ctx: Context) -> Any:
    """The HTTP request of the message (None on stdio)."""
    return ctx.request_context.request


async def _run(fn: Callable[[], T]) -> T:
    """Run an engine call in a worker thread; its FootnoteError becomes an MCP tool error."""
    try:
        return await anyio.to_thread.run_sync(fn)
    except FootnoteError as e:
        raise ToolError(f"{type(e).__name__}: {e.message}") from e


def build_server(engine: Engine, engine_for: EngineFor | None = None) -> FootnoteMCP:
    """The MCP server over ``engine`` (not started: run it on stdio or mount its HTTP app); ``engine_for``: the
    engine each request reads through (default: ``engine``)."""
    cfg = engine.settings.mcp
    server = FootnoteMCP(engine_for or (lambda _request: engine), name="footnote", title="Footnote", version="0.1.0", instructions=INSTRUCTIONS,
                         log_level="WARNING")
    readonly = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

    @server.tool(annotations=readonly, structured_output=False)
    async def search(
        query: Annotated[str, Field(description="The question or keywords, in any language; an address such as "
                                    "'HB 3.2' or a transliterated phrase works too.")],
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=cfg.search_max_k, description="How many ranked notes to return.")] = cfg.search_k,
    ) -> dict[str, Any]:
        """Search the corpus without writing an answer. Returns ranked notes (source_id, kind, locator, label,
        text, cosine score) and the coverage gate's verdict: `corpus_has_nothing` is true when nothing in the
        corpus is close (verdict `bail_out`) — then say the corpus does not cover it; `insufficient` means
        only weak matches; `abstention` ({reason, stage}: `no_relevant_content` or `insufficient_coverage`, stage
        `gate`; null when covered) says the same as a typed reason. Use the notes' source_id and locator with
        get_source to read around a passage."""
        return await _run(lambda: server.tools(_request(ctx)).search(query, k))

    @server.tool(annotations=readonly, structured_output=False)
    async def ask(
        question: Annotated[str, Field(description="The question, in any language; the answer comes in its language.")],
        ctx: Context,
        fallback: Annotated[bool | None, Field(description="On a coverage miss, answer from general knowledge under "
                                               "a disclaimer (needs a fallback model). Omit for the server's setting.")] = None,
    ) -> dict[str, Any]:
        """Answer a question only from the corpus, with citations. Returns `answer` (text citing [n]),
        `citations` (n → source_id, kind, locator, label, the cited text), `verdict`, `corpus_insufficient`
        and `mode`: `corpus` (answered from the corpus), `not_found` (the corpus has nothing: say so),
        `fallback` (general knowledge: repeat the `disclaimer`), `declined` (out of scope), and `abstention`:
        null for a corpus answer, else {reason, stage} saying why the corpus gave no answer (`no_relevant_content`,
        `insufficient_coverage`, `planner_found_nothing`, `answer_not_in_passages` — related passages, none
        answers —, `weakly_grounded`, `out_of_scope`, `index_incomplete` — the corpus is still being indexed and the
        answer may be in the part not yet searchable: ask again later). Every citation resolves to a stored passage; do not add
        claims or sources the answer does not carry."""
        return await _run(lambda: server.tools(_request(ctx)).ask(question, fallback))

    @server.tool(annotations=readonly, structured_output=False)
    async def get_source(
        source_id: Annotated[str, Field(description="A source id from search, ask or list_sources (not a file path).")],
        ctx: Context,
        locator: Annotated[TranscriptSpan | BookAddress | FilePlace | None, Field(
            description="Where in the source: a citation's locator object ({track_id, start_ms, end_ms}, "
            "{book, loc} or {file, page, section}). Omit for the source's opening passages.")] = None,
    ) -> dict[str, Any]:
        """Read a source from the store: the passage at a locator with the passages around it (the verse with
        its commentary, the PDF page's text, the transcript span with its neighbours), marked `cited`, plus
        the source's title, kind and language. Only stored sources can be read; there is no file access."""
        loc = None if locator is None else locator.model_dump(exclude_none=True)
        return await _run(lambda: server.tools(_request(ctx)).get_source(source_id, loc))

    @server.tool(annotations=readonly, structured_output=False)
    async def list_sources(
        ctx: Context,
        kind: Annotated[str | None, Field(description="Only sources of this kind, e.g. track_transcript, verse, "
                                          "commentary, prose_chapter, letter.")] = None,
        lang: Annotated[str | None, Field(description="Only sources in this language code, e.g. en, ru.")] = None,
        cursor: Annotated[str | None, Field(description="next_cursor from the previous page.")] = None,
    ) -> dict[str, Any]:
        """List the corpus's sources (source_id, kind, title, lang, resource uri), a page at a time;
        `next_cursor` is null on the last page."""
        return await _run(lambda: server.tools(_request(ctx)).list_sources(kind, lang, cursor))

    async def read_source(id: str, ctx: Context) -> str:
        try:
            return await anyio.to_thread.run_sync(lambda: server.tools(_request(ctx)).source_text(id))
        except NotFound as e:
            raise ResourceNotFoundError(e.message) from e
        except FootnoteError as e:
            raise ResourceError(e.message) from e

    server.resource(SOURCE_URI + "{+id}", name="source", mime_type="text/markdown",
                    description="A stored source's text, each passage under its citation label.")(read_source)
    return server
