import { describe, expect, it } from 'vitest';
import { preview } from './fixtures';
import { applyRequest, confirmDeletes, initialSelection, selectedDeletes, setAll, toggle } from './selection';

describe('action selection', () => {
  it('selects every action except blocked ones, rows in the model order with their error', () => {
    const s = initialSelection(preview());
    expect(s.rows.map((r) => r.index)).toEqual([0, 1, 2, 3]);
    expect([...s.selected].sort()).toEqual([0, 1, 2]);
    expect(s.rows[3].blocked).toEqual({ code: 'ERR_BASE_MISMATCH', message: 'changed since' });
  });
  it('never selects a blocked action, not by toggle nor by select-all', () => {
    let s = initialSelection(preview());
    s = toggle(s, 3);
    expect(s.selected.has(3)).toBe(false);
    s = setAll(setAll(s, false), true);
    expect(s.selected.has(3)).toBe(false);
    expect(s.selected.size).toBe(3);
  });
  it('toggles a normal action off and on', () => {
    let s = initialSelection(preview());
    s = toggle(s, 1);
    expect(s.selected.has(1)).toBe(false);
    s = toggle(s, 1);
    expect(s.selected.has(1)).toBe(true);
  });
  it('requires delete confirmation only while a delete is selected', () => {
    let s = initialSelection(preview());
    expect(selectedDeletes(s).map((r) => r.path)).toEqual(['old.txt']);
    const blocked = applyRequest(s);
    expect(blocked.ok).toBe(false);
    if (!blocked.ok) expect(blocked.reason).toMatch(/Confirm the 1 delete/);
    s = confirmDeletes(s, true);
    expect(applyRequest(s)).toEqual({ ok: true, request: { selection: [0, 1, 2], confirmed_deletes: true } });
    // deselecting the delete: no confirmation needed, and none is sent
    s = toggle(confirmDeletes(s, false), 2);
    expect(applyRequest(s)).toEqual({ ok: true, request: { selection: [0, 1], confirmed_deletes: false } });
  });
  it('refuses an empty selection', () => {
    const r = applyRequest(setAll(initialSelection(preview()), false));
    expect(r.ok).toBe(false);
  });
});
