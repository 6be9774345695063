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
      {list && list.length === 0 && <p className="muted">No traces yet (they are written when PAPAYU_TRACE=1).</p>}
      {list && list.length > 0 && (
        <table className="list">
          <thead>
            <tr>
              <th>when</th>
              <th>mode</th>
              <th>protocol</th>
              <th>outcome</th>
              <th>model</th>
              <th>flags</th>
            </tr>
          </thead>
          <tbody>
            {list.map((t) => (
              <tr key={t.trace_id} className={sel === t.trace_id ? 'sel' : ''}>
                <td>
                  <button className="link" onClick={() => void open(t.trace_id)} aria-pressed={sel === t.trace_id}>
                    {fmtTime(t.created_unix_ms)}
                  </button>
                </td>
                <td>{t.mode}</td>
                <td>v{t.protocol}</td>
                <td>{t.error_code ? <span className="badge code">{t.error_code}</span> : t.outcome ?? 'ok'}</td>
                <td className="mono">
                  {t.provider}/{t.model}
                </td>
                <td>
                  {t.repaired && <span className="badge">repaired</span>} {t.fallback && <span className="badge code">fallback</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {sel && (
        <div style={{ marginTop: 12 }} aria-live="polite">
          <h3>
            Trace <code>{sel}</code>
          </h3>
          {!detail ? (
            <p className="muted">Loading…</p>
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
                <summary>Full record (JSON)</summary>
                <pre>{JSON.stringify(detail, null, 2)}</pre>
              </details>
            </>
          )}
        </div>
      )}
    </section>
  );
}
