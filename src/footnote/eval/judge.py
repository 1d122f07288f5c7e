"""``footnote judge``: a model scores the answers of an ``eval --answers`` run, blind and cached.

Reads ``questions.jsonl`` of a run (each row's ``extra.answer`` holds the question, the answer text and
the passages it cites: :func:`judge_inputs`). The judge (``models.judge``, any OpenAI-compatible
endpoint, temperature forced to 0) is shown the question, the passages and the answer text — never the
mode, system, run or verdict — and returns JSON with a 1–5 score and a short reason per criterion:
faithfulness, completeness, structure, balance. The answer's sentences are numbered (split as the
citation-support measure splits them, :func:`footnote.answer.support.cited_sentences`) and the
faithfulness verdict lists the numbers of the sentences no cited passage supports, so the judge can be
compared with citation support sentence by sentence. A reply that is not such JSON is asked again
(``judge.attempts`` calls in all, then the question is recorded as failed).

Pairwise (``--compare A B``): both answers to the same question, sides assigned from a hash of the
question id (A first for about half); the verdict ``first``/``second``/``tie`` is mapped back to A/B and
summed as win/tie/loss with a two-sided sign test.

Every verdict is cached under a hash of what the judge was shown (prompt version, model, texts), in
``judge_cache.json`` of the (first) run, written after every verdict (merged with what another judge
process wrote there meanwhile): a re-run, or a run resumed after being stopped, makes no call for what
is cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footnote.answer.support import cited_sentences
from footnote.answer.types import Answer
from footnote.errors import ModelError, UsageError
from footnote.models.chat import complete_parsed, extract_json
from footnote.models.protocols import ChatMessage, ChatModel

log = logging.getLogger(__name__)

PROMPT_VERSION = "judge-v2"
CRITERIA = ("faithfulness", "completeness", "structure", "balance")
CRITERIA_TEXT = {
    "faithfulness": "every claim is supported by the passages it cites",
    "completeness": "it covers what the passages say about the question",
    "structure": "clear, well ordered, no padding",
    "balance": "where passages disagree, both sides are given",
}
REASON_MAX = 200  # characters: a one-sentence reason (a grammar-constrained local judge cannot ramble on)
_CRIT = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5},
                                           "reason": {"type": "string", "maxLength": REASON_MAX}},
        "required": ["score", "reason"]}
_FAITH = {"type": "object", "properties": {**_CRIT["properties"],  # type: ignore[dict-item]
                                            "unsupported": {"type": "array", "items": {"type": "integer", "minimum": 1}}},
          "required": ["score", "reason", "unsupported"]}
SCORE_SCHEMA: dict[str, Any] = {"type": "object", "properties": {**dict.fromkeys(CRITERIA, _CRIT), "faithfulness": _FAITH},
                                "required": list(CRITERIA)}
PAIR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"winner": {"type": "string", "enum": ["first", "second", "tie"]},
                   "reason": {"type": "string", "maxLength": REASON_MAX}},
    "required": ["winner", "reason"],
}


@dataclass(frozen=True)
class JudgeItem:
    qid: str
    question: str
    answer: str
    passages: tuple[tuple[int, str], ...]
    support: float | None = None  # the run's citation-support share for this answer (never shown to the judge)
    sentence_support: tuple[bool, ...] | None = None  # the run's verdict per sentence (never shown either)

    def sentences(self) -> list[str]:
        """The answer's sentences as numbered for the judge: as citation support splits them, each
        with its markers put back at its end."""
        return [s.text + "".join(f" [{n}]" for n in s.cites) for s in cited_sentences(self.answer)]


def judge_inputs(question: str, answer: Answer) -> dict[str, Any]:
    """What a later ``footnote judge`` needs of one answer, kept in ``eval --answers``'s rows."""
    return {"question": question, "text": answer.answer,
            "passages": [{"n": c.n, "text": c.fragment.text} for c in answer.citations]}


def load_run(run_dir: Path) -> list[JudgeItem]:
    """The answers of an ``eval --answers --out RUN_DIR`` run."""
    path = run_dir / "questions.jsonl"
    if not path.is_file():
        raise UsageError(f"{run_dir}: no questions.jsonl (run `footnote eval --answers --out {run_dir}` first)")
    items: list[JudgeItem] = []
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                a = row["extra"]["answer"]
                support = a.get("support") or {}
                sup = support.get("supported_share")
                per = support.get("sentences")
                items.append(JudgeItem(str(row["id"]), str(a["question"]), str(a["text"]),
                                       tuple((int(p["n"]), str(p["text"])) for p in a.get("passages", [])),
                                       None if sup is None else float(sup),
                                       None if per is None else tuple(bool(s["supported"]) for s in per)))
            except (ValueError, KeyError, TypeError) as e:
                raise UsageError(f"{path}:{i}: not a row of an `eval --answers` run with answer texts ({e!r})") from None
    return items


def _passages(passages: Sequence[tuple[int, str]]) -> str:
    return "\n".join(f"[{n}] {t}" for n, t in passages) or "(no passages)"


def score_messages(item: JudgeItem) -> list[ChatMessage]:
    crit = "\n".join(f"- {c}: {d}" for c, d in CRITERIA_TEXT.items())
    system = ("You grade an answer to a question against the numbered passages it may cite. Score each "
              f"criterion from 1 (bad) to 5 (excellent) with a one-sentence reason:\n{crit}\n"
              "The answer's sentences are numbered (1), (2), …; under faithfulness also list, as \"unsupported\", "
              "the numbers of the sentences that no passage they cite supports ([] when every sentence is supported). "
              "Reply with JSON only: {\"faithfulness\": {\"score\": n, \"reason\": \"…\", \"unsupported\": [n, …]}, "
              "\"completeness\": {\"score\": n, \"reason\": \"…\"}, …} for all four.")
    numbered = "\n".join(f"({i}) {s}" for i, s in enumerate(item.sentences(), 1)) or item.answer
    user = f"Question: {item.question}\n\nPassages:\n{_passages(item.passages)}\n\nAnswer:\n{numbered}"
    return [ChatMessage("system", system), ChatMessage("user", user)]


def pair_messages(question: str, first: JudgeItem, second: JudgeItem) -> list[ChatMessage]:
    system = ("Two answers to one question, each with the passages it cites. Decide which answer is better: "
              "faithful to its passages first, then complete, clear and balanced. Reply with JSON only: "
              "{\"winner\": \"first\" | \"second\" | \"tie\", \"reason\": \"one sentence\"}.")
    if first.passages == second.passages:  # the same notes under the same numbers: shown once (a shorter prompt)
        user = (f"Question: {question}\n\nPassages (both answers cite these):\n{_passages(first.passages)}\n\n"
                f"First answer:\n{first.answer}\n\nSecond answer:\n{second.answer}")
    else:
        user = (f"Question: {question}\n\nFirst answer's passages:\n{_passages(first.passages)}\n\nFirst answer:\n"
                f"{first.answer}\n\nSecond answer's passages:\n{_passages(second.passages)}\n\nSecond answer:\n"
                f"{second.answer}")
    return [ChatMessage("system", system), ChatMessage("user", user)]


def parse_scores(text: str) -> dict[str, dict[str, Any]]:
    """The four criteria, each ``{"score": 1..5, "reason": str}``; ModelError otherwise."""
    data = extract_json(text)
    if not isinstance(data, dict):
        raise ModelError(f"judge reply is not a JSON object: {text[:120]!r}")
    out: dict[str, dict[str, Any]] = {}
    for c in CRITERIA:
        v = data.get(c)
        score = v.get("score") if isinstance(v, dict) else None
        if isinstance(score, float) and score.is_integer():
            score = int(score)
        if not isinstance(score, int) or isinstance(score, bool) or not 1 <= score <= 5:
            raise ModelError(f"judge reply: {c} needs a score 1–5: {text[:120]!r}")
        reason = v.get("reason", "") if isinstance(v, dict) else ""
        out[c] = {"score": score, "reason": str(reason)[:300]}
        if c == "faithfulness":
            un = v.get("unsupported", []) if isinstance(v, dict) else []
            if not isinstance(un, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in un):
                raise ModelError(f"judge reply: faithfulness.unsupported must be a list of sentence numbers: {text[:120]!r}")
            out[c]["unsupported"] = sorted(set(un))
    return out


def parse_pair(text: str) -> dict[str, str]:
    data = extract_json(text)
    winner = data.get("winner") if isinstance(data, dict) else None
    if winner not in ("first", "second", "tie"):
        raise ModelError(f"judge reply: winner must be first, second or tie: {text[:120]!r}")
    assert isinstance(data, dict)
    return {"winner": str(winner), "reason": str(data.get("reason", ""))[:300]}


def a_first(qid: str) -> bool:
    """Whether run A's answer is shown first for this question (a hash of its id: about half)."""
    return hashlib.sha256(qid.encode("utf-8")).digest()[0] % 2 == 0


def sign_test(wins: int, losses: int) -> float | None:
    """Two-sided exact sign test p-value (ties left out); None with no decided pair."""
    n = wins + losses
    if n == 0:
        return None
    k = min(wins, losses)
    p = 2.0 * sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return min(1.0, p)


class JudgeCache:
    """Verdicts keyed by a content hash, in one JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = {}
        if path.is_file():
            try:
                self.data = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                log.warning("%s: unreadable judge cache, starting afresh", path)

    @staticmethod
    def key(model: str, messages: Sequence[ChatMessage]) -> str:
        blob = json.dumps([PROMPT_VERSION, model, [[m.role, m.content] for m in messages]], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def save(self) -> None:
        """Write the cache, keeping what another judge process added to the file since it was read."""
        if self.path.is_file():
            with contextlib.suppress(ValueError):
                self.data = {**json.loads(self.path.read_text(encoding="utf-8")), **self.data}
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.data, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(self.path)


@dataclass
class _Tally:
    calls: int = 0
    cached: int = 0
    failed: int = 0
    seconds: float = 0.0

    def to_dict(self, n: int) -> dict[str, Any]:
        asked = n - self.cached
        return {"calls": self.calls, "cached": self.cached, "failed": self.failed, "seconds": round(self.seconds, 2),
                "calls_per_answer": round(self.calls / asked, 3) if asked else 0.0,
                "seconds_per_answer": round(self.seconds / asked, 3) if asked else 0.0}


def _ask(model: ChatModel, model_name: str, messages: list[ChatMessage], parse: Callable[[str], Any],
         schema: dict[str, Any], attempts: int, cache: JudgeCache, tally: _Tally) -> Any | None:
    key = JudgeCache.key(model_name, messages)
    if key in cache.data:
        tally.cached += 1
        return cache.data[key]
    t0 = time.perf_counter()
    try:
        value, calls = complete_parsed(model, messages, parse, json_schema=schema, attempts=attempts)
    except ModelError as e:
        tally.calls += attempts
        tally.failed += 1
        tally.seconds += time.perf_counter() - t0
        log.warning("judge gave up: %s", e.message)
        return None
    tally.calls += calls
    tally.seconds += time.perf_counter() - t0
    cache.data[key] = value
    cache.save()  # at once: a stopped run keeps what it paid for
    log.info("judge: %d call(s), %.1f s", calls, time.perf_counter() - t0)
    return value


def _spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None when either side is constant."""
    def ranks(v: Sequence[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        out = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2.0
            i = j + 1
        return out

    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    sy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return None if sx == 0 or sy == 0 else round(sxy / (sx * sy), 4)


def agreement(rows: Sequence[Mapping[str, Any]], *, faithful_min: int, supported_min: float) -> dict[str, Any]:
    """How often the judge's faithfulness verdict (score ≥ ``faithful_min``) agrees with the no-model
    citation support (share of supported sentences ≥ ``supported_min``), over answers that have both;
    with the 2×2 counts and Spearman's rank correlation of the two scores."""
    pairs = [(int(r["scores"]["faithfulness"]["score"]), float(r["support"])) for r in rows
             if r.get("scores") and r.get("support") is not None]
    both = sum(1 for f, s in pairs if f >= faithful_min and s >= supported_min)
    neither = sum(1 for f, s in pairs if f < faithful_min and s < supported_min)
    judge_only = sum(1 for f, s in pairs if f >= faithful_min and s < supported_min)
    support_only = sum(1 for f, s in pairs if f < faithful_min and s >= supported_min)
    return {"n": len(pairs), "faithful_min": faithful_min, "supported_min": supported_min,
            "agree": round((both + neither) / len(pairs), 4) if pairs else None,
            "both": both, "neither": neither, "judge_only": judge_only, "support_only": support_only,
            "spearman": _spearman([float(f) for f, _ in pairs], [s for _, s in pairs])}


def judge_sentences(item: JudgeItem, scores: Mapping[str, Any] | None) -> list[bool] | None:
    """The judge's verdict per numbered sentence (True: supported), or None without a verdict or when the
    run's support split the answer differently (the two could not be lined up)."""
    if not scores or item.sentence_support is None:
        return None
    n = len(item.sentences())
    if n != len(item.sentence_support):
        return None
    bad = set(scores["faithfulness"].get("unsupported", []))
    return [i not in bad for i in range(1, n + 1)]


def sentence_agreement(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Sentence by sentence: the judge's ``unsupported`` list against citation support's verdict."""
    pairs = [(j, s) for r in rows if r.get("judge_sentences") is not None and r.get("sentence_support") is not None
             for j, s in zip(r["judge_sentences"], r["sentence_support"], strict=True)]
    both = sum(1 for j, s in pairs if j and s)
    neither = sum(1 for j, s in pairs if not j and not s)
    return {"n": len(pairs), "agree": round((both + neither) / len(pairs), 4) if pairs else None,
            "both": both, "neither": neither, "judge_only": sum(1 for j, s in pairs if j and not s),
            "support_only": sum(1 for j, s in pairs if s and not j),
            "support_unsupported": sum(1 for _, s in pairs if not s),
            "judge_unsupported": sum(1 for j, _ in pairs if not j)}


def judge_run(model: ChatModel, model_name: str, run_dir: Path, *, attempts: int,
              faithful_min: int = 4, supported_min: float = 1.0) -> dict[str, Any]:
    """Score every answer of a run; the ``judge`` section of its report (with the judge's agreement
    with citation support where the run measured it)."""
    items = load_run(run_dir)
    cache = JudgeCache(run_dir / "judge_cache.json")
    tally = _Tally()
    rows: list[dict[str, Any]] = []
    try:
        for it in items:
            v = _ask(model, model_name, score_messages(it), parse_scores, SCORE_SCHEMA, attempts, cache, tally)
            rows.append({"id": it.qid, "scores": v, "support": it.support,
                         "sentence_support": None if it.sentence_support is None else list(it.sentence_support),
                         "judge_sentences": judge_sentences(it, v)})
    finally:
        cache.save()
    scored = [r["scores"] for r in rows if r["scores"]]
    means = {c: (round(sum(s[c]["score"] for s in scored) / len(scored), 3) if scored else None) for c in CRITERIA}
    return {"model": model_name, "prompt": PROMPT_VERSION, "n": len(items), "mean": means,
            "agreement": agreement(rows, faithful_min=faithful_min, supported_min=supported_min),
            "sentence_agreement": sentence_agreement(rows),
            **tally.to_dict(len(items)), "per_question": rows}


def compare_runs(model: ChatModel, model_name: str, run_a: Path, run_b: Path, *, attempts: int) -> dict[str, Any]:
    """Pairwise verdicts over the questions both runs answered; the ``judge_compare`` report section."""
    a_items = {it.qid: it for it in load_run(run_a)}
    b_items = {it.qid: it for it in load_run(run_b)}
    common = [q for q in a_items if q in b_items]
    cache = JudgeCache(run_a / "judge_cache.json")
    tally = _Tally()
    wins = ties = losses = 0
    shown = {"first": 0, "second": 0, "tie": 0}  # the raw verdicts by position: a judge's position bias
    rows: list[dict[str, Any]] = []
    try:
        for qid in common:
            a, b = a_items[qid], b_items[qid]
            first_is_a = a_first(qid)
            first, second = (a, b) if first_is_a else (b, a)
            v = _ask(model, model_name, pair_messages(a.question, first, second), parse_pair, PAIR_SCHEMA, attempts,
                     cache, tally)
            outcome = None
            if v is not None:
                w = v["winner"]
                shown[w] += 1
                outcome = "tie" if w == "tie" else ("A" if (w == "first") == first_is_a else "B")
                wins += outcome == "A"
                losses += outcome == "B"
                ties += outcome == "tie"
            rows.append({"id": qid, "a_first": first_is_a, "winner": outcome,
                         "reason": v["reason"] if v else None, "support_a": a.support, "support_b": b.support})
    finally:
        cache.save()
    return {"model": model_name, "prompt": PROMPT_VERSION, "run_a": str(run_a), "run_b": str(run_b),
            "n": len(common), "a_wins": wins, "ties": ties, "b_wins": losses, "sign_test_p": sign_test(wins, losses),
            "better_supported": better_supported(rows), "picked_by_position": shown,
            **tally.to_dict(len(common)), "per_question": rows}


def better_supported(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Over pairs whose citation-support shares differ: how often the judge's winner is the better
    supported answer, the worse one, or a tie."""
    out = {"n": 0, "judge_picks_better": 0, "judge_picks_worse": 0, "tie": 0}
    for r in rows:
        sa, sb, w = r.get("support_a"), r.get("support_b"), r.get("winner")
        if sa is None or sb is None or sa == sb or w is None:
            continue
        better = "A" if sa > sb else "B"
        out["n"] += 1
        key = "tie" if w == "tie" else ("judge_picks_better" if w == better else "judge_picks_worse")
        out[key] += 1
    return out


def add_to_report(run_dir: Path, key: str, section: Mapping[str, Any]) -> None:
    """Put ``section`` into the run's ``report.json`` (under ``key``) and a table into ``judge.md``."""
    rep_path = run_dir / "report.json"
    report: dict[str, Any] = json.loads(rep_path.read_text(encoding="utf-8")) if rep_path.is_file() else {}
    report[key] = dict(section)
    rep_path.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    (run_dir / f"{key}.md").write_text("\n".join(summary_lines(section)) + "\n", encoding="utf-8")


def summary_lines(section: Mapping[str, Any]) -> list[str]:
    cost = (f"calls {section['calls']} (cached {section['cached']}, failed {section['failed']}), "
            f"{section['seconds_per_answer']} s and {section['calls_per_answer']} calls per answer")
    if "mean" in section:
        head = "| n | " + " | ".join(CRITERIA) + " |"
        row = f"| {section['n']} | " + " | ".join(str(section['mean'][c]) for c in CRITERIA) + " |"
        out = [f"judge {section['model']} ({section['prompt']}), mean 1–5", head,
               "|" + "---|" * (len(CRITERIA) + 1), row, cost]
        ag = section.get("agreement")
        if ag and ag["n"]:
            out.append(f"agreement with citation support (faithfulness ≥ {ag['faithful_min']} vs supported share ≥ "
                       f"{ag['supported_min']}) on {ag['n']} answers: {ag['agree']} (both {ag['both']}, neither "
                       f"{ag['neither']}, judge only {ag['judge_only']}, support only {ag['support_only']}); "
                       f"Spearman {ag['spearman']}")
        sa = section.get("sentence_agreement")
        if sa and sa["n"]:
            out.append(f"per sentence, the judge's unsupported list vs citation support on {sa['n']} sentences: "
                       f"{sa['agree']} (both supported {sa['both']}, both unsupported {sa['neither']}, judge only "
                       f"supported {sa['judge_only']}, support only {sa['support_only']}); unsupported by support "
                       f"{sa['support_unsupported']}, by the judge {sa['judge_unsupported']}")
        return out
    return [f"judge {section['model']} pairwise: A {section['run_a']} vs B {section['run_b']}",
            "| n | A wins | ties | B wins | sign test p |", "|---|---|---|---|---|",
            f"| {section['n']} | {section['a_wins']} | {section['ties']} | {section['b_wins']} | {section['sign_test_p']} |",
            cost, *_position_line(section.get("picked_by_position")), *_better_line(section.get("better_supported"))]


def _position_line(shown: Mapping[str, int] | None) -> list[str]:
    if not shown or not sum(shown.values()):
        return []
    return [f"by position (sides from the hash): the answer shown first won {shown['first']}, the second {shown['second']}, "
            f"tie {shown['tie']}"]


def _better_line(bs: Mapping[str, Any] | None) -> list[str]:
    if not bs or not bs["n"]:
        return []
    return [f"on the {bs['n']} pairs whose citation-support shares differ the judge picked the better supported answer "
            f"{bs['judge_picks_better']}, the worse {bs['judge_picks_worse']}, a tie {bs['tie']}"]
