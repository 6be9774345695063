import { useEffect, useState } from 'react';
import { api } from '../api';
import { toApiError, type ApiError } from '../transport';
import type { DirListing, RecentProject } from '../types';
import { ErrorBox, fmtTime } from './common';
import { t } from '../i18n';

/** `start`: the folder to browse first (the project just left), else the backend's home. */
export function ProjectPicker({ onOpen, error, start }: { onOpen: (path: string) => void; error: ApiError | null; start?: string }) {
  const [recent, setRecent] = useState<RecentProject[] | null>(null);
  const [dir, setDir] = useState<DirListing | null>(null);
  const [path, setPath] = useState('');
  const [err, setErr] = useState<ApiError | null>(null);

  const browse = async (p?: string) => {
    try {
      const d = await api.listDir(p);
      setDir(d);
      setErr(null);
    } catch (e) {
      setErr(toApiError(e));
    }
  };
  useEffect(() => {
    api.recentProjects().then(setRecent, (e) => setErr(toApiError(e)));
    void browse(start);
  }, [start]);

  return (
    <div className="grid2">
      <section className="panel" aria-labelledby="open-h">
        <h2 id="open-h">{t('picker.open')}</h2>
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (path.trim()) onOpen(path.trim());
          }}
        >
          <label htmlFor="project-path">{t('picker.folder')}</label>
          <input id="project-path" style={{ flex: 1, minWidth: 220 }} value={path} onChange={(e) => setPath(e.target.value)} placeholder={t('picker.placeholder')} />
          <button type="submit" className="primary" disabled={!path.trim()}>
            {t('picker.open.button')}
          </button>
        </form>
        {error && <ErrorBox error={error} title={t('picker.cannot')} />}
        {err && <ErrorBox error={err} />}
        <h3 style={{ marginTop: 14 }}>{t('picker.recent')}</h3>
        {recent === null ? (
          <p className="muted">{t('common.loading')}</p>
        ) : recent.length === 0 ? (
          <p className="muted">{t('picker.none')}</p>
        ) : (
          <ul className="entries" aria-label={t('picker.recent')}>
            {recent.map((r) => (
              <li key={r.path}>
                <button onClick={() => onOpen(r.path)}>
                  <strong>{r.name}</strong> <span className="mono muted">{r.path}</span> <span className="muted">· {fmtTime(r.opened_unix_ms)}</span>
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="panel" aria-labelledby="browse-h">
        <h2 id="browse-h">{t('picker.browse')}</h2>
        {dir && (
          <>
            <div className="row" style={{ marginBottom: 6 }}>
              <code style={{ flex: 1, wordBreak: 'break-all' }}>{dir.path}</code>
              <button onClick={() => void browse(dir.parent ?? undefined)} disabled={!dir.parent} aria-label={t('picker.parent')}>
                {t('picker.up')}
              </button>
              <button className="primary" onClick={() => onOpen(dir.path)}>
                {t('picker.open.this')}
              </button>
            </div>
            <ul className="entries" aria-label={t('picker.folders', { path: dir.path })}>
              {dir.entries
                .filter((e) => e.is_dir)
                .map((e) => {
                  const full = `${dir.path.replace(/\/$/, '')}/${e.name}`;
                  return (
                    <li key={e.name}>
                      <button onClick={() => void browse(full)} onDoubleClick={() => onOpen(full)} title={e.is_project ? t('picker.looks') : undefined}>
                        📁 {e.name} {e.is_project && <span className="badge">{t('picker.project')}</span>}
                      </button>
                    </li>
                  );
                })}
            </ul>
            <p className="muted" style={{ fontSize: 13 }}>
              {t('picker.help')}
            </p>
          </>
        )}
      </section>
    </div>
  );
}
