"""``footnote ingest``, ``footnote status`` (``footnote sources`` and ``remove``: commands/curate.py)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from footnote.commands.base import Ctx, common_options
from footnote.errors import InputError, UsageError


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--kind", default=None, help="Kind for sources that do not declare one (see settings.corpus.kinds).")
@click.option("--lang", default=None, help="Language for sources that do not declare one (else detected).")
@click.option("--prune", is_flag=True, help="Delete stored sources under PATHs (folders or files) that are no longer there.")
@click.option("--collection", default=None,
              help="Collection name: prefixes the ids of file sources (default: each folder's own name).")
@click.option("--audio", type=click.Path(path_type=Path), default=None,
              help="The audio file of the one transcript given (when their names differ).")
@click.option("--wait/--no-wait", default=True,
              help="Embed before returning (default), or return once the fragments are searchable lexically and "
              "leave the vectors to `footnote serve` or `footnote reembed`.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Embedding workers (default settings.backlog.ingest_workers: one per core).")
@click.option("--transcribe/--no-transcribe", default=None,
              help="Recognise the speech of audio files that have no transcript (Whisper, offline; default "
              "settings.asr.enabled). --lang forces their language, else it is detected.")
@click.option("--recognise-later", "recognise_later", is_flag=True,
              help="Do not recognise here: store each recording without a transcript and each scanned page with its "
              "original and a job, for `footnote worker` on any machine to transcribe or OCR (docs/postgres.md).")
@common_options
def ingest(ctx: Ctx, paths: tuple[Path, ...], kind: str | None, lang: str | None, prune: bool,
           collection: str | None, audio: Path | None, wait: bool, workers: int | None,
           transcribe: bool | None, recognise_later: bool) -> None:
    """Load, chunk and index the files under PATH… (searchable at once), then embed them (idempotent)."""
    from footnote.commands.ingest_view import (
        StageDisplay,
        embed_summary,
        file_lines,
        multilingual_hint,
        resume_hint,
        summary_line,
        transcribed_lines,
        unpaired_lines,
    )

    kinds = ctx.settings.corpus.kinds
    if kind is not None and kind not in kinds:
        raise UsageError(f"--kind {kind!r} is not a known kind (known: {', '.join(kinds)})")
    missing = [(p, why) for p in paths if (why := _unreadable(p))]
    if paths and len(missing) == len(paths) and not prune:  # nothing to read (with --prune a gone path is
        # how a removed file's sources are pruned): say so before a store file is created
        reasons = "; ".join(dict.fromkeys(why for _, why in missing))
        raise InputError(", ".join(str(p) for p, _ in missing),
                         f"{reasons}; nothing was ingested and no store was created")
    display = StageDisplay(sys.stderr, say_searchable=not ctx.as_json)
    with ctx.engine(create=True) as engine:
        try:
            report = engine.ingest(list(paths), kind=kind, lang=lang, prune=prune, events=display.ingest,
                                   collection=collection, audio=audio, wait=wait, workers=workers,
                                   transcribe=transcribe, recognise_later=recognise_later, warm_sentences=False)
            if wait and not report.interrupted:

                def announce() -> None:
                    display.close()
                    if not ctx.as_json:
                        click.echo("sentence vectors: making them now, so that no reader's search waits for them "
                                   "(Ctrl-C: the rest are made when first used)…", err=True)

                report = engine.warm_sentences(report, announce)
        except KeyboardInterrupt:  # outside the loops that commit what is complete (e.g. a second Ctrl-C)
            display.close()
            stats = engine.store.stats()
            click.echo(
                f"\ninterrupted: the store {stats.url} keeps every source written before the interrupt, each one "
                f"whole ({stats.sources} sources, {stats.fragments} fragments now); the rest were not written"
                + (" and nothing was pruned" if prune else "")
                + ". Run the same `footnote ingest` again to finish: unchanged sources are skipped.",
                err=True,
            )
            sys.exit(130)
        finally:
            display.close()
        embedding = engine.backlog_status()
        stats = engine.store.stats()
    resume = "footnote ingest " + " ".join(shlex.quote(str(p)) for p in paths) + (
        f" --collection {shlex.quote(collection)}" if collection else "") + (
        " --transcribe" if transcribe else "") + (" --recognise-later" if recognise_later else "") + ctx.store_option()
    if ctx.as_json:
        data = report.to_dict()
        data["sources"] = [{k: e[k] for k in ("path", "source_id", "status", "fragments", "error")}
                           for e in data["sources"]]
        data["embedding"] = embedding
        if report.interrupted:
            data["resume"] = resume
        ctx.emit(data)
    else:
        for path, why in report.refused:
            click.echo(f"refused: {path}: {why}", err=True)
        for p in report.pairings:
            click.echo(f"paired: {p.transcript} + {p.audio} ({p.how})")
        for path, by in report.superseded:
            click.echo(f"superseded: {path} (same track as {by})")
        for line in unpaired_lines(report):
            click.echo(line, err=True)
        for line in transcribed_lines(report):
            click.echo(line)
        for to_err, line in file_lines(report):
            click.echo(line, err=to_err)
        click.echo(summary_line(report, prune))
        if report.embed is not None:
            click.echo(embed_summary(report.embed))
            if report.embed.error:
                click.echo(f"error: {report.embed.error}", err=True)
        if report.sentences_warmed or report.sentences_skipped.startswith("interrupted"):
            click.echo(f"sentence vectors: {report.sentences_warmed:,} made ({report.sentences_seconds:.0f} s)"
                       + (f"; {report.sentences_skipped}" if report.sentences_skipped else ""))
        if embedding["state"] in ("embedding", "paused"):
            click.echo(f"search: {embedding['message']}")
        hint = multilingual_hint(stats.by_lang, stats.embedder, ctx.settings.corpus.multilingual_hint_min_share,
                                 ctx.store_option())
        if hint and report.ok:
            click.echo(hint, err=True)
        if report.nothing_ingestible:
            where = ", ".join(str(p) for p in paths)
            click.echo(f"error: nothing ingestible under {where}"
                       + (f" ({len(report.skipped)} file(s) skipped, see above)" if report.skipped else " (no files)"),
                       err=True)
        if report.interrupted:
            left = report.files_total - report.files_done
            click.echo(f"interrupted: the store {stats.url} keeps every source written before the interrupt, each one "
                       f"whole ({stats.sources} sources, {stats.fragments} fragments now); "
                       f"{report.files_done} of {report.files_total} files read and committed"
                       + (f", {left} not read" if left else "")
                       + (" and nothing was pruned" if prune else "")
                       + f"; {embedding['pending']:,} fragments wait for vectors. "
                       "Run the same `footnote ingest` again to finish: unchanged sources are skipped.", err=True)
            click.echo(resume_hint(resume), err=True)
    if report.interrupted:
        sys.exit(130)
    if not report.ok:
        sys.exit(1)


@click.command("status")
@common_options
def status(ctx: Ctx) -> None:
    """Store, embedder, counts per kind and language; says when search is lexical only."""
    with ctx.engine() as engine:
        st = engine.status()
    if ctx.as_json:
        ctx.emit(st)
        return
    click.echo(f"store:     {st['store']}")
    if rec := st.get("recognition"):
        click.echo(f"recognise: {rec['waiting']} waiting for `footnote worker` ({rec['waiting_asr']} recordings to "
                   f"transcribe, {rec['waiting_ocr']} scans to OCR)")
        for j in rec["running"]:
            click.echo(f"worker:    {j['holder']} recognises {j['source_id']} ({j['task']})")
        for j in rec["failed"]:
            click.echo(f"failed:    {j['source_id']} ({j['task']}, {j['tries']} tries): {j['error']}")
    emb = st["embedder"] or "none"
    built = st.get("store_embedder")
    if st["empty"] and not rec:
        click.echo(f"embedder:  {emb if st['embedder'] else 'none (lexical only)'}")
        click.echo("the store is empty: add sources with `footnote ingest PATH…`"
                   + (f" (they will be embedded with {st['embedder']})" if st["embedder"] else " (lexical only)"))
        return
    if built == "none":
        click.echo(f"embedder:  {emb} (store built lexical only: no vectors)")
    elif built:
        click.echo(f"embedder:  {emb} (store built with {built}, dim {st['dim']})")
    else:
        click.echo(f"embedder:  {emb if st['embedder'] else 'none (lexical only)'}")
    if st.get("gate_calibrated") is False:
        click.echo(f"gate:      uncalibrated: using {st['gate_thresholds']}'s thresholds (run `footnote calibrate`)")
    elif gp := st.get("gate_pairs"):
        click.echo(f"gate:      calibrated pairs {', '.join(gp['calibrated']) or '-'}; any other question language: "
                   f"{gp['other_pairs']} (docs/retrieval.md, 'Any language pair')")
    if st.get("embedder_model"):
        missing = "" if st.get("embedder_model_installed") else (
            f"  (not installed: run `footnote models install {st['embedder']}`)")
        click.echo(f"model:     {st['embedder_model']}{missing}")
    click.echo(f"sources:   {st['sources']}")
    click.echo(f"fragments: {st['fragments']} ({st['embedded']} embedded)")
    for title, key in (("by kind", "by_kind"), ("by lang", "by_lang")):
        counts = st.get(key) or {}
        click.echo(f"{title}:   " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"))
    emb_state = st.get("embedding") or {}
    if st["lexical_only"] and emb_state.get("state") not in ("embedding", "paused"):
        why = "the store holds no vectors" if st["embedder"] is not None else (
            "the store was built without an embedder" if built == "none" else "no embedder configured")
        click.echo(f"search:    lexical only ({why})")
    elif emb_state.get("state") in ("embedding", "paused"):
        click.echo(f"search:    lexical + dense for the embedded part; {emb_state['message']}")
        for w in emb_state.get("workers") or []:
            click.echo(f"worker:    {w['holder']} holds {w['fragments']} fragments")
    else:
        click.echo("search:    lexical + dense")


def register(group: click.Group) -> None:
    group.add_command(ingest)
    group.add_command(status)


def _unreadable(p: Path) -> str | None:
    """Why ``p`` cannot be read as given (None: it exists, or is a symlink the ingest will speak of): no such
    file, or the system's own reason (a name longer than it allows)."""
    try:
        return None if p.exists() or p.is_symlink() else "no such file or directory"
    except OSError as e:
        return (e.strerror or str(e)).lower()
