"""EmbeddingGemma on a real store: the backlog's worker processes and ``footnote reembed`` find the model in
``models.dir``. Runs whenever the model is installed (``make models``); under CI a missing model fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from footnote.corpus.embedding import BacklogEmbedder
from footnote.corpus.ingest import Ingestor
from footnote.settings import Settings, load_settings
from footnote.store import open_store

TEXTS = (
    "The keepers start the fog horn when the Black Skerry beacon can no longer be seen.",
    "Красный фонарь на галерее значит, что бар закрыт для гружёных лодок.",
    "The lamp is trimmed at dusk and again at midnight.",
    "Смотритель записывает погоду в журнал каждые четыре часа.",
)


def _corpus(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for i, t in enumerate(TEXTS):
        (d / f"note{i}.txt").write_text(t + "\n", encoding="utf-8")
    return d


def test_worker_processes_load_the_model_from_models_dir(gemma_settings: Settings, gemma_embedder: Any,
                                                         tmp_path: Path) -> None:
    settings = load_settings(None, **{
        "store.url": str(tmp_path / "s.db"), "embedder.name": "embeddinggemma",
        "models.dir": str(gemma_settings.models.dir_path),
        "backlog.mode": "process", "backlog.pool_min_fragments": 1, "backlog.batch_fragments": 2,
    })
    store = open_store(settings.store.url, settings.store)
    try:
        rep = Ingestor(settings, store, gemma_embedder).run([_corpus(tmp_path / "c")], wait=False)
        assert rep.ok and store.backlog().pending == len(TEXTS)
        report = BacklogEmbedder(settings, store, gemma_embedder).run(workers=2)
        assert report.mode == "process" and report.error is None, report.error
        assert (report.embedded, report.remaining) == (len(TEXTS), 0)
        frag = store.fragments_of("c/note1.txt")[0]
        vec = store.get_embeddings([frag.id])[0]
        assert float(np.dot(vec, gemma_embedder.embed_passages([frag.text])[0])) > 0.999
    finally:
        store.close()


def _cli(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from footnote.cli import main

    r = CliRunner().invoke(main, args, env=env)
    return r.exit_code, r.stdout, r.stderr


def test_reembed_switches_a_store_to_embeddinggemma(gemma_settings: Settings, tmp_path: Path) -> None:
    import json

    env = {"FOOTNOTE_MODELS_DIR": str(gemma_settings.models.dir_path), "FOOTNOTE_STORE": str(tmp_path / "s.db")}
    assert _cli(["ingest", str(_corpus(tmp_path / "c")), "--embedder", "hash"], env)[0] == 0
    code, out, err = _cli(["reembed", "--embedder", "embeddinggemma", "--json"], env)
    assert code == 0, (out, err)
    data = json.loads(out)
    assert (data["embedder"], data["dim"], data["dropped"], data["pending"]) == ("embeddinggemma", 768, 4, 0)
    code, out, _ = _cli(["search", "Что означает красный фонарь?", "--json"], env)
    res = json.loads(out)
    assert code == 0 and res["lexical_only"] is False and res["notes"][0]["source_id"] == "c/note1.txt"
