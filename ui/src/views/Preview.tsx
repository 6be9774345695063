import { memo, useEffect, useMemo, useState } from 'react';
import { diffStat, parseDiff } from '../state/diff';
import { applyRequest, confirmDeletes, initialSelection, setAll, toggle, type ApplyRequest, type Selection } from '../state/selection';
import type { FileDiff, PreviewView } from '../types';
import { MemoryNote, Md } from './common';
import { t } from '../i18n';

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
                <span className="sr-only">{l.kind === 'add' ? 'added: ' : l.kind === 'del' ? 'removed: ' : ''}</span>
                {l.text}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!all && parsed.lines.length > FIRST_LINES && (
        <button className="link" onClick={() => setAll(true)}>
          Show all {parsed.lines.length} lines
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
        {file.noop && <span className="badge">no-op</span>}
        {file.removed_files > 0 && <span className="badge">removes {file.removed_files} file(s)</span>}
        <span className="spacer" />
        {(stat.added > 0 || stat.removed > 0) && (
          <span className="mono" aria-label={`${stat.added} lines added, ${stat.removed} removed`}>
            <span className="add">+{stat.added}</span> <span className="del">−{stat.removed}</span>
          </span>
        )}
        {file.diff && (
          <button className="link" aria-expanded={open} aria-controls={`${id}-diff`} onClick={() => setOpen(!open)}>
            {open ? 'Hide diff' : 'Show diff'}
          </button>
        )}
      </div>
      {blocked && (
        <div className="blocked-msg" id={`${id}-err`}>
          Blocked: {blocked.message}
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
    <section className="panel preview" aria-label="Preview" data-testid="preview">
      <h2>{t('preview.title')}</h2>
      {preview.summary && (
        <p style={{ whiteSpace: 'pre-wrap' }}>
          <Md text={preview.summary} />
        </p>
      )}
      <div className="preview-head">
        <span className="badge">protocol v{preview.protocol}</span>
        {counts.map(([k, n]) => (
          <span key={k} className="badge">
            {k} {n}
          </span>
        ))}
        {s.blocked > 0 && <span className="badge code">blocked {s.blocked}</span>}
        {preview.repaired && <span className="badge">repaired</span>}
        {preview.fallback && (
          <span className="badge code" title={`stage ${preview.fallback.stage}`}>
            fallback v{preview.fallback.from}→v{preview.fallback.to} ({preview.fallback.reason})
          </span>
        )}
        <span className="spacer" />
        <span className="muted">
          {sel.selected.size} of {sel.rows.length} selected
        </span>
        <button onClick={() => setSel((x) => setAll(x, true))} disabled={busy}>
          Select all
        </button>
        <button onClick={() => setSel((x) => setAll(x, false))} disabled={busy}>
          Select none
        </button>
      </div>
      <MemoryNote memory={preview.memory} />
      {preview.no_changes && <div className="info-box">The model says nothing needs to change.</div>}
      {s.blocked > 0 && (
        <div className="info-box">
          {s.blocked} action(s) would fail and cannot be selected; their error code and message are shown below.
        </div>
      )}
      <div className="files" role="group" aria-label="Actions">
        {preview.preview.files.map((f) => (
          <FileCard key={f.index} file={f} selected={sel.selected.has(f.index)} disabled={busy} initiallyOpen={autoOpen.has(f.index)} onToggle={onToggle} />
        ))}
      </div>
      {deletesSelected.length > 0 && (
        <div className="error-box" style={{ borderColor: 'var(--warn)' }}>
          <label className="row">
            <input type="checkbox" checked={sel.deletesConfirmed} onChange={(e) => setSel((x) => confirmDeletes(x, e.target.checked))} disabled={busy} />
            <span>
              Yes, delete {deletesSelected.map((r) => r.path).join(', ')}
            </span>
          </label>
        </div>
      )}
      {preview.commands_to_run.length > 0 && (
        <p className="muted">
          The model suggests running: <code>{preview.commands_to_run.join(' ; ')}</code>
        </p>
      )}
      {(preview.rollback ?? []).length > 0 && (
        <p className="muted">
          To roll back by hand, the model says: {(preview.rollback ?? []).join(' ; ')}
        </p>
      )}
      <div className="row">
        <button className="primary" disabled={busy || !req.ok} onClick={() => req.ok && onApply(req.request)}>
          Apply {sel.rows.filter((r) => !r.blocked && sel.selected.has(r.index)).length} action(s)
        </button>
        <button onClick={onDiscard} disabled={busy}>
          Discard
        </button>
        {!req.ok && <span className="muted">{req.reason}</span>}
      </div>
    </section>
  );
}
