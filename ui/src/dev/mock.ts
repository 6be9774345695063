// Dev-only fixture backend (`npm run dev`, open /?mock): the commands of docs/UI-API.md with
// canned results, so the views can be worked on without `papayu ui`. Not in the production bundle.
import { ApiError, type Transport } from '../transport';
import type { ChatTurnView, FileDiff, History, JobStatus, PreviewView, Progress, ReportView } from '../types';

const LIB_DIFF = '--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn answer() -> u32 {\n-    41\n+    42\n }\n';

function fileDiff(index: number, kind: string, path: string, diff: string, error: FileDiff['error'] = null): FileDiff {
  return { index, kind, path, diff, old_bytes: 30, new_bytes: 30, removed_files: 0, noop: false, hunks: [], error };
}

function preview(n: number): PreviewView {
  const files: FileDiff[] = [fileDiff(0, 'PATCH_FILE', 'src/lib.rs', LIB_DIFF), fileDiff(1, 'CREATE_FILE', 'docs/NOTES.md', '--- /dev/null\n+++ b/docs/NOTES.md\n@@ -0,0 +1,3 @@\n+# Notes\n+\n+answer() returns 42.\n')];
  files.push(fileDiff(2, 'PATCH_FILE', 'src/old.rs', '', { code: 'ERR_BASE_MISMATCH', message: 'src/old.rs changed since the plan: expected sha256 ab12…, found cd34…' }));
  files.push({ ...fileDiff(3, 'DELETE_FILE', 'legacy.txt', '--- a/legacy.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n'), removed_files: 1 });
  for (let i = 4; i < n; i++) {
    const body = Array.from({ length: 20 }, (_, j) => `+line ${j} of generated file ${i}`).join('\n');
    files.push(fileDiff(i, 'CREATE_FILE', `gen/file_${String(i).padStart(3, '0')}.txt`, `--- /dev/null\n+++ b/gen/file_${i}.txt\n@@ -0,0 +1,20 @@\n${body}\n`));
  }
  return {
    preview_id: `pv${Date.now()}`, trace_id: '0190-mock', protocol: 2, goal: 'make answer() return 42', summary: 'answer is 42, with a note',
    no_changes: false, actions: files.map((f) => ({ index: f.index, kind: f.kind, path: f.path })),
    preview: { files, summary: { create: n - 3, update: 0, patch: 2, edit: 0, delete: 1, mkdir: 0, rmdir: 0, blocked: 1 } },
    deletes: ['legacy.txt'], fallback: null, repaired: false, memory: null, commands_to_run: ['cargo test'], verification: [], trace_file: null,
  };
}

const day = (i: number) => new Date(Date.now() - (9 - i) * 86400000).toISOString().slice(0, 10);

export function mockTransport(): Transport {
  let saved = false;
  let seq = 0;
  const jobs = new Map<string, { events: Progress[]; result?: unknown; error?: ApiError; t0: number; cancelled?: boolean }>();
  const history: History = { undo: [], redo: [] };
  const job = (events: Progress[], result?: unknown, error?: ApiError) => {
    const id = `job${++seq}`;
    jobs.set(id, { events, result, error, t0: Date.now() });
    return { job_id: id };
  };
  const handlers: Record<string, (a: Record<string, unknown>) => unknown> = {
    app_info: () => ({ version: '0.1.0-mock', transport: 'http', config_dir: '/tmp/mock', env: { provider: 'openai-compatible', model: 'mock', api_url: 'http://127.0.0.1:1/v1', protocol: 2 }, project: null, research: { on: true, backend: 'searxng', problem: null } }),
    recent_projects: () => [{ path: '/home/me/demo', name: 'demo', opened_unix_ms: Date.now() - 3600e3 }],
    list_dir: (a) => ({ path: (a.path as string) ?? '/home/me', parent: '/home', entries: [{ name: 'demo', is_dir: true, is_project: true }, { name: 'notes', is_dir: true, is_project: false }] }),
    open_project: (a) => ({ path: a.path, name: String(a.path).split('/').pop(), saved_plan: null, history }),
    get_settings: () => ({ provider: null, api_url: null, model: null, api_key_env: 'OPENAI_API_KEY', protocol_version: null, strict_json: null, temperature: null, max_tokens: null, timeout_sec: null, theme: 'system' }),
    save_settings: (a) => a.settings,
    history: () => history,
    undo: () => {
      const e = history.undo.pop();
      if (!e) throw new ApiError('ERR_NOTHING_TO_UNDO', 'Nothing to undo.');
      history.redo.push(e);
      return { tx_id: e.tx_id, files: [], summary: {}, checks: [] };
    },
    redo: () => {
      const e = history.redo.pop();
      if (!e) throw new ApiError('ERR_NOTHING_TO_REDO', 'Nothing to redo.');
      history.undo.push(e);
      return { tx_id: e.tx_id, files: [], summary: {}, checks: [] };
    },
    start_chat: (a) => {
      const msg = String(a.message).trim().toLowerCase();
      if (msg === 'ok' && saved) {
        const turn: ChatTurnView = { turn: 'preview', decision: { mode: 'APPLY', text: 'ok', apply_saved_plan: true, reason: 'saved_plan_trigger' }, preview: preview(msg.length > 100 ? 200 : 6) };
        return job([{ stage: 'requesting', attempt: 'initial', protocol: 2 }, { stage: 'receiving', chars: 800 }, { stage: 'previewing' }], turn);
      }
      if (msg.includes('reject')) return job([{ stage: 'requesting', attempt: 'initial', protocol: 2 }, { stage: 'repair', codes: ['ERR_INVALID_PATH'] }], undefined, new ApiError('ERR_INVALID_PATH', 'The model answered with invalid actions twice; nothing was written.', [{ code: 'ERR_INVALID_PATH', message: 'absolute path', path: '/etc/passwd' }]));
      saved = true;
      const turn: ChatTurnView = {
        turn: 'plan', decision: { mode: 'PLAN', text: String(a.message), apply_saved_plan: false, reason: 'default' },
        outcome: {
          trace_id: '0190-mock-plan', protocol: 2, summary: 'Diagnosis: answer() returns 41.\n1) return 42\n2) note it in docs/NOTES.md\nCheck: cargo test',
          plan: [{ step: 'Patch src/lib.rs', details: '41 → 42' }, { step: 'Create docs/NOTES.md', details: 'explain' }], questions: ['Keep the old constant?'], risks: ['Callers may assume 41'],
          verification: ['cargo test'], commands_to_run: [], unanswered_context_requests: [], context_rounds: 1, repaired: false, memory: null, trace_file: null, response: {},
          context: { sent_files: ['src/lib.rs', 'README.md'], dropped: [{ path: 'docs/big.md', key: 'read_file{path=docs/big.md}', kind: 'file', reason: 'dropped by the context diet (over the file count or character budget)' }], stats: { context_files_count: 2, context_total_chars: 1234 } },
        },
      };
      return job([{ stage: 'gathering_context' }, { stage: 'requesting', attempt: 'initial', protocol: 2 }, { stage: 'context_round', round: 1, requests: 1 }, { stage: 'receiving', chars: 420 }], turn);
    },
    start_preview_plan: () => job([{ stage: 'previewing' }], preview(200)),
    start_apply: (a) => {
      const sel = a.selection as number[];
      if (sel.includes(3) && !a.confirmed_deletes) throw new ApiError('ERR_UI_BAD_REQUEST', 'deletes need confirmed_deletes');
      const events: Progress[] = sel.map((i, k) => ({ stage: 'applying', done: k + 1, total: sel.length, item: `action ${i}` }) as Progress);
      if (sel.length === 1) {
        events.push({ stage: 'check_output', command: 'cargo check', output: 'error[E0308]: mismatched types\n --> src/lib.rs:2:5' } as Progress);
        return job(events, undefined, new ApiError('ERR_CHECK_FAILED', 'The check `cargo check` failed (exit 101); the transaction was rolled back. Fix the code or the check command.'));
      }
      saved = false;
      const tx = `tx${seq}`;
      history.undo.push({ tx_id: tx, kind: 'apply', created_unix_ms: Date.now(), actions: [], paths: sel.map((i) => `file ${i}`) });
      history.redo = [];
      events.push({ stage: 'check_output', command: 'cargo check', output: 'Finished dev profile in 0.4s' } as Progress);
      return job(events, { trace_id: 't', applied: true, no_changes: false, selected: sel, report: { tx_id: tx, files: sel.map((i) => fileDiff(i, 'PATCH_FILE', `file ${i}`, '')), summary: {}, checks: [{ command: 'cargo check', success: true, status: 'exited with 0', duration_ms: 420, output: 'Finished dev profile in 0.4s' }] }, trace_file: null });
    },
    job_status: (a) => {
      const j = jobs.get(String(a.job_id));
      if (!j) throw new ApiError('ERR_UI_UNKNOWN_JOB', 'no such job');
      const since = Number(a.since);
      const shown = Math.min(j.events.length, Math.floor((Date.now() - j.t0) / 250) + 1);
      const events = j.events.slice(since, shown);
      const base = { events, next: shown };
      if (j.cancelled) return { ...base, state: 'cancelled', error: { code: 'ERR_CANCELLED', message: 'Cancelled; nothing was written.' } } satisfies JobStatus;
      if (shown < j.events.length || Date.now() - j.t0 < 600) return { ...base, state: 'running' };
      return j.error ? { ...base, state: 'failed', error: { code: j.error.code, message: j.error.message, violations: j.error.violations } } : { ...base, state: 'done', result: j.result };
    },
    cancel_job: (a) => {
      const j = jobs.get(String(a.job_id));
      if (j) j.cancelled = true;
      return { cancelled: !!j };
    },
    traces: () => [{ trace_id: '0190-mock-plan', created_unix_ms: Date.now(), mode: 'PLAN', protocol: 2, outcome: 'ok', error_code: null, provider: 'openai-compatible', model: 'mock', repaired: false, fallback: false }],
    trace: (a) => ({ trace_id: a.trace_id, event: 'LLM_RESPONSE_OK', mode: 'PLAN', goal: 'make it 42', provider: 'openai-compatible', model: 'mock', schema_version: 2 }),
    report: (): ReportView => ({
      report: { trace_count: 42, unreadable_traces: 0, since_secs: 2592000, plan_count: 20, apply_count: 22, applied_count: 18, fallback_count: 3, fallback_rate: 3 / 22, fallback_rate_excluding_non_utf8: 2 / 21, fallback_reasons: { ERR_PATCH_APPLY_FAILED: 2, ERR_NON_UTF8_FILE: 1 }, repair_count: 6, repair_success_count: 4, repair_success_rate: 4 / 6, error_codes: { ERR_CHECK_FAILED: 2, ERR_JSON_PARSE: 2 }, violation_codes: { ERR_UPDATE_WITHOUT_BASE: 3, ERR_INVALID_PATH: 1 }, context_avg_chars: 8400, context_p95_chars: 21000, cache_hit_rate: 0.4,
        graduation: {
          verdict: 'not_enough_data', window: 100, apply_calls: 22, fallback_count: 3, non_utf8_fallbacks: 1, fallback_rate_excluding_non_utf8: 2 / 21,
          patch_apply_failed: 2, patch_apply_failed_repaired: 1, patch_apply_failed_fallbacks: 1, update_existing_forbidden_fallbacks: 0,
          criteria: [
            { id: 'window', required: 'a full window of 100 APPLY calls', actual: '22 APPLY calls', met: false },
            { id: 'fallback_rate_excluding_non_utf8', required: 'fallback rate excluding non-UTF-8 < 1%', actual: '9.5% (2 of 21)', met: false },
          ],
        } },
      timeline: Array.from({ length: 10 }, (_, i) => ({ day: day(i), calls: 4, fallback_rate: i % 4 === 3 ? null : [0, 0.25, 0.1, 0, 0.5, 0, 0.2, 0, 0.1, 0][i], repair_success_rate: i % 3 === 0 ? null : [1, 0.5, 0.66, 1, 0.5, 1, 1, 0.75, 1, 0.5][i], error_codes: (i % 2 ? { ERR_CHECK_FAILED: 1, ERR_JSON_PARSE: i % 3 } : { ERR_BASE_MISMATCH: 1 }) as Record<string, number> })).filter((_, i) => i !== 5),
    }),
    trends: (a) => ({
      topic: String(a.topic ?? 'UI design and icon trends'),
      query: `${String(a.topic ?? 'UI design and icon trends')} latest`,
      domains: ['lucide.dev', 'smashingmagazine.com'],
      cards: [
        { title: 'Lucide 1.0: a thousand icons', url: 'https://lucide.dev/blog/lucide-1', source: 'lucide.dev', date: '2026-05-01T00:00:00', summary: 'Outlined icons with a consistent 2 px stroke.' },
        { title: 'Bento grids in product UI', url: 'https://www.smashingmagazine.com/2026/04/bento-grids/', source: 'smashingmagazine.com', date: null, summary: 'Card layouts that group features at a glance.' },
      ],
    }),
    open_url: (a) => ({ url: String(a.url) }),
  };
  return {
    kind: 'http',
    call: async <T,>(command: string, args: Record<string, unknown> = {}) => {
      await new Promise((r) => setTimeout(r, 30));
      const h = handlers[command];
      if (!h) throw new ApiError('ERR_UI_BAD_REQUEST', `unknown command ${command}`);
      return h(args) as T;
    },
  };
}
