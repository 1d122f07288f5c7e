"""Texts the server paints in the user's language (never the model's): the fallback disclaimer, the
polite decline, the honest "not in the corpus" that says what was searched, and a near miss's "the corpus
talks about X, but not this". Written in English, Russian, German, French, Spanish and Portuguese; a reader in
another language gets English (every table has the same languages: ``tests/answer/test_disclaimers.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from footnote.text import SNOWBALL

LANG_NAMES: dict[str, str] = {"en": "English", "ru": "Russian"}

_FALLBACK = {
    "en": "Not found in the corpus. This answer comes from the model's general knowledge, not from the "
    "sources, and may be wrong; only the numbered citations point to the corpus.",
    "ru": "В корпусе этого нет. Ответ дан по общим знаниям модели, а не по источникам, и может быть "
    "неточным; на корпус указывают только пронумерованные ссылки.",
    "de": "Nicht im Korpus gefunden. Diese Antwort stammt aus dem Allgemeinwissen des Modells, nicht aus den "
    "Quellen, und kann falsch sein; nur die nummerierten Verweise führen ins Korpus.",
    "fr": "Introuvable dans le corpus. Cette réponse vient des connaissances générales du modèle, pas des sources, "
    "et peut être fausse\u00a0; seules les références numérotées renvoient au corpus.",
    "es": "No se encontró en el corpus. Esta respuesta procede del conocimiento general del modelo, no de las "
    "fuentes, y puede ser errónea; solo las referencias numeradas remiten al corpus.",
    "pt": "Não encontrado no corpus. Esta resposta vem do conhecimento geral do modelo, não das fontes, e pode estar "
    "errada; só as referências numeradas apontam para o corpus.",
}

_DECLINE = {
    "en": "This question is outside what this library covers, so I won't answer it here.",
    "ru": "Этот вопрос выходит за рамки того, чему посвящена эта библиотека, поэтому здесь я на него не отвечу.",
    "de": "Diese Frage liegt außerhalb dessen, was diese Bibliothek behandelt, deshalb beantworte ich sie hier nicht.",
    "fr": "Cette question sort du champ de cette bibliothèque, je n'y réponds donc pas ici.",
    "es": "Esta pregunta queda fuera de lo que abarca esta biblioteca, así que no la respondo aquí.",
    "pt": "Esta pergunta está fora do que esta biblioteca abrange, por isso não a respondo aqui.",
}

_NOT_FOUND = {
    "en": "I found nothing on this in the corpus, so I won't guess.",
    "ru": "В корпусе об этом ничего не нашлось, поэтому гадать не буду.",
    "de": "Dazu habe ich im Korpus nichts gefunden, also rate ich nicht.",
    "fr": "Je n'ai rien trouvé à ce sujet dans le corpus, je ne vais donc pas deviner.",
    "es": "No encontré nada sobre esto en el corpus, así que no voy a adivinar.",
    "pt": "Não encontrei nada sobre isto no corpus, por isso não vou adivinhar.",
}

_NEAR_MISS = {
    "en": "The closest passages in the corpus come from {titles}, but none of them answers this question, so I "
    "won't guess.",
    "ru": "Ближе всего к вопросу отрывки из {titles}, но ни один из них на него не отвечает, поэтому гадать не буду.",
    "de": "Am nächsten kommen der Frage Abschnitte aus {titles}, aber keiner davon beantwortet sie, also rate ich nicht.",
    "fr": "Les passages les plus proches du corpus viennent de {titles}, mais aucun ne répond à cette question, je ne "
    "vais donc pas deviner.",
    "es": "Los pasajes más cercanos del corpus proceden de {titles}, pero ninguno responde a esta pregunta, así que no "
    "voy a adivinar.",
    "pt": "As passagens mais próximas do corpus vêm de {titles}, mas nenhuma responde a esta pergunta, por isso não vou "
    "adivinhar.",
}

_SEARCHED = {
    "en": "Searched for {queries} in {kinds}.",
    "ru": "Искал {queries} — {kinds}.",
    "de": "Gesucht nach {queries} in {kinds}.",
    "fr": "Recherche de {queries} dans {kinds}.",
    "es": "Busqué {queries} en {kinds}.",
    "pt": "Procurei {queries} em {kinds}.",
}

_NO_CORPUS = {
    "en": "The corpus is empty.",
    "ru": "Корпус пуст.",
    "de": "Das Korpus ist leer.",
    "fr": "Le corpus est vide.",
    "es": "El corpus está vacío.",
    "pt": "O corpus está vazio.",
}

_KIND_NAMES: dict[str, dict[str, str]] = {
    "en": {
        "track_transcript": "lecture transcripts",
        "verse": "verses",
        "commentary": "commentary",
        "prose_chapter": "prose",
        "letter": "letters",
    },
    "ru": {
        "track_transcript": "расшифровки лекций",
        "verse": "стихи",
        "commentary": "комментарии",
        "prose_chapter": "прозу",
        "letter": "письма",
    },
    "de": {
        "track_transcript": "Vorlesungsmitschriften",
        "verse": "Versen",
        "commentary": "Kommentaren",
        "prose_chapter": "Prosa",
        "letter": "Briefen",
    },
    "fr": {
        "track_transcript": "les transcriptions de cours",
        "verse": "les vers",
        "commentary": "les commentaires",
        "prose_chapter": "la prose",
        "letter": "les lettres",
    },
    "es": {
        "track_transcript": "transcripciones de clases",
        "verse": "versos",
        "commentary": "comentarios",
        "prose_chapter": "prosa",
        "letter": "cartas",
    },
    "pt": {
        "track_transcript": "transcrições de aulas",
        "verse": "versos",
        "commentary": "comentários",
        "prose_chapter": "prosa",
        "letter": "cartas",
    },
}

_QUOTES = {"en": ("“", "”"), "ru": ("«", "»"), "de": ("„", "“"), "fr": ("«\u00a0", "\u00a0»"), "es": ("«", "»"), "pt": ("«", "»")}
_AND = {"en": " and ", "ru": " и ", "de": " und ", "fr": " et ", "es": " y ", "pt": " e "}
#: "minutes", shortened, in each language the texts are written in
_MINUTES = {"en": "min", "ru": "мин", "de": "Min.", "fr": "min", "es": "min", "pt": "min"}


def _lang(lang: str) -> str:
    return lang if lang in _FALLBACK else "en"


def fallback_disclaimer(lang: str) -> str:
    return _FALLBACK[_lang(lang)]


def decline_text(lang: str) -> str:
    return _DECLINE[_lang(lang)]


def kind_name(kind: str, lang: str) -> str:
    return _KIND_NAMES[_lang(lang)].get(kind, kind.replace("_", " "))


def _join(items: Sequence[str], lang: str) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + _AND[_lang(lang)] + items[-1]


def _quoted(items: Sequence[str], lg: str) -> str:
    lq, rq = _QUOTES[lg]
    return _join([f"{lq}{x}{rq}" for x in dict.fromkeys(x.strip() for x in items if x.strip())], lg)


def _searched(lg: str, queries: Sequence[str], kinds: Sequence[str]) -> str:
    return _SEARCHED[lg].format(queries=_quoted(queries, lg), kinds=_join([kind_name(k, lg) for k in kinds], lg))


def not_found_text(lang: str, queries: Sequence[str], kinds: Sequence[str]) -> str:
    """“Not in the corpus”, with the queries searched and the kinds of material searched."""
    lg = _lang(lang)
    head = _NOT_FOUND[lg]
    if not kinds:
        return f"{head} {_NO_CORPUS[lg]}"
    return f"{head} {_searched(lg, queries, kinds)}"


def near_miss_text(lang: str, titles: Sequence[str], queries: Sequence[str], kinds: Sequence[str]) -> str:
    """A near miss: the corpus talks about ``titles`` (the top retrieved sources), but no passage found
    answers the question — then what was searched, as :func:`not_found_text` says it. No titles (or an
    empty corpus): :func:`not_found_text` itself."""
    lg = _lang(lang)
    names = _quoted(titles, lg)
    if not names or not kinds:
        return not_found_text(lang, queries, kinds)
    return f"{_NEAR_MISS[lg].format(titles=names)} {_searched(lg, queries, kinds)}"


_INDEX_INCOMPLETE = {
    "en": "Only {pct} % of the corpus is searchable by meaning yet, so this may be there: I won't guess. {when}",
    "ru": "Пока только {pct} % корпуса доступно для поиска по смыслу, так что ответ может там быть: гадать не буду. {when}",
    "de": "Erst {pct} % des Korpus sind nach Bedeutung durchsuchbar, die Antwort kann also darin stehen: Ich rate nicht. "
    "{when}",
    "fr": "Seuls {pct} % du corpus sont encore consultables par le sens\u00a0: la réponse peut s'y trouver, je ne vais donc "
    "pas deviner. {when}",
    "es": "Solo el {pct} % del corpus se puede buscar por significado todavía, así que la respuesta puede estar ahí: no "
    "voy a adivinar. {when}",
    "pt": "Só {pct} % do corpus pode ser pesquisado pelo sentido por enquanto, por isso a resposta pode estar lá: não "
    "vou adivinhar. {when}",
}
_ASK_AGAIN = {
    "en": ("Ask again in about {eta}.", "Ask again when indexing has finished."),
    "ru": ("Спросите ещё раз примерно через {eta}.", "Спросите ещё раз, когда индексация закончится."),
    "de": ("Fragen Sie in etwa {eta} noch einmal.", "Fragen Sie noch einmal, wenn die Indexierung fertig ist."),
    "fr": ("Reposez la question dans environ {eta}.", "Reposez la question une fois l'indexation terminée."),
    "es": ("Vuelva a preguntar dentro de unos {eta}.", "Vuelva a preguntar cuando termine la indexación."),
    "pt": ("Pergunte de novo daqui a cerca de {eta}.", "Pergunte de novo quando a indexação terminar."),
}


def index_incomplete_text(lang: str, percent: float, eta_s: float | None) -> str:
    """An unfinished index is a state, not an answer: how much of the corpus is searchable by meaning, and
    when to ask again (``eta_s``: the backlog's estimate, None when no worker runs)."""
    lg = _lang(lang)
    pct = int(percent)
    if eta_s is None:
        when = _ASK_AGAIN[lg][1]
    else:
        minutes = max(1, round(eta_s / 60))
        eta = f"{minutes} {_MINUTES[lg]}"
        when = _ASK_AGAIN[lg][0].format(eta=eta)
    return _INDEX_INCOMPLETE[lg].format(pct=pct, when=when)


_QUOTES_IN = {
    "en": "The quoted passages are in {langs}.",
    "ru": "Цитаты приведены на языке источников: {langs}.",
    "de": "Die zitierten Abschnitte sind auf {langs}.",
    "fr": "Langue des passages cités\u00a0: {langs}.",
    "es": "Los pasajes citados están en {langs}.",
    "pt": "As passagens citadas estão em {langs}.",
}
_SOME_QUOTES_IN = {
    "en": "Some of the quoted passages are in {langs}.",
    "ru": "Часть цитат приведена на языке источников: {langs}.",
    "de": "Einige der zitierten Abschnitte sind auf {langs}.",
    "fr": "Une partie des passages cités est en {langs}.",
    "es": "Algunos de los pasajes citados están en {langs}.",
    "pt": "Algumas das passagens citadas estão em {langs}.",
}
_MODEL_IN = {
    "en": "The model wrote this answer in {langs}, not in the language of your question.",
    "ru": "Модель ответила не на языке вопроса, а на языке: {langs}.",
    "de": "Das Modell hat diese Antwort auf {langs} geschrieben, nicht in der Sprache Ihrer Frage.",
    "fr": "Le modèle a écrit cette réponse en {langs}, pas dans la langue de votre question.",
    "es": "El modelo escribió esta respuesta en {langs}, no en el idioma de su pregunta.",
    "pt": "O modelo escreveu esta resposta em {langs}, não na língua da sua pergunta.",
}
#: Language names for the quotes note, by the reader's language (a code not listed is shown as it is).
_LANG_NAMES_IN: dict[str, dict[str, str]] = {
    "en": {**{code: name.capitalize() for code, name in SNOWBALL.items()}, "sa": "Sanskrit", "uk": "Ukrainian",
           "pl": "Polish", "cs": "Czech", "la": "Latin", **LANG_NAMES},
    "ru": {"en": "английский", "ru": "русский", "de": "немецкий", "fr": "французский", "es": "испанский",
           "it": "итальянский", "pt": "португальский", "nl": "нидерландский", "sa": "санскрит",
           "uk": "украинский", "pl": "польский", "cs": "чешский", "la": "латынь", "el": "греческий",
           "hi": "хинди", "tr": "турецкий", "ar": "арабский"},
    "de": {"en": "Englisch", "ru": "Russisch", "de": "Deutsch", "fr": "Französisch", "es": "Spanisch",
           "it": "Italienisch", "pt": "Portugiesisch", "nl": "Niederländisch", "sa": "Sanskrit", "uk": "Ukrainisch",
           "pl": "Polnisch", "cs": "Tschechisch", "la": "Latein", "el": "Griechisch", "hi": "Hindi", "tr": "Türkisch",
           "ar": "Arabisch"},
    "fr": {"en": "anglais", "ru": "russe", "de": "allemand", "fr": "français", "es": "espagnol", "it": "italien",
           "pt": "portugais", "nl": "néerlandais", "sa": "sanskrit", "uk": "ukrainien", "pl": "polonais",
           "cs": "tchèque", "la": "latin", "el": "grec", "hi": "hindi", "tr": "turc", "ar": "arabe"},
    "es": {"en": "inglés", "ru": "ruso", "de": "alemán", "fr": "francés", "es": "español", "it": "italiano",
           "pt": "portugués", "nl": "neerlandés", "sa": "sánscrito", "uk": "ucraniano", "pl": "polaco", "cs": "checo",
           "la": "latín", "el": "griego", "hi": "hindi", "tr": "turco", "ar": "árabe"},
    "pt": {"en": "inglês", "ru": "russo", "de": "alemão", "fr": "francês", "es": "espanhol", "it": "italiano",
           "pt": "português", "nl": "neerlandês", "sa": "sânscrito", "uk": "ucraniano", "pl": "polaco", "cs": "checo",
           "la": "latim", "el": "grego", "hi": "hindi", "tr": "turco", "ar": "árabe"},
}


def language_names(codes: Sequence[str], reader: str = "en") -> str:
    """Languages named in words in the reader's language, joined ("English and Russian")."""
    names = _LANG_NAMES_IN[_lang(reader)]
    return _join([names.get(c, c) for c in dict.fromkeys(codes)], reader)


def quotes_language_note(lang: str, quote_langs: Sequence[str]) -> str | None:
    """A note in the reader's language when an answer quotes sources in other languages
    ("Цитаты приведены на языке источников: английский."), or when some are ("Часть цитат приведена на языке
    источников: английский."); None when every quote is in ``lang``."""
    lg = _lang(lang)
    others = [q for q in dict.fromkeys(quote_langs) if q and q != lang]
    if not others:
        return None
    table = _SOME_QUOTES_IN if lang in quote_langs else _QUOTES_IN
    return table[lg].format(langs=language_names(others, lg))


def model_language_note(lang: str, answer_lang: str | None) -> str | None:
    """A note in the reader's language when a model's answer came back in another language (a small local
    model copies its passages' language); None when it is in ``lang`` or its language is unknown."""
    if not answer_lang or answer_lang == lang:
        return None
    lg = _lang(lang)
    return _MODEL_IN[lg].format(langs=language_names([answer_lang], lg))
