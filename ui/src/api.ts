// Typed wrappers over the commands of docs/UI-API.md.
import { call } from './transport';
import type {
  AppInfo, ConnectionTest, DirListing, History, ProjectView, ProviderStatus, RecentProject, ApplyReport, ReportView, Settings, TraceSummary, Trends,
} from './types';

export const api = {
  appInfo: () => call<AppInfo>('app_info', {}),
  recentProjects: () => call<RecentProject[]>('recent_projects', {}),
  listDir: (path?: string) => call<DirListing>('list_dir', path ? { path } : {}),
  openProject: (path: string) => call<ProjectView>('open_project', { path }),
  getSettings: () => call<Settings>('get_settings', {}),
  saveSettings: (settings: Settings) => call<Settings>('save_settings', { settings }),
  providerInfo: () => call<ProviderStatus>('provider_info', {}),
  testConnection: (settings?: Settings) => call<ConnectionTest>('test_connection', settings ? { settings } : {}),
  undo: (project: string, force = false) => call<ApplyReport>('undo', { project, force }),
  redo: (project: string, force = false) => call<ApplyReport>('redo', { project, force }),
  history: (project: string) => call<History>('history', { project }),
  traces: (project: string) => call<TraceSummary[]>('traces', { project }),
  trace: (project: string, trace_id: string) => call<Record<string, unknown>>('trace', { project, trace_id }),
  report: (project: string, since?: string, proposals = false) =>
    call<ReportView>('report', { project, ...(since ? { since } : {}), ...(proposals ? { proposals } : {}) }),
  trends: (topic?: string) => call<Trends>('trends', topic ? { topic } : {}),
  /** Open a link in the system browser (the app's window never navigates away). */
  openUrl: (url: string) => call<{ url: string }>('open_url', { url }),
};
