import { adviceFor, messageWithoutViolations, type ErrorAdvice } from '../state/errors';
import { inlineSegments } from '../state/markdown';
import type { ApiError } from '../transport';
import type { PlanView } from '../types';
import { t, tn } from '../i18n';

/** A model's text with its inline Markdown (`code`, **bold**) rendered; never HTML. */
export function Md({ text }: { text: string }) {
  return (
    <>
      {inlineSegments(text).map((s, i) => (s.kind === 'code' ? <code key={i}>{s.text}</code> : s.kind === 'strong' ? <strong key={i}>{s.text}</strong> : s.text))}
    </>
  );
}

export function fmtTime(ms: number | null | undefined): string {
  if (!ms) return '';
  return new Date(ms).toLocaleString();
}

export function pct(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : `${(v * 100).toFixed(v < 0.1 && v > 0 ? 1 : 0)} %`;
}

/**
 * An error: its stable code, the actionable message, every violation (once), and what to do
 * next — a hint, Retry (`onRetry`) and a way to Settings (`onSettings`) when the problem is the
 * model provider.
 */
export function ErrorBox({
  error,
  title,
  children,
  onRetry,
  onSettings,
  advice: given,
}: {
  error: ApiError;
  title?: string;
  children?: React.ReactNode;
  onRetry?: () => void;
  onSettings?: () => void;
  /** What to do, when the view knows better than the code alone (default: by the code). */
  advice?: ErrorAdvice;
}) {
  const advice = given ?? adviceFor(error.code);
  const message = messageWithoutViolations(error);
  const retry = advice.retry && onRetry;
  const settings = advice.settings && onSettings;
  return (
    <div className="error-box" role="alert" data-code={error.code}>
      <div className="head">
        {title ? `${title}: ` : ''}
        <span className="badge code">{error.code}</span>
      </div>
      {message && <pre className="message">{message}</pre>}
      {error.violations.length > 0 && (
        <ul aria-label={t('err.violations')}>
          {error.violations.map((v, i) => (
            <li key={i}>
              <span className="badge code">{v.code}</span>{' '}
              {v.path ? <code>{v.path}</code> : null}
              {v.action_index !== undefined && v.action_index !== null ? <span className="muted">{t('err.action', { n: v.action_index })}</span> : null} <Md text={v.message} />
            </li>
          ))}
        </ul>
      )}
      {advice.hint && (
        <p className="hint" data-testid="error-hint">
          {advice.hint}
        </p>
      )}
      {(retry || settings) && (
        <div className="row">
          {retry && <button onClick={onRetry}>{t('err.retry')}</button>}
          {settings && <button onClick={onSettings}>{t('err.settings')}</button>}
        </div>
      )}
      {children}
    </div>
  );
}

interface PatchReport {
  applied?: { key: string }[];
  rejected?: { key: string; reason?: unknown }[];
}

/** What happened to the answer's memory_patch. */
export function MemoryNote({ memory }: { memory: unknown }) {
  const m = memory as PatchReport | null;
  if (!m || (!m.applied?.length && !m.rejected?.length)) return null;
  return (
    <p className="muted">
      {t('memory.label')} {m.applied?.length ? t('memory.set', { keys: m.applied.map((a) => a.key).join(', ') }) : null}
      {m.rejected?.length ? t('memory.rejected', { items: m.rejected.map((r) => `${r.key} (${typeof r.reason === 'string' ? r.reason : JSON.stringify(r.reason)})`).join(', ') }) : null}
    </p>
  );
}

function List({ title, items }: { title: string; items: string[] }) {
  if (!items?.length) return null;
  return (
    <>
      <h3>{title}</h3>
      <ul>
        {items.map((x, i) => (
          <li key={i}>
            <Md text={x} />
          </li>
        ))}
      </ul>
    </>
  );
}

/** Summary, steps, risks, questions, verification, commands, rollback, and the context that was sent / dropped. */
export function PlanDetails({ plan }: { plan: PlanView }) {
  const ctx = plan.context;
  return (
    <div className="plan-view">
      {plan.summary && (
        <p className="summary">
          <Md text={plan.summary} />
        </p>
      )}
      {plan.plan?.length > 0 && (
        <>
          <h3>{t('plan.steps')}</h3>
          <ol>
            {plan.plan.map((s, i) => (
              <li key={i}>
                <strong>
                  <Md text={s.step} />
                </strong>
                {s.details ? (
                  <>
                    {' '}
                    — <Md text={s.details} />
                  </>
                ) : null}
              </li>
            ))}
          </ol>
        </>
      )}
      <List title={t('plan.risks')} items={plan.risks} />
      <List title={t('plan.questions')} items={plan.questions} />
      <List title={t('plan.verify')} items={plan.verification} />
      {plan.commands_to_run?.length > 0 && (
        <>
          <h3>{t('plan.commands')}</h3>
          <pre>{plan.commands_to_run.join('\n')}</pre>
        </>
      )}
      <List title={t('plan.rollback')} items={plan.rollback ?? []} />
      {plan.unanswered_context_requests?.length > 0 && (
        <p className="muted">
          {tn('plan.unanswered', plan.unanswered_context_requests.length)}{' '}
          <code>{plan.unanswered_context_requests.map((r) => JSON.stringify(r)).join(' ')}</code>
        </p>
      )}
      <MemoryNote memory={plan.memory} />
      <div className="row muted" style={{ fontSize: 13 }}>
        <span>{t('plan.protocol', { n: plan.protocol })}</span>
        {plan.context_rounds > 0 && <span>{tn('plan.rounds', plan.context_rounds)}</span>}
        {plan.repaired && <span>{t('plan.repaired')}</span>}
        <span>{t('plan.trace')} <code>{plan.trace_id}</code></span>
      </div>
      {ctx && (
        <details>
          <summary>
            {tn('plan.context', ctx.sent_files.length, { dropped: ctx.dropped.length })}
          </summary>
          <div className="grid2">
            <div>
              <h3>{t('plan.sent')}</h3>
              <ul className="mono">
                {ctx.sent_files.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            </div>
            <div>
              <h3>{t('plan.dropped')}</h3>
              {ctx.dropped.length === 0 ? (
                <p className="muted">{t('plan.nothing')}</p>
              ) : (
                <ul>
                  {ctx.dropped.map((d) => (
                    <li key={d.key}>
                      <span className="badge">{d.kind}</span> <code>{d.path ?? d.key}</code> — {d.reason}
                    </li>
                  ))}
                </ul>
              )}
            </div>
          </div>
          {ctx.stats && (
            <p className="muted mono">
              {Object.entries(ctx.stats)
                .map(([k, v]) => `${k.replace(/^context_/, '')}=${v}`)
                .join(' · ')}
            </p>
          )}
        </details>
      )}
    </div>
  );
}
