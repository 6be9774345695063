import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../transport';
import type { JobStatus } from '../types';
import { checkOutputs, initialJob, jobReducer, pollFrom, progressFraction, progressText, runJob, type JobState } from './job';

const status = (s: Partial<JobStatus>): JobStatus => ({ state: 'running', events: [], next: 0, ...s });

describe('job reducer', () => {
  it('accumulates events across polls using next', () => {
    let s = jobReducer(initialJob('Plan'), { type: 'started', jobId: 'j1' });
    s = jobReducer(s, { type: 'status', status: status({ events: [{ stage: 'requesting', attempt: 'initial', protocol: 2 }], next: 1 }) });
    s = jobReducer(s, { type: 'status', status: status({ events: [{ stage: 'receiving', chars: 120 }], next: 2 }) });
    expect(s.events).toHaveLength(2);
    expect(s.next).toBe(2);
    expect(progressText(s)).toBe('Receiving the answer: 120 characters');
  });
  it('takes the in-place update of the last receiving event when polling from it again', () => {
    let s = jobReducer(initialJob('Plan'), { type: 'started', jobId: 'j1' });
    s = jobReducer(s, { type: 'status', status: status({ events: [{ stage: 'requesting', attempt: 'initial', protocol: 2 }, { stage: 'receiving', chars: 10 }], next: 2 }), since: 0 });
    expect(pollFrom(s)).toBe(1);
    s = jobReducer(s, { type: 'status', status: status({ events: [{ stage: 'receiving', chars: 900 }], next: 2 }), since: 1 });
    expect(s.events).toHaveLength(2);
    expect(progressText(s)).toBe('Receiving the answer: 900 characters');
    s = jobReducer(s, { type: 'status', status: status({ events: [{ stage: 'receiving', chars: 950 }, { stage: 'previewing' }], next: 3 }), since: 1 });
    expect(s.events.map((e) => e.stage)).toEqual(['requesting', 'receiving', 'previewing']);
    expect(pollFrom(s)).toBe(3);
  });
  it('ignores a stale poll that reports an older next', () => {
    let s: JobState = { ...initialJob('x'), phase: 'running', jobId: 'j', events: [{ stage: 'previewing' }], next: 1 };
    s = jobReducer(s, { type: 'status', status: status({ events: [], next: 0 }) });
    expect(s.events).toHaveLength(1);
    expect(s.next).toBe(1);
  });
  it('ends with the result, the typed error, or ERR_CANCELLED, and then ignores everything', () => {
    const running: JobState = { ...initialJob('x'), phase: 'running', jobId: 'j' };
    const done = jobReducer(running, { type: 'status', status: status({ state: 'done', result: 42 }) });
    expect(done.phase).toBe('done');
    expect(done.result).toBe(42);
    const failed = jobReducer(running, { type: 'status', status: status({ state: 'failed', error: { code: 'ERR_CHECK_FAILED', message: 'rolled back', violations: [] } }) });
    expect(failed.error?.code).toBe('ERR_CHECK_FAILED');
    const cancelled = jobReducer(jobReducer(running, { type: 'cancel' }), { type: 'status', status: status({ state: 'cancelled' }) });
    expect(cancelled.phase).toBe('cancelled');
    expect(cancelled.error?.code).toBe('ERR_CANCELLED');
    expect(jobReducer(done, { type: 'cancel' })).toBe(done);
  });
  it('derives apply progress and the check outputs', () => {
    const s: JobState = {
      ...initialJob('Apply'), phase: 'running', jobId: 'j', next: 3,
      events: [
        { stage: 'applying', done: 1, total: 4, item: 'a' },
        { stage: 'applying', done: 3, total: 4, item: 'src/a.py' },
      ],
    };
    expect(progressFraction(s)).toBe(0.75);
    expect(progressText(s)).toBe('Applying 3/4: src/a.py');
    const checked = { ...s, events: [...s.events, { stage: 'check_output', command: 'cargo check', output: 'ok', success: false, status: 'exited with 101', done: 1, total: 1 }] };
    expect(progressText(checked)).toBe('Check `cargo check`: exited with 101');
    expect(checkOutputs(checked)).toEqual([{ command: 'cargo check', output: 'ok', success: false, status: 'exited with 101' }]);
  });
});

describe('runJob', () => {
  it('starts, polls with since until done, and resolves with the result', async () => {
    const polls: number[] = [];
    const call = vi.fn(async (cmd: string, args?: Record<string, unknown>) => {
      if (cmd === 'start_plan') return { job_id: 'j9' };
      if (cmd === 'job_status') {
        polls.push(args!.since as number);
        return polls.length < 3 ? status({ events: [{ stage: 'previewing' }], next: polls.length }) : status({ state: 'done', next: 2, result: { ok: true } });
      }
      throw new Error(cmd);
    });
    const states: string[] = [];
    const h = runJob(call as never, 'start_plan', { goal: 'g' }, { label: 'Plan', onState: (s) => states.push(s.phase), sleep: async () => {} });
    await expect(h.done).resolves.toEqual({ ok: true });
    expect(polls).toEqual([0, 1, 2]);
    expect(states.at(-1)).toBe('done');
  });
  it('cancel sends cancel_job once and rejects with ERR_CANCELLED', async () => {
    const calls: string[] = [];
    let h: ReturnType<typeof runJob> | undefined;
    const call = vi.fn(async (cmd: string) => {
      calls.push(cmd);
      if (cmd === 'start_apply') return { job_id: 'j1' };
      if (cmd === 'cancel_job') return { cancelled: true };
      const n = calls.filter((c) => c === 'job_status').length;
      if (n === 1) {
        h!.cancel();
        h!.cancel();
        return status({ next: 0 });
      }
      return status({ state: 'cancelled', error: { code: 'ERR_CANCELLED', message: 'rolled back', violations: [] } });
    });
    h = runJob(call as never, 'start_apply', {}, { label: 'Apply', onState: () => {}, sleep: async () => {} });
    const err = await h.done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('ERR_CANCELLED');
    expect(calls.filter((c) => c === 'cancel_job')).toHaveLength(1);
  });
  it('rejects with the start error (e.g. a job is already running)', async () => {
    const call = vi.fn(async () => {
      throw { code: 'ERR_UI_BAD_REQUEST', message: 'a job is already running' };
    });
    const err = await runJob(call as never, 'start_chat', {}, { label: 'x', onState: () => {} }).done.catch((e: unknown) => e);
    expect((err as ApiError).code).toBe('ERR_UI_BAD_REQUEST');
  });
});
