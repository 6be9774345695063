import { useEffect, useState } from 'react';
import { api } from '../api';
import { toApiError, type ApiError } from '../transport';
import type { TraceSummary } from '../types';
import { ErrorBox, fmtTime } from './common';
import { t } from '../i18n';

const KEY_FIELDS = ['trace_id', 'event', 'mode', 'goal', 'provider', 'model', 'schema_version', 'protocol_attempts', 'protocol_fallback_reason', 'repair_success', 'input_chars', 'token_budget', 'strict_json'];

export function TracesView({ project }: { project: string }) {
  const [list, setList] = useState<TraceSummary[] | null>(null);
  const [sel, setSel] = useState<string | null>(null);
  const [detail, setDetail] = useState<Record<string, unknown> | null>(null);
  const [err, setErr] = useState<ApiError | null>(null);
  useEffect(() => {
    api.traces(project).then(setList, (e) => setErr(toApiError(e)));
  }, [project]);
  const open = async (id: string) => {
    setSel(id);
    setDetail(null);
    try {
      setDetail(await api.trace(project, id));
    } catch (e) {
      setErr(toApiError(e));
    }
  };
  return (
    <section className="panel" aria-labelledby="tr-h">
      <h2 id="tr-h">{t('traces.title')}</h2>
      {err && <ErrorBox error={err} />}
      {list && list.length === 0 && <p className="muted">{t('traces.none')}</p>}
      {list && list.length > 0 && (
        <table className="list">
          <thead>
            <tr>
              <th>{t('traces.when')}</th>
              <th>{t('traces.mode')}</th>
              <th>{t('traces.protocol')}</th>
              <th>{t('traces.outcome')}</th>
              <th>{t('traces.model')}</th>
              <th>{t('traces.flags')}</th>
            </tr>
          </thead>
          <tbody>
            {list.map((tr) => (
              <tr key={tr.trace_id} className={sel === tr.trace_id ? 'sel' : ''}>
                <td>
                  <button className="link" onClick={() => void open(tr.trace_id)} aria-pressed={sel === tr.trace_id}>
                    {fmtTime(tr.created_unix_ms)}
                  </button>
                </td>
                <td>{tr.mode}</td>
                <td>v{tr.protocol}</td>
                <td>{tr.error_code ? <span className="badge code">{tr.error_code}</span> : tr.outcome ?? 'ok'}</td>
                <td className="mono">
                  {tr.provider}/{tr.model}
                </td>
                <td>
                  {tr.repaired && <span className="badge">{t('traces.repaired')}</span>} {tr.fallback && <span className="badge code">{t('traces.fallback')}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {sel && (
        <div style={{ marginTop: 12 }} aria-live="polite">
          <h3>
            {t('traces.trace')} <code>{sel}</code>
          </h3>
          {!detail ? (
            <p className="muted">{t('common.loading')}</p>
          ) : (
            <>
              <table className="list">
                <tbody>
                  {KEY_FIELDS.filter((k) => k in detail).map((k) => (
                    <tr key={k}>
                      <th>{k}</th>
                      <td className="mono">{typeof detail[k] === 'string' ? (detail[k] as string) : JSON.stringify(detail[k])}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <details>
                <summary>{t('traces.full')}</summary>
                <pre>{JSON.stringify(detail, null, 2)}</pre>
              </details>
            </>
          )}
        </div>
      )}
    </section>
  );
}
