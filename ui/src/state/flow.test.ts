// The state modules together, over the dev fixture backend: what the chat view does.
import { describe, expect, it } from 'vitest';
import { mockTransport } from '../dev/mock';
import type { ChatTurnView, ApplyOutcome } from '../types';
import { chatReducer, initialChat } from './chat';
import { runJob } from './job';
import { applyRequest, confirmDeletes, initialSelection, toggle } from './selection';

const fast = { sleep: () => new Promise<void>((r) => setTimeout(r, 5)) };

describe('chat flow over the fixture backend', () => {
  it('plans, previews the saved plan, applies a selection, and refuses a rolled-back one', async () => {
    const t = mockTransport();
    let chat = initialChat(false);
    chat = chatReducer(chat, { type: 'send', text: 'make it 42' });
    const turn = (await runJob(t.call, 'start_chat', { project: '/p', message: 'make it 42' }, { label: 'x', onState: () => {}, ...fast }).done) as ChatTurnView;
    chat = chatReducer(chat, { type: 'turn', turn });
    expect(chat.phase).toBe('planned');

    chat = chatReducer(chat, { type: 'send', text: 'ok' });
    const ok = (await runJob(t.call, 'start_chat', { project: '/p', message: 'ok' }, { label: 'x', onState: () => {}, ...fast }).done) as ChatTurnView;
    chat = chatReducer(chat, { type: 'turn', turn: ok });
    expect(chat.phase).toBe('reviewing');

    // Only the patch: the fixture's check fails and the job reports ERR_CHECK_FAILED.
    let sel = initialSelection(chat.preview!);
    for (const i of [1, 3, 4, 5]) sel = toggle(sel, i);
    const only = applyRequest(sel);
    expect(only).toEqual({ ok: true, request: { selection: [0], confirmed_deletes: false } });
    const states: string[] = [];
    const failed = await runJob(t.call, 'start_apply', { project: '/p', preview_id: chat.preview!.preview_id, ...(only.ok && only.request) }, { label: 'Apply', onState: (s) => states.push(s.phase), ...fast }).done.catch((e: unknown) => e);
    expect((failed as { code: string }).code).toBe('ERR_CHECK_FAILED');
    expect(states.at(-1)).toBe('failed');

    // Everything, with the delete confirmed.
    sel = confirmDeletes(initialSelection(chat.preview!), true);
    const all = applyRequest(sel);
    expect(all.ok && all.request.selection).toEqual([0, 1, 3, 4, 5]);
    chat = chatReducer(chat, { type: 'apply_started' });
    const outcome = (await runJob(t.call, 'start_apply', { project: '/p', preview_id: chat.preview!.preview_id, ...(all.ok && all.request) }, { label: 'Apply', onState: () => {}, ...fast }).done) as ApplyOutcome;
    chat = chatReducer(chat, { type: 'applied', outcome });
    expect(chat.phase).toBe('applied');
    expect(chat.savedPlan).toBe(false);
  });
});
