"""What a question asks for, and whether a sentence holds it (the answer-level check's first half;
docs/answering.md, "The answer-level check").

A question that says what kind of thing it wants — a number, an amount of money, an age, a weight, a length or
distance, a year, a colour, a name — is answered only by a sentence that holds a thing of that kind *which the
question does not already say*. A count is any number; the narrower kinds need their mark beside the number:
a currency for money ("fifty pounds", "£50", "сорок рублей"), a unit for a weight or a length ("600 gallons"
does not say how heavy or how far), a year's digits for "in which year". That is what tells "How much did the
new panes cost?" (a near miss) from the letter that asks for the panes by their size: both carry numbers, only
an answer carries money. A day of the month written beside its month ("the night of 12 February") is no count; and
a question that counts a named thing ("How many *steps*…") is answered by no measure or year ("5.2 metres", "until
1868"): :func:`counted_thing`. How a sentence's numbers are read (number words, days of the month, measures,
years): :mod:`footnote.answer.numbers`.

:func:`kind_windows` gives the few words around a sentence's number or colour, which the answer-level check
compares with the question (the number must be the number *of* what is asked).

Word lists cover English, Russian, German and Portuguese (the collections' and evaluation sets' languages) and
some French and Spanish; a question in another language is judged without a kind, by its focus words only.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from enum import Enum
from typing import NamedTuple

from footnote.answer.numbers import (
    LENGTH_WORDS,
    MONEY_WORDS,
    WEIGHT_WORDS,
    folded,
    has_number,
    holds_unit,
    inflected,
    is_measure,
    is_month,
    measured,
    number_at,
    split_words,
)
from footnote.answer.reasons import asks_reason, gives_reason
from footnote.answer.sentences import inflected_spelling, name_skeleton, name_spelling
from footnote.text import clean_text, fold, is_stop, keywords

__all__ = ["BOUND_KINDS", "KIND_WORDS", "AskedKind", "asked_kind", "carries_kind", "kind_windows"]


class AskedKind(Enum):
    """The kind of thing a question asks for (None: it does not say)."""

    NUMBER = "number"
    MONEY = "money"
    AGE = "age"
    WEIGHT = "weight"
    LENGTH = "length"
    YEAR = "year"
    COLOUR = "colour"
    NAME = "name"
    REASON = "reason"  # why: a sentence that gives a reason or an aim (footnote.answer.reasons)




#: Question openings that ask for a number (a count, an amount, a year), by language.
_ASKS_NUMBER = re.compile(
    r"(?i)\b(?:how\s+(?:many|much|long|old|far|large|big|tall|high|heavy|wide|deep)|"
    r"what\s+(?:year|percentage|percent|number|amount|age|date|sum|price)|in\s+(?:what|which)\s+year|"
    r"сколько|в\s+как\w*\s+году|какого\s+(?:числа|года)|"
    r"wie\s+(?:viele?|lange?|alt|hoch|schwer|weit|groß|breit|tief)|in\s+welchem\s+jahr|"
    r"quant[oa]s?|em\s+que\s+ano|qual\s+(?:o\s+)?(?:ano|número|valor)|"
    r"combien|en\s+quelle\s+année|cu[aá]nt[oa]s?|en\s+qu[eé]\s+año)\b"
)
_ASKS_COLOUR = re.compile(
    r"(?i)\b(?:what\s+colou?r|which\s+colou?r|какого\s+цвета|как\w*\s+цвет\w*|welche\s+farbe|was\s+für\s+eine\s+farbe|"
    r"(?:de\s+)?que\s+cor|qual\s+(?:[ée]\s+)?a\s+cor|quelle\s+couleur|de\s+qu[eé]\s+color|qu[eé]\s+color)\b"
)
_ASKS_NAME = re.compile(
    r"(?i)(?:\b(?:who|whom|whose|wer|wen|wem|wessen|quem|qui)\b|(?<![\w-])(?:кто|кого|кому|кем|чей|чья|чьё|чьи)(?![\w-])|"
    r"\b(?:what|which)\s+(?:was|is)\s+the\s+name|как\s+(?:звали|зовут|называ\w+)|wie\s+(?:hie(?:ß|ss)|hei(?:ß|ss)t)|"
    r"como\s+se\s+chama\w*|qual\s+(?:era\s+|é\s+)?o\s+nome)"
)
#: A temperature asked: "What was the temperature…", "How cold did it get…", «Какая была температура…»: a number.
_ASKS_MEASURE = re.compile(
    r"(?i)\b(?:what\s+(?:was|is|were)\s+the\s+temperature|how\s+(?:cold|hot|warm)\b|how\s+(?:low|high)\s+did\s+the\s+"
    r"temperature|welche\s+temperatur|wie\s+(?:kalt|warm|heiß)|quelle\s+(?:était\s+|est\s+)?la\s+température|"
    r"qu[eé]\s+temperatura|qual\s+(?:era\s+|é\s+)?a\s+temperatura)\b"
    r"|(?<![\w-])(?:как(?:ая|ой)\s+(?:была\s+|будет\s+|стояла\s+)?температур\w*|какой\s+(?:был\s+)?мороз|"
    r"насколько\s+(?:холодно|тепло))(?![\w-])"
)
#: "Which firm built…", "Welche Firma…", «Какая фирма…»: a maker is asked by name.
_ASKS_NAMED = re.compile(
    r"(?i)(?<![\w-])(?:which|what|как(?:ая|ой|ую|ие)|welche[mnrs]?|quel(?:le)?s?|qu[eé]|qual|cu[aá]l)\s+"
    r"(?:firm|firms|company|companies|manufacturer|manufacturers|maker|makers|фирма|фирмы|фирму|компания|компании|"
    r"компанию|firma|hersteller|entreprise|firme|empresa|compañía)(?![\w-])"
)
#: A question that asks "what/which … is the X" (no count word): the X may still be an amount ("What was her
#: salary?", "Какое жалованье…", "Qual era o salário…").
_ASKS_WHAT = re.compile(
    r"(?i)^\W*(?:what|which|как(?:ое|ой|ая|ие|ова|ов|овы)|welche[srnm]?|wie\s+hoch|qual|quais|quel(?:le)?s?|cu[aá]l)"
    r"(?![\w-])"
)
#: Words that make an amount asked for money: a price, a cost, a wage (stems, matched at a word's start;
#: German compounds anywhere in the word: "Jahres*gehalt*").
_MONEY_Q = re.compile(
    r"(?i)(?<![\w-])(?:cost|costs|costed|price[ds]?|paid|pay|salar(?:y|ies)|wages?|fees?|fares?|earn(?:s|ed)?|worth|allowances?|stipends?|income|"
    r"стои(?:л|ла|ло|ли|т|ят|мост\w*)|цен(?:а|ы|у|е|ой)|жаловань\w*|зарплат\w*|оплат\w*|заплати\w*|платил\w*|заработ\w*|"
    r"обош(?:ёлся|елся|лась|лось|лись)|обойд(?:ётся|ется|утся)|"
    r"\w*kost(?:et|ete|eten|en)?|\w*preis\w*|\w*gehalt\w*|\w*l[oö]hn\w*|bezahl\w*|verdien\w*|"
    r"custo|custa|custou|custava|preço|salários?|pago|pagou|pagava|ganhava|ganha|"
    r"coût\w*|prix|co[uû]te\w*|cuesta|cost[oó]|precio|salario|sueldo)(?![\w-])"
)
_ASKS_AGE = re.compile(
    r"(?i)\b(?:how\s+old|what\s+age|at\s+what\s+age|wie\s+alt|in\s+welchem\s+alter|quantos\s+anos\s+(?:tinha|tem|teve)|"
    r"com\s+que\s+idade|quel\s+[âa]ge|qu[eé]\s+edad|cu[aá]ntos\s+años\s+(?:tenía|tiene))\b"
    r"|(?<![\w-])(?:сколько\s+лет\s+(?:было|исполнилось|ему|ей|им)|в\s+каком\s+возрасте)(?![\w-])"
)
_ASKS_WEIGHT = re.compile(
    r"(?i)\b(?:how\s+heavy|what\s+(?:is|was)\s+the\s+weight|how\s+much\s+(?:does|did|do)\s+[\w\s'’-]{1,40}?weigh|"
    r"wie\s+schwer|wie\s+viel\s+wiegt|quanto\s+pesa\w*|qual\s+(?:é\s+|era\s+)?o\s+peso)\b"
    r"|(?<![\w-])(?:сколько\s+вес\w*|как\w*\s+вес\w*)(?![\w-])"
)
_ASKS_LENGTH = re.compile(
    r"(?i)\b(?:how\s+(?:far|tall|high|wide|deep)|"
    r"what\s+(?:is|was|are|were)\s+the\s+(?:height|length|width|depth|diameter|radius|distance|altitude|elevation)|"
    r"wie\s+(?:weit|hoch|breit|tief)|in\s+welcher\s+(?:entfernung|höhe)|"
    r"a\s+que\s+dist[âa]ncia|qual\s+(?:é\s+|era\s+)?a\s+(?:altura|dist[âa]ncia|largura|profundidade)|que\s+altura|"
    r"quelle\s+(?:est|était)\s+la\s+(?:hauteur|longueur|largeur|profondeur|distance)|à\s+quelle\s+(?:distance|hauteur|"
    r"profondeur)|a\s+qu[eé]\s+(?:distancia|altura|profundidad)|cu[aá]l\s+(?:es|era)\s+la\s+(?:altura|longitud|anchura|"
    r"profundidad|distancia)|qu[eé]\s+(?:altura|profundidad|longitud))\b"
    r"|(?<![\w-])(?:на\s+каком\s+расстоянии|на\s+какой\s+(?:высоте|глубине)|как\s+далеко|какой\s+(?:высоты|длины|ширины|глубины)|"
    r"какова\s+(?:высота|длина|ширина|глубина|дальность)|каков\s+диаметр)(?![\w-])"
)
_ASKS_YEAR = re.compile(
    r"(?i)\b(?:what\s+year|in\s+(?:what|which)\s+year|in\s+welchem\s+jahr|em\s+que\s+ano|qual\s+(?:o\s+)?ano|"
    r"en\s+quelle\s+année|en\s+qu[eé]\s+año)\b|(?<![\w-])(?:в\s+каком\s+году|какого\s+года)(?![\w-])"
)

#: Words that say what kind of thing is asked ("the *name* of", "what *year*", "какого *цвета*"): the answer
#: carries the thing, not the word, so they are not part of the question's focus.
KIND_WORDS = folded("""
name names named called call year years date number numbers amount colour color colours colors kind type sort
percentage percent age price sum total much many long often old far oft часто
имя имени зовут звали называется называлась назывался называли год году года годы число числа цвет цвета
количество сколько какого какой какая какие
name namen hieß hiess heißt heisst jahr jahre jahres farbe anzahl zahl viel viele lange alt
nome nomes chama chamava chamado chamada ano anos data número números cor cores quantidade quantos quantas
quanto quanta
temperature температура температуры temperatur température temperatura
reason reasons purpose причина причины причине цель цели целью grund raison raisons razão razón motivo
""")

#: Colour words by language: each stem with the endings its language gives it ("red*dish*", «сер*ого*», «син*ей*»,
#: "rot*e*", "blanc*he*", "branc*o*", "cinz*enta*"), so that a colour is never a word it merely begins ("reduce",
#: "redes", "branch", "prêt", "rota", «серия», «голубь»). Compounds are read by their parts ("blue-green",
#: «тёмно-красный»).
_HARD = "ый ой ая ое ые ого ому ым ых ую ыми ом"
_SOFT = "ий яя ее ие его ему им их юю ими ем ей"
_COLOUR_GROUPS: tuple[tuple[str, str], ...] = (
    ("red green blue white black yellow grey gray brown orange purple pink violet golden silver crimson scarlet navy "
     "maroon", "_ s ish dish ness er est y ey"),
    ("красн зелен зелён голуб бел черн чёрн желт жёлт сер коричнев оранжев фиолетов розов золот ал бордов "
     "багров пурпурн", _HARD + " ее изна изны изну " + " ".join(i + e for i in ("оват", "еват", "ист") for e in _HARD.split())),
    ("серебр", " ".join("ян" + e for e in _HARD.split()) + " ист " + " ".join("ист" + e for e in _HARD.split())),
    ("син", _SOFT + " " + " ".join("еват" + e for e in _HARD.split())),
    ("rot grün blau weiß weiss schwarz gelb grau braun lila rosa golden silbern orange", "_ e er es en em lich liche"),
    ("rouge vert verd bleu blanc noir jaun gris brun", "_ e s es he hes atre atres"),
    ("vermelh avermelh branc blanc pret amarel cinz acinzent rox dourad pratead roj negr amarill morad rosad",
     "o a os as ado ada ados adas ento enta izo iza"),
    ("azul verde marrom laranja rosa marrón", "_ s es ado ada ados adas"),
)


def _colour_endings() -> dict[str, frozenset[str]]:
    """Each colour stem (folded) with every ending its languages give it ("_": none)."""
    out: dict[str, frozenset[str]] = {}
    for stems, endings in _COLOUR_GROUPS:
        for st in folded(stems):
            out[st] = out.get(st, frozenset()) | {"" if e == "_" else fold(e) for e in endings.split()}
    return out


_COLOUR_ENDINGS = _colour_endings()
#: Forms no ending makes.
_COLOUR_FORMS = folded("azuis whites whiter whitest whitish bluish bluer redder reddest purplish")
#: A German shade or colour before a colour in one word ("*dunkel*blau", "*rot*braun").
_SHADE = re.compile(r"^(?:dunkel|hell|tief|blass|zart|rot|blau|grün|grun|gelb|grau|braun|schwarz|weiß|weiss)(?=\w{3})")


def _is_colour(word: str) -> bool:
    return any(form in _COLOUR_FORMS or inflected(form, _COLOUR_ENDINGS, _COLOUR_ENDINGS.__getitem__)
               for part in fold(word).split("-") for form in {part, _SHADE.sub("", part)})


#: The words of an age beside its number, whole ("40 *years*" is no age without "old"; «40 *лет*» is).
_AGE_WORDS = folded("""
aged age ages
лет год года возраст возрасте возраста
jahre jahren jährig alter
anos idade
ans âge años edad
""")
_MONEY_SYMBOL = re.compile(r"[£$€¥₽₹]|\b\d[\d.,]*\s*(?:[£$€₽]|руб|коп|usd|eur|gbp|rub)|\b(?:us\$|r\$)")
_WEIGHT_UNIT = re.compile(r"(?i)\d\s*(?:kg|g|lb|lbs|oz|cwt|кг)\b")
_LENGTH_UNIT = re.compile(r"(?i)\d\s*(?:km|m|cm|mm|mi|ft|yd|nmi|км|м|см|мм)\b")
#: An age: "years old", "aged"; of a thing, "515 million years ago", «лет назад», "anos atrás".
_AGE_MARK = re.compile(r"(?i)\byears?[\s-]+old\b|\bde\s+idade\b|\bans\b|\byears?\s+ago\b|\b(?:million|billion)\s+years\b|"
                       r"(?<![\w-])лет\s+назад(?![\w-])|\banos\s+atr[aá]s\b")
_YEAR_DIGITS = re.compile(r"(?<![\d.,])(\d{3,4})(?:s|-?е|-?х|-?м|-?го)?(?![\d.,]?\d)")


def asked_kind(question: str) -> AskedKind | None:
    """What kind of thing ``question`` asks for (None: it does not say). A reason first (a why-question), then a
    colour, then the narrower kinds: an amount of money, an age, a weight, a length or distance, a year — then any
    number, a name."""
    q = clean_text(question)
    if asks_reason(q):
        return AskedKind.REASON
    if _ASKS_COLOUR.search(q):
        return AskedKind.COLOUR
    number = bool(_ASKS_NUMBER.search(q))
    if _MONEY_Q.search(q) and (number or _ASKS_WHAT.search(q)):
        return AskedKind.MONEY
    for pattern, kind in ((_ASKS_AGE, AskedKind.AGE), (_ASKS_WEIGHT, AskedKind.WEIGHT),
                          (_ASKS_YEAR, AskedKind.YEAR), (_ASKS_LENGTH, AskedKind.LENGTH)):
        if pattern.search(q):
            return kind
    if number or _ASKS_MEASURE.search(q):
        return AskedKind.NUMBER
    if _ASKS_NAME.search(q) or _ASKS_NAMED.search(q):
        return AskedKind.NAME
    return None


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_][\w'’-]*", clean_text(text))


#: The polite "you" and "your" a letter capitalises mid-sentence («О Вашем маяке…», "Ihr Brief"): no names.
_POLITE = folded("""
вы вас вам вами ваш ваша ваше ваши вашего вашей вашему вашим вашими вашем вашу ваших
sie ihnen ihr ihre ihrem ihren ihrer ihres euch euer eure vous votre usted ustedes
""")

#: Days of the week, capitalised mid-sentence in English and German as months are: no names ("Tesla died on 7
#: January 1943" names no one).
_WEEKDAYS = folded("""
monday tuesday wednesday thursday friday saturday sunday montag dienstag mittwoch donnerstag freitag samstag
sonnabend sonntag
""")

#: What a capitalised word may follow and still open a sentence (a quotation, a clause after a colon or dash).
_OPENS = "«„“‚‘\"'([:—–.!?"


def _same_name(word: str, own: set[str], spelled: set[str]) -> bool:
    """Whether ``word`` is one of the question's own names in another script or spelling (``Пенхеллоу`` for
    ``Penhallow``): skeletons equal, or one a prefix of the other of at least three letters; or in another case
    (``spelled``: the question's names as :func:`~footnote.answer.sentences.name_spelling` writes them —
    «Сторожевом» for «Сторожевого»)."""
    sk, sp = name_skeleton(word), name_spelling(word)
    if any(inflected_spelling(sp, q) for q in spelled):
        return True
    return bool(sk) and any(sk == q or (min(len(sk), len(q)) >= 3 and (sk.startswith(q) or q.startswith(sk)))
                            for q in own)


def _mid_sentence(words: list[re.Match[str]], text: str) -> list[int]:
    """Which of ``text``'s ``words`` do not open a sentence or a quotation: where a capital marks a name."""
    out = []
    for i, m in enumerate(words):
        before = text[: m.start()].rstrip()
        if not before:
            continue
        if before[-1] not in _OPENS or (before[-1] in _QUOTES and _short_quote(text[m.start():])):
            out.append(i)  # a word mid-sentence, or a short quoted title: the schooner «Kittiwake»
    return out


def _tells_a_name(text: str, question: str, qwords: set[str]) -> bool:
    """Whether ``text`` holds a name the question does not: a capitalised word mid-sentence that is no function
    word, nor one of the question's words or names (in another script or spelling: :func:`_same_name`). The
    question's own function words are no names of its own: "What" and "White" share a consonant skeleton."""
    names = [w for w in _words(question) if w[:1].isupper() and not is_stop(w)]
    own = {name_skeleton(w) for w in names}
    spelled = {name_spelling(w) for w in names}
    words = list(re.finditer(r"[^\W_][\w'’-]*", text))
    return any(w[:1].isupper() and fold(w) not in qwords and not is_stop(w) and fold(w) not in _POLITE
               and not is_month(w) and fold(w) not in _WEEKDAYS and not _same_name(w, own, spelled)
               for w in (words[i].group() for i in _mid_sentence(words, text)))


_QUOTES = "«„“‚‘\"'"
_CLOSES = re.compile("[»“”‘’\"']")


def _short_quote(rest: str) -> bool:
    """Whether a quotation opening at ``rest`` closes within three words (a name, not a quoted sentence)."""
    m = _CLOSES.search(rest)
    return m is not None and len(rest[: m.start()].split()) <= 3


def _question_words(question: str) -> set[str]:
    """The question's words and keywords, folded: what a sentence's number or name must not merely repeat."""
    return {fold(w) for w in keywords(question)} | {fold(w) for w in _words(question)}


#: "How many <things>", "combien de <choses>", "cuántos/quantos <cosas>", "wie viele <Dinge>", «сколько <вещей>»: the
#: thing counted is named right after the opening ("of the" may stand between; a German noun is capitalised; Russian
#: adjectives in -ых/-их may stand before it, and a word ending as a verb does is no thing).
_COUNT_OF = re.compile(
    r"(?i:\bhow\s+many|\bcombien\s+d[e'’]|\bcu[aá]nt[oa]s|\bquant[oa]s)\s*((?:of\s+|the\s+|de\s+|des\s+|los\s+|las\s+|"
    r"os\s+|as\s+|dos\s+|das\s+)*)([^\W\d_][\w'’-]*)((?:\s+[^\W\d_][\w'’-]*){0,2})"
    r"|\b(?i:wie\s+viele)\s+((?:der\s+|die\s+)?)([A-ZÄÖÜ][\w-]*)((?:\s+[^\W\d_][\w'’-]*){0,2})"
    r"|(?<![\w-])(?i:сколько)\s+((?:из\s+)?(?:[а-яё]+(?:ых|их)\s+)*)([а-яё]+)((?:\s+[а-яё]+){0,2})"
)
#: A Russian word that ends as a verb does («Сколько *длился*…», «Сколько *стоит*…»): no thing counted.
_RU_VERB = re.compile(r"(?:л|ла|ло|ли|лся|лась|лось|лись|ет|ит|ют|ят|ут|ат|ется|ится|ются|ятся|ешь|ишь)$")
#: "How many times…": a frequency, which a year may answer ("won the cup in 1946 and in 2000"), not a thing counted;
#: "combien de temps": a time.
_TIMES = folded("time times fois veces vezes mal раз раза temps tiempo tempo zeit")
class _Count(NamedTuple):
    thing: str
    shares: bool  # "how many *of* the voters": a share answers too ("62 % of the voters")


def _counting(question: str) -> _Count | None:
    m = _COUNT_OF.search(clean_text(question))
    if m is None:
        return None
    between, thing, after = next((m.group(k), m.group(k + 1), m.group(k + 2)) for k in (1, 4, 7) if m.group(k + 1))
    if (m.group(8) and _RU_VERB.search(fold(thing))) or is_stop(thing) or fold(thing) in KIND_WORDS | _TIMES:
        return None
    if any(is_measure(w) or fold(w) in _TIMES for w in [thing, *after.split()]):
        return None  # "How many nautical *miles*…", "How many working *days*…": a measure asked
    return _Count(thing, bool(re.search(r"(?i)\b(?:of|des|de|dos|das|der|из)\b", between)))


def _shares(question: str) -> bool | None:
    """For :func:`~footnote.answer.numbers.has_number`: None when ``question`` counts no named thing, else whether a
    share answers it too ("how many *of* the voters")."""
    c = _counting(question)
    return None if c is None else c.shares


def counted_thing(question: str) -> str | None:
    """The thing ``question`` counts ("How many *steps*…", "Wie viele *Fischerboote*…"), when it is no measure
    ("How many *miles*…", "How many nautical *miles*…", "How many *years*…", "combien de *temps*…" ask a measure):
    a number of that thing is no length, time or amount of money. None: the question counts no named thing."""
    c = _counting(question)
    return None if c is None else c.thing


def _has_colour(words: list[str], qwords: set[str]) -> bool:
    return any(_is_colour(w) and fold(w) not in qwords for w in words)


def carries_kind(sentence: str, question: str, kind: AskedKind | None) -> bool:
    """Whether ``sentence`` holds a thing of ``kind`` that the question does not already say."""
    if kind is None:
        return True
    text = clean_text(sentence)
    qwords = _question_words(question)
    words = _words(text)
    if kind is AskedKind.COLOUR:
        # a capitalised colour word past the sentence's first is a name ("the Black Skerry beacon"), not a colour
        plain = [w for i, w in enumerate(re.findall(r"[^\W\d_]+", text)) if i == 0 or not w[:1].isupper()]
        return _has_colour(plain, qwords)
    if kind is AskedKind.NAME:
        return _tells_a_name(text, question, qwords)
    if kind is AskedKind.REASON:
        return gives_reason(text)
    if kind is AskedKind.YEAR:
        qdigits = set(re.findall(r"\d+", question))
        return any(m.group(1) not in qdigits for m in _YEAR_DIGITS.finditer(text))
    if not has_number(text, qwords, _shares(question) if kind is AskedKind.NUMBER else None):
        return False
    if kind is AskedKind.MONEY:
        return bool(_MONEY_SYMBOL.search(text)) or holds_unit(words, MONEY_WORDS)
    if kind is AskedKind.WEIGHT:
        return bool(_WEIGHT_UNIT.search(text)) or holds_unit(words, WEIGHT_WORDS)
    if kind is AskedKind.LENGTH:
        return bool(_LENGTH_UNIT.search(text)) or holds_unit(words, LENGTH_WORDS)
    if kind is AskedKind.AGE:
        return bool(_AGE_MARK.search(text)) or any(fold(w) in _AGE_WORDS for w in words)
    return True


#: The kinds whose carrier in a sentence must stand near the question's words (:func:`kind_windows`): a number of any
#: kind, or a colour. A name is not held to it: measured, it cost SQuAD 2.0 an answer for one more decline.
BOUND_KINDS = frozenset({AskedKind.NUMBER, AskedKind.MONEY, AskedKind.AGE, AskedKind.WEIGHT, AskedKind.LENGTH,
                         AskedKind.YEAR, AskedKind.COLOUR})
_TOKEN = re.compile(r"\S+")


def kind_windows(sentence: str, question: str, kind: AskedKind | None, span: int) -> list[str]:
    """The stretches of ``sentence`` — ``span`` words before and after — around each word that holds a thing of
    ``kind`` (a number the question does not write; a colour), for :data:`BOUND_KINDS`; empty for other kinds.

    The answer-level check compares each with the question: a sentence whose number is about something else ("Two
    nautical miles off Gannet Head stands the Black Skerry beacon, a black iron pole" for "How tall is the iron
    pole?"; "The range of the tide at Marrowick is 5.2 metres" for "How deep is the water over the bar?") carries
    the kind asked and, through its passage, the question's words — but not near each other."""
    if kind not in BOUND_KINDS:
        return []
    text = clean_text(sentence)
    qwords = _question_words(question)
    tokens = list(_TOKEN.finditer(text))
    token_starts = [m.start() for m in tokens]
    words, joined, starts = split_words(text)
    token_of = [bisect_right(token_starts, at) - 1 for at in starts]  # the token each word stands in
    counted = _counting(question) if kind is AskedKind.NUMBER else None
    out: list[str] = []
    for j, w in enumerate(words):
        i = token_of[j]
        if kind is AskedKind.COLOUR:
            held = (i == 0 or not w[:1].isupper()) and _has_colour([w], qwords)
        else:
            held = number_at(words, j, qwords, joined) and (
                counted is None or not measured(words, j, joined, text, starts, counted.shares))
        if held:
            a, b = tokens[max(0, i - span)].start(), tokens[min(len(tokens) - 1, i + span)].end()
            out.append(text[a:b])
    return list(dict.fromkeys(out))
