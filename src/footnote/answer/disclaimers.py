"""Texts the server paints in the user's language (never the model's): the fallback disclaimer, the
polite decline, the honest "not in the corpus" that says what was searched, and a near miss's "the corpus
talks about X, but not this"."""

from __future__ import annotations

from collections.abc import Sequence

from footnote.text import SNOWBALL

LANG_NAMES: dict[str, str] = {"en": "English", "ru": "Russian"}

_FALLBACK = {
    "en": "Not found in the corpus. This answer comes from the model's general knowledge, not from the "
    "sources, and may be wrong; only the numbered citations point to the corpus.",
    "ru": "В корпусе этого нет. Ответ дан по общим знаниям модели, а не по источникам, и может быть "
    "неточным; на корпус указывают только пронумерованные ссылки.",
}

_DECLINE = {
    "en": "This question is outside what this library covers, so I won't answer it here.",
    "ru": "Этот вопрос выходит за рамки того, чему посвящена эта библиотека, поэтому здесь я на него не отвечу.",
}

_NOT_FOUND = {
    "en": "I found nothing on this in the corpus, so I won't guess.",
    "ru": "В корпусе об этом ничего не нашлось, поэтому гадать не буду.",
}

_NEAR_MISS = {
    "en": "The closest passages in the corpus come from {titles}, but none of them answers this question, so I "
    "won't guess.",
    "ru": "Ближе всего к вопросу отрывки из {titles}, но ни один из них на него не отвечает, поэтому гадать не буду.",
}

_SEARCHED = {
    "en": "Searched for {queries} in {kinds}.",
    "ru": "Искал {queries} — {kinds}.",
}

_NO_CORPUS = {
    "en": "The corpus is empty.",
    "ru": "Корпус пуст.",
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
}

_QUOTES = {"en": ("“", "”"), "ru": ("«", "»")}
_AND = {"en": " and ", "ru": " и "}


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
}
_ASK_AGAIN = {
    "en": ("Ask again in about {eta}.", "Ask again when indexing has finished."),
    "ru": ("Спросите ещё раз примерно через {eta}.", "Спросите ещё раз, когда индексация закончится."),
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
        eta = (f"{minutes} min" if lg == "en" else f"{minutes} мин")
        when = _ASK_AGAIN[lg][0].format(eta=eta)
    return _INDEX_INCOMPLETE[lg].format(pct=pct, when=when)


_QUOTES_IN = {
    "en": "The quoted passages are in {langs}.",
    "ru": "Цитаты приведены на языке источников: {langs}.",
}
_MODEL_IN = {
    "en": "The model wrote this answer in {langs}, not in the language of your question.",
    "ru": "Модель ответила не на языке вопроса, а на языке: {langs}.",
}
#: Language names for the quotes note, by the reader's language (a code not listed is shown as it is).
_LANG_NAMES_IN: dict[str, dict[str, str]] = {
    "en": {**{code: name.capitalize() for code, name in SNOWBALL.items()}, "sa": "Sanskrit", "uk": "Ukrainian",
           "pl": "Polish", "cs": "Czech", "la": "Latin", **LANG_NAMES},
    "ru": {"en": "английский", "ru": "русский", "de": "немецкий", "fr": "французский", "es": "испанский",
           "it": "итальянский", "pt": "португальский", "nl": "нидерландский", "sa": "санскрит",
           "uk": "украинский", "pl": "польский", "cs": "чешский", "la": "латынь", "el": "греческий",
           "hi": "хинди", "tr": "турецкий", "ar": "арабский"},
}


def language_names(codes: Sequence[str], reader: str = "en") -> str:
    """Languages named in words in the reader's language, joined ("English and Russian")."""
    names = _LANG_NAMES_IN[_lang(reader)]
    return _join([names.get(c, c) for c in dict.fromkeys(codes)], reader)


def quotes_language_note(lang: str, quote_langs: Sequence[str]) -> str | None:
    """A note in the reader's language when an answer quotes sources in other languages
    ("Цитаты приведены на языке источников: английский."); None when every quote is in ``lang``."""
    lg = _lang(lang)
    others = [q for q in dict.fromkeys(quote_langs) if q and q != lang]
    if not others:
        return None
    return _QUOTES_IN[lg].format(langs=language_names(others, lg))


def model_language_note(lang: str, answer_lang: str | None) -> str | None:
    """A note in the reader's language when a model's answer came back in another language (a small local
    model copies its passages' language); None when it is in ``lang`` or its language is unknown."""
    if not answer_lang or answer_lang == lang:
        return None
    lg = _lang(lang)
    return _MODEL_IN[lg].format(langs=language_names([answer_lang], lg))
