import { describe, expect, it } from 'vitest';
import { ApiError } from '../transport';
import type { ApplyOutcome, ModeDecision, PlanView } from '../types';
import { preview } from './fixtures';
import { canSend, chatReducer, classifyInput, describeDecision, initialChat } from './chat';

const planDecision: ModeDecision = { mode: 'PLAN', text: 'make it 42', apply_saved_plan: false, reason: 'default' };
const okDecision: ModeDecision = { mode: 'APPLY', text: 'ok', apply_saved_plan: true, reason: 'saved_plan_trigger' };
const plan = { trace_id: 't', protocol: 2, summary: 'Diagnosis', plan: [], questions: [], risks: [] } as unknown as PlanView;
const outcome: ApplyOutcome = { trace_id: 't2', applied: true, no_changes: false, selected: [0], report: null, trace_file: null };

describe('chat flow', () => {
  it('goes plan → ok → preview → apply like papayu chat', () => {
    let s = initialChat(false);
    s = chatReducer(s, { type: 'send', text: 'make it 42' });
    expect(s.phase).toBe('thinking');
    expect(canSend(s)).toBe(false);
    s = chatReducer(s, { type: 'turn', turn: { turn: 'plan', decision: planDecision, outcome: plan } });
    expect(s.phase).toBe('planned');
    expect(s.savedPlan).toBe(true);
    expect(classifyInput(' OK ', s.savedPlan)).toEqual({ kind: 'message', text: 'OK', appliesSavedPlan: true });
    s = chatReducer(s, { type: 'send', text: 'ok' });
    s = chatReducer(s, { type: 'turn', turn: { turn: 'preview', decision: okDecision, preview: preview() } });
    expect(s.phase).toBe('reviewing');
    expect(s.preview?.preview_id).toBe('p1');
    s = chatReducer(s, { type: 'apply_started' });
    expect(s.phase).toBe('applying');
    s = chatReducer(s, { type: 'applied', outcome });
    expect(s.phase).toBe('applied');
    expect(s.preview).toBeNull();
    expect(s.savedPlan).toBe(false);
    expect(s.messages.map((m) => m.role)).toEqual(['user', 'plan', 'user', 'preview', 'applied']);
  });
  it('keeps the preview after a rolled-back apply, with the error in the log', () => {
    let s = chatReducer(initialChat(true), { type: 'send', text: 'ok' });
    s = chatReducer(s, { type: 'turn', turn: { turn: 'preview', decision: okDecision, preview: preview() } });
    s = chatReducer(s, { type: 'apply_started' });
    s = chatReducer(s, { type: 'apply_failed', error: new ApiError('ERR_CHECK_FAILED', 'check failed; rolled back') });
    expect(s.phase).toBe('reviewing');
    expect(s.preview).not.toBeNull();
    expect(s.savedPlan).toBe(true);
    const last = s.messages.at(-1)!;
    expect(last.role === 'error' && last.error.code).toBe('ERR_CHECK_FAILED');
  });
  it('a failed model call returns to where it was', () => {
    let s = chatReducer(initialChat(true), { type: 'send', text: 'fix the bug' });
    s = chatReducer(s, { type: 'chat_failed', error: new ApiError('ERR_JSON_PARSE', 'bad json') });
    expect(s.phase).toBe('planned');
    s = chatReducer(initialChat(false), { type: 'send', text: 'x' });
    expect(chatReducer(s, { type: 'chat_failed', error: new ApiError('ERR_CANCELLED', 'c') }).phase).toBe('idle');
  });
  it('a rejected plan document is no model failure and leaves no stale Apply', () => {
    let s = chatReducer(initialChat(false), { type: 'preview_ready', preview: preview() });
    expect(s.preview).not.toBeNull();
    s = chatReducer(s, { type: 'document_failed', error: new ApiError('ERR_INVALID_PATH', 'rejected') });
    expect(s.preview).toBeNull();
    expect(s.phase).toBe('idle');
    const last = s.messages.at(-1)!;
    expect(last.role === 'error' && last.during).toBe('document');
    // A failed model call after a preview drops that preview too.
    s = chatReducer(chatReducer(initialChat(false), { type: 'preview_ready', preview: preview() }), { type: 'send', text: 'again' });
    expect(chatReducer(s, { type: 'chat_failed', error: new ApiError('ERR_LLM_NETWORK', 'down') }).preview).toBeNull();
  });
  it('refuses to send while a job runs, and discards a preview', () => {
    let s = chatReducer(initialChat(false), { type: 'send', text: 'a' });
    expect(chatReducer(s, { type: 'send', text: 'b' })).toBe(s);
    s = chatReducer(s, { type: 'turn', turn: { turn: 'preview', decision: { ...planDecision, mode: 'APPLY', reason: 'create_word' }, preview: preview() } });
    s = chatReducer(s, { type: 'discard' });
    expect(s.phase).toBe('idle');
    expect(s.preview).toBeNull();
  });
});

describe('input classification', () => {
  it('treats undo/redo/history/help as local commands like the CLI', () => {
    expect(classifyInput('undo', false)).toEqual({ kind: 'command', name: 'undo' });
    expect(classifyInput('Отмена', false)).toEqual({ kind: 'command', name: 'undo' });
    expect(classifyInput('  ', false)).toEqual({ kind: 'empty' });
  });
  it('flags a trigger only when a plan is saved', () => {
    expect(classifyInput('да', false)).toEqual({ kind: 'message', text: 'да', appliesSavedPlan: false });
    expect(classifyInput('да', true)).toMatchObject({ appliesSavedPlan: true });
    expect(classifyInput('ok do more', true)).toMatchObject({ appliesSavedPlan: false });
  });
  it('describes the backend decision', () => {
    expect(describeDecision(okDecision)).toBe('APPLY (saved plan) — you confirmed the saved plan');
  });
});
