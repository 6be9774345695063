import { useEffect, useRef, useState } from 'react';
import { api } from '../api';
import { canSend, classifyInput, describeDecision, type ChatEvent, type ChatMessage, type ChatState, type CheckOutput } from '../state/chat';
import type { ApplyRequest } from '../state/selection';
import { toApiError } from '../transport';
import type { ApplyOutcome, ChatTurnView, PreviewView, ProviderStatus, SavedPlan } from '../types';
import { t, tn } from '../i18n';
import { ErrorBox, fmtTime, PlanDetails } from './common';
import { PreviewPanel } from './Preview';

export type RunJob = <T>(command: string, args: Record<string, unknown>, label: string) => Promise<T>;

/** What the chat understands, in the UI's language (the empty chat and the `help` command show it). */
export const CHAT_HELP = () => t('chat.help');

const ROLLED_BACK = new Set(['ERR_CHECK_FAILED', 'ERR_CANCELLED', 'ERR_BASE_MISMATCH', 'ERR_PATCH_APPLY_FAILED', 'ERR_EDIT_APPLY_FAILED']);

export function markResult() {
  performance.clearMarks('papayu:preview-result');
  performance.clearMeasures('papayu:preview-render');
  performance.mark('papayu:preview-result');
}

export function Checks({ checks }: { checks: { command: string; output: string; success?: boolean; status?: string }[] }) {
  if (!checks.length) return null;
  return (
    <div className="checks">
      {checks.map((c, i) => (
        <details key={i} open={c.success === false || c.success === undefined}>
          <summary>
            {t('check.title')} <code>{c.command}</code>{' '}
            {c.success === undefined ? null : c.success ? <span className="add">{t('check.passed')}</span> : <span className="del">{t('check.failed')}</span>}
            {c.status ? <span className="muted"> ({c.status})</span> : null}
          </summary>
          <pre className="check-output">{c.output || t('check.no.output')}</pre>
        </details>
      ))}
    </div>
  );
}

function Applied({ outcome, onUndo, busy }: { outcome: ApplyOutcome; onUndo: () => void; busy: boolean }) {
  const r = outcome.report;
  if (!outcome.applied) {
    return <div>{outcome.no_changes ? t('chat.nothing.nochanges') : t('chat.nothing.applied')}</div>;
  }
  return (
    <div data-testid="applied">
      <strong className="add">{t('chat.applied')}</strong> {tn('chat.actions', outcome.selected.length)}{r ? <>{t('chat.transaction')} <code>{r.tx_id}</code></> : null}
      {r && (
        <ul className="mono">
          {r.files.map((f) => (
            <li key={f.index}>
              {f.kind} {f.path}
            </li>
          ))}
        </ul>
      )}
      {r && <Checks checks={r.checks} />}
      <button onClick={onUndo} disabled={busy}>
        {t('chat.undo')}
      </button>
    </div>
  );
}

function errorTitle(m: Extract<ChatMessage, { role: 'error' }>): string {
  switch (m.during) {
    case 'apply':
      return t('chat.err.apply');
    case 'document':
      return m.error.violations.length ? t('chat.err.doc.rejected') : t('chat.err.doc.preview');
    case 'chat':
      return m.error.violations.length ? t('chat.err.rejected') : m.error.code === 'ERR_CANCELLED' ? t('chat.err.cancelled') : t('chat.err.call');
    case 'command':
      return t('chat.err.failed');
  }
}

function Message({
  m,
  onOk,
  onUndo,
  busy,
  savedPlan,
  onRetry,
  onSettings,
}: {
  m: ChatMessage;
  onOk: () => void;
  onUndo: () => void;
  busy: boolean;
  savedPlan: boolean;
  onRetry?: () => void;
  onSettings?: () => void;
}) {
  switch (m.role) {
    case 'user':
      return <div className="msg user">{m.text}</div>;
    case 'plan':
      return (
        <div className="msg" data-testid="plan">
          <div className="row" style={{ marginBottom: 6 }}>
            <span className={`badge mode-${m.decision.mode}`}>{m.decision.mode}</span>
            <span className="muted">{t('chat.mode', { mode: describeDecision(m.decision) })}</span>
          </div>
          <PlanDetails plan={m.plan} />
          {savedPlan && (
            <div className="row">
              <span className="muted">{t('chat.plan.saved')}</span>
              <button onClick={onOk} disabled={busy}>
                {t('chat.plan.ok')}
              </button>
            </div>
          )}
        </div>
      );
    case 'preview':
      return (
        <div className="msg">
          <span className={`badge mode-${m.decision.mode}`}>{m.decision.mode}</span>{' '}
          <span className="muted">{t('chat.mode', { mode: describeDecision(m.decision) })}</span> {tn('chat.preview.of', m.preview.actions.length)}
        </div>
      );
    case 'applied':
      return (
        <div className="msg">
          <Applied outcome={m.outcome} onUndo={onUndo} busy={busy} />
        </div>
      );
    case 'error':
      return (
        <div className="msg" data-testid="error">
          <ErrorBox error={m.error} title={errorTitle(m)} onRetry={m.during === 'chat' ? onRetry : undefined} onSettings={onSettings}>
            {m.during === 'apply' && ROLLED_BACK.has(m.error.code) && (
              <p className="rollback" data-testid="rollback">
                {t('chat.rolled.back')}
              </p>
            )}
            {m.checks && <Checks checks={m.checks} />}
          </ErrorBox>
        </div>
      );
    case 'info':
      return <div className="msg muted" style={{ whiteSpace: 'pre-wrap' }}>{m.text}</div>;
  }
}

/** Which provider and model the next model call goes to, or why there is none. */
function ProviderLine({ status, onSettings }: { status: ProviderStatus | null; onSettings?: () => void }) {
  if (!status) return null;
  const p = status.provider;
  return (
    <div className="provider-line" data-testid="provider">
      {p ? (
        <>
          <span className="muted">{t('chat.model')}</span> <strong>{p.model}</strong> <span className="muted">{t('chat.via', { kind: p.kind })}</span>
          {p.endpoint && (
            <span className="mono muted endpoint" title={p.endpoint}>
              {p.endpoint}
            </span>
          )}
        </>
      ) : (
        <span className="del">{t('chat.no.model')}{status.problem ? `: ${status.problem.message}` : ''}</span>
      )}
      {onSettings && (
        <button className="link" onClick={onSettings}>
          {p ? t('chat.change') : t('chat.configure')}
        </button>
      )}
    </div>
  );
}

export function Chat({
  project,
  chat,
  dispatch,
  run,
  busy,
  onChanged,
  saved,
  onSettings,
  settingsKey,
}: {
  saved?: SavedPlan | null;
  /** Show the Settings view (errors about the provider point there). */
  onSettings?: () => void;
  /** Changes whenever the settings are saved: the provider shown is fetched again. */
  settingsKey?: unknown;
  project: string;
  chat: ChatState;
  dispatch: (e: ChatEvent) => void;
  run: RunJob;
  busy: boolean;
  onChanged: () => void;
}) {
  const [text, setText] = useState('');
  const [planDoc, setPlanDoc] = useState('');
  const [provider, setProvider] = useState<ProviderStatus | null>(null);
  useEffect(() => {
    api.providerInfo().then(setProvider, () => setProvider(null));
  }, [settingsKey]);
  const endRef = useRef<HTMLDivElement>(null);
  const input = classifyInput(text, chat.savedPlan);
  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: 'nearest' });
  }, [chat.messages.length]);

  const undoRedo = async (which: 'undo' | 'redo') => {
    try {
      const r = which === 'undo' ? await api.undo(project) : await api.redo(project);
      dispatch({ type: 'info', text: t(which === 'undo' ? 'chat.undone' : 'chat.redone', { tx: r.tx_id, files: r.files.map((f) => f.path).join(', ') }) });
      onChanged();
    } catch (e) {
      dispatch({ type: 'command_failed', error: toApiError(e) });
    }
  };

  const send = async (raw: string) => {
    const inp = classifyInput(raw, chat.savedPlan);
    if (inp.kind === 'empty' || !canSend(chat) || busy) return;
    setText('');
    if (inp.kind === 'command') {
      if (inp.name === 'help') dispatch({ type: 'info', text: CHAT_HELP() });
      else if (inp.name === 'undo' || inp.name === 'redo') await undoRedo(inp.name);
      else {
        try {
          const h = await api.history(project);
          dispatch({
            type: 'info',
            text: h.undo.length ? h.undo.slice().reverse().map((e) => `${e.tx_id} ${e.kind} ${e.paths.join(', ')}`).join('\n') : t('chat.nothing.yet'),
          });
        } catch (e) {
          dispatch({ type: 'command_failed', error: toApiError(e) });
        }
      }
      return;
    }
    dispatch({ type: 'send', text: inp.text });
    try {
      const turn = await run<ChatTurnView>('start_chat', { project, message: inp.text }, inp.appliesSavedPlan ? t('chat.job.saved') : t('chat.job.asking'));
      if (turn.turn === 'preview') markResult();
      dispatch({ type: 'turn', turn });
    } catch (e) {
      dispatch({ type: 'chat_failed', error: toApiError(e) });
    }
  };

  const apply = async (req: ApplyRequest) => {
    if (!chat.preview) return;
    dispatch({ type: 'apply_started' });
    try {
      const outcome = await run<ApplyOutcome>('start_apply', { project, preview_id: chat.preview.preview_id, ...req }, t('chat.job.applying'));
      dispatch({ type: 'applied', outcome });
      onChanged();
    } catch (e) {
      const checks = (e as { checks?: CheckOutput[] }).checks;
      dispatch({ type: 'apply_failed', error: toApiError(e), checks });
    }
  };

  const previewDoc = async () => {
    if (!planDoc.trim() || busy) return;
    try {
      const p = await run<PreviewView>('start_preview_plan', { project, plan: planDoc }, t('chat.job.doc'));
      markResult();
      dispatch({ type: 'info', text: tn('chat.doc.preview', p.actions.length) });
      dispatch({ type: 'preview_ready', preview: p });
    } catch (e) {
      dispatch({ type: 'document_failed', error: toApiError(e) });
    }
  };

  // Retry sends the last message again (the chat log outlives this view, so it is read from there).
  const lastSent = [...chat.messages].reverse().find((m) => m.role === 'user');
  const retry = lastSent?.role === 'user' && !busy && canSend(chat) ? () => void send(lastSent.text) : undefined;

  const sendLabel = input.kind === 'command' ? t('chat.run', { name: input.name }) : input.kind === 'message' && input.appliesSavedPlan ? t('chat.apply.saved') : t('chat.send');

  return (
    <div className="chat">
      {chat.messages.length === 0 && (
        <div className="info-box">
          {CHAT_HELP()}
          {chat.savedPlan && (
            <div data-testid="saved-plan">
              <p>
                {t('chat.saved')}
                {saved ? (
                  <>
                    {' '}
                    ({t('chat.saved.goal')} “{saved.goal}”, {fmtTime(saved.created_unix_ms)}
                    {saved.llm_mode ? <>, {t('chat.saved.mode', { mode: saved.llm_mode })}</> : null})
                  </>
                ) : null}
                : {t('chat.saved.ok')}
              </p>
              {!!saved?.changed_files?.length && (
                <p className="del" data-testid="saved-plan-stale">
                  {t('chat.saved.stale', { files: saved.changed_files.join(', ') })}
                </p>
              )}
              {saved?.summary && <pre>{saved.summary}</pre>}
            </div>
          )}
        </div>
      )}
      <ProviderLine status={provider} onSettings={onSettings} />
      <div className="messages" aria-live="polite">
        {chat.messages.map((m) => (
          <Message
            key={m.id}
            m={m}
            onOk={() => void send('ok')}
            onUndo={() => void undoRedo('undo')}
            busy={busy}
            savedPlan={chat.savedPlan && chat.phase === 'planned'}
            onRetry={retry}
            onSettings={onSettings}
          />
        ))}
      </div>
      {chat.preview && (
        <PreviewPanel preview={chat.preview} busy={busy || chat.phase === 'applying'} onApply={(r) => void apply(r)} onDiscard={() => dispatch({ type: 'discard' })} />
      )}
      <div ref={endRef} />
      <form
        // Docked (not sticky) while a preview is open: it must not cover the diff or Apply.
        className={chat.preview ? 'composer docked' : 'composer'}
        onSubmit={(e) => {
          e.preventDefault();
          void send(text);
        }}
      >
        <label htmlFor="goal" className="sr-only">
          {t('chat.goal.label')}
        </label>
        <textarea
          id="goal"
          placeholder={chat.savedPlan ? t('chat.placeholder.saved') : t('chat.placeholder')}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              void send(text);
            }
          }}
        />
        <div className="row">
          <button type="submit" className="primary" disabled={busy || !canSend(chat) || input.kind === 'empty'}>
            {sendLabel}
          </button>
          <span className="muted">
            <kbd>Ctrl</kbd>+<kbd>Enter</kbd> {t('chat.keys.send')} · <kbd>Esc</kbd> {t('chat.keys.cancel')} · {t('chat.keys.mode')} {input.kind === 'message' && input.appliesSavedPlan ? t('chat.mode.saved') : t('chat.mode.auto')}
          </span>
        </div>
        <details style={{ marginTop: 8 }}>
          <summary>{t('chat.doc.summary')}</summary>
          <label htmlFor="plandoc" className="sr-only">
            {t('chat.doc.label')}
          </label>
          <textarea id="plandoc" rows={5} className="mono" placeholder='{"actions":[…],"summary":"…"}' value={planDoc} onChange={(e) => setPlanDoc(e.target.value)} />
          <button type="button" onClick={() => void previewDoc()} disabled={busy || !planDoc.trim()}>
            {t('chat.doc.button')}
          </button>
        </details>
      </form>
    </div>
  );
}

