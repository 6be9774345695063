import { useState } from 'react';
import { api } from '../api';
import { toApiError, type ApiError } from '../transport';
import type { History, HistoryEntry } from '../types';
import { ErrorBox, fmtTime } from './common';
import { t } from '../i18n';

function Entries({ entries, label }: { entries: HistoryEntry[]; label: string }) {
  if (!entries.length) return <p className="muted">{t('history.empty')}</p>;
  return (
    <table className="list" aria-label={label}>
      <thead>
        <tr>
          <th>{t('history.tx')}</th>
          <th>{t('history.kind')}</th>
          <th>{t('history.when')}</th>
          <th>{t('history.paths')}</th>
        </tr>
      </thead>
      <tbody>
        {entries
          .slice()
          .reverse()
          .map((e) => (
            <tr key={e.tx_id}>
              <td className="mono">{e.tx_id}</td>
              <td>{e.kind}</td>
              <td>{fmtTime(e.created_unix_ms)}</td>
              <td className="mono">{e.paths.join(', ')}</td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

export function HistoryView({ project, history, onChanged, busy }: { project: string; history: History | null; onChanged: () => void; busy: boolean }) {
  const [err, setErr] = useState<{ error: ApiError; which: 'undo' | 'redo' } | null>(null);
  const [msg, setMsg] = useState('');
  const step = async (which: 'undo' | 'redo', force: boolean) => {
    setMsg('');
    try {
      const r = which === 'undo' ? await api.undo(project, force) : await api.redo(project, force);
      setErr(null);
      setMsg(t(which === 'undo' ? 'history.undone' : 'history.redone', { tx: r.tx_id, files: r.files.map((f) => f.path).join(', ') }));
      onChanged();
    } catch (e) {
      setErr({ error: toApiError(e), which });
    }
  };
  const conflict = err && (err.error.code === 'ERR_UNDO_CONFLICT' || /conflict|changed since/i.test(err.error.message));
  return (
    <section className="panel" aria-labelledby="hist-h">
      <h2 id="hist-h">{t('history.title')}</h2>
      <div className="row" style={{ marginBottom: 8 }}>
        <button className="primary" onClick={() => void step('undo', false)} disabled={busy || !history?.undo.length}>
          {t('history.undo.button')}
        </button>
        <button onClick={() => void step('redo', false)} disabled={busy || !history?.redo.length}>
          {t('history.redo.button')}
        </button>
        <span role="status" className="muted">
          {msg}
        </span>
      </div>
      {err && (
        <ErrorBox error={err.error} title={t(err.which === 'undo' ? 'history.undo.failed' : 'history.redo.failed')}>
          {conflict && (
            <p>
              {t('history.conflict')}{' '}
              <button className="danger" onClick={() => void step(err.which, true)}>
                {t(err.which === 'undo' ? 'history.force.undo' : 'history.force.redo')}
              </button>{' '}
              {t('history.overwrites')}
            </p>
          )}
        </ErrorBox>
      )}
      <h3>{t('history.undo')}</h3>
      <Entries entries={history?.undo ?? []} label={t('history.undo.stack')} />
      <h3 style={{ marginTop: 12 }}>{t('history.redo')}</h3>
      <Entries entries={history?.redo ?? []} label={t('history.redo.stack')} />
    </section>
  );
}
