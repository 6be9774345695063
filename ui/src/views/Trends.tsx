import { useState } from 'react';
import { api } from '../api';
import { researchAdvice } from '../state/errors';
import { toApiError, type ApiError } from '../transport';
import type { Trends } from '../types';
import { ErrorBox } from './common';
import { t } from '../i18n';

/** The date as the card shows it: the day, when the service gave one. */
function day(date: string | null): string | null {
  return date ? date.slice(0, 10) : null;
}

/**
 * Design and icon trends (`trends`): a topic, then one card per page found on the curated
 * design domains. A link opens in the system browser (`open_url`), never in this window.
 */
export function TrendsView({ onSettings }: { onSettings: () => void }) {
  const [topic, setTopic] = useState('');
  const [found, setFound] = useState<Trends | null>(null);
  const [err, setErr] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [openErr, setOpenErr] = useState<ApiError | null>(null);

  const search = async () => {
    setBusy(true);
    setErr(null);
    setOpenErr(null);
    try {
      setFound(await api.trends(topic.trim() || undefined));
    } catch (e) {
      setFound(null);
      setErr(toApiError(e));
    } finally {
      setBusy(false);
    }
  };
  const open = (url: string) => (e: React.MouseEvent) => {
    e.preventDefault();
    setOpenErr(null);
    api.openUrl(url).catch((x: unknown) => setOpenErr(toApiError(x)));
  };

  return (
    <section className="panel" aria-labelledby="trends-h">
      <h2 id="trends-h">{t('trends.title')}</h2>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void search();
        }}
      >
        <label htmlFor="trends-topic">{t('trends.topic')}</label>
        <input id="trends-topic" value={topic} onChange={(e) => setTopic(e.target.value)} placeholder={t('trends.placeholder')} disabled={busy} />
        <button type="submit" disabled={busy}>
          {busy ? t('trends.searching') : t('trends.search')}
        </button>
      </form>
      {err && <ErrorBox error={err} title={t('trends.error')} advice={researchAdvice(err.code)} onSettings={onSettings} onRetry={() => void search()} />}
      {openErr && <ErrorBox error={openErr} title={t('trends.open.link')} />}
      {found && (
        <>
          <p className="muted" data-testid="trends-summary">
            {t(found.cards.length === 1 ? 'trends.summary.one' : 'trends.summary.many', { n: found.cards.length, topic: found.topic, d: found.domains.length })}
          </p>
          {found.cards.length === 0 && <p className="muted">{t('trends.nothing')}</p>}
          <ul className="trend-cards" aria-label={t('trends.aria')}>
            {found.cards.map((c) => (
              <li key={c.url} className="trend-card" data-testid="trend-card">
                <h3>
                  <a href={c.url} onClick={open(c.url)} rel="noreferrer noopener">
                    {c.title || c.url}
                  </a>
                </h3>
                <p className="muted">
                  <span className="source">{c.source}</span>
                  {day(c.date) && <> · <time dateTime={c.date ?? undefined}>{day(c.date)}</time></>}
                </p>
                <p>{c.summary}</p>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
