/* Interface strings in English and Russian; the language follows the question (Cyrillic → ru). */
"use strict";
(function () {
  const STRINGS = {
    en: {
      tagline: "Answers that cite their sources — or say they don't know.",
      placeholder: "Ask the corpus a question…",
      ask: "Ask",
      close: "Close",
      open_original: "Open the original",
      key_needed: "This server needs an API key.",
      key_submit: "Unlock",
      key_wrong: "That key was refused.",
      lexical_only: "Lexical-only mode: no embedder is configured, so only word matches are searched.",
      searching: "Searching the corpus…",
      writing: "Writing…",
      reading: "Reading the passages…",
      searching_for: "Searching for:",
      error_partial: "The answer stopped here:",
      stream_broken: "the connection to the server broke",
      stream_ended: "the stream ended early",
      copy: "Copy as Markdown",
      copied: "Copied",
      copy_failed: "Copy failed — select the text instead",
      new_chat: "New conversation",
      commentary: "commentary",
      sources_panel: "Sources",
      filter_kind: "Kind",
      filter_lang: "Language",
      filter_text: "Title contains",
      all: "All",
      more: "More",
      open: "Open",
      remove: "Remove",
      remove_confirm: "Remove “{title}” from the collection?",
      sources_shown: "{n} sources",
      of_total: "(of {total}; “More” loads the next page)",
      filter_collection: "Collection",
      holds: "This collection holds {sources} sources in {fragments} passages.",
      languages: "Passages by language:",
      by_kind: "Passages by kind:",
      titles: "Among them:",
      try_asking: "Try asking:",
      example_about: "What does “{title}” say?",
      kind_track_transcript: "lecture recordings",
      kind_verse: "verses",
      kind_commentary: "commentary",
      kind_prose_chapter: "prose",
      kind_letter: "letters",
      stage: "Stage",
      state_answered: "Answered from the corpus",
      state_not_found: "Not in the corpus",
      state_fallback: "Answered from general knowledge — not from the corpus",
      state_declined: "Out of scope — declined",
      state_error: "Something went wrong",
      sources: "Sources",
      page: "p.",
      page_long: "Page",
      verse: "Verse",
      passage: "Passage",
      recording: "Recording",
      no_audio: "The recording is not stored; here is the transcript.",
      status: "{sources} sources · {fragments} fragments · {embedder}",
      embedding_progress: "embedding {percent}%, about {eta} left",
      embedding_paused: "embedding paused at {percent}%",
      lexical_while_embedding: "Lexical search while the collection is embedded ({percent}% done): word matches only for the rest.",
      lexical: "lexical only",
      error_prefix: "Error:",
    },
    ru: {
      tagline: "Ответы со ссылками на источники — или честное «не знаю».",
      placeholder: "Задайте вопрос по корпусу…",
      ask: "Спросить",
      close: "Закрыть",
      open_original: "Открыть оригинал",
      key_needed: "Этому серверу нужен ключ API.",
      key_submit: "Войти",
      key_wrong: "Ключ не принят.",
      lexical_only: "Только лексический поиск: эмбеддер не настроен, ищутся лишь совпадения слов.",
      searching: "Ищу в корпусе…",
      writing: "Пишу…",
      reading: "Читаю отрывки…",
      searching_for: "Ищу:",
      error_partial: "Ответ оборвался здесь:",
      stream_broken: "соединение с сервером прервалось",
      stream_ended: "поток закончился раньше времени",
      copy: "Копировать как Markdown",
      copied: "Скопировано",
      copy_failed: "Не удалось скопировать — выделите текст",
      new_chat: "Новый разговор",
      commentary: "комментарий",
      sources_panel: "Источники",
      filter_kind: "Вид",
      filter_lang: "Язык",
      filter_text: "В названии",
      all: "Все",
      more: "Ещё",
      open: "Открыть",
      remove: "Удалить",
      remove_confirm: "Удалить «{title}» из собрания?",
      sources_shown: "источников: {n}",
      of_total: "(из {total}; «Ещё» загрузит следующую страницу)",
      filter_collection: "Собрание",
      holds: "В собрании {sources} источников, {fragments} отрывков.",
      languages: "Отрывки по языкам:",
      by_kind: "Отрывки по видам:",
      titles: "Среди них:",
      try_asking: "Спросите, например:",
      example_about: "О чём говорится в «{title}»?",
      kind_track_transcript: "записи лекций",
      kind_verse: "стихи",
      kind_commentary: "комментарии",
      kind_prose_chapter: "проза",
      kind_letter: "письма",
      stage: "Этап",
      state_answered: "Ответ по корпусу",
      state_not_found: "В корпусе этого нет",
      state_fallback: "Ответ из общих знаний — не из корпуса",
      state_declined: "Вне темы — отказ",
      state_error: "Что-то пошло не так",
      sources: "Источники",
      page: "с.",
      page_long: "Страница",
      verse: "Стих",
      passage: "Отрывок",
      recording: "Запись",
      no_audio: "Аудио не сохранено; вот расшифровка.",
      status: "источников: {sources} · фрагментов: {fragments} · {embedder}",
      embedding_progress: "эмбеддинг {percent}%, осталось около {eta}",
      embedding_paused: "эмбеддинг приостановлен на {percent}%",
      lexical_while_embedding: "Пока коллекция эмбеддится ({percent}% готово), для остального ищутся лишь совпадения слов.",
      lexical: "только лексический",
      error_prefix: "Ошибка:",
    },
  };

  const CYRILLIC = /[\u0400-\u04FF]/g;
  const LATIN = /[A-Za-z\u00C0-\u024F]/g;

  function detectLang(text) {
    const cyr = (text.match(CYRILLIC) || []).length;
    const lat = (text.match(LATIN) || []).length;
    if (cyr === 0 && lat === 0) return null;
    return cyr >= lat ? "ru" : "en";
  }

  function t(lang, key, vars, fallback) {
    const table = STRINGS[lang] || STRINGS.en;
    let s = table[key] !== undefined ? table[key] : (STRINGS.en[key] !== undefined ? STRINGS.en[key] : (fallback !== undefined ? fallback : key));
    if (vars) for (const [k, v] of Object.entries(vars)) s = s.split("{" + k + "}").join(String(v));
    return s;
  }

  /* Paint the static interface (elements with data-i18n*) in one language. */
  function apply(lang) {
    document.documentElement.lang = lang;
    document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(lang, el.dataset.i18n); });
    document.querySelectorAll("[data-i18n-placeholder]").forEach((el) => { el.placeholder = t(lang, el.dataset.i18nPlaceholder); });
    document.querySelectorAll("[data-i18n-aria]").forEach((el) => { el.setAttribute("aria-label", t(lang, el.dataset.i18nAria)); });
  }

  window.FootnoteI18n = { STRINGS, detectLang, t, apply };
})();
