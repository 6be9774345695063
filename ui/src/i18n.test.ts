import { describe, expect, it } from 'vitest';
import { catalogues, langOf, maybe, setLang, t } from './i18n';

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
});
