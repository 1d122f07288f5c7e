"""Numbers in a sentence: counts, amounts, measures, years and days of the month, in the languages the collections
and evaluation sets are written in (docs/answering.md, "The answer-level check"; :mod:`footnote.answer.asked` reads
what a question asks and uses these to tell whether a sentence holds it).

- A number is a digit or a number word (stems chosen to begin few other words, short ones listed whole), or a
  fraction ("a third"); not "one" as a pronoun, nor a day of the month written beside its month.
- A **measure** is a number with a unit after it (length, weight, money, time, volume, area, temperature, a share),
  directly or after a word like "nautical"; a **year** is four digits after a word like "until" or in brackets, or a
  decade. A question that counts a named thing ("How many steps…") is answered by neither (:func:`measured`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from footnote.text import fold, is_stop, numbers

__all__ = ["LENGTH_WORDS", "MONEY_WORDS", "WEIGHT_WORDS", "folded", "has_number", "holds_unit", "inflected",
           "is_measure", "is_month", "is_number_word", "is_unit", "measured", "number_at", "short_years", "split_words",
           "written_numbers"]


def folded(words: str) -> frozenset[str]:
    """The whitespace-separated ``words``, folded (:func:`footnote.text.fold`)."""
    return frozenset(fold(w) for w in words.split())


#: Number words, matched at a word's start (or each part of "twenty-four"): stems of four letters or more chosen to
#: begin few other common words. A shorter or ambiguous stem is no prefix — "mil" is not in "miles", «сто» not in
#: «Сторожевом», «сем» not in «семья», «одна» not in «однако», «шест» not in «шест» (a pole), "zwei" not in "Zweig",
#: "sete" not in "setembro" — so those numbers are listed whole (:data:`_NUMBER_FORMS`) with the longer stems of
#: the numbers they begin.
_NUMBER_STEMS = tuple(folded("""
three five seven eight nine eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen
twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion dozen fourfold
четыр пятнадцат пятьдесят пятидесят пятьсот пятисот пятист пятикрат шести семнадцат семьдесят семидесят семьсот
семисот семист семикрат семер пятер восем восьм девят десят одиннадцат двенадцат тринадцат двадцат тридцат сорок
девяност двест двухсот трист трехсот двукрат трехкрат полсотн тысяч миллион миллиард полтор половин трижд дважд
fünf sechs sieben neun zehn zwölf zwanzig dreißig dreissig vierzig fünfzig sechz siebz achtzig neunzig hundert
tausend million milliard zweiund zweihundert zweitausend zweimal zweiein zweijähr dreizehn dreihundert
dreitausend dreiund dreimal dreiein vierzehn vierhundert viertausend vierund viermal viertel achtund achtzehn
achthundert achttausend achtmal achtel einund einhundert eintausend
dois duas quatro cinco oito vinte trinta quarenta cinquenta sessenta setent oitenta novent cento duzent trezent
quatrocent quinhent seiscent setecent oitocent novecent treze catorze quatorze quinze dezes dezen dezo milhao
milhoe milhar millon millier
"""))
#: Numbers listed whole: their stem is short or begins other words ("four" — "Fourier", "vier" — "viernes", «сотн» —
#: «сотник», "seis" — "seismic").
_NUMBER_FORMS = frozenset(folded("""
one two four six ten tens half score sixpence twopence tenfold twofold sixfold
один одна одно одну одной одного одному одним одном два две двух двум двумя двое двоих три трех трём трем тремя
трое троих пять пяти пятью шесть шести шестью шестеро шестерых семь семи сто ста сотня сотни сотню сотней сотен
сотнями
eins zwei drei vier elf acht mil cem dez tres seis sete nove onze doze mille
"""))
_NUMBER_WORD_SET = frozenset(_NUMBER_STEMS) | _NUMBER_FORMS

#: The mark an amount needs beside its number, by kind (folded stems at a word's start, or a symbol/unit after
#: a digit).
MONEY_WORDS = tuple(folded("""
pound shilling pence penny pennies guinea dollar cent euro franc crown rupee yen peso rouble ruble sovereign
farthing
рубл копейк копеек фунт шиллинг пенс пенни доллар долл евро франк гине крон
pfund pfunde schilling schillinge pfennig pfennige dollar euro taler thaler gulden kronen groschen
libra xelim xelins dólar euro centavo escudo réis real reais cruzeiro
livre sou écu dólares peseta centime céntimo
"""))
WEIGHT_WORDS = tuple(folded("""
kilogram kilogramme kilo gram gramme tonne ton pound ounce hundredweight
килограмм кило грамм тонн пуд фунт унци центнер
kilogramm gramm tonne pfund pfunde zentner unze gramo kilogramo quilograma
quilo grama tonelada libra arroba onça
"""))
LENGTH_WORDS = tuple(folded("""
metre meter kilometre kilometer centimetre centimeter millimetre millimeter mile yard foot feet inch fathom
league cable
метр километр сантиметр миллиметр мил ярд фут дюйм сажен верст кабельтов
meter kilometer zentimeter meile fuß füße fuss zoll elle klafter seemeile
metro quilômetro quilómetro centímetro milha pé pés polegada légua braça
mètre kilomètre pied pouce lieue metro kilómetro
"""))


#: "one" as a pronoun, not a count, after these words ("the one the others hang from", "no one", "each one"; "only
#: one", "one of the keepers" stay counts).
_ONE_PRONOUN_AFTER = frozenset({"the", "this", "that", "which", "every", "each", "no", "another"})
#: A fraction is an amount: a word of these after a number or an article ("a third", "two fifths"; "the third" is
#: an ordinal), and the nouns that only name a fraction.
_FRACTIONS = frozenset({"third", "thirds", "fifth", "fifths", "sixth", "sixths", "seventh", "sevenths", "eighth",
                        "eighths", "ninth", "ninths", "tenth", "tenths", "quarter", "quarters"})
_FRACTION_NOUNS = frozenset(folded("треть трети третью третей четверть четверти четвертью четвертей drittel viertel "
                                    "hälfte"))


def split_words(text: str) -> tuple[list[str], list[bool], list[int]]:
    """``text``'s words; for each whether only spaces part it from the word before (no comma, no full stop); and
    where each starts."""
    words, joined, starts, end = [], [], [], None
    for m in re.finditer(_WORD, text):
        w = m.group().rstrip(".") or m.group()
        words.append(w)
        joined.append(end is not None and not text[end: m.start()].strip())
        starts.append(m.start())
        end = m.start() + len(w)
    return words, joined, starts


def number_at(words: list[str], i: int, qwords: set[str], joined: list[bool] | None = None) -> bool:
    """Whether ``words[i]`` holds a number (a count, an amount, a fraction) the question does not write — not "one"
    as a pronoun ("the one the others hang from"), nor a day of the month written beside its month ("the night of
    12 February", «днём десятого ноября», "March 3rd", "the 3rd of March": a date is no count; "In April, 30
    keepers served" is one). ``joined``: from :func:`_split` (without it, words are taken as written together)."""
    w = words[i]
    f = fold(w)
    if f in qwords:
        return False
    before = fold(words[i - 1]) if i > 0 else ""
    if f == "one" and before in _ONE_PRONOUN_AFTER:
        return False
    if f in _FRACTION_NOUNS or (f in _FRACTIONS and (before == "a" or before in _NUMBER_WORD_SET or before.isdigit())):
        return True
    digits = any(ch.isdigit() for ch in w)
    if not digits and not is_number_word(w):
        return False
    if digits:
        m = _DAY.match(f)
        if m is None or not 1 <= int(m.group(1)) <= 31:
            return True  # no day of a month: "5.2", "1886", "600"

    def beside(j: int) -> bool:  # words[j] next to words[i], nothing but spaces between
        lo, hi = min(i, j), max(i, j)
        return 0 <= j < len(words) and (joined is None or all(joined[k] for k in range(lo + 1, hi + 1)))

    after_month = (beside(i + 1) and is_month(words[i + 1])) or (
        beside(i + 2) and fold(words[i + 1]) in {"of", "de"} and is_month(words[i + 2]))
    before_month = digits and beside(i - 1) and is_month(words[i - 1])
    return not (after_month or before_month)


#: Month names (folded; Russian in the forms a date writes them): a number beside one is a day of the month. The
#: English ones only capitalised ("may" and "march" are verbs).
_MONTHS_CAPITALISED = folded("""
january february march april may june july august september october november december jan feb apr jun jul aug sep
oct nov dec
""")
_MONTHS = folded("""
январь января январе февраль февраля феврале март марта марте апрель апреля апреле май мая мае июнь июня июне
июль июля июле август августа августе сентябрь сентября сентябре октябрь октября октябре ноябрь ноября ноябре
декабрь декабря декабре
januar jänner februar märz april mai juni juli august september oktober november dezember
janvier février mars avril juin juillet août septembre octobre novembre décembre
enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre
janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro
""")
_WORD = r"[^\W_][\w'’.-]*"
#: A day's number, in digits with an ordinal ending or none ("3rd", «10-го»).
_DAY = re.compile(r"(\d{1,2})(?:st|nd|rd|th|-?го|-?е|-?й|\.)?$")


def is_month(word: str) -> bool:
    f = fold(word)
    return f in _MONTHS or (f in _MONTHS_CAPITALISED and word[:1].isupper())


#: Time and other measures a number may be written with (folded, whole words): with a length, a weight or money
#: (:data:`LENGTH_WORDS`, :data:`WEIGHT_WORDS`, :data:`MONEY_WORDS`), what makes "5.2 metres" or "two hours" a
#: measure, not a count of things.
_MEASURE_FORMS = folded("""
second seconds minute minutes hour hours day days week weeks fortnight fortnights month months year years decade
decades century centuries night nights degree degrees percent square cubic sq gallon gallons litre litres liter liters
pint pints quart quarts barrel barrels bushel bushels acre acres hectare hectares
секунда секунды секунд секунду минута минуты минут минуту час часа часов сутки суток день дня дней неделя недели
недель неделю месяц месяца месяцев год года году годах годов лет век века веков ночь ночи ночей градус градуса градусов процент
процента процентов времени квадратных кубических галлон галлона галлонов литр литра литров баррель баррелей
гектар гектара гектаров
sekunde sekunden minute minuten stunde stunden tag tage tagen woche wochen monat monate monaten jahr jahre jahren
jahrzehnt jahrzehnte jahrhundert jahrhunderte nacht nächte grad prozent quadratmeter quadratkilometer gallone
gallonen hektar
seconde secondes heure heures jour jours semaine semaines mois ans année années siècle siècles nuit nuits degré
degrés pour-cent
segundo segundos minuto minutos hora horas día días dia dias semana semanas mes meses mês ano anos año años siglo
siglos século séculos noche noches noite noites grado grados grau graus litro litros galão galões barril barris
hectare hectares hectárea hectáreas gallon gallons carré carrés quadrados cuadrados
""")
_UNIT_JOINED = re.compile(r"(?i)^\d[\d.,]*(?:km|m|cm|mm|mi|ft|yd|nmi|kg|g|lb|lbs|oz|t|h|min)$")
_MEASURE_STEMS = LENGTH_WORDS + WEIGHT_WORDS + MONEY_WORDS
_MEASURE_SIGN = re.compile(r"(?i)^\s*(?:%|°|‰)|^(?:km|m|cm|mm|mi|ft|yd|nmi|kg|g|lb|lbs|oz|t|h|s|min)$")
#: Shares: no count of things, unless the question counts "how many *of* the voters".
_SHARE_FORMS = folded("percent per-cent процент процента процентов prozent pour-cent por-ciento")
#: Unit words that are as often ordinary words ("150 *league* goals", "24 *metro* stations", "3000 *livres*" — books,
#: "three *Crown* dependencies"): no measure of a count.
_PLAIN_TOO = folded("""
league leagues metro metros real reais crown crowns sovereign sovereigns guinea guineas cable cables foot sou sous
livre livres elle ellen mil pé
""")
#: Words between a number and its unit ("two *nautical* miles", "5 *square* metres", «две *морских* мили»).
_UNIT_MODIFIERS = folded("""
nautical square cubic statute metric imperial light sea english морских морские морская морской квадратных
квадратные кубических кубические quadratische carré carrés cuadrados quadrados náuticas náuticos marinas
""")
#: Words that follow a measure and end it ("18 nautical miles *away*", "one year *old*").
_AFTER_MEASURE = folded("away long high wide deep tall ago old later earlier apart thick across")


#: Words before a year ("*until* 1868 the lamp…", «*с* 1868»): a four-digit number after one of them, with no word of
#: its own after it, is a year. Not "of" or "to" ("a population *of* 1200", "rose *to* 1500": counts).
_YEAR_BEFORE = folded("""
in since until till from before after circa c ca during в с до после около со im seit bis vor nach ab em desde até
en depuis jusqu hasta antes durante dès
""")


#: The endings a unit's stem takes in the words above ("metre*s*", «метр*ов*», "Meile*n*"): a unit is the stem with
#: one of these, not any word it begins ("Grammy", "European", "France", «миллион», «милых»).
_UNIT_ENDINGS = folded("s es n en ns  а ы и у е ом ам ах ами ов ев ей й ь я ю ям ях ями ём ем ой ых ыми") | {""}
#: Stems whose other forms are other words: «мил*и*, мил*ь*» are miles, «мил*ой*, мил*ых*» dear.
_STEM_ENDINGS = {fold("мил"): folded("и ь е ях ям ями ю я")}


def inflected(folded_word: str, stems: Iterable[str], endings: Callable[[str], frozenset[str]]) -> bool:
    """Whether ``folded_word`` is one of ``stems`` with one of the ``endings`` that stem takes — a whole word in one
    of its forms, never any word the stem begins. Units (:func:`is_unit`) and colours
    (:func:`footnote.answer.asked.carries_kind`) are read this way."""
    return any(folded_word.startswith(st) and folded_word[len(st):] in endings(st) for st in stems)


def is_unit(word: str, stems: tuple[str, ...]) -> bool:
    """Whether ``word`` is one of the units ``stems`` name: a stem whole or with a plural or case ending
    (:data:`_UNIT_ENDINGS`), never any word it begins ("Grammy", "central", "France", "people", «милых»)."""
    return inflected(fold(word), stems, lambda st: _STEM_ENDINGS.get(st, _UNIT_ENDINGS))


def is_measure(word: str) -> bool:
    return fold(word) in _MEASURE_FORMS or is_unit(word, _MEASURE_STEMS) or bool(_MEASURE_SIGN.match(word))


def holds_unit(words: list[str], stems: tuple[str, ...]) -> bool:
    """Whether ``words`` hold a unit of ``stems`` (:func:`is_unit`: "fifty *shillings*", «сорок *рублей*», "48
    *metres*", "a 3 *metre*-high plinth"); a unit word as often an ordinary one (:data:`_ONLY_AFTER_A_NUMBER`:
    "league", "real", "crown", "sous", "pounds") only within three words after a number ("*half* a crown")."""
    for j, w in enumerate(words):
        for part in w.split("-"):  # "a 3 metre-high plinth"
            if not is_unit(part, stems):
                continue
            if fold(part) not in _ONLY_AFTER_A_NUMBER or any(
                    any(ch.isdigit() for ch in b) or is_number_word(b) or fold(b) in _COUNT_TOO for b in words[max(0, j - 3): j]):
                return True
    return False


#: Words that count a unit too, where a number may be read whole only over several words ("*half* a crown", "trinta
#: e *um* metros").
_COUNT_TOO = folded("half um uma un une una")


#: Unit words that are as often other words: units only just after a number ("the sea *pounds* the pier", "two
#: *tones*", French "*cent* marches").
_ONLY_AFTER_A_NUMBER = _PLAIN_TOO | folded("pound pounds tone tones cent cents")


def _unit_at(words: list[str], j: int, joined: list[bool], shares: bool) -> bool:
    """Whether ``words[j]`` (just after a number, or after one of :data:`_UNIT_MODIFIERS`) is its unit. Not a
    capitalised word (a name: "72 *France* caps"), a unit word as often an ordinary one (:data:`_PLAIN_TOO`), a share
    when the question counts "how many of", nor an English singular that names the kind of the next word ("two
    *night* watchmen", "300 *pound* coins")."""
    w = words[j]
    f = fold(w)
    if w[:1].isupper() or f in _PLAIN_TOO or (shares and f in _SHARE_FORMS) or not is_measure(w):
        return False
    nxt = words[j + 1] if j + 1 < len(words) and joined[j + 1] else ""
    modifier = (w.isascii() and not f.endswith("s") and nxt and not is_stop(nxt) and fold(nxt) not in _AFTER_MEASURE
                and not nxt[:1].isdigit())
    return not modifier


_AND = folded("and и und e y et")


def is_number_word(word: str) -> bool:
    f = fold(word)
    return f.isdigit() or any(part in _NUMBER_WORD_SET or part.startswith(_NUMBER_STEMS) for part in f.split("-"))


def measured(words: list[str], i: int, joined: list[bool], text: str, starts: list[int], shares: bool = False) -> bool:
    """Whether the number ``words[i]`` is a measure or a year, not a count of things: a unit right after it, or
    after a word like "nautical" ("5.2 metres", "two nautical miles", "50 %", "12 °C", "48 m"); a year is four digits
    from 1000 to 2100 after a word like "until", «с», "seit", or in brackets, with no word of its own after them
    ("until 1868 the lamp", "(2002)"), or a decade ("the 1860s")."""
    end = starts[i] + len(words[i])
    if (not shares and _MEASURE_SIGN.match(text[end: end + 2])) or _UNIT_JOINED.match(words[i]):
        return True
    if i + 1 < len(words) and starts[i + 1] == end + 1 and text[end] in ",." and words[i + 1][:1].isdigit():
        return measured(words, i + 1, joined, text, starts, shares)  # "5,2 метра", "22,000 years": one number
    # one number in words: «тридцати восьми градусов», "a hundred and twenty metres" — judged by its last word
    j = i + 2 if i + 2 < len(words) and fold(words[i + 1]) in _AND and joined[i + 2] else i + 1
    if j < len(words) and joined[i + 1] and is_number_word(words[j]):
        return measured(words, j, joined, text, starts, shares)
    if i + 1 < len(words) and joined[i + 1] and _unit_at(words, i + 1, joined, shares):
        return True
    if (i + 2 < len(words) and joined[i + 1] and joined[i + 2] and fold(words[i + 1]) in _UNIT_MODIFIERS
            and _unit_at(words, i + 2, joined, shares)):
        return True
    m = re.fullmatch(r"(\d{4})(s|-х|-е)?", words[i])
    if m is None or not 1000 <= int(m.group(1)) <= 2100:
        return False
    if m.group(2):
        return True  # a decade
    if i + 1 < len(words) and joined[i + 1] and not is_stop(words[i + 1]) and not is_month(words[i + 1]):
        return False  # "1500 soldiers"
    before = text[: starts[i]].rstrip()
    return before.endswith("(") or (i > 0 and joined[i] and fold(words[i - 1]) in _YEAR_BEFORE)


def has_number(text: str, qwords: set[str], shares: bool | None = None) -> bool:
    """Whether ``text`` holds a number the question does not write (``qwords``: its folded words); with ``shares``
    not None (the question counts a named thing: :func:`footnote.answer.asked.counted_thing`; True when it counts
    "how many *of*", where a share answers too), a number that is no measure or year."""
    words, joined, starts = split_words(text)
    return any(number_at(words, i, qwords, joined)
               and (shares is None or not measured(words, i, joined, text, starts, shares))
               for i in range(len(words)))


#: "1887-88", "1914–18", "1998/99": a span of years whose second is written by its last two digits.
_YEAR_SPAN = re.compile(r"(?<![\d-])(1\d|20)(\d\d)\s?[-–—/]\s?(\d\d)(?![\d-])")


def short_years(text: str) -> dict[str, str]:
    """The second years of the spans ``text`` writes short, whole ("the winter of 1887-88": 88 → 1888; 1999-00 →
    2000), by their two digits. Not a date ("2021-05-12")."""
    out = {}
    for m in _YEAR_SPAN.finditer(text):
        first, second = int(m.group(1) + m.group(2)), int(m.group(3))
        year = first - first % 100 + second + (100 if second < first % 100 else 0)
        if year != first:
            out[m.group(3)] = str(year)
    return out


def written_numbers(text: str) -> set[str]:
    """The numbers ``text`` writes (:func:`footnote.text.numbers`), with a span's short second year whole too."""
    return numbers(text) | set(short_years(text).values())
