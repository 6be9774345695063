import { useCallback, useEffect, useReducer, useRef, useState } from 'react';
import { api } from './api';
import { chatReducer, initialChat } from './state/chat';
import { checkOutputs, progressFraction, progressText, runJob, type JobHandle, type JobState } from './state/job';
import { DEFAULT_SETTINGS } from './state/settings';
import { call, toApiError, transport, type ApiError } from './transport';
import { t as tr } from './i18n';
import { Checks } from './views/Chat';
import type { AppInfo, History, ProjectView, Settings } from './types';
import { Chat, CHAT_HELP } from './views/Chat';
import { HistoryView } from './views/History';
import { ProjectPicker } from './views/Picker';
import { ReportPanel } from './views/Report';
import { SettingsView } from './views/Settings';
import { TracesView } from './views/Traces';
import { TrendsView } from './views/Trends';

const TABS = ['chat', 'history', 'traces', 'report', 'trends', 'settings'] as const;
type Tab = (typeof TABS)[number];
const PROJECT_KEY = 'papayu.project';

function applyTheme(theme: Settings['theme']) {
  const root = document.documentElement;
  if (theme === 'system') delete root.dataset.theme;
  else root.dataset.theme = theme;
}

function JobBar({ job, onCancel }: { job: JobState; onCancel: () => void }) {
  const frac = progressFraction(job);
  const checks = checkOutputs(job);
  return (
    <div className="jobbar" role="status" aria-live="polite" data-testid="jobbar">
      <div className="row">
        <strong>{job.label}</strong>
        <span>{progressText(job)}</span>
        {frac !== null ? <progress max={1} value={frac} aria-label={tr('job.progress')} /> : <progress aria-label={tr('job.working')} />}
        <span className="spacer" />
        <button className="danger" onClick={onCancel} disabled={job.phase === 'cancelling'} aria-keyshortcuts="Escape">
          {tr('common.cancel')} <kbd>Esc</kbd>
        </button>
      </div>
      <Checks checks={checks} />
    </div>
  );
}

function Help({ open, onClose }: { open: boolean; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal?.();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} className="help" onClose={onClose} aria-labelledby="help-h">
      <h2 id="help-h">{tr('help.title')}</h2>
      <table className="list">
        <tbody>
          <tr><td><kbd>Ctrl</kbd>/<kbd>⌘</kbd>+<kbd>Enter</kbd></td><td>{tr('help.send')}</td></tr>
          <tr><td><kbd>Esc</kbd></td><td>{tr('help.cancel')}</td></tr>
          <tr><td><kbd>Alt</kbd>+<kbd>1</kbd>…<kbd>6</kbd></td><td>{tr('help.tabs')}</td></tr>
          <tr><td><kbd>←</kbd> <kbd>→</kbd></td><td>{tr('help.move')}</td></tr>
          <tr><td><kbd>Space</kbd></td><td>{tr('help.toggle')}</td></tr>
          <tr><td><kbd>?</kbd></td><td>{tr('help.this')}</td></tr>
        </tbody>
      </table>
      <p>{CHAT_HELP()}</p>
      <button onClick={onClose} autoFocus>
        {tr('help.close')}
      </button>
    </dialog>
  );
}

export function App() {
  const [info, setInfo] = useState<AppInfo | null>(null);
  const [settings, setSettings] = useState<Settings>(DEFAULT_SETTINGS);
  const [project, setProject] = useState<ProjectView | null>(null);
  // The project "Change project" left: the picker browses from there.
  const [left, setLeft] = useState<string | null>(null);
  const [history, setHistory] = useState<History | null>(null);
  const [openErr, setOpenErr] = useState<ApiError | null>(null);
  const [fatal, setFatal] = useState<ApiError | null>(null);
  const [tab, setTab] = useState<Tab>('chat');
  const [chat, dispatch] = useReducer(chatReducer, initialChat(false));
  const [job, setJob] = useState<JobState | null>(null);
  const [help, setHelp] = useState(false);
  const handle = useRef<JobHandle | null>(null);
  const tabRefs = useRef<(HTMLButtonElement | null)[]>([]);

  const open = useCallback(async (path: string) => {
    try {
      const p = await api.openProject(path);
      setProject(p);
      setHistory(p.history);
      setOpenErr(null);
      sessionStorage.setItem(PROJECT_KEY, p.path);
      dispatch({ type: 'reset', savedPlan: !!p.saved_plan });
      setTab('chat');
    } catch (e) {
      setOpenErr(toApiError(e));
    }
  }, []);

  useEffect(() => {
    transport();
    // A project named in the URL or chosen earlier in this tab wins; else the one `papayu ui`
    // was started for (`--project`, or the working directory's).
    const chosen = new URLSearchParams(location.search).get('project') ?? sessionStorage.getItem(PROJECT_KEY);
    api.appInfo().then(
      (i) => {
        setInfo(i);
        const first = chosen ?? i.project;
        if (first) void open(first);
      },
      (e) => setFatal(toApiError(e)),
    );
    api.getSettings().then(
      (s) => {
        setSettings(s);
        applyTheme(s.theme);
      },
      () => {},
    );
  }, [open]);

  const run = useCallback(<T,>(command: string, args: Record<string, unknown>, label: string): Promise<T> => {
    let last: JobState | null = null;
    const h = runJob(call, command, args, {
      label,
      onState: (s) => {
        last = s;
        setJob(s);
      },
    });
    handle.current = h;
    return (h.done as Promise<T>)
      .catch((e: unknown) => {
        const err = toApiError(e);
        throw Object.assign(err, { checks: last ? checkOutputs(last) : [] });
      })
      .finally(() => {
        if (handle.current === h) {
          handle.current = null;
          setJob(null);
        }
      });
  }, []);

  const refreshHistory = useCallback(() => {
    if (project) api.history(project.path).then(setHistory, () => {});
  }, [project]);

  const cycleTheme = () => {
    const next: Settings['theme'] = settings.theme === 'system' ? 'dark' : settings.theme === 'dark' ? 'light' : 'system';
    const s = { ...settings, theme: next };
    setSettings(s);
    applyTheme(next);
    api.saveSettings(s).then(setSettings, () => {});
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
      if (e.key === 'Escape' && handle.current) {
        e.preventDefault();
        handle.current.cancel();
      } else if (e.key === '?' && !typing) {
        e.preventDefault();
        setHelp((h) => !h);
      } else if (e.altKey && /^[1-6]$/.test(e.key) && project) {
        e.preventDefault();
        setTab(TABS[Number(e.key) - 1]);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [project]);

  const busy = job !== null;
  const onTabKey = (e: React.KeyboardEvent, i: number) => {
    const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    if (!d) return;
    const n = (i + d + TABS.length) % TABS.length;
    setTab(TABS[n]);
    tabRefs.current[n]?.focus();
  };

  return (
    <div className="app">
      <header className="top">
        <span className="brand">papayu</span>
        {project ? (
          <>
            <strong>{project.name}</strong>
            <span className="proj" title={project.path}>
              {project.path}
            </span>
          </>
        ) : (
          <span className="muted">{tr('header.none')}</span>
        )}
        <span className="spacer" />
        {project && (
          <button
            onClick={() => {
              setLeft(project.path);
              setProject(null);
              sessionStorage.removeItem(PROJECT_KEY);
            }}
            disabled={busy}
          >
            {tr('header.change')}
          </button>
        )}
        <button onClick={cycleTheme} aria-label={tr('header.theme.aria', { theme: tr(`theme.${settings.theme}`) })} title={tr('header.theme.title')}>
          ◐ {tr(`theme.${settings.theme}`)}
        </button>
        <button onClick={() => setHelp(true)} aria-keyshortcuts="?" aria-label={tr('header.help')}>
          ?
        </button>
      </header>
      {project ? (
        <nav role="tablist" aria-label={tr('header.views')}>
          {TABS.map((t, i) => (
            <button
              key={t}
              ref={(el) => {
                tabRefs.current[i] = el;
              }}
              role="tab"
              id={`tab-${t}`}
              aria-selected={tab === t}
              aria-controls={`panel-${t}`}
              tabIndex={tab === t ? 0 : -1}
              onClick={() => setTab(t)}
              onKeyDown={(e) => onTabKey(e, i)}
              aria-keyshortcuts={`Alt+${i + 1}`}
            >
              {tr(`tab.${t}`)}
            </button>
          ))}
        </nav>
      ) : (
        <div />
      )}
      <main>
        {fatal && (
          <div className="error-box" role="alert">
            <div className="head">
              <span className="badge code">{fatal.code}</span>
            </div>
            <pre>{fatal.message}</pre>
          </div>
        )}
        {!project ? (
          <ProjectPicker onOpen={(p) => void open(p)} error={openErr} start={left ?? undefined} />
        ) : (
          <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
            {tab === 'chat' && (
              <Chat
                project={project.path}
                saved={project.saved_plan}
                chat={chat}
                dispatch={dispatch}
                run={run}
                busy={busy}
                onChanged={refreshHistory}
                onSettings={() => setTab('settings')}
                settingsKey={settings}
              />
            )}
            {tab === 'history' && <HistoryView project={project.path} history={history} onChanged={refreshHistory} busy={busy} />}
            {tab === 'traces' && <TracesView project={project.path} />}
            {tab === 'report' && <ReportPanel project={project.path} />}
            {tab === 'trends' && <TrendsView onSettings={() => setTab('settings')} />}
            {tab === 'settings' && (
              <SettingsView
                settings={settings}
                info={info}
                onSaved={(s) => {
                  setSettings(s);
                  applyTheme(s.theme);
                }}
              />
            )}
          </div>
        )}
      </main>
      {job ? <JobBar job={job} onCancel={() => handle.current?.cancel()} /> : <div />}
      <Help open={help} onClose={() => setHelp(false)} />
    </div>
  );
}
