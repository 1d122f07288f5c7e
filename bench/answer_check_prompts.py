"""The answer-check model asked in other words: AUROC of each prompt on the turns the rules passed.

Reads `footnote eval --answers` runs made without a check model (their questions.jsonl hold each turn's question and
the answer the rules let through), asks the local model (llama.cpp, ``models.dir``/NAME/model.gguf) each prompt
variant once per turn, and prints per run: the AUROC of the variant's score between answerable questions and near
misses / unanswerable ones, and at a few floors the answerable kept and the others declined.

Variants (``--variants``):
- ``shipped``: the shipped words (:mod:`footnote.answer.model_check`): p(yes).
- ``extract``: "answer with a short phrase copied from the text, or reply none": 1 − p(first token is none/no).
- ``fewshot``: the shipped question after six worked examples (English and German, none from an eval set): p(yes).
- ``mean``: the mean of ``shipped`` and ``fewshot`` (two calls).

    .venv/bin/python bench/answer_check_prompts.py RUN [RUN …] [--per-run 60] [--variants shipped,fewshot,mean]

Measured 2026-12-08 (docs/answering.md, "The check model asked in other words").
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
from pathlib import Path
from typing import Any

import httpx

from footnote.answer.model_check import QUESTION, SYSTEM
from footnote.models.llama_local import LocalServer
from footnote.settings import Settings

FEWSHOT = (
    f"{SYSTEM}\nSay yes only if the text states the very fact asked for. If the text is about the same thing but "
    "does not give that fact, say no.\n\nExamples:\n"
    'Text: "The bridge was opened in 1932. It is 503 metres long and carries six lanes."\n'
    "Question: How long is the bridge?\nAnswer: yes\nQuestion: How much did the bridge cost?\nAnswer: no\n"
    "Question: Who designed the bridge?\nAnswer: no\nQuestion: When did the bridge open?\nAnswer: yes\n"
    'Text: "Der Bäcker backt jeden Morgen um vier Uhr Brot für das Dorf."\n'
    "Question: Wann backt der Bäcker?\nAnswer: yes\nQuestion: Wie viele Brote backt der Bäcker?\nAnswer: no\n"
)
EXTRACT = ("You answer a question with a short phrase copied from the text. If the text does not contain the "
           "answer, reply exactly: none")
NONE_WORDS = {"none", "no", "not", "n", "un", "unknown"}


def _quoted(text: str) -> str:
    while '"""' in text:
        text = text.replace('"""', '"')
    return text


def messages(variant: str, question: str, text: str) -> list[dict[str, str]]:
    t = _quoted(text)
    if variant == "extract":
        return [{"role": "system", "content": EXTRACT},
                {"role": "user", "content": f'Text:\n"""\n{t}\n"""\n\nQuestion: {question}\n\nShort answer from the text, or none:'}]
    if variant == "fewshot":
        return [{"role": "system", "content": FEWSHOT}, {"role": "user", "content": f'Text: "{t}"\nQuestion: {question}\nAnswer:'}]
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f'Question: {question}\n\nText:\n"""\n{t}\n"""\n\n{QUESTION}'}]


def ask(url: str, key: str, variant: str, question: str, text: str) -> float | None:
    body = {"messages": messages(variant, question, text), "max_tokens": 1, "temperature": 0, "logprobs": True,
            "top_logprobs": 20}
    reply = httpx.post(f"{url}/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=300)
    first = reply.json()["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    shares: dict[str, float] = {}
    for t in first:
        w = str(t["token"]).strip().lower()
        shares[w] = shares.get(w, 0.0) + math.exp(float(t["logprob"]))
    if variant == "extract":
        total = sum(shares.values())
        return 1 - sum(v for w, v in shares.items() if w in NONE_WORDS) / total if total else None
    yes, no = shares.get("yes", 0.0), shares.get("no", 0.0)
    return yes / (yes + no) if yes + no else None


def auroc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return float("nan")
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / len(pos) / len(neg)


def turns(run: Path, per_run: int, seed: int) -> list[dict[str, Any]]:
    """The turns of ``run`` the rules answered: every negative, and at most ``per_run`` of each kind."""
    rows = [json.loads(line) for line in (run / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line]
    out = []
    for r in rows:
        a = r["extra"]["answer"]
        if a["abstention"] is None and r["category"] != "off_topic":
            out.append({"pos": bool(r["answerable"]), "q": a["question"], "text": re.sub(r"\s*\[\d+\]", "", a["text"])})
    rng = random.Random(seed)
    pos = [t for t in out if t["pos"]]
    neg = [t for t in out if not t["pos"]]
    return rng.sample(pos, min(per_run, len(pos))) + rng.sample(neg, min(per_run, len(neg)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--per-run", type=int, default=60)
    ap.add_argument("--variants", default="shipped,fewshot,mean")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    variants = args.variants.split(",")
    gguf = Settings().models.dir_path / args.model / "model.gguf"
    server = LocalServer(gguf, n_ctx=4096, n_threads=0, name=args.model)
    url = server.base_url()
    for run in args.runs:
        rows = turns(run, args.per_run, args.seed)
        scores: dict[str, list[float | None]] = {}
        for v in variants:
            if v == "mean":
                continue
            scores[v] = [ask(url, server.api_key, v, t["q"], t["text"]) for t in rows]
        if "mean" in variants:
            a, b = scores.setdefault("shipped", [ask(url, server.api_key, "shipped", t["q"], t["text"]) for t in rows]), \
                scores.setdefault("fewshot", [ask(url, server.api_key, "fewshot", t["q"], t["text"]) for t in rows])
            scores["mean"] = [None if x is None or y is None else (x + y) / 2 for x, y in zip(a, b, strict=True)]
        for v in variants:
            pos = [s for s, t in zip(scores[v], rows, strict=True) if s is not None and t["pos"]]
            neg = [s for s, t in zip(scores[v], rows, strict=True) if s is not None and not t["pos"]]
            floors = "  ".join(f"{f:.2f}: {sum(p >= f for p in pos)}/{len(pos)} kept, {sum(n < f for n in neg)}/{len(neg)} "
                               "declined" for f in (0.25, 0.3, 0.35, 0.4))
            print(f"{run.name:24s} {v:8s} AUROC {auroc(pos, neg):.3f}  {floors}")
    server.close()


if __name__ == "__main__":
    main()
