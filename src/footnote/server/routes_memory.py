"""``/api/memory``: curated memory notes (list, one, add or replace, replace, remove) — the curator
view's API and the HTTP form of ``footnote memory``. Behind the API key when one is set, like every
``/api`` route; a named key sees the notes of its collections (``footnote.scoping``). Writing (add, replace,
remove) needs the admin key or a named key made with ``--write`` (then only notes whose sources all lie in its
collections), presented in a header —
a note tells readers what the editors say, so nobody who merely reaches the port may write one (the
same rule as removing a source; ``footnote memory import`` works on the store without it). A note that does not check out (unknown kind, no body, a pinned note without
sources, a source not in the store, a language that is not a tag like ``en`` or ``pt-BR``, text with a lone
surrogate) is a 422 with the reason."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from footnote.corpus.memory import make_note
from footnote.engine import Engine
from footnote.errors import InputError, NotFound
from footnote.records.memory import LANG_TAG_PATTERN, NOTE_ID_RE, MemoryNote
from footnote.server.access import require_writer
from footnote.server.state import JSON, ServerState


class NoteIn(BaseModel):
    """A note as the curator writes it (the fields of a note file's front matter, and its body)."""

    id: str = Field(min_length=1, max_length=80, description="Letters, digits, '-', '_', '.'.")
    kind: str = Field(description="pinned | boost | memory")
    body: str = Field(description="The note's text (a pinned note's is the answer; at most memory.max_body_chars).")
    title: str = Field("", max_length=200)
    triggers: list[str] = Field(default_factory=list, max_length=50, description="Questions or phrases it answers.")
    sources: list[str] = Field(default_factory=list, max_length=50, description="Source ids or addresses it rests on.")
    author: str = Field("", max_length=200)
    lang: str | None = Field(None, max_length=20, pattern=LANG_TAG_PATTERN,
                             description="Its language, a tag like en, ru, pt-BR (detected when absent).")


def _note(body: NoteIn, default_lang: str, max_chars: int) -> MemoryNote:
    return make_note(f"note {body.id!r}", note_id=body.id, kind=body.kind, body=body.body, triggers=body.triggers,
                     sources=body.sources, author=body.author, title=body.title, lang=body.lang,
                     default_lang=default_lang, max_chars=max_chars)


def make_router(state: ServerState) -> APIRouter:
    router = APIRouter(tags=["memory"])
    default_lang = state.settings.corpus.default_lang
    max_chars = state.settings.memory.max_body_chars

    def _get(engine: Engine, note_id: str) -> MemoryNote:
        """The note as the request's key sees it: one of another collection's is not there (404)."""
        note = engine.store.get_memory_note(note_id) if NOTE_ID_RE.match(note_id) else None
        if note is None:
            raise NotFound(f"no memory note {note_id!r}")
        return note

    def _may_write(request: Request) -> Engine:
        """The engine to write through; the key must write (a named key: only notes of its collections)."""
        require_writer(state.access(request), request, needs="changing curated memory",
                       refused="changes no curated memory over HTTP; use `footnote memory import` on the store")
        return state.engine_for(request)

    def _saved(stored: MemoryNote, changed: bool) -> JSON:
        return JSON({"note": stored.to_dict(), "changed": changed})

    @router.get("/api/memory")
    async def list_notes(request: Request) -> JSON:
        """Every note the key reads: id, kind, title, triggers, sources, author, updated (Unix seconds), lang, and
        missing_sources (those the store no longer holds); ``writable`` says whether this key may change notes
        (the admin key, or a named key made with --write)."""
        notes = await run_in_threadpool(state.engine_for(request).memory_summaries)
        access = state.access(request)
        return JSON({"notes": notes, "writable": access.write})

    @router.get("/api/memory/{note_id}", responses={404: {"description": "No such note."}})
    async def get_note(note_id: str, request: Request) -> JSON:
        """One note with its body."""
        return JSON((await run_in_threadpool(_get, state.engine_for(request), note_id)).to_dict())

    @router.post("/api/memory", responses={422: {"description": "The note does not check out (the reason says why)."},
                                           403: {"description": "This server has no API key, so it changes no notes."}})
    async def add_note(body: NoteIn, request: Request) -> JSON:
        """Add a note, or replace the note with this id (checked, embedded, written in one transaction).
        Only on a server with an API key, sent in a header."""
        engine = _may_write(request)
        note = _note(body, default_lang, max_chars)
        stored, changed = await run_in_threadpool(engine.put_memory_note, note)
        return _saved(stored, changed)

    @router.put("/api/memory/{note_id}", responses={404: {"description": "No such note."},
                                                    422: {"description": "The note does not check out."},
                                                    403: {"description": "This server has no API key, so it changes no notes."}})
    async def replace_note(note_id: str, body: NoteIn, request: Request) -> JSON:
        """Replace an existing note (the body's id must be the path's). Only with the API key, in a header."""
        engine = _may_write(request)
        if body.id != note_id:
            raise InputError(f"note {note_id!r}", f"the body's id {body.id!r} is not the note's id {note_id!r}")
        note = _note(body, default_lang, max_chars)

        def put() -> tuple[MemoryNote, bool]:
            _get(engine, note_id)
            return engine.put_memory_note(note)

        stored, changed = await run_in_threadpool(put)
        return _saved(stored, changed)

    @router.delete("/api/memory/{note_id}", responses={404: {"description": "No such note."}, 403: {"description": "This server has no API key, so it changes no notes."}})
    async def delete_note(note_id: str, request: Request) -> JSON:
        """Remove a note and its vectors. Only with the API key, in a header."""
        engine = _may_write(request)

        def remove() -> dict[str, Any]:
            _get(engine, note_id)
            engine.remove_memory_note(note_id)
            return {"removed": note_id}

        return JSON(await run_in_threadpool(remove))

    return router
