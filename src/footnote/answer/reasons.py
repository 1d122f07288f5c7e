"""A question that asks *why*, and a sentence that gives a reason (docs/answering.md, "A reason asked").

"Why is the keeper on watch given a plain stool?" is answered by a sentence that says *because*, *so that*, *in order
to*, *потому что*, *чтобы*, *weil*, *damit*, *parce que*, *porque*…; a sentence that only states the fact the
question starts from ("The keeper on watch sits in no chair with arms") speaks of the topic and does not answer. The
answer-level check (:mod:`footnote.answer.asked`, ``AskedKind.REASON``) asks for one of these marks in a chosen
sentence, in any of the languages below whatever the question's language (a Russian question is often answered by
an English sentence).

Words that are as often something else are marks only where a reason uses them: "as", "since", "so", "for", German
"da" and French "car" after a comma (", as the Black Skerry could be seen", ", for a smoking flame is a lie told to
ships"; not "as big as", "since 1868", "the car", ", for example"); "since" not before a number. What is *too*
something (*too shallow, слишком мелко, trop, demasiado*) is a reason too: "Outside those hours the bar is too
shallow" answers why loaded boats wait for high water.
"""

from __future__ import annotations

import re

__all__ = ["asks_reason", "gives_reason"]

#: Questions that ask why (or what for): not "por que meios" (by what means), not a "why" inside a quotation's title.
_ASKS_REASON = re.compile(
    r"(?i)\b(?:why|how\s+come|for\s+what\s+(?:reason|purpose)|what\s+(?:was|is|were|are)\s+the\s+reasons?\s+(?:for|why)|"
    r"warum|wieso|weshalb|weswegen|aus\s+welchem\s+grund|pourquoi|pour\s+quelle\s+raison|perch[eé]|"
    r"por\s+qu[eé](?!\s+(?:meios?|medios?|vias?|caminhos?|tipos?|m[eé]todos?)\b)|por\s+qu[eé]\s+(?:raz[aã]o|motivo)|"
    r"qual\s+(?:foi|é|era)\s+(?:o\s+motivo|a\s+raz[aã]o)|cu[aá]l\s+(?:fue|es|era)\s+(?:el\s+motivo|la\s+raz[oó]n))\b"
    r"|(?<![\w-])(?:почему|отчего|зачем|по\s+какой\s+причине|с\s+какой\s+целью|для\s+чего)(?![\w-])"
)

#: The marks of a reason or a purpose, by language (a cause, a consequence, an aim, a "reason" named).
_GIVES_REASON = re.compile(
    r"(?i)\b(?:because|due\s+to|owing\s+to|thanks\s+to|on\s+account\s+of|as\s+a\s+result|so\s+that|in\s+order|so\s+as\s+to|"
    r"lest|reasons?|therefore|hence|thus|that\s+is\s+why|which\s+is\s+why|for\s+fear|otherwise|caused|causes?|"
    r"to\s+(?:prevent|avoid|keep|stop|protect|allow|make\s+sure|ensure)|"
    r"weil|denn|damit|wegen|deshalb|darum|daher|deswegen|sonst|gründen?|aus\s+(?:diesem|dem|einem|gutem)\s+grund|"
    r"aufgrund|sodass|so\s+dass|"
    r"um\s+(?:\w+\s+){0,5}?zu|"
    r"parce\s+qu|puisqu|afin|à\s+cause|gr[aâ]ce\s+à|donc|sinon|raisons?|pour\s+que|pour\s+(?:éviter|ne\s+pas)|"
    r"c'est\s+pourquoi|de\s+peur|faute\s+de|vu\s+que|étant\s+donné|"
    r"porque|pois|ya\s+que|puesto\s+que|debido|gracias\s+a|por\s+(?:eso|isso|lo\s+tanto|causa)|así\s+que|"
    r"raz[oó]n|razones|raz[aã]o|raz[oõ]es|motivos?|para\s+(?:que|evitar|no|não)|a\s+causa|dado\s+que|"
    r"j[aá]\s+que|uma\s+vez\s+que|visto\s+que|devido|gra[cç]as\s+a|portanto|a\s+fim\s+de|"
    r"perch[eé]|poich[eé]|siccome|quindi|affinch[eé])\b"
    r"|\b(?:so|such)\s+(?:\w+\s+){0,2}?(?:\w+,?\s+)?that\b"  # a consequence: "had dropped so far, that…"
    r"|,\s*(?:as|since|so|da|car)\s+(?!\d)"
    r"|[,;]\s*for\s+(?!(?:example|instance|all|each|every|ever|now|once|the\s+first|years?|months?|weeks?|days?|hours?)\b|\d)"
    r"|\btoo\s+(?!much\b|many\b|late\b)\w+|(?<![\w-])слишком(?![\w-])|\btrop\b|\bdemasiad[oa]s?\b"
    r"|\bsince\s+(?![\d(])(?:the\s+|a\s+|it\s+|he\s+|she\s+|they\s+|there\s+|we\s+)"
    r"|(?<![\w-])(?:потому|поэтому|так\s+как|поскольку|чтобы|дабы|из-за|благодаря|ради|оттого|причин\w*|иначе|ведь|"
    r"так\s+что|вследствие|для\s+того|затем\s+чтобы|следовательно|вызва\w*)(?![\w-])"
)


def asks_reason(question: str) -> bool:
    """Whether ``question`` asks why (or what for), in English, Russian, German, French, Spanish, Portuguese or
    Italian."""
    return bool(_ASKS_REASON.search(question))


def gives_reason(sentence: str) -> bool:
    """Whether ``sentence`` gives a reason or a purpose: one of the marks of :data:`_GIVES_REASON`."""
    return bool(_GIVES_REASON.search(sentence))
