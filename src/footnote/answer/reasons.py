"""A question that asks *why*, and a sentence that gives a reason (docs/answering.md, "A reason asked").

"Why is the keeper on watch given a plain stool?" is answered by a sentence that says *because*, *so that*, *in order
to*, *потому что*, *чтобы*, *weil*, *damit*, *parce que*, *porque*…; a sentence that only states the fact the
question starts from ("The keeper on watch sits in no chair with arms") speaks of the topic and does not answer. The
answer-level check (:mod:`footnote.answer.asked`, ``AskedKind.REASON``) asks for one of these marks in a chosen
sentence, in any of the languages below whatever the question's language (a Russian question is often answered by
an English sentence).

Words that are as often something else are marks only where a reason uses them: "as", "so", "for" and French "car"
after a comma (", as the Black Skerry could be seen", ", for a smoking flame is a lie told to ships"; not ", as well
as", ", for example", ", for twenty minutes", "the car"); "as", "since", "da", "comme" opening the sentence's first
clause; "since" before a clause, not a year ("since the change of 1868"); *too* after a verb of being ("the bar is
too shallow"; not "Karpov too kept a log"); "in order to/that", not "kept in order". A condition that opens the
sentence ("If the weight ever reaches the floor, the lens stops") and a clause after a colon («Хуже всего лёд: пар
от лампы оседает…») give a reason too. A reason written with no mark ("A chair with arms invites sleep") is not
seen: the rule's cost, measured in docs/answering.md.
"""

from __future__ import annotations

import re

__all__ = ["asks_reason", "gives_reason"]

#: Questions that ask why: the word opens the question or a clause of it ("Besides flooding, why else…"), so a
#: question that only mentions a why ("Who asked why the lamp was red?", "Which verse says a ship 'does not ask
#: why'?") asks what it asks; not "por que meios / cidades…" (through which). A question for an aim alone ("what
#: for", "wozu", "para qué") is not read as one: its answers ("to call the crew") rarely carry a mark; nor one for a
#: cause by its name ("What caused…", «Из-за чего…», «Какова причина…»): "a gust drove a piece of slate" answers it.
_OPENS = r"(?:^|[,;:]\s*|\b(?:and|but|so|then|и|а|но|und|aber|et|mais|y|pero|e|mas|ma)\s+)[\s¿¡«\"'(]*"
_ASKS_REASON = re.compile(
    _OPENS + r"(?:(?:why|how\s+come|for\s+what\s+reason|what(?:'s|\s+(?:was|is|were|are))\s+the\s+reasons?|"
    r"warum|wieso|weshalb|weswegen|aus\s+welchem\s+grund|pourquoi|pour\s+quelle\s+raison|perch[eé]|"
    r"porque\s+é\s+que|por\s+qu[eé](?!\s+(?:meios?|medios?|vias?|caminhos?|tipos?|m[eé]todos?|cidades?|ciudad(?:es)?|"
    r"ruas?|calles?|portos?|puertos?|pa[ií]s(?:es)?|regi(?:ão|ões|ón|ones)|lugar(?:es)?|estradas?|rios?|r[ií]os?)\b)|"
    r"qual\s+(?:foi|é|era)\s+(?:o\s+motivo|a\s+raz[aã]o)|cu[aá]l\s+(?:fue|es|era)\s+(?:el\s+motivo|la\s+raz[oó]n))\b|"
    r"(?:почему|отчего|зачем|по\s+какой\s+причине)(?![\w-]))"
    r"|\bpor\s+qu[eê]\s*\?\s*$",
    re.IGNORECASE,
)

#: The marks of a reason or a purpose, by language (a cause, a consequence, an aim, a condition, a "reason" named).
_GIVES_REASON = re.compile(
    r"(?i)\b(?:because|due\s+to|owing\s+to|thanks\s+to|on\s+account\s+of|as\s+a\s+result|so\s+that|"
    r"in\s+order\s+(?:to|that|for)|so\s+as\s+(?:not\s+)?to|lest|reasons?|therefore|hence|thus|that\s+is\s+why|"
    r"which\s+is\s+why|for\s+fear|consequently|accordingly|in\s+case|(?:given|seeing|now)\s+that|"
    r"results?\s+in|resulted\s+in|leads?\s+to|caused\s+by|causes|"
    r"to\s+(?:prevent|avoid|protect|allow|make\s+sure|ensure|warn|guide|mark|signal)|"
    r"weil|denn|damit|wegen|deshalb|deswegen|aus\s+(?:diesem|dem|einem|gutem)\s+grund|aufgrund|infolge|folglich|"
    r"zumal|zwecks|sodass|soda(?:ss|ß)|so\s+dass|um\s+(?!\d)(?:\w+\s+){0,5}?zu\s+\w+en|"
    r"parce\s+qu(?:e\b|['’])|puisqu(?:e\b|['’])|pour\s+qu(?:e\b|['’])|afin|à\s+cause|gr[aâ]ce\s+à|donc|sinon|"
    r"raisons?|pour\s+(?:éviter|ne\s+pas)|c'est\s+pourquoi|de\s+peur|faute\s+de|vu\s+que|étant\s+donné|du\s+fait|"
    r"de\s+sorte\s+que|si\s+bien\s+que|dû\s+à|"
    r"porque|pois|ya\s+que|puesto\s+que|debido|gracias\s+a|por\s+(?:eso|isso|lo\s+tanto|lo\s+que|causa|culpa)|"
    r"así\s+que|de\s+modo\s+que|con\s+el\s+fin|raz[oó]n|razones|raz[aã]o|raz[oõ]es|por\s+(?:este|ese|esse|esta|essa)\s+motivo|"
    r"para\s+(?:que|evitar|no|não)|a\s+causa|dado\s+que|j[aá]\s+que|uma\s+vez\s+que|visto\s+que|devido|"
    r"gra[cç]as\s+[aà]|portanto|a\s+fi[nm]\s+de|em\s+virtude|por\s+conta\s+de|"
    r"perch[eé]|poich[eé]|siccome|quindi|affinch[eé])\b"
    r"|\bso\s+(?!and\b|to\b|far\s+as\b)\w+(?:\s+\w+)?,?\s+that\b|\bsuch\s+(?:a\s+)?\w+\s+that\b"  # a consequence
    r"|,\s*as\s+(?!well\b|usual\b|a\s+rule\b|before\b|always\b|if\b|though\b|long\b|far\b|soon\b|\d)"
    r"|,\s*car\s+(?!\d)|,\s*so\s+(?!to\s+speak\b|\d)"
    r"|[,;]\s*for\s+(?!(?:example|instance|all|each|every|ever|now|once|the\s+first|the\s+whole|a\s+while|a\s+time|some|"
    r"years?|months?|weeks?|days?|hours?|minutes?|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|"
    r"forty|fifty|a\s+few|many|several)\b|\d)"
    r"|\bsince\s+(?![\d(])(?:the|a|it|he|she|they|there|we|his|her|its|our|their)\s+(?!\w+\s+(?:of\s+)?\d)"
    r"|^\W*(?:as|since|da|comme|como)\s+\w+[^.]*,"  # a cause that opens the sentence: "As the engine is slow, …"
    r"|^\W*(?:if|when(?:ever)?|unless|если|когда|wenn|falls|si|se|quand)\s+[^.]*,"  # a condition: "If the weight …, the lens stops"
    r"|\w:\s+\w"  # a reason after a colon: "Хуже всего лёд: пар от лампы оседает…"
    r"|(?:^|[,;]\s*)otherwise\b"
    r"|\b(?:is|was|are|were|be|been|being|seems?|seemed|became|becomes|grew|gets?|got|'s)\s+(?:\w+\s+)?too\s+(?!much\b|many\b|late\b)\w+"
    r"|\btoo\s+\w+\s+(?:to|for)\b|\b(?:not\s+\w+\s+enough|\w+\s+enough\s+to)\b"
    r"|(?<![\w-])(?:слишком|недостаточно)(?![\w-])|\btrop\b|\bdemasiad[oa]s?\b|\bdemais\b"
    r"|(?<![\w-])(?:потому|поэтому|так\s+как|поскольку|чтобы|чтоб|дабы|ибо|из-за|благодаря|ради|оттого|причин\w*|"
    r"иначе(?!\s+говоря)|ведь|так\s+что|вследствие|для\s+того|затем\s+чтобы|следовательно|вызван[оаы]?|"
    r"в\s+связи\s+с|в\s+силу|с\s+целью|с\s+тем|а\s+то|дело\s+в\s+том)(?![\w-])"
)


def asks_reason(question: str) -> bool:
    """Whether ``question`` asks why, in English, Russian, German, French, Spanish, Portuguese or Italian (not what
    for, nor what caused: :data:`_ASKS_REASON`)."""
    return bool(_ASKS_REASON.search(question))


def gives_reason(sentence: str) -> bool:
    """Whether ``sentence`` gives a reason or a purpose: one of the marks of :data:`_GIVES_REASON`."""
    return bool(_GIVES_REASON.search(sentence))
