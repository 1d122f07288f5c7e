"""The coverage gate as the retriever runs it: the thresholds for a language pair, the "do we know this?"
signal of a ranked slate, and the verdict (:mod:`footnote.retrieve.gate` holds the seed's three
functions; docs/retrieval.md, "The gate and its signal")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from footnote.models.protocols import Embedder
from footnote.records.fragments import AddressLocator, KindGroup
from footnote.retrieve import gate as gate_mod
from footnote.retrieve.background import BackgroundSample
from footnote.retrieve.books import BookIndex, address_aliases
from footnote.retrieve.sentence_vectors import SentenceVectorCache
from footnote.retrieve.signal import address_only, best_sentence_cosine, lexical_overlap
from footnote.retrieve.types import Candidate, GateSignal, Lane, Verdict
from footnote.settings import GateThresholds, Settings, ThresholdChoice, ThresholdSource
from footnote.text import Analyzer


class CoverageJudge:
    """Thresholds and verdicts for one retriever (its embedder, background sample and the sentence vectors it
    shares with the answer stage; a turn's books come with each verdict asked)."""

    def __init__(self, settings: Settings, vectors: SentenceVectorCache, embedder: Embedder | None,
                 analyzer: Analyzer, background: BackgroundSample) -> None:
        self.settings = settings
        self.vectors = vectors
        self.embedder = embedder
        self.analyzer = analyzer
        self.background = background

    def thresholds(self, qlang: str, corpus_lang: str, lexical: bool) -> GateThresholds:
        return self.choice(qlang, corpus_lang, lexical).thresholds

    def choice(self, qlang: str, corpus_lang: str, lexical: bool) -> ThresholdChoice:
        g = self.settings.gate
        if lexical:
            return ThresholdChoice(g.lexical_only, ThresholdSource.CALIBRATED, f"{qlang}-{corpus_lang}", "lexical_only")
        return g.choose(self.embedder.name if self.embedder else "none", qlang, corpus_lang)

    def other_languages(
        self, question: str, qvec: np.ndarray, qlang: str, final: Sequence[Candidate],
        asked: tuple[AddressLocator, ...], books: BookIndex,
    ) -> tuple[tuple[GateSignal, Verdict, ThresholdChoice, str] | None, dict[str, object]]:
        """A bailed-out slate's fragments in each language other than its top one's, judged by that pair's own
        thresholds (``gate.other_languages``): the first that does not bail out gives the signal, the verdict, the
        thresholds and the fragment to lead the slate; with what each language scored, for the trace."""
        info: dict[str, object] = {}
        top_lang = final[0].fragment.lang if final else None
        for lang in dict.fromkeys(c.fragment.lang for c in final if c.fragment.lang != top_lang):
            sub = [c for c in final if c.fragment.lang == lang]
            choice = self.choice(qlang, lang, False)
            signal, verdict, lead = self.judge(question, qvec, qlang, sub, choice.thresholds, False, asked, books)
            info[lang] = round(signal.value, 4)
            if verdict is not Verdict.BAIL_OUT:
                info["carried_by"] = lang
                return (signal, verdict, choice, lead or max(sub, key=lambda c: c.score).fragment.id), info
        return None, info

    def judge(
        self, question: str, qvec: np.ndarray | None, qlang: str, final: Sequence[Candidate], t: GateThresholds,
        lexical: bool, asked: tuple[AddressLocator, ...], books: BookIndex,
    ) -> tuple[GateSignal, Verdict, str | None]:
        """The gate's signal and verdict, and the id of a fragment without a vector whose lexical evidence
        carried the verdict (it should lead the slate), if any. ``books``: the turn's (its reader's)."""
        s = self.settings
        exact = any(h.lane is Lane.ADDRESS for c in final for h in c.lanes)
        aliases = address_aliases(s, books)
        missing = bool(asked) and not exact and address_only(question, qlang, aliases, self.analyzer)
        lectures = sum(1 for c in final if s.corpus.group_of(c.fragment.kind) is KindGroup.LECTURES)
        top = final[0] if final else None
        if lexical or qvec is None:
            overlap = 1.0 if any(h.lane is Lane.ADDRESS for c in final for h in c.lanes) else (
                lexical_overlap(question, qlang, [top.fragment] if top else [], self.analyzer)
            )
            cov = gate_mod.Coverage(overlap, 0.0, lectures, {"lexical_overlap": overlap})
        else:
            max_score = max((c.score for c in final), default=0.0)
            background = self.background.mean(qvec)
            spread = self.background.spread(qvec) if (t.spread_normalised or s.gate.collect_sentence_signal) else 1.0
            same = [c.fragment for c in final[:3] if c.fragment.lang == qlang]
            overlap = lexical_overlap(question, qlang, same, self.analyzer)
            sentence = 0.0
            if self.embedder is not None and (t.sentence_weight or s.gate.collect_sentence_signal):
                embedded = [c.fragment for c in final if c.embedded][: s.gate.sentence_fragments]
                sentence = best_sentence_cosine(qvec, embedded, self.embedder, self.vectors, s.gate.sentence_max)
            value = gate_mod.signal_value(max_score, background, overlap, t, sentence, spread)
            cov = gate_mod.Coverage(value, max_score, lectures, {
                "max_score": max_score, "background": background, "lexical_overlap": overlap,
                "margin": max_score - background, "sentence": sentence, "background_spread": spread,
            })
        cov = replace(cov, exact_address=exact, missing_address=missing)
        cov.extra.update({"exact_address": float(exact), "missing_address": float(missing)})
        verdict = gate_mod.decide(cov, t)
        lead: str | None = None
        unembedded = [c.fragment for c in final if not c.embedded]
        if unembedded and not lexical:
            # embedding backlog: judge the fragments without a vector by the lexical-only gate, wherever
            # they rank (a neutral cosine can leave a verbatim hit below embedded near-misses); the one that
            # carries the verdict leads the slate, since it is the evidence
            lex, best = max(((lexical_overlap(question, qlang, [f], self.analyzer), f) for f in unembedded),
                            key=lambda x: x[0])
            lcov = gate_mod.Coverage(lex, 0.0, lectures, exact_address=exact, missing_address=missing)
            lverdict = gate_mod.decide(lcov, s.gate.lexical_only)
            if gate_mod.stronger(verdict, lverdict) is not verdict:
                verdict, lead = lverdict, best.id
            cov.extra.update({"unembedded_top": float(sum(1 for c in final[:3] if not c.embedded)),
                              "unembedded_slate": float(len(unembedded)), "unembedded_overlap": lex})
        if top is None:
            verdict = Verdict.BAIL_OUT
        signal = GateSignal(
            max_score=cov.max_score, lecture_count=lectures, value=cov.value,
            thresholds=gate_mod.thresholds_dict(t), extra={k: float(v) for k, v in cov.extra.items()}, applied=t,
        )
        return signal, verdict, lead
