// Long work (docs/UI-API.md "Long work: jobs"): start_* returns a job id, the UI polls
// job_status with `since`, and may cancel. The reducer is pure; `runJob` drives it.
import { t, tn } from '../i18n';
import { ApiError, toApiError, type Call } from '../transport';
import type { JobStatus, Progress } from '../types';

export type JobPhase = 'starting' | 'running' | 'cancelling' | 'done' | 'failed' | 'cancelled';

export interface JobState {
  label: string;
  jobId: string | null;
  phase: JobPhase;
  events: Progress[];
  next: number;
  result?: unknown;
  error?: ApiError;
}

export type JobAction =
  | { type: 'started'; jobId: string }
  | { type: 'status'; status: JobStatus; since?: number }
  | { type: 'cancel' }
  | { type: 'start_failed'; error: ApiError };

export function initialJob(label: string): JobState {
  return { label, jobId: null, phase: 'starting', events: [], next: 0 };
}

export const isTerminal = (p: JobPhase): boolean => p === 'done' || p === 'failed' || p === 'cancelled';

export function jobReducer(s: JobState, a: JobAction): JobState {
  if (isTerminal(s.phase)) return s;
  switch (a.type) {
    case 'started':
      return { ...s, jobId: a.jobId, phase: s.phase === 'cancelling' ? 'cancelling' : 'running' };
    case 'start_failed':
      return { ...s, phase: 'failed', error: a.error };
    case 'cancel':
      return { ...s, phase: 'cancelling' };
    case 'status': {
      const st = a.status;
      // `events` are those from index `since` (the backend may replace its last `receiving`
      // event in place, so the poller asks again from that index); ignore a stale poll.
      const since = Math.min(a.since ?? s.next, s.events.length);
      const events = st.next >= s.next ? [...s.events.slice(0, since), ...st.events] : s.events;
      const next = Math.max(s.next, st.next);
      switch (st.state) {
        case 'running':
          return { ...s, events, next };
        case 'done':
          return { ...s, events, next, phase: 'done', result: st.result };
        case 'failed':
          return { ...s, events, next, phase: 'failed', error: toApiError(st.error ?? { code: 'ERR_INTERNAL', message: 'the job failed without an error' }) };
        case 'cancelled':
          return { ...s, events, next, phase: 'cancelled', error: toApiError(st.error ?? { code: 'ERR_CANCELLED', message: t('job.cancelled') }) };
      }
    }
  }
  return s;
}

/** A one-line description of where the job is, from its latest events. */
export function progressText(s: JobState): string {
  if (s.phase === 'cancelling') return t('job.cancelling');
  const last = s.events[s.events.length - 1];
  if (!last) return s.phase === 'starting' ? t('job.starting') : t('job.working.text');
  const e = last as Record<string, unknown>;
  switch (last.stage) {
    case 'check_output':
      return e.status ? t('job.check', { command: String(e.command), status: String(e.status) }) : t('job.check.finished', { command: String(e.command) });
    case 'gathering_context':
      return t('job.gathering');
    case 'requesting':
      return t('job.requesting', { attempt: String(e.attempt), protocol: String(e.protocol) });
    case 'receiving':
      return tn('job.receiving', Number(e.chars));
    case 'context_round':
      return tn('job.round', Number(e.requests), { round: String(e.round) });
    case 'repair':
      return t('job.repair', { codes: (e.codes as string[]).join(', ') });
    case 'fallback':
      return t('job.fallback', { from: String(e.from), to: String(e.to), reason: String(e.reason) });
    case 'previewing':
      return t('job.previewing');
    case 'applying':
      return t('job.applying', { done: String(e.done), total: String(e.total), item: String(e.item) });
    default:
      return String(last.stage);
  }
}

/** Fraction done of the apply (0..1), or null when unknown. */
export function progressFraction(s: JobState): number | null {
  const last = [...s.events].reverse().find((e) => e.stage === 'applying') as { done: number; total: number } | undefined;
  if (!last || !last.total) return null;
  return Math.min(1, last.done / last.total);
}

/** The check commands' output so far. */
export function checkOutputs(s: JobState): { command: string; output: string; success?: boolean; status?: string }[] {
  return s.events
    .filter((e) => e.stage === 'check_output')
    .map((e) => {
      const c = e as { command: string; output: string; success?: boolean; status?: string };
      return { command: c.command, output: c.output, success: c.success, status: c.status };
    });
}

/** Where the next poll starts: at the last event again when it is a `receiving` count, which
 * the backend updates in place (docs/UI-API.md: consecutive `receiving` events are coalesced). */
export function pollFrom(s: JobState): number {
  const last = s.events[s.events.length - 1];
  return last && last.stage === 'receiving' && s.next === s.events.length ? s.next - 1 : s.next;
}

export interface JobHandle {
  cancel: () => void;
  done: Promise<unknown>;
}

export interface RunOptions {
  label: string;
  onState: (s: JobState) => void;
  intervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Start a job and poll it to the end. `done` resolves with the result or rejects with ApiError. */
export function runJob(call: Call, command: string, args: Record<string, unknown>, opts: RunOptions): JobHandle {
  let state = initialJob(opts.label);
  let cancelSent = false;
  const sleep = opts.sleep ?? defaultSleep;
  const dispatch = (a: JobAction) => {
    state = jobReducer(state, a);
    opts.onState(state);
  };
  const sendCancel = () => {
    if (cancelSent || !state.jobId) return;
    cancelSent = true;
    call('cancel_job', { job_id: state.jobId }).catch(() => {
      /* the job may have just finished; polling tells */
    });
  };
  const done = (async () => {
    opts.onState(state);
    try {
      const { job_id } = await call<{ job_id: string }>(command, args);
      dispatch({ type: 'started', jobId: job_id });
    } catch (e) {
      dispatch({ type: 'start_failed', error: toApiError(e) });
      throw state.error;
    }
    while (!isTerminal(state.phase)) {
      if (state.phase === 'cancelling') sendCancel();
      const since = pollFrom(state);
      const status = await call<JobStatus>('job_status', { job_id: state.jobId, since }).catch((e: unknown) => {
        throw toApiError(e);
      });
      dispatch({ type: 'status', status, since });
      if (!isTerminal(state.phase)) await sleep(opts.intervalMs ?? 150);
    }
    if (state.phase === 'done') return state.result;
    throw state.error ?? new ApiError('ERR_INTERNAL', 'job ended without a result');
  })();
  return {
    cancel: () => {
      if (isTerminal(state.phase)) return;
      dispatch({ type: 'cancel' });
      sendCancel();
    },
    done,
  };
}
