// The UI's labels in English and Russian (DECISIONS D48). The language is the one papayu chose
// (`app_info.lang`: PAPAYU_LANG, else the locale), else the browser's. `ru` is typed as a
// record of every English key, so the compiler fails on a label missing in either catalogue.

const en = {
  'tab.chat': 'Chat',
  'tab.history': 'History',
  'tab.traces': 'Traces',
  'tab.report': 'Report',
  'tab.settings': 'Settings',
  'help.title': 'Keyboard',
  'header.change': 'Change project',
  'help.close': 'Close',
  'common.loading': 'Loading…',
  'common.cancel': 'Cancel',
  'chat.saved': 'A plan is saved for this project',
  'chat.saved.ok': 'say “ok” to apply it.',
  'chat.saved.stale': 'This plan is stale: files it was based on changed since ({files}). It will not be applied as it is; describe the goal again for a new plan.',
  'chat.saved.mode': 'mode {mode}',
  'chat.saved.goal': 'goal',
  'chat.send': 'Send',
  'chat.apply.saved': 'Apply saved plan',
  'history.title': 'History',
  'history.undo': 'Undo stack (most recent first)',
  'history.redo': 'Redo stack',
  'traces.title': 'Traces',
  'tab.trends': 'Trends',
  'trends.title': 'Design and icon trends',
  'trends.topic': 'Topic',
  'trends.search': 'Search',
  'trends.searching': 'Searching…',
  'trends.nothing': 'Nothing found on the design domains for this topic.',
  'trends.summary.one': '{n} card for “{topic}” from {d} design domains',
  'trends.summary.many': '{n} cards for “{topic}” from {d} design domains',
  'settings.title': 'Settings',
  'picker.open': 'Open a project',
  'picker.folder': 'Folder',
  'picker.recent': 'Recent projects',
  'picker.browse': 'Browse',
  'preview.title': 'Preview — nothing is written until you apply',
  'report.title': 'Report',
  'report.window': 'Window',
  'report.day1': '1 day',
  'report.day7': '7 days',
  'report.day30': '30 days',
  'report.all': 'all',
  'report.calls': 'calls (traces)',
  'report.plans.applies': 'plans / applies',
  'report.applied': 'applied',
  'report.fallback.rate': 'fallback rate',
  'report.fallback.rate.utf8': 'fallback rate excl. non-UTF-8',
  'report.repair.success': 'repair success',
  'report.context': 'context avg / p95 chars',
  'report.cache': 'cache hit rate',
  'report.no.traces': 'No traces in this window (traces are written with PAPAYU_TRACE=1).',
  'report.error.codes': 'Error codes',
  'report.violation.codes': 'Violation codes (what models get wrong)',
  'report.fallback.reasons': 'Fallback reasons',
  'report.unreadable': '{count} unreadable trace file(s) skipped.',
  'report.graduation': 'Graduation of protocol v2 (last {window} APPLY calls, seed 001)',
  'report.verdict.graduate': 'Graduate: protocol v2 can stand alone; set PAPAYU_PROTOCOL_FALLBACK_TO_V1=0',
  'report.verdict.keep_fallback': 'Keep the fallback: a criterion below fails',
  'report.verdict.not_enough_data': 'No verdict yet: fewer APPLY calls than the window',
  'report.criterion': 'criterion',
  'report.measured': 'measured',
  'report.met': 'met',
  'report.yes': 'yes',
  'report.no': 'no',
  'report.counts': '{calls} APPLY calls, {fallbacks} fallbacks ({utf8} for non-UTF-8 files), ERR_PATCH_APPLY_FAILED in {paf} ({repaired} cured by repair, {pafFallbacks} fell back)',
  'report.proposals': 'Proposals',
  'report.proposals.ask': 'Ask the model for proposals',
  'report.proposals.asking': 'Asking the model…',
  'report.proposals.by': 'by {model}',
  'report.proposals.repaired': '(after one repair)',
  'report.proposals.why': 'why',
  'report.proposals.expect': 'expect',
  'criterion.apply_calls': 'a full window of 100 APPLY calls',
  'criterion.fallback_rate_excluding_non_utf8': 'fallback rate (ERR_NON_UTF8_FILE excluded) < 1%',
  'criterion.patch_apply_failed_rate': 'ERR_PATCH_APPLY_FAILED in < 1% of calls',
  'criterion.patch_apply_failed_repair_over_fallback': 'ERR_PATCH_APPLY_FAILED cured by repair more often than by fallback',
  'criterion.update_existing_forbidden': 'no fallback on ERR_V2_UPDATE_EXISTING_FORBIDDEN',
} as const;

export type Key = keyof typeof en;

const ru: Record<Key, string> = {
  'tab.chat': 'Чат',
  'tab.history': 'История',
  'tab.traces': 'Трассы',
  'tab.report': 'Отчёт',
  'tab.settings': 'Настройки',
  'help.title': 'Клавиатура',
  'header.change': 'Сменить проект',
  'help.close': 'Закрыть',
  'common.loading': 'Загрузка…',
  'common.cancel': 'Отмена',
  'chat.saved': 'Для проекта сохранён план',
  'chat.saved.ok': 'скажите «ok», чтобы применить его.',
  'chat.saved.stale': 'План устарел: файлы, на которых он основан, изменились ({files}). Применять его нельзя; опишите цель заново, чтобы получить новый план.',
  'chat.saved.mode': 'режим {mode}',
  'chat.saved.goal': 'цель',
  'chat.send': 'Отправить',
  'chat.apply.saved': 'Применить сохранённый план',
  'history.title': 'История',
  'history.undo': 'Стек отмены (сначала последние)',
  'history.redo': 'Стек повтора',
  'traces.title': 'Трассы',
  'tab.trends': 'Тренды',
  'trends.title': 'Тренды дизайна и иконок',
  'trends.topic': 'Тема',
  'trends.search': 'Искать',
  'trends.searching': 'Поиск…',
  'trends.nothing': 'На сайтах о дизайне по этой теме ничего не нашлось.',
  'trends.summary.one': 'Карточек: {n} по теме «{topic}» с {d} сайтов о дизайне',
  'trends.summary.many': 'Карточек: {n} по теме «{topic}» с {d} сайтов о дизайне',
  'settings.title': 'Настройки',
  'picker.open': 'Открыть проект',
  'picker.folder': 'Папка',
  'picker.recent': 'Недавние проекты',
  'picker.browse': 'Обзор',
  'preview.title': 'Предпросмотр — ничего не записывается, пока вы не примените',
  'report.title': 'Отчёт',
  'report.window': 'Окно',
  'report.day1': '1 день',
  'report.day7': '7 дней',
  'report.day30': '30 дней',
  'report.all': 'всё',
  'report.calls': 'вызовы (трассы)',
  'report.plans.applies': 'планы / применения',
  'report.applied': 'применено',
  'report.fallback.rate': 'доля откатов',
  'report.fallback.rate.utf8': 'доля откатов без не-UTF-8',
  'report.repair.success': 'успешные исправления',
  'report.context': 'контекст, среднее / p95 символов',
  'report.cache': 'попадания в кэш',
  'report.no.traces': 'В этом окне трасс нет (они пишутся при PAPAYU_TRACE=1).',
  'report.error.codes': 'Коды ошибок',
  'report.violation.codes': 'Коды нарушений (в чём ошибаются модели)',
  'report.fallback.reasons': 'Причины откатов',
  'report.unreadable': 'Пропущено нечитаемых трасс: {count}.',
  'report.graduation': 'Выпуск протокола v2 (последние {window} вызовов APPLY, seed 001)',
  'report.verdict.graduate': 'Выпуск: протокол v2 справляется сам; задайте PAPAYU_PROTOCOL_FALLBACK_TO_V1=0',
  'report.verdict.keep_fallback': 'Откат остаётся: один из критериев ниже не выполнен',
  'report.verdict.not_enough_data': 'Вердикта пока нет: вызовов APPLY меньше окна',
  'report.criterion': 'критерий',
  'report.measured': 'измерено',
  'report.met': 'выполнен',
  'report.yes': 'да',
  'report.no': 'нет',
  'report.counts': 'вызовов APPLY: {calls}, откатов: {fallbacks} (из-за не-UTF-8 файлов: {utf8}), ERR_PATCH_APPLY_FAILED: {paf} (исправлено: {repaired}, откатилось: {pafFallbacks})',
  'report.proposals': 'Предложения',
  'report.proposals.ask': 'Спросить модель о предложениях',
  'report.proposals.asking': 'Спрашиваю модель…',
  'report.proposals.by': 'модель {model}',
  'report.proposals.repaired': '(после одного исправления)',
  'report.proposals.why': 'почему',
  'report.proposals.expect': 'ожидается',
  'criterion.apply_calls': 'полное окно из 100 вызовов APPLY',
  'criterion.fallback_rate_excluding_non_utf8': 'доля откатов (без ERR_NON_UTF8_FILE) < 1%',
  'criterion.patch_apply_failed_rate': 'ERR_PATCH_APPLY_FAILED меньше чем в 1% вызовов',
  'criterion.patch_apply_failed_repair_over_fallback': 'ERR_PATCH_APPLY_FAILED чаще лечится исправлением, чем откатом',
  'criterion.update_existing_forbidden': 'ни одного отката из-за ERR_V2_UPDATE_EXISTING_FORBIDDEN',
};

export type Lang = 'en' | 'ru';

const CATALOGUES: Record<Lang, Record<Key, string>> = { en, ru };

let current: Lang = 'en';

/** The language for a tag such as `ru`, `ru-RU` or `en_GB`; English for any other. */
export function langOf(tag: string | null | undefined): Lang {
  return tag?.trim().toLowerCase().startsWith('ru') ? 'ru' : 'en';
}

/** Fix the UI's language: papayu's choice when it made one, else the browser's. */
export function setLang(chosen: string | null | undefined, browser?: string): Lang {
  current = langOf(chosen ?? browser);
  if (typeof document !== 'undefined') document.documentElement.lang = current;
  return current;
}

export function lang(): Lang {
  return current;
}

/** The label `key` in the UI's language, `{name}` placeholders filled from `vars`. */
export function t(key: Key, vars: Record<string, string | number> = {}): string {
  return CATALOGUES[current][key].replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m));
}

/** The label `key` when the catalogue has it (a label named at run time, such as a tab's). */
export function maybe(key: string): string | undefined {
  return key in en ? t(key as Key) : undefined;
}

/** Both catalogues' keys (for the test that they match). */
export const catalogues = CATALOGUES;
