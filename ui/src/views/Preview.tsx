import { memo, useEffect, useMemo, useState } from 'react';
import { diffStat, parseDiff } from '../state/diff';
import { applyRequest, confirmDeletes, initialSelection, setAll, toggle, type ApplyRequest, type Selection } from '../state/selection';
import type { FileDiff, PreviewView } from '../types';
import { MemoryNote, Md } from './common';
import { t, tn } from '../i18n';

const FIRST_LINES = 300;
const AUTO_EXPAND = 3;

/** performance marks: 'papayu:preview-result' is set when the result arrives (App). */
function measurePaint(id: string) {
  requestAnimationFrame(() =>
    setTimeout(() => {
      try {
        const m = performance.measure('papayu:preview-render', 'papayu:preview-result');
        document.body.dataset.previewRenderMs = m.duration.toFixed(1);
        document.body.dataset.previewRendered = id;
      } catch {
        /* no start mark (e.g. re-render) */
      }
    }, 0),
  );
}

const DiffTable = memo(function DiffTable({ diff }: { diff: string }) {
  const [all, setAll] = useState(false);
  const parsed = useMemo(() => parseDiff(diff), [diff]);
  const lines = all ? parsed.lines : parsed.lines.slice(0, FIRST_LINES);
  return (
    <>
      <table className="diff">
        <tbody>
          {lines.map((l, i) => (
            <tr key={i} className={l.kind}>
              <td className="n">{l.oldNo ?? ''}</td>
              <td className="n">{l.newNo ?? ''}</td>
              <td className="t">
                <span className="sign" aria-hidden="true">
                  {l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}
                </span>
                <span className="sr-only">{l.kind === 'add' ? t('preview.added') : l.kind === 'del' ? t('preview.removed.sr') : ''}</span>
                {l.text}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!all && parsed.lines.length > FIRST_LINES && (
        <button className="link" onClick={() => setAll(true)}>
          {t('preview.show.all', { n: parsed.lines.length })}
        </button>
      )}
    </>
  );
});

const FileCard = memo(function FileCard({
  file,
  selected,
  disabled,
  initiallyOpen,
  onToggle,
}: {
  file: FileDiff;
  selected: boolean;
  disabled: boolean;
  initiallyOpen: boolean;
  onToggle: (index: number) => void;
}) {
  const [open, setOpen] = useState(initiallyOpen);
  const stat = useMemo(() => diffStat(file.diff), [file.diff]);
  const blocked = file.error;
  const id = `act-${file.index}`;
  return (
    <div className={`file${blocked ? ' blocked' : ''}${!selected && !blocked ? ' deselected' : ''}`} data-index={file.index} data-path={file.path}>
      <div className="fhead">
        <label htmlFor={id}>
          <input
            id={id}
            type="checkbox"
            checked={selected && !blocked}
            disabled={disabled || !!blocked}
            onChange={() => onToggle(file.index)}
            aria-describedby={blocked ? `${id}-err` : undefined}
          />
          <span className="muted">[{file.index}]</span> <span className="badge">{file.kind}</span> <span className="path">{file.path}</span>
        </label>
        {blocked && <span className="badge code">{blocked.code}</span>}
        {file.noop && <span className="badge">{t('preview.noop')}</span>}
        {file.removed_files > 0 && <span className="badge">{tn('preview.removes', file.removed_files)}</span>}
        <span className="spacer" />
        {(stat.added > 0 || stat.removed > 0) && (
          <span className="mono" aria-label={t('preview.stat', { added: stat.added, removed: stat.removed })}>
            <span className="add">+{stat.added}</span> <span className="del">−{stat.removed}</span>
          </span>
        )}
        {file.diff && (
          <button className="link" aria-expanded={open} aria-controls={`${id}-diff`} onClick={() => setOpen(!open)}>
            {open ? t('preview.hide.diff') : t('preview.show.diff')}
          </button>
        )}
      </div>
      {blocked && (
        <div className="blocked-msg" id={`${id}-err`}>
          {t('preview.blocked.msg', { message: blocked.message })}
        </div>
      )}
      {open && file.diff && (
        <div id={`${id}-diff`}>
          <DiffTable diff={file.diff} />
        </div>
      )}
    </div>
  );
});

export function PreviewPanel({
  preview,
  busy,
  onApply,
  onDiscard,
}: {
  preview: PreviewView;
  busy: boolean;
  onApply: (req: ApplyRequest) => void;
  onDiscard: () => void;
}) {
  const [sel, setSel] = useState<Selection>(() => initialSelection(preview));
  useEffect(() => {
    setSel(initialSelection(preview));
    measurePaint(preview.preview_id);
  }, [preview]);
  const onToggle = useMemo(() => (i: number) => setSel((s) => toggle(s, i)), []);
  const req = applyRequest(sel);
  const s = preview.preview.summary;
  const deletesSelected = sel.rows.filter((r) => r.isDelete && sel.selected.has(r.index));
  const autoOpen = new Set(preview.preview.files.filter((f) => !f.error && f.diff).slice(0, AUTO_EXPAND).map((f) => f.index));
  const counts = (
    [
      ['create', s.create],
      ['update', s.update],
      ['patch', s.patch],
      ['edit', s.edit],
      ['delete', s.delete],
      ['mkdir', s.mkdir],
      ['rmdir', s.rmdir],
    ] as const
  ).filter(([, n]) => n > 0);
  return (
    <section className="panel preview" aria-label={t('preview.aria')} data-testid="preview">
      <h2>{t('preview.title')}</h2>
      {preview.summary && (
        <p style={{ whiteSpace: 'pre-wrap' }}>
          <Md text={preview.summary} />
        </p>
      )}
      <div className="preview-head">
        <span className="badge">{t('preview.protocol', { n: preview.protocol })}</span>
        {counts.map(([k, n]) => (
          <span key={k} className="badge">
            {k} {n}
          </span>
        ))}
        {s.blocked > 0 && <span className="badge code">{t('preview.blocked', { n: s.blocked })}</span>}
        {preview.repaired && <span className="badge">{t('preview.repaired')}</span>}
        {preview.fallback && (
          <span className="badge code" title={t('preview.stage', { stage: preview.fallback.stage })}>
            {t('preview.fallback', { from: preview.fallback.from, to: preview.fallback.to, reason: preview.fallback.reason })}
          </span>
        )}
        <span className="spacer" />
        <span className="muted">
          {t('preview.selected', { n: sel.selected.size, total: sel.rows.length })}
        </span>
        <button onClick={() => setSel((x) => setAll(x, true))} disabled={busy}>
          {t('preview.select.all')}
        </button>
        <button onClick={() => setSel((x) => setAll(x, false))} disabled={busy}>
          {t('preview.select.none')}
        </button>
      </div>
      <MemoryNote memory={preview.memory} />
      {preview.no_changes && <div className="info-box">{t('preview.no.changes')}</div>}
      {s.blocked > 0 && (
        <div className="info-box">
          {tn('preview.would.fail', s.blocked)}
        </div>
      )}
      <div className="files" role="group" aria-label={t('preview.actions')}>
        {preview.preview.files.map((f) => (
          <FileCard key={f.index} file={f} selected={sel.selected.has(f.index)} disabled={busy} initiallyOpen={autoOpen.has(f.index)} onToggle={onToggle} />
        ))}
      </div>
      {deletesSelected.length > 0 && (
        <div className="error-box" style={{ borderColor: 'var(--warn)' }}>
          <label className="row">
            <input type="checkbox" checked={sel.deletesConfirmed} onChange={(e) => setSel((x) => confirmDeletes(x, e.target.checked))} disabled={busy} />
            <span>
              {t('preview.confirm.delete', { paths: deletesSelected.map((r) => r.path).join(', ') })}
            </span>
          </label>
        </div>
      )}
      {preview.commands_to_run.length > 0 && (
        <p className="muted">
          {t('preview.suggests')} <code>{preview.commands_to_run.join(' ; ')}</code>
        </p>
      )}
      {(preview.rollback ?? []).length > 0 && (
        <p className="muted">
          {t('preview.rollback', { steps: (preview.rollback ?? []).join(' ; ') })}
        </p>
      )}
      <div className="row">
        <button className="primary" disabled={busy || !req.ok} onClick={() => req.ok && onApply(req.request)}>
          {tn('preview.apply', sel.rows.filter((r) => !r.blocked && sel.selected.has(r.index)).length)}
        </button>
        <button onClick={onDiscard} disabled={busy}>
          {t('preview.discard')}
        </button>
        {!req.ok && <span className="muted">{req.reason}</span>}
      </div>
    </section>
  );
}
