import { describe, expect, it } from 'vitest';
import { adviceFor } from './state/errors';
import { catalogues, langOf, maybe, setLang, t, tn } from './i18n';

describe('i18n', () => {
  it('has exactly the same keys in both catalogues, none empty', () => {
    const en = Object.keys(catalogues.en).sort();
    expect(Object.keys(catalogues.ru).sort()).toEqual(en);
    for (const lang of ['en', 'ru'] as const) {
      for (const k of en) expect(catalogues[lang][k as keyof typeof catalogues.en].trim(), `${lang} ${k}`).not.toBe('');
    }
  });

  it('takes papayu’s choice first, then the browser’s, English for anything else', () => {
    expect(langOf('ru')).toBe('ru');
    expect(langOf('ru-RU')).toBe('ru');
    expect(langOf('de-DE')).toBe('en');
    expect(langOf(null)).toBe('en');
    expect(setLang(null, 'ru-RU')).toBe('ru');
    expect(setLang('en', 'ru-RU')).toBe('en');
    expect(setLang('ru', 'en-US')).toBe('ru');
  });

  it('fills placeholders and speaks the chosen language', () => {
    setLang('ru');
    expect(t('tab.report')).toBe('Отчёт');
    expect(t('report.unreadable', { count: 3 })).toBe('Пропущено нечитаемых трасс: 3.');
    expect(maybe('tab.chat')).toBe('Чат');
    expect(maybe('tab.nope')).toBeUndefined();
    setLang('en');
    expect(t('report.graduation', { window: 100 })).toBe('Graduation of protocol v2 (last 100 APPLY calls, seed 001)');
  });

  it('agrees a number with its noun: Russian one / few / many, English one / other', () => {
    setLang('ru');
    expect(tn('preview.apply', 1)).toBe('Применить 1 действие');
    expect(tn('preview.apply', 3)).toBe('Применить 3 действия');
    expect(tn('preview.apply', 5)).toBe('Применить 5 действий');
    expect(tn('preview.apply', 21)).toBe('Применить 21 действие');
    expect(tn('preview.apply', 12)).toBe('Применить 12 действий');
    expect(tn('plan.context', 2, { dropped: 0 })).toBe('Контекст: отправлено 2 файла, отброшено при сокращении: 0');
    setLang('en');
    expect(tn('preview.apply', 1)).toBe('Apply 1 action(s)');
    expect(tn('preview.apply', 3)).toBe('Apply 3 action(s)');
  });

  it('gives the error hints in the UI’s language', () => {
    setLang('ru');
    expect(adviceFor('ERR_LOCKED').hint).toBe('С этим проектом работает другой papayu. Повторите, когда он закончит.');
    setLang('en');
    expect(adviceFor('ERR_LOCKED').hint).toBe('Another papayu is working on this project. Retry when it is done.');
  });
});
