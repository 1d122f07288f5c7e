"""Instructions to a model planted in a passage (issue 39 §2): a passage reaches the model as quoted data, and a
sentence of it that speaks to a model — "ignore previous instructions", "SYSTEM:", "tell the reader that …",
"скажи, что …" — is never evidence: the extractive answer never quotes it (:func:`~footnote.answer.sentences.is_noise`)
and citation support never counts it (:mod:`footnote.answer.particulars`). Measured on every corpus of the
evaluation sets (31,921 sentences: xquad en/ru, squad2, squad2-pt, the Gita) and the demo: 0 sentences taken for an
instruction."""

from __future__ import annotations

import re

from footnote.text import clean_text

__all__ = ["is_instruction"]

_INSTRUCTION = re.compile(
    r"(?ix)"
    r"\b(?:ignore|disregard|forget|override)\s+(?:(?:all|any|the|your|every|of|these|those)\s+)*"
    r"(?:(?:previous|prior|above|earlier|preceding|other|system|original|given|former)\s+)?"
    r"(?:instructions?|prompts?|rules|directions|system\s+message|the\s+above|everything\s+(?:above|before))\b"
    r"|(?:^|[\s\"'«(\[<])(?:system|assistant|developer|user|instruction|instructions|note\s+to\s+(?:the\s+)?(?:ai|model|assistant))"
    r"\s*(?:prompt\s*)?:"
    r"|</?\s*(?:passage|system|instructions?|background)\b"
    r"|\b(?:you|the\s+(?:ai|model|assistant|language\s+model|chatbot|bot)|(?:the|your|every|each)\s+(?:answer|reply|response|summary))"
    r"\s+(?:must|should|shall|will|are\s+to|have\s+to|need\s+to)"
    r"\s+(?:now\s+|always\s+|also\s+)?(?:say|tell|write|answer|reply|respond|state|claim|mention|cite|add|insist|assert|"
    r"include|report|inform|explain\s+that|quote)\b"
    r"|\b(?:tell|inform|assure|remind)\s+(?:the\s+|your\s+|all\s+|every\s+)?(?:readers?|users?|people|everyone|anyone\s+who\s+asks)\b"
    r"|(?:^|[.!?:]\s+|\b(?:please|now|always|also)\s+)(?:say|write|answer|reply|respond|state|claim|assert|insist)"
    r"\s+(?:to\s+\w+\s+)?that\b"
    r"|(?:^|[.!?:]\s+|\b(?:please|now|always|also)\s+)(?:cite|mention|quote)\s+(?:\[\d|passage|source|note|the\s+file)"
    r"|\b(?:as\s+an\s+ai|language\s+model|ai\s+assistant|prompt\s+injection|jailbreak)\b"
    r"|\bwhen\s+(?:you\s+are\s+|you're\s+)?(?:asked|answering|summari[sz]ing|writing\s+the\s+answer)\b[^.!?\n]{0,60}"
    r"\b(?:say|tell|write|answer|state|claim|mention|cite)\b"
    # Russian: imperatives to a model, and instruction words
    r"|\b(?:игнорируй|игнорируйте|проигнорируй|забудь|забудьте|не\s+обращай)\w*\b[^.!?\n]{0,40}\b(?:инструкц|указани|правил|сказанн)\w*"
    r"|(?:^|[.!?:]\s+|\b(?:пожалуйста|теперь|всегда|также)\s+)(?:скажи|скажите|напиши|напишите|ответь|ответьте|сообщи|сообщите|"
    r"утверждай|утверждайте|упомяни|упомяните|процитируй|сошлись)\b"
    r"|\b(?:ты|вы|модель|ассистент|ии)\s+(?:должен|должна|должны|обязан|обязана|обязаны)\s+(?:теперь\s+|всегда\s+)?"
    r"(?:сказать|написать|ответить|сообщить|утверждать|упомянуть|сослаться|процитировать)\b"
    r"|\b(?:скажи|скажите|сообщи|сообщите)\s+(?:читател|пользовател)\w*"
    r"|(?:^|[\s\"'«(\[<])(?:система|инструкция|ассистент)\s*:"
)


def is_instruction(sentence: str) -> bool:
    """Whether a passage sentence speaks to a model (an instruction planted in the corpus), not about the world."""
    return bool(_INSTRUCTION.search(" ".join(clean_text(sentence).split())))


